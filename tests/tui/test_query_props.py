"""Properties of the query line's parser: a word naming no field, or a value no record can
have, is said, never applied."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.query import CLOSED, FIELDS, TEXT_FIELDS, Query

names = st.from_regex(r"[a-z]{1,12}", fullmatch=True).filter(lambda n: n not in FIELDS)
values = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), max_size=12)


@given(names, values, st.booleans())
def test_an_unknown_field_is_an_error_naming_the_fields(name: str, value: str, bang: bool) -> None:
    query = Query.parse(("!" if bang else "") + f"{name}:{value}")
    assert not query.active  # it filters no record
    assert query.error is not None and f"no field {name}:" in query.error
    assert all(field in query.error for field in FIELDS)


@given(
    st.sampled_from([f for f in TEXT_FIELDS if f not in CLOSED]),
    st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
)
def test_a_known_field_is_a_term_and_no_error(field: str, value: str) -> None:
    query = Query.parse(f"{field}:{value}")
    assert query.active and query.error is None
    assert [t.field for t in query.terms] == [field]


closed_values = st.one_of(
    st.text(st.sampled_from("okemptyunsupportedrskipgoodsuspectgarbledOKX,^$|()."), min_size=1),
    st.sampled_from([*CLOSED["status"], *CLOSED["quality"], "suspect,garbled", "err", "sus"]),
)


@given(st.sampled_from(sorted(CLOSED)), closed_values, st.booleans())
def test_a_closed_field_s_value_keeps_one_of_its_values_or_is_said(
    field: str, value: str, bang: bool
) -> None:
    """``status:bogus`` filtered every record out, a silent "0 of N": a status or quality
    term either matches one of the field's values or says what they are, and filters none."""
    query = Query.parse(("!" if bang else "") + f"{field}:{value}")
    names = CLOSED[field]
    if query.bad:
        assert not query.active and query.error is not None
        assert f"{field}: " in query.error and " ".join(names) in query.error
        return
    (term,) = query.terms
    assert any(term.hit(name) for name in names)  # some record can pass
    if "," in value and not set("^$|().") & set(value):  # a list: every name one of them
        assert all(n in names for n in value.lower().split(",") if n)


def test_a_field_pattern_that_may_backtrack_for_ever_is_bounded_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``path:(a+)+$`` over a name with a long run of ``a``: ``re`` tried every way of
    splitting it, in the dashboard's drawing thread (``(.*)*x`` took 1.5 s over 24
    characters without an ``x``, twice as long for each one more). Such a pattern runs
    bounded: past FIELD_S on a value it matches nothing from then on, and the query says so.
    Any other stays on ``re`` (no cost to the common case)."""
    import re

    from engine import query as query_mod

    monkeypatch.setattr(query_mod, "FIELD_S", 0.05)
    plain = Query.parse(r"path:\d+").terms[0]
    assert isinstance(plain.pattern, re.Pattern)
    q = Query.parse("path:(a+)+$")
    term = q.terms[0]
    assert not isinstance(term.pattern, re.Pattern) and q.error is None
    assert term.hit("aaa") and not term.hit("b")  # bounded, the same answers
    assert not term.hit("a" * 4000 + "!")  # given up
    assert term.slow and not term.hit("aaa")  # nothing more is tried
    assert q.error is not None and q.error.startswith("path:(a+)+$ took over 0.05 s on one value")
    assert Query.parse("path:(a+)+$").error is None  # a new query tries again


@given(
    st.lists(
        st.sampled_from(["mime:pdf", "status:error", "!path:tmp", "size:>10K", "report"]),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from(["OR", "AND", "NOT"]),
    st.integers(min_value=0, max_value=3),
)
def test_a_word_of_another_query_language_is_said_never_a_path_word(
    terms: list[str], word: str, at: int
) -> None:
    """``mime:pdf OR status:error`` kept the records whose path held ``OR`` (most: none)."""
    words = [*terms]
    words.insert(min(at, len(words)), word)
    query = Query.parse(" ".join(words))
    assert query.error is not None and query.error.startswith(f"{word}: ")
    assert all(t.value != word for t in query.terms)  # not applied as a path word
    assert Query.parse(f"{' '.join(terms)} path:{word}").error is None  # as asked: a path word
    assert Query.parse(word).error is None  # alone: a path word, as before (typing it, or one)
