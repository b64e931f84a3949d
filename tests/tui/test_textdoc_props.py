"""Property tests of the inspector over arbitrary texts: paging, wrapping, search, scrolling.

Texts are drawn from every Unicode category (control characters, RTL, CJK, combining marks,
surrogates), with form feeds, tabs, slide lines and very long lines mixed in. The model is
checked alone (fast, many examples) and through a real :class:`TextView` in a running app
pressing the keys a reader presses (fewer examples: each starts an app).
"""

from __future__ import annotations

import asyncio
import re
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from textual.app import App, ComposeResult

from tui.textdoc import LINE_CAP, TextDoc
from tui.widgets.text_view import TextView

PIECES = st.sampled_from(
    ["\n", "\f", "\t", "\r", "\x1b[2J", "# slide1\n", "# sheet 2\n", "日本語", "مرحبا", "\u202e",
     "\u2028", "e\u0301", "🙂", "x" * (LINE_CAP + 5), "needle", "NEEDLE", " "]
)  # fmt: skip
TEXTS = st.lists(st.one_of(st.text(max_size=40), PIECES), max_size=30).map("".join)
UNSAFE = {"Cc", "Cs", "Zl", "Zp"}


def safe(line: str) -> bool:
    return not any(unicodedata.category(c) in UNSAFE for c in line) and "\u202e" not in line


@settings(deadline=None)  # a loaded CI machine is slow, not wrong
@given(TEXTS)
def test_parse_gives_safe_lines_and_ordered_pages(text: str) -> None:
    doc = TextDoc.parse(text)
    assert doc.lines and all(safe(line) for line in doc.lines)
    starts = [first for first, _ in doc.pages]
    assert starts == sorted(starts) and all(0 <= s <= len(doc.lines) for s in starts)
    assert doc.widest == max(cell_len(line) for line in doc.lines)
    for i in range(len(doc.lines)):
        page = doc.page_of(i)
        assert 0 <= page < max(1, len(doc.pages))


@settings(deadline=None)
@given(TEXTS, st.integers(2, 200))
def test_wrapping_covers_every_line_within_the_width(text: str, width: int) -> None:
    doc = TextDoc.parse(text)
    rows = doc.wrap(width)
    assert list(rows.lines) == sorted(rows.lines)
    assert set(rows.lines) == set(range(len(doc.lines)))
    pieces: dict[int, str] = {}
    for row in range(len(rows)):
        line, start, end = rows.span(row, doc)
        piece = doc.lines[line][start:end]
        assert cell_len(piece) <= width
        pieces[line] = pieces.get(line, "") + piece
        assert rows.row_of(line) <= row
    assert [pieces[i] for i in range(len(doc.lines))] == doc.lines


QUERIES = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters="\u202e"),
    min_size=1,
    max_size=5,
)


@settings(deadline=None)
@given(TEXTS, QUERIES)
def test_search_finds_the_query_where_it_is(text: str, query: str) -> None:
    doc = TextDoc.parse(text + "\n" + query)
    found = doc.search(query)
    flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
    assert (len(doc.lines) - 1, 0, len(query)) in found  # the last line is the query itself
    for line, start, end in found:
        assert re.fullmatch(re.escape(query), doc.lines[line][start:end], flags)


class ViewApp(App[None]):
    """A text view alone, to drive with keys."""

    def __init__(self, doc: TextDoc) -> None:
        super().__init__()
        self.doc = doc

    def compose(self) -> ComposeResult:
        yield TextView(id="text")

    def on_mount(self) -> None:
        view = self.query_one(TextView)
        view.set_doc(self.doc)
        view.focus()


KEYS = st.lists(
    st.sampled_from(["pagedown", "pageup", "down", "up", "end", "home", "right", "left", "w", "s"]),
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS, KEYS, st.sampled_from([(80, 24), (160, 50), (20, 6)]))
def test_keys_on_any_text_draw_safe_rows_within_the_screen(
    text: str, keys: list[str], size: tuple[int, int]
) -> None:
    async def run() -> None:
        doc = TextDoc.parse(text)
        app = ViewApp(doc)
        async with app.run_test(size=size) as pilot:
            view = app.query_one(TextView)
            for key in keys:
                if key == "w":
                    view.wrap = not view.wrap
                elif key == "s":  # search, and jump to the middle match as n would
                    matches = doc.search("needle")
                    view.set_matches(matches, len(matches) // 2 if matches else -1)
                    if matches:
                        view.go_to_line(matches[len(matches) // 2][0], center=True)
                else:
                    await pilot.press(key)
                await pilot.pause()
                for strip in view.render_lines(view.size.region):
                    assert strip.cell_length <= size[0]
                    assert safe(strip.text)
                assert 0 <= view.top_line < max(1, len(doc.lines))

    asyncio.run(run())
