"""A big store browsed from its index shows what the same store held whole shows.

:class:`tui.paged.PagedModel` answers the screens' questions from the store's index a page
at a time; :class:`tui.model.RecordModel` from every row held. Over random records (foreign
ones, odd names: ``test_sqlquery``'s), queries, tabs and sorts, both ways, with and without
the sort B-trees, the two must agree on everything the screens read: the view's length, the
row at each position, each row's position, the tab counts as queried, the groups, the keys
of a status, of a verdict, of the files waiting on a tool, the error messages, a record.
Then a change written to the index while it is browsed: the paged view shows it once told.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.browse import Reads
from engine.db import DB, RecordDB, identity_of
from engine.jsonl import line_of
from engine.records import Record
from engine.store import Store, read_jsonl
from tests.engine.test_sqlquery import queries, records
from tui.loader import load_rows, open_rows
from tui.model import COLUMNS, TABS, RecordModel
from tui.paged import PagedModel


def _write(out: Path, recs: list[Record], *, trees: bool) -> Store:
    """A store of ``recs`` as a sweep leaves it: ``extract.jsonl`` and its index."""
    out.mkdir(parents=True, exist_ok=True)
    recs = sorted(recs, key=lambda r: r.key)
    (out / "extract.jsonl").write_bytes(b"".join(line_of(r) for r in recs))
    with (
        mock.patch("engine.db.SORTED_FROM", 0 if trees else 1 << 62),
        RecordDB.open_writer(out / DB) as db,
    ):
        db.replace_all(recs, identity_of(out / "extract.jsonl"))
        db.make_sorted()
    return Store(out)


def _held(store: Store) -> RecordModel:
    m = RecordModel()
    rows = open_rows(store)
    m.data = rows.table
    for chunk in load_rows(rows):
        m.extend(chunk.rows)
    return m


def _paged(store: Store) -> PagedModel:
    m = PagedModel(store.out / DB)
    rows = open_rows(store)
    rows.table.end_read()
    m.data = rows.table
    m.attach(m.index)
    return m


def _shown(m: RecordModel) -> list[tuple[object, ...] | None]:
    return [m.rows[m.rid_at(i)] for i in range(len(m.view))]


def _same(held: RecordModel, paged: PagedModel) -> None:
    """Everything the screens read of a model, the same of both."""
    assert len(paged) == len(held)
    assert paged.tab_counts() == held.tab_counts()
    assert paged.view_counts() == held.view_counts()
    assert len(paged.view) == len(held.view)
    assert _shown(paged) == _shown(held)
    assert paged.view_keys() == held.view_keys()
    for i in range(len(held.view)):
        key = held.key(held.rid_at(i))
        assert key is not None
        rid = paged.ids[key]
        assert paged.position(rid) == i
    assert paged.reasons == held.reasons


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    recs=records(),
    line=queries().filter(lambda q: "text:" not in q),
    tab=st.sampled_from(TABS),
    column=st.sampled_from(COLUMNS),
    reverse=st.booleans(),
    trees=st.booleans(),
)
def test_a_paged_store_shows_what_the_held_store_shows(
    recs: list[Record], line: str, tab: str, column: str, reverse: bool, trees: bool
) -> None:
    recs = [r for r in recs if read_jsonl(line_of(r)).records]  # (those a store can hold)
    with tempfile.TemporaryDirectory() as tmp:
        store = _write(Path(tmp) / "store", recs, trees=trees)
        held, paged = _held(store), _paged(store)
        try:
            for m in (held, paged):
                m.set_query(line)
                m.set_tab(tab)
                m.set_sort(column, reverse)
            _same(held, paged)
            for m in (held, paged):  # (a view read, then flipped, then another tab, unfiltered)
                m.set_sort(column)
            _same(held, paged)
            for m in (held, paged):
                m.set_tab("all" if tab != "all" else "ok")
            _same(held, paged)
            for m in (held, paged):
                m.set_query("")
            _same(held, paged)
            for status in TABS[1:]:
                assert paged.groups(status) == held.groups(status)
                assert paged.records(paged.rids_with_status(status)) == held.records(
                    held.rids_with_status(status)
                )
            verdicts = ("garbled", "suspect")
            assert sorted(r.key for r in paged.records(paged.rids_with_quality(verdicts))) == (
                sorted(r.key for r in held.records(held.rids_with_quality(verdicts)))
            )
            assert paged.waiting() == held.waiting()
            assert paged.error_messages()() == held.error_messages()()
            for r in recs[:3]:
                assert paged.record_of(r.key) == held.record_of(r.key)
        finally:
            paged.close()


def test_a_change_to_the_index_is_shown_once_told(tmp_path: Path) -> None:
    from engine.records import Status

    recs = [
        Record(root="/r", path=f"f{i:03}.txt", size=i, mtime_ns=0, status=Status.OK, chars=i)
        for i in range(300)
    ]
    store = _write(tmp_path / "store", recs, trees=True)
    paged = _paged(store)
    try:
        paged.set_sort("size", reverse=True)
        assert paged.rows[paged.rid_at(0)][1] == "f299.txt"  # type: ignore[index]
        top = Record(root="/r", path="new.txt", size=10_000, mtime_ns=0, status=Status.EMPTY)
        with RecordDB.open_writer(store.out / DB) as db:
            db.put([top])
            db.drop([("/r", "f299.txt")])
            db.commit()
        assert paged.rows[paged.rid_at(0)][1] == "f299.txt"  # type: ignore[index]
        changed = paged.apply([top], [("/r", "f299.txt")])
        assert changed == {paged.ids["/r", "new.txt"]}
        assert paged.rows[paged.rid_at(0)][1] == "new.txt"  # type: ignore[index]
        assert paged.rows[paged.rid_at(1)][1] == "f298.txt"  # type: ignore[index]
        assert ("/r", "f299.txt") not in paged.ids
        assert paged.tab_counts()["empty"] == 1
        assert len(paged) == 300
    finally:
        paged.close()


def test_counts_from_a_later_index_never_draw_rows_it_lacks(tmp_path: Path) -> None:
    """A query's counts come from a worker's read of the index, maybe after a change this
    snapshot has not seen: pages shorter than they count make the view count again."""
    from engine.records import Status

    recs = [
        Record(root="/r", path=f"f{i:03}.txt", size=i, mtime_ns=0, status=Status.OK)
        for i in range(200)
    ]
    paged = _paged(_write(tmp_path / "store", recs, trees=True))
    try:
        paged.prime_counts("f1", {"all": 150, **{s: 0 for s in TABS[1:]}, "ok": 150})
        paged.set_query("f1")  # (really 100 records: f100-f199)
        assert len(paged.view) == 150
        rows = [paged.rows[paged.rid_at(i)] for i in range(150)]
        assert len(paged.view) == 100
        assert [r[1] for r in rows[:100] if r is not None] == [f"f{i}.txt" for i in range(100, 200)]
        assert paged.rid_at(120) == -1 and paged.rows[-1] is None and paged.key(-1) is None
    finally:
        paged.close()


@pytest.mark.parametrize(
    "line", ["mime:pdf", "!mime:text", "mime:PDF", "extractor:py", "mime:/^text/ size:>3", ""]
)
def test_a_word_over_few_values_keeps_what_the_held_store_keeps(tmp_path: Path, line: str) -> None:
    """MIME types and extractors are decided once a value (read from their sort trees)."""
    from engine.records import Status

    mimes = ["application/pdf", "text/plain", "text/html", "image/png", None, "application/PDF"]
    recs = [
        Record(root="/r", path=f"f{i:03}", size=i, mtime_ns=0, status=Status.OK,
               mime=mimes[i % len(mimes)], extractor=["pypdf", "text", None][i % 3])
        for i in range(60)
    ]  # fmt: skip
    store = _write(tmp_path / "store", recs, trees=True)
    held, paged = _held(store), _paged(store)
    try:
        assert paged.browse is not None and "mime" in paged.browse.values()
        for m in (held, paged):
            m.set_query(line)
        _same(held, paged)
    finally:
        paged.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=records(), line=queries().filter(lambda q: "text:" not in q))
def test_a_count_walked_in_two_halves_is_the_count_walked_once(
    recs: list[Record], line: str
) -> None:
    """A query's count of a big index walks two halves of the statuses at once: the same
    counts per tab as one walk, and as the held store's."""
    recs = [r for r in recs if read_jsonl(line_of(r)).records]
    with tempfile.TemporaryDirectory() as tmp:
        store = _write(Path(tmp) / "store", recs, trees=True)
        held, paged = _held(store), _paged(store)
        try:
            held.set_query(line)
            paged.set_query(line)
            query = paged.query
            if not query.active:
                return
            once = paged.count_query(query, {})
            with mock.patch("engine.browse.SPLIT_FROM", 0):
                twice = paged.count_query(query, {})
            assert once == twice == held.view_counts()
        finally:
            paged.close()


def _halves_of(store: Store) -> tuple[list[str], list[str]] | None:
    """How a big index of ``store`` would cut a key query's count in two."""
    paged = _paged(store)
    try:
        assert paged.browse is not None
        with mock.patch("engine.browse.SPLIT_FROM", 0):
            return paged.browse._halves(paged._where(), Reads.KEY)
    finally:
        paged.close()


def test_a_count_is_cut_in_two_halves_of_about_as_many_records() -> None:
    """The statuses go to two halves, the biggest first to the smaller half; none when one
    status holds three quarters of the records, the index has no fields tree, the clause
    reads rows, or the index is small."""
    recs = [
        Record("/r", f"{status}{i}.txt", 1, 1, status)
        for status, n in (("ok", 6), ("error", 3), ("empty", 2), ("skipped", 1))
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = _write(Path(tmp) / "store", recs, trees=True)
        assert _halves_of(store) == (["ok"], ["error", "empty", "skipped"])
        paged = _paged(store)
        try:
            assert paged.browse is not None
            with mock.patch("engine.browse.SPLIT_FROM", 0):
                assert paged.browse._halves(paged._where(), Reads.ROW) is None
            assert paged.browse._halves(paged._where(), Reads.KEY) is None  # (a small index)
        finally:
            paged.close()
        more = [Record("/r", f"more{i}.txt", 1, 1, "ok") for i in range(30)]
        assert _halves_of(_write(Path(tmp) / "lop", [*recs, *more], trees=True)) is None
        assert _halves_of(_write(Path(tmp) / "bare", recs, trees=False)) is None
