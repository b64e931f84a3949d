"""Names and messages in the dashboard's markup are shown as they are, whatever they hold.

A received store chooses its file names and error messages: Rich's ``escape`` left a ``[``
that starts no tag as it was, and Textual's markup parser then showed the markup after it as
text (an error ``bad [2J thing`` showed ``[/dim]`` in the detail pane, and ``[a`` before a
``]`` formed a tag).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from textual.content import Content

from engine.names import shown
from engine.records import Record
from tui.widgets.panels import describe
from tui.words import escape

ZWSP = "\u200b"
pieces = st.sampled_from(
    ["[", "]", "\\", "/", "[b]", "[/]", "[/b]", "[2J", "[$x]", "@click=", "a", " "]
)
printable = st.lists(
    pieces | st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=3), max_size=12
).map("".join)


@given(printable, printable)
def test_escaped_text_shows_as_it_is_between_any_markup(left: str, right: str) -> None:
    markup = f"[dim]{escape(left)}[/dim] | [b]{escape(right)}[/b] end"
    # (the escape's own zero-width space goes; so does one the text held: Hypothesis drew one)
    expected = f"{left} | {right} end".replace(ZWSP, "")
    assert Content.from_markup(markup).plain.replace(ZWSP, "") == expected


def test_a_message_with_a_lone_bracket_keeps_the_markup_after_it() -> None:
    for text in ("bad [2J thing", "x [a", "[b]bold[/b]", "[@click=app.quit]q[/]", "ends \\"):
        markup = f"[dim]{escape(text)}[/dim][b]after[/b]"
        assert Content.from_markup(markup).plain.replace(ZWSP, "") == text + "after"


def test_the_detail_pane_shows_a_hostile_error_and_name_exactly() -> None:
    error = "bad [2J thing [b]x[/b] [a] \\"
    record = Record(
        "/docs", "[dim]name [x.pdf", 10, 0, "error", None, "application/pdf", "corrupt",
        error=error, why="new",
    )  # fmt: skip
    plain = Content.from_markup(describe(record, set())).plain.replace(ZWSP, "")
    assert shown(error) in plain
    assert shown(record.path) in plain
    assert "[/dim]" not in plain and "[/b]" not in plain.replace(error, "")
