"""A window onto an index's records gives, at any position, Python's order of the kept ones.

Random records and queries (``test_sqlquery``'s), every sort column both ways, with a big
store's sort B-trees or without, and a random run of reads: short walks from a known place,
far jumps from either end (the window's thresholds made small so that every way is taken),
pages that walk the order's B-tree or that SQLite finds its own way,
reads past the end. Each read must be the slice of the records the query keeps, sorted by
:func:`engine.pages.sort_key`; the count and each record's position must agree with it.
"""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import window as window_mod
from engine.db import RecordDB
from engine.jsonl import line_of
from engine.pages import SORTS, page_sql, sort_key
from engine.query import Query
from engine.records import Record
from engine.sqlquery import compile_where, known_values
from engine.store import read_jsonl
from engine.window import Window
from tests.engine.test_sqlquery import queries, records


def _shown(r: Record) -> tuple[object, ...]:
    """A record as a window's row gives it."""
    quality = r.quality.verdict if r.quality is not None else None
    return (r.root, r.path, r.status, quality, r.reason, r.mime, r.extractor, r.chars, r.pages,
            r.size, r.ms, r.reused)  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recs=records(),
    line=queries().filter(lambda q: "text:" not in q),
    column=st.sampled_from(SORTS),
    reverse=st.booleans(),
    trees=st.booleans(),
    reads=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 9)), min_size=1, max_size=8),
    far=st.integers(0, 6),
    step=st.integers(1, 4),
    walk=st.booleans(),
)
def test_every_read_is_the_slice_of_the_python_order(
    recs: list[Record],
    line: str,
    column: str,
    reverse: bool,
    trees: bool,
    reads: list[tuple[int, int]],
    far: int,
    step: int,
    walk: bool,
) -> None:
    recs = [r for r in recs if read_jsonl(line_of(r)).records]  # (those a store can hold)
    query = Query.parse(line)
    kept = [r for r in recs if query.matches_record(r, lambda _t: False)]
    want = [_shown(r) for r in sorted(kept, key=sort_key(column), reverse=reverse)]
    with (
        RecordDB.open_memory() as db,
        mock.patch("engine.db.SORTED_FROM", 0 if trees else 1 << 62),
        mock.patch.object(window_mod, "FAR", far),
        mock.patch.object(window_mod, "STEP", step),
        mock.patch.object(window_mod, "WALK_SHARE", 0.0 if walk else 2.0),
    ):
        db.put(recs)
        db.commit()
        db.make_sorted()
        where = compile_where(query, {}, known_values(db.con))
        window = Window(db.con, where, column, reverse=reverse)
        assert window.count() == len(want), line
        for start, n in reads:
            got = [tuple(row) for row in window.rows(start, n)]
            assert got == want[start : start + n], (line, start, n)
        for pos, r in enumerate(sorted(kept, key=sort_key(column), reverse=reverse)):
            assert window.position(r.key) == pos
        for r in recs:
            if r not in kept:
                assert window.position(r.key) is None


def test_an_unknown_sort_column_is_refused() -> None:
    with RecordDB.open_memory() as db, pytest.raises(ValueError, match="colour"):
        Window(db.con, compile_where(Query.parse("")), "colour")


def test_a_whole_store_is_counted_from_the_counts_it_keeps() -> None:
    recs = [Record("/r", f"f{i}.txt", size=i, mtime_ns=1, status="ok") for i in range(30)]
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        asked: list[str] = []
        db.con.set_trace_callback(asked.append)
        assert Window(db.con, compile_where(Query.parse(""))).count() == 30
        assert not [s for s in asked if "FROM records" in s]


def _plans(db: RecordDB, query: str, column: str) -> list[str]:
    """The plans of the statements a window over ``query`` runs for its first page."""
    asked: list[tuple[str, list[object]]] = []

    def noted(*args: object, **kwargs: object) -> tuple[str, list[object]]:
        got = page_sql(*args, **kwargs)  # type: ignore[arg-type]
        asked.append(got)
        return got

    where = compile_where(Query.parse(query), {}, known_values(db.con))
    with mock.patch.object(window_mod, "page_sql", noted):
        Window(db.con, where, column, reverse=True).rows(0, 5)
    return [
        " | ".join(row[-1] for row in db.con.execute("EXPLAIN QUERY PLAN " + sql, params))
        for sql, params in asked
    ]


def test_a_tab_holding_many_records_walks_the_order_and_a_rare_one_is_sorted() -> None:
    recs = [
        Record("/r", f"f{i:03d}.txt", size=i, mtime_ns=1, ms=i % 13,
               status="error" if i % 10 == 0 else "skipped" if i == 5 else "ok")
        for i in range(300)
    ]  # fmt: skip
    with RecordDB.open_memory() as db, mock.patch("engine.db.SORTED_FROM", 10):
        db.put(recs)
        db.commit()
        db.make_sorted()
        with mock.patch.object(window_mod, "WALK_SHARE", 0.05):
            (common,) = _plans(db, "status:error", "ms")  # a tenth of the records
            (rare,) = _plans(db, "status:skipped", "ms")  # one
    assert "sort_ms" in common and "TEMP B-TREE" not in common, common
    assert "sort_ms" not in rare, rare
