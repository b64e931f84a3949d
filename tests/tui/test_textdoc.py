"""The inspector's text model: pages, long lines, search."""

from __future__ import annotations

from tui.textdoc import LINE_CAP, TextDoc


def test_form_feeds_make_pages() -> None:
    doc = TextDoc.parse("one\ntwo\fthree\ffour\n\f")
    assert doc.pages == [(0, "page 1"), (2, "page 2"), (3, "page 3")]
    assert doc.page_of(2) == 1 and doc.page_of(4) == 2


def test_slide_and_sheet_lines_make_pages() -> None:
    doc = TextDoc.parse("# slide1\nHello\n# slide2\nBye")
    assert [label for _, label in doc.pages] == ["slide 1", "slide 2"]
    assert TextDoc.parse("# sheet3\na,b").pages == [(0, "sheet 3")]


def test_long_lines_are_capped() -> None:
    doc = TextDoc.parse("x" * (LINE_CAP + 10))
    assert doc.capped == 1 and "10 more characters" in doc.lines[0]


def test_search_smart_case() -> None:
    doc = TextDoc.parse("Alpha beta\nalpha ALPHA")
    assert doc.search("alpha") == [(0, 0, 5), (1, 0, 5), (1, 6, 11)]
    assert doc.search("ALPHA") == [(1, 6, 11)]
    assert doc.search("") == []
