"""Where the engine's matches fall in the inspector's lines, and the match in context that the
records screen shows: any text, any width."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.textsearch import matches, parse
from tui.textdoc import LINE_CAP, InContext, TextDoc, doc_spans, width_of

texts = st.text(alphabet="ab \t\n\f\x1b東", max_size=200)


@given(texts)
def test_every_match_is_found_on_its_line_as_shown(text: str) -> None:
    query = parse("ab")
    found = list(matches(text, query))
    doc = TextDoc.parse(text)
    spans = doc_spans(text, [(m.start, m.end) for m in found])
    assert len(spans) == len(found)
    for (line, start, end), m in zip(spans, found, strict=True):
        assert doc.lines[line][start:end] == "ab"
        assert doc.page_of(line) == (m.page - 1 if doc.pages else 0)


def test_a_phrase_across_a_break_is_marked_to_its_line_end_and_a_cut_line_at_the_cut() -> None:
    text = "one invoice\ntotal two\n" + "z" * (LINE_CAP + 50) + " invoice"
    doc = TextDoc.parse(text)
    spans = doc_spans(text, [(m.start, m.end) for m in matches(text, parse("invoice total"))])
    assert spans == [(0, 4, 11)] and doc.lines[0][4:11] == "invoice"
    ((line, start, end),) = doc_spans(text, [(text.rindex("invoice"), len(text))])
    assert line == 2 and start == LINE_CAP and end == LINE_CAP + 1  # on the cut, not past


@given(
    st.text(alphabet="ab\t\x1b東", max_size=120),
    st.text(alphabet="ab\t\x1b東", max_size=120),
    st.integers(min_value=1, max_value=200),
)
def test_the_match_in_context_fits_any_width_and_keeps_the_match(
    before: str, after: str, width: int
) -> None:
    text = f"{before} INVOICE {after}\nnext"
    found = InContext.of(text, parse("INVOICE"))
    assert found is not None and found.total == 1 and (found.page, found.line) == (1, 1)
    where, left, match, right = found.fitted(width)
    assert match == "INVOICE" and where == "p.1 l.1 (1) "
    assert found.before.endswith(left) and found.after.startswith(right)
    assert width_of(where + left + match + right) <= max(width, width_of(where + match))
    assert "\x1b" not in left + right and "\t" not in left + right


def test_no_match_no_context() -> None:
    assert InContext.of("nothing here", parse("invoice")) is None
