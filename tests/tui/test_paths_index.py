"""A query's word inside a path, over a big store, is read through the paths' trigram index.

:data:`engine.db.PATHS_INDEX` finds the records whose path holds a word's trigrams; the query
is then read by row id (:attr:`engine.sqlquery.Where.driven`) and still decided by its own
clause. It must keep exactly what the held store keeps: case folded as Python folds it (the
``İ`` the index keeps as it is, the Kelvin sign it folds), a record written or removed after
the index was built, a word found in too many paths (read by a walk instead).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.db import DB, RecordDB
from engine.records import Record, Status
from tests.tui.test_paged_model import _held, _paged, _same, _write
from tui.paged import PagedModel

NAMES = (
    "axİb.txt",
    "AXIB.txt",
    "Kab.txt",
    "kab.txt",
    "\u212aab.k",
    "ab.txt",
    "x/axi/y.txt",
    'quote"ab',
)


def _records(names: tuple[str, ...]) -> list[Record]:
    return [
        Record(root="/r", path=name, size=i, mtime_ns=0, status=Status.OK)
        for i, name in enumerate(names)
    ]


def _driven(paged: PagedModel) -> bool:
    return paged._where().driven


@pytest.mark.parametrize("line", ["axi", "AXI", "kab", "Kab", "xib", 'e"a', "axi y.t", "ab"])
def test_a_path_word_through_the_index_keeps_what_the_held_store_keeps(
    tmp_path: Path, line: str
) -> None:
    store = _write(tmp_path / "store", _records(NAMES), trees=True)
    held, paged = _held(store), _paged(store)
    try:
        for m in (held, paged):
            m.set_query(line)
        assert _driven(paged) == all(len(w) >= 3 for w in line.split())
        _same(held, paged)
        assert len(held.view) > 0 or line == "xib"
    finally:
        paged.close()


def test_records_written_after_the_index_are_found_and_removed_ones_are_not(
    tmp_path: Path,
) -> None:
    store = _write(tmp_path / "store", _records(NAMES), trees=True)
    paged = _paged(store)
    try:
        new = Record(root="/r", path="late/axis.txt", size=1, mtime_ns=0, status=Status.OK)
        with RecordDB.open_writer(store.out / DB) as db:
            db.put([new])
            db.drop([("/r", "x/axi/y.txt")])
            db.commit()
        paged.apply([new], [("/r", "x/axi/y.txt")])
        paged.set_query("axi")
        assert _driven(paged)
        shown = sorted(paged.rows[paged.rid_at(i)][1] for i in range(len(paged.view)))  # type: ignore[index]
        assert shown == ["AXIB.txt", "axİb.txt", "late/axis.txt"]
        assert paged.count_query(paged.query, {}) == {
            **{tab: 0 for tab in ("empty", "unsupported", "error", "skipped")},
            "all": 3,
            "ok": 3,
        }
    finally:
        paged.close()


def test_a_word_in_too_many_paths_is_read_by_a_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.sqlquery.DRIVE_UNDER", 2)
    store = _write(tmp_path / "store", _records(NAMES), trees=True)
    held, paged = _held(store), _paged(store)
    try:
        for m in (held, paged):
            m.set_query("txt")  # (in five paths)
        assert not _driven(paged)
        _same(held, paged)
        for m in (held, paged):
            m.set_query("axib")  # (in two)
        assert not _driven(paged)  # (two found: not under two)
        _same(held, paged)
        for m in (held, paged):
            m.set_query("kab")
        assert not _driven(paged)
        for m in (held, paged):
            m.set_query("quote")
        assert _driven(paged)
        _same(held, paged)
    finally:
        paged.close()
