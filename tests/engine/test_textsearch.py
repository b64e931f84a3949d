"""What a search pattern means (engine/textsearch.py): any string is a query FTS5 takes whole,
and the index never hides a text the pattern matches."""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.textsearch import MIN_FRAGMENT, BadPattern, Query, matches, matching_rows, parse

# What a stored text can hold: no NUL, no CR (normalised away), no lone surrogate.
CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r")
TEXT = st.text(CHARS, max_size=40)


@pytest.fixture(scope="module")
def con() -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'trigram')")
    yield c
    c.close()


def _found(con: sqlite3.Connection, text: str, query: Query) -> bool:
    """Whether the index offers ``text`` as a candidate for ``query`` (and it matches)."""
    con.execute("DELETE FROM t")
    con.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (text,))
    if query.fts is not None:
        rows = con.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.fts,)).fetchall()
        if rows != [(1,)]:
            return False
    return query.regex.search(text) is not None


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=TEXT, head=TEXT, tail=TEXT, ignore_case=st.booleans())
def test_words_are_found_wherever_they_are(
    con: sqlite3.Connection, pattern: str, head: str, tail: str, ignore_case: bool
) -> None:
    try:
        query = parse(pattern, ignore_case=ignore_case)
    except BadPattern:
        assert not pattern.split()
        return
    text = unicodedata.normalize("NFC", f"{head} {pattern} {tail}")
    assert _found(con, text, query)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.text(max_size=30), ignore_case=st.booleans())
@example(pattern="[[", ignore_case=False)  # re's FutureWarning, "possible nested set"
def test_any_string_as_a_regex_is_a_verdict_or_a_query_fts5_takes(
    con: sqlite3.Connection, pattern: str, ignore_case: bool
) -> None:
    try:
        query = parse(pattern, regex=True, ignore_case=ignore_case)
    except BadPattern:
        return
    if query.fts is not None:
        con.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.fts,)).fetchall()


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(needle=st.text(CHARS, min_size=1, max_size=30), head=TEXT, tail=TEXT)
def test_an_escaped_literal_as_a_regex_is_found(
    con: sqlite3.Connection, needle: str, head: str, tail: str
) -> None:
    needle = unicodedata.normalize("NFC", needle)
    text = (
        unicodedata.normalize("NFC", head + " ") + needle + unicodedata.normalize("NFC", " " + tail)
    )
    query = parse(re.escape(needle), regex=True)
    assert _found(con, text, query)


def test_required_literals_narrow_and_optional_parts_do_not() -> None:
    assert parse(r"invoice\s+no\.?\s*\d{4}", regex=True).fragments == ("invoice",)
    assert parse(r"(?:total|sum) due", regex=True).fragments == (" due",)
    assert parse(r"(abc)+x?yz", regex=True).fragments == ("abc",)
    assert parse(r"ab|cdef", regex=True).fragments == ()  # neither side is required
    assert parse("a bc def").fragments == ("def",)
    assert parse('say "hi" now').fragments == ('"hi"', "now", "say")
    assert parse('say "hi" now').fts == '"""hi""" AND "now" AND "say"'


@given(
    parts=st.lists(
        st.text(st.characters(blacklist_characters="\x00\r\n\fX", blacklist_categories=("Cs",))),
        min_size=1,
        max_size=8,
    ),
    seps=st.lists(st.sampled_from(["\n", "\f", "\n\f", "X"]), min_size=8, max_size=8),
)
def test_pages_and_lines_are_counted_as_people_count_them(
    parts: list[str], seps: list[str]
) -> None:
    text = "".join(p + s for p, s in zip(parts, seps, strict=False))
    query = parse("X", regex=True)
    got = [(m.page, m.line, m.column) for m in matches(text, query)]
    want = []
    for m in re.finditer("X", text):
        before = text[: m.start()]
        page = before.count("\f") + 1
        in_page = before[before.rfind("\f") + 1 :]
        line = in_page.count("\n") + 1
        column = len(in_page) - (in_page.rfind("\n") + 1) + 1
        want.append((page, line, column))
    assert got == want


def test_a_snippet_is_one_inert_line_around_the_match() -> None:
    text = "x" * 100 + " the invoice\n\ftotal due \x1b[31m now\nnext line"
    (m,) = matches(text, parse("invoice total"))
    assert (m.page, m.line, m.column) == (1, 1, 106)
    assert m.snippet == "x" * 55 + " the invoice total due ␛[31m now"
    assert m.text == "invoice\n\ftotal"


@pytest.fixture(scope="module")
def index() -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE VIRTUAL TABLE text_fts USING fts5(body, tokenize = 'trigram')")
    yield c
    c.close()


# letters whose case folds are odd (Kelvin sign, long s, dotted and dotless i, sharp s,
# final sigma) beside plain ASCII: the index must answer as the pattern does
ODD = "KkſsİIıißSΣσςéÉ"
WORD = st.text(st.sampled_from("abcKSIxyz19\"*'-" + "ABCXYZ"), min_size=1, max_size=6)
BODY = st.text(st.sampled_from("abcKSIxyz19\"*'- \nABCXYZ" + ODD), max_size=24)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=WORD, bodies=st.lists(BODY, max_size=6), ignore_case=st.booleans())
@example(word="iab", bodies=["İab", "ıab", "IAB"], ignore_case=True)
def test_the_rows_a_word_matches_are_those_the_pattern_finds(
    index: sqlite3.Connection, word: str, bodies: list[str], ignore_case: bool
) -> None:
    """Answered from the index alone (an ASCII word of three characters or more, any case)
    or by trying each candidate text, the rows are exactly those the pattern finds."""
    query = parse(word, ignore_case=ignore_case)
    index.execute("DELETE FROM text_fts")
    index.executemany(
        "INSERT INTO text_fts (rowid, body) VALUES (?, ?)", list(enumerate(bodies, 1))
    )
    want = [n for n, body in enumerate(bodies, 1) if query.regex.search(body)]
    assert sorted(matching_rows(index, query)) == want
    assert query.exact == (ignore_case and len(word) >= MIN_FRAGMENT)


def test_a_pattern_that_backtracks_for_ever_is_given_up_as_too_slow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``(a+)+$`` over a long run of ``a`` tries every way of splitting it: ``re`` never ended
    (``quarry grep`` hung); the search stops after ``MATCH_S`` on the text, saying why."""
    from engine import textsearch
    from engine.textsearch import PatternTooSlow, found_in

    monkeypatch.setattr(textsearch, "MATCH_S", 0.1)
    query = parse(r"(a+)+$", regex=True)
    text = "a" * 4096 + "!"
    with pytest.raises(PatternTooSlow, match=r"took over 0\.1 s on one text"):
        list(matches(text, query))
    with pytest.raises(PatternTooSlow):
        found_in(text, query)
    assert found_in("aaa", query) and [m.text for m in matches("b aaa", query)] == ["aaa"]
