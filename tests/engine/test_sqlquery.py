"""The query line compiled to SQL keeps exactly the records the query keeps in Python.

Random records (names with the characters Python's ``lower`` folds into ASCII, undecodable
bytes, regex characters, NULs; missing fields; verdicts this quarry does not know) go into a
real index; random query lines are compiled by :func:`engine.sqlquery.compile_where` and run
by SQLite. The keys kept must be those :meth:`Query.matches_record` keeps.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.db import RecordDB, name_of
from engine.quality import Quality
from engine.query import NUMBER_FIELDS, TEXT_FIELDS, Query, TextTerm, field_value
from engine.records import STATUSES, Key, Record
from engine.sqlquery import compile_where, known_values

ALPHABET = "abkiAKI \u0130\u212a\u00e9\u00c9.*[]()|^$\\/_-0\udc80\x00"
"""Characters names and values are made of: ASCII and its cases, the two characters that
lower into ASCII, accents, regex characters, an undecodable byte, a NUL."""

words = st.text(ALPHABET, min_size=0, max_size=6)
texts = st.text(ALPHABET.replace("\udc80", ""), min_size=0, max_size=6)
"""A record's texts (a store's parser refuses a lone surrogate in them: only names hold one)."""
maybe = st.none() | texts


@st.composite
def records(draw: st.DrawFn) -> list[Record]:
    count = draw(st.integers(0, 25))
    paths = draw(st.lists(words.filter(bool), min_size=count, max_size=count, unique=True))
    out = []
    for path in paths:
        clean = path.replace("\x00", "_")  # (a path never holds a NUL)
        quality = draw(st.none() | st.sampled_from(("good", "suspect", "garbled", "novel")))
        out.append(
            Record(
                root=draw(st.sampled_from(("/r", "/r\u00e9", "/s"))),
                path=clean,
                size=draw(st.integers(0, 5000)),
                mtime_ns=1,
                status=draw(st.sampled_from((*STATUSES, "odd"))),
                mime=draw(texts),
                reason=draw(maybe),
                extractor=draw(maybe),
                chars=draw(st.integers(0, 5000)),
                pages=draw(st.none() | st.integers(0, 20)),
                error=draw(maybe),
                why=draw(maybe),
                ms=draw(st.integers(0, 5000)),
                quality=None if quality is None else Quality(quality),
            )
        )
    return list({r.key: r for r in out}.values())


def _value() -> st.SearchStrategy[str]:
    quoted = words.filter(bool).map(lambda w: '"' + w.replace('"', "") + '"')
    return st.one_of(words.filter(bool), quoted, st.sampled_from(("good,suspect", "garbled")))


@st.composite
def queries(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        bang = draw(st.sampled_from(("", "!")))
        kind = draw(st.sampled_from(("word", "field", "number", "text")))
        if kind == "word":
            parts.append(bang + draw(words.filter(lambda w: bool(w.strip()) and ":" not in w)))
        elif kind == "field":
            parts.append(f"{bang}{draw(st.sampled_from(TEXT_FIELDS))}:{draw(_value())}")
        elif kind == "number":
            op = draw(st.sampled_from(("", ">", "<", ">=", "<=")))
            number = draw(st.integers(0, 5000).map(str) | st.sampled_from(("1k", "2.5K", "0")))
            parts.append(f"{bang}{draw(st.sampled_from(NUMBER_FIELDS))}:{op}{number}")
        else:
            parts.append(f"{bang}text:{draw(st.sampled_from(string.ascii_lowercase))}")
    return " ".join(parts)


def _kept(
    db: RecordDB, query: Query, answers: dict[TextTerm, frozenset[Key]], known: bool = False
) -> set[Key]:
    where = compile_where(query, answers, known_values(db.con) if known else None)
    where.install(db.con)
    rows = db.con.execute(f"SELECT root, path FROM records WHERE {where.sql}", where.params)
    return {(name_of(r), name_of(p)) for r, p in rows}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records(), line=queries(), data=st.data())
def test_sql_keeps_what_the_query_keeps(recs: list[Record], line: str, data: st.DataObject) -> None:
    query = Query.parse(line)
    keys = [r.key for r in recs]
    answers = {t: frozenset(data.draw(st.lists(st.sampled_from(keys)))) if keys else frozenset()
               for t in query.searches}  # fmt: skip
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        got = _kept(db, query, answers)
        # the few-valued fields decided once a value, from the index's counts: the same
        assert _kept(db, query, answers, known=True) == got, line
    want = {r.key for r in recs if query.matches_record(r, lambda t, r=r: r.key in answers[t])}
    assert got == want, line


def test_a_record_without_pages_passes_only_an_inverted_page_term() -> None:
    recs = [
        Record("/r", "a.txt", 1, 1, "ok", pages=None),
        Record("/r", "b.pdf", 1, 1, "ok", pages=3),
    ]
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        assert _kept(db, Query.parse("pages:<5"), {}) == {("/r", "b.pdf")}
        assert _kept(db, Query.parse("!pages:<5"), {}) == {("/r", "a.txt")}


def test_the_kelvin_sign_and_dotted_capital_i_match_as_python_folds_them() -> None:
    kelvin, dotted, plain = ("/r", "\u212a.doc"), ("/r", "\u0130.doc"), ("/r", "other.doc")
    with RecordDB.open_memory() as db:
        db.put([Record(*key, 1, 1, "ok") for key in (kelvin, dotted, plain)])
        db.commit()
        assert _kept(db, Query.parse("k"), {}) == {kelvin}
        assert _kept(db, Query.parse("i"), {}) == {dotted}
        assert _kept(db, Query.parse("!i"), {}) == {kelvin, plain}
        assert _kept(db, Query.parse("K"), {}) == set()  # smart case: exact, and not the sign


def test_field_value_is_what_the_dashboard_shows() -> None:
    rec = Record("/r", "a", 1, 1, "ok", quality=Quality("novel"))
    assert field_value(rec, "quality") is None
    assert field_value(Record("/r", "a", 1, 1, "ok"), "pages") is None


@pytest.mark.parametrize("field", ["error", "why", "reason", "extractor", "mime"])
def test_a_record_without_a_field_is_kept_by_what_keeps_an_empty_one(field: str) -> None:
    """A missing text field is the empty text: a term that keeps "" keeps the record (the
    clause tests ``IS NOT NULL`` first only for a term that keeps no empty text)."""
    bare, full = ("/r", "a.txt"), ("/r", "b.txt")
    with RecordDB.open_memory() as db:
        db.put([Record(*bare, 1, 1, "ok"), Record(*full, 1, 1, "ok", **{field: "xref"})])
        db.commit()
        assert _kept(db, Query.parse(f"{field}:^$"), {}) == {bare}
        assert _kept(db, Query.parse(f"{field}:x*"), {}) == {bare, full}
        assert _kept(db, Query.parse(f"{field}:xref"), {}) == {full}
        assert _kept(db, Query.parse(f"!{field}:xref"), {}) == {bare}
        assert _kept(db, Query.parse(f"!{field}:^$"), {}) == {full}
