"""The index's records in each sort order, a page at a time, are Python's order of them.

Random records (the names and values of ``test_sqlquery``: undecodable bytes, accents, missing
fields, unknown verdicts) in a real index: for every sort column, both ways, the whole order
SQLite gives equals the records sorted by :func:`engine.pages.sort_key`, and reading it in
pages from each page's last row (keyset) gives the same rows, none twice, none left out;
with a big store's sort B-trees (walked, nothing sorted: the plan is held) or without.
"""

from __future__ import annotations

import sqlite3
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.db import RecordDB
from engine.jsonl import line_of
from engine.pages import SORTS, After, page, page_sql, sort_key
from engine.query import Query
from engine.records import Key, Record
from engine.sqlquery import compile_where
from engine.store import read_jsonl
from tests.engine.test_sqlquery import records

EVERYTHING = compile_where(Query.parse(""))


def _keys(lines: list[bytes]) -> list[Key]:
    return [r.key for r in read_jsonl(b"".join(lines)).records]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recs=records(),
    column=st.sampled_from(SORTS),
    reverse=st.booleans(),
    size=st.integers(1, 7),
    trees=st.booleans(),
)
def test_pages_read_by_keyset_are_the_python_order(
    recs: list[Record], column: str, reverse: bool, size: int, trees: bool
) -> None:
    recs = [r for r in recs if read_jsonl(line_of(r)).records]  # (those a store can hold)
    want = [r.key for r in sorted(recs, key=sort_key(column), reverse=reverse)]
    by_key = {r.key: r for r in recs}
    with RecordDB.open_memory() as db, mock.patch("engine.db.SORTED_FROM", 0 if trees else 1 << 62):
        db.put(recs)
        db.commit()
        db.make_sorted()  # (with the sort B-trees a big store has, or without)
        assert _keys(list(page(db.con, EVERYTHING, column, reverse=reverse))) == want
        got: list[Key] = []
        after: After | None = None
        while True:
            lines = list(page(db.con, EVERYTHING, column, reverse=reverse, after=after, limit=size))
            if not lines:
                break
            keys = _keys(lines)
            got += keys
            after = After.of(by_key[keys[-1]], column)
        assert got == want


def test_an_unknown_sort_column_is_refused() -> None:
    with RecordDB.open_memory() as db, pytest.raises(ValueError, match="one of path"):
        list(page(db.con, EVERYTHING, "colour"))


def test_a_filtered_page_keeps_only_what_the_query_keeps() -> None:
    recs = [
        Record("/r", f"f{i}.txt", size=i * 100, mtime_ns=1, status="ok" if i % 2 else "error")
        for i in range(10)
    ]
    where = compile_where(Query.parse("status:ok"))
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        where.install(db.con)
        lines = list(page(db.con, where, "size", reverse=True, limit=3))
    assert _keys(lines) == [("/r", "f9.txt"), ("/r", "f7.txt"), ("/r", "f5.txt")]


def _plan(con: sqlite3.Connection, sql: str, params: list[object]) -> str:
    return " | ".join(row[-1] for row in con.execute("EXPLAIN QUERY PLAN " + sql, params))


@pytest.mark.parametrize("column", [c for c in SORTS if c != "path"])
@pytest.mark.parametrize("reverse", [False, True])
def test_a_big_stores_page_walks_its_sort_tree_and_sorts_nothing(
    column: str, reverse: bool
) -> None:
    recs = [
        Record("/r", f"f{i}.txt", size=i, mtime_ns=1, status="ok", ms=i % 7, chars=i % 3)
        for i in range(20)
    ]
    place = After.of(recs[5], column)
    with RecordDB.open_memory() as db, mock.patch("engine.db.SORTED_FROM", 10):
        db.put(recs)
        db.commit()
        assert db.make_sorted() == (
            *(c for c in SORTS if c != "path"),
            "_fields",
            "_triage",
            "_paths",
        )
        for after in (None, place):
            sql, params = page_sql(EVERYTHING, column, reverse=reverse, after=after, limit=5)
            plan = _plan(db.con, sql, params)
            assert f"INDEX sort_{column}" in plan, plan
            assert "TEMP B-TREE" not in plan, plan


def test_a_small_stores_index_gets_no_sort_tree() -> None:
    with RecordDB.open_memory() as db, mock.patch("engine.db.SORTED_FROM", 10):
        db.put([Record("/r", f"f{i}.txt", size=i, mtime_ns=1, status="ok") for i in range(9)])
        db.commit()
        assert db.make_sorted() == ()
        assert db.sorted_columns() == frozenset()
