"""A big store's index carries a sort B-tree per dashboard column (issue 26).

From :data:`engine.db.SORTED_FROM` records, a whole sweep's end and a build of the index from
``extract.jsonl`` (the user's cache, a foreign store) leave one B-tree of each sort column's
expression, so a page of any order is a walk of a few rows (``test_pages.py`` holds the
plan); a writer that upserts many rows (past :data:`engine.db.UNSORTED_PAST`) drops them
rather than keep them up row by row, and the next whole sweep builds them again. Here the
thresholds are lowered to fit a test's folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest

from engine import db as db_mod
from engine.db import DB, RecordDB
from engine.events import Notice, SweepFinished
from engine.pages import SORTS
from engine.readindex import cached_index_path, reading_index
from engine.records import Record
from engine.store import Store, read_jsonl
from engine.sweep import Sweeper, SweepOptions, sweep
from tests.engine.test_lean_sweep import NONE
from tests.engine.test_readindex import _seed_store

ALL = frozenset(c for c in SORTS if c != "path") | {"_fields", "_triage", "_paths"}
"""Every sort B-tree, the fields tree, the triage tree and the paths' index (``_fields``,
``_triage``, ``_paths``: built and dropped with them)."""


def _recs(n: int, status: str = "ok") -> list[Record]:
    return [Record("/r", f"f{i:04d}.txt", size=i, mtime_ns=1, status=status) for i in range(n)]


def _tree(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"f{i:03d}.txt").write_text(f"text number {i}\n")
    return root


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thresholds lowered to fit a test's folder: trees from 10 records, dropped past
    15 upserts."""
    monkeypatch.setattr(db_mod, "SORTED_FROM", 10)
    monkeypatch.setattr(db_mod, "UNSORTED_PAST", 15)


def _sorted_with(db: RecordDB, n: int) -> None:
    """``n`` records written in one run, then the trees built, as a sweep's end builds them."""
    db.put(_recs(n))
    db.commit()
    db.run_ended()
    db.make_sorted()


def _trees(db: RecordDB) -> frozenset[str]:
    """The sort B-trees an index has, ``_fields`` when it has the fields tree, ``_triage``
    when it has the triage tree."""
    extra = {"_fields"} if db.has_fields_tree() else set()
    extra |= {"_triage"} if db.has_triage_tree() else set()
    return db.sorted_columns() | extra | ({"_paths"} if db.has_paths_index() else set())


def _sorted_of(path: Path) -> frozenset[str]:
    with RecordDB.open_reader(path) as db:
        return _trees(db)


def test_a_whole_sweep_of_a_big_store_leaves_its_sort_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_mod, "SORTED_FROM", 20)
    small, big = _tree(tmp_path / "small", 19), _tree(tmp_path / "big", 20)
    sweep([small], SweepOptions(out=tmp_path / "s1", tools=NONE, workers=1))
    sweep([big], SweepOptions(out=tmp_path / "s2", tools=NONE, workers=1))
    assert _sorted_of(tmp_path / "s1" / DB) == frozenset()
    assert _sorted_of(tmp_path / "s2" / DB) == ALL


def test_many_upserts_drop_the_trees_and_the_next_whole_sweep_builds_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_mod, "SORTED_FROM", 10)
    monkeypatch.setattr(db_mod, "UNSORTED_PAST", 15)
    root, out = _tree(tmp_path / "docs", 30), tmp_path / "store"
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _sorted_of(out / DB) == ALL
    with RecordDB.open_writer(out / DB) as db:
        db.put(_recs(10))
        db.commit()
        assert _trees(db) == ALL  # a few rows: kept up as they go
        db.put(_recs(10))
        assert _trees(db) == frozenset()  # past UNSORTED_PAST: dropped
        db.rollback()
        assert _trees(db) == ALL  # (the drop was in the transaction undone)
        db.put(_recs(20))
        db.commit()
        assert _trees(db) == frozenset()
    # a sweep whose every file changed: the writer drops them, its end builds them again
    for f in root.iterdir():
        f.write_text(f.read_text() + "more\n")
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _sorted_of(out / DB) == ALL


def test_a_rebuilt_index_gets_them_without_a_drop_per_row(tmp_path: Path) -> None:
    with mock.patch("engine.db.SORTED_FROM", 10), RecordDB.open_writer(tmp_path / DB) as db:
        db.put(_recs(12))
        db.commit()
        db.make_sorted()
        assert _trees(db) == ALL
        db.replace_all(_recs(40, status="error"), None)
        assert _trees(db) == frozenset()  # dropped while every row went in
        columns = tuple(sorted(ALL - {"_fields", "_triage", "_paths"}, key=SORTS.index))
        assert db.make_sorted() == (*columns, "_fields", "_triage", "_paths")
        rows = db.con.execute(
            "SELECT count(*) FROM records INDEXED BY sort_status WHERE status = 'error'"
        ).fetchone()
        assert rows == (40,)  # the tree holds every row of the rebuild


def _foreign_big_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store without an index (the seed's) past a :data:`SORTED_FROM` lowered to 20."""
    monkeypatch.setattr(db_mod, "SORTED_FROM", 20)
    out = tmp_path / "store"
    out.mkdir()
    _seed_store(out, tmp_path / "docs", {f"f{i:03d}.txt": f"text {i}\n" for i in range(25)})
    return out


def test_a_foreign_big_store_gets_them_in_its_cached_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _foreign_big_store(tmp_path, monkeypatch)
    built = reading_index(Store(out))
    assert built is not None and built == cached_index_path(Store(out))
    assert _sorted_of(built) == ALL
    assert not (out / DB).exists()  # never beside the store


def test_a_build_stopped_while_sorting_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _foreign_big_store(tmp_path, monkeypatch)
    asked: list[str] = []
    real = RecordDB.make_sorted

    def sorting(self: RecordDB, stop: object = None) -> tuple[str, ...]:
        asked.append("sorting")
        return real(self, stop)  # type: ignore[arg-type]

    monkeypatch.setattr(RecordDB, "make_sorted", sorting)
    assert reading_index(Store(out), stop=lambda: bool(asked)) is None
    assert asked == ["sorting"]
    cached = cached_index_path(Store(out))
    assert cached is not None
    assert not cached.exists()
    assert not [p for p in os.listdir(cached.parent) if p.startswith(DB)]


def test_the_ordering_is_said_as_it_begins_and_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_mod, "SORTED_FROM", 20)
    root, out = _tree(tmp_path / "docs", 20), tmp_path / "store"
    for expected in (["ordering", "finished"], ["finished"]):
        said: list[str] = []

        def heard(event: object, said: list[str] = said) -> None:
            if isinstance(event, Notice) and "sorting the index" in event.message:
                assert _sorted_of(out / DB) == frozenset()  # said before, not after
                said.append("ordering")
            elif isinstance(event, SweepFinished):
                said.append("finished")

        sweep([root], SweepOptions(out=out, tools=NONE, workers=1), heard)
        assert said == expected  # (the second sweep: the trees are there already)
    assert _sorted_of(out / DB) == ALL


def test_small_runs_keep_the_trees_up_however_many_there_are(tmp_path: Path, lowered: None) -> None:
    with RecordDB.open_writer(tmp_path / DB) as db:
        _sorted_with(db, 12)
        for _ in range(5):  # a watching session's batches: 50 upserts in all
            db.put(_recs(10))
            db.commit()
            db.run_ended()
        assert _trees(db) == ALL


def test_a_part_of_a_big_store_swept_anew_gets_its_trees_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_mod, "SORTED_FROM", 10)
    monkeypatch.setattr(db_mod, "UNSORTED_PAST", 15)
    root, out = _tree(tmp_path / "docs", 10), tmp_path / "store"
    sub = _tree(root / "sub", 30)
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _sorted_of(out / DB) == ALL
    for f in sub.iterdir():
        f.write_text(f.read_text() + "more\n")
    with Sweeper([root], SweepOptions(out=out, tools=NONE, workers=1)) as sweeper:
        sweeper.run(only={str(root): [f"sub/{f.name}" for f in sub.iterdir()]})  # (a batch's)
    with RecordDB.open_reader(out / DB) as db:
        assert len(db) == 40
        assert _trees(db) == ALL


def test_a_fields_tree_of_before_the_error_and_why_is_built_again(tmp_path: Path) -> None:
    """Session 28's fields tree holds the error and the ``why`` too (a query over them walked
    the table): an index whose tree lacks them wants it built again, and gets it."""
    from engine.browse import Reads, reads_of
    from engine.query import Query

    old = "status, reason, quality, mime, extractor, size, chars, pages, ms, root, path"
    with mock.patch("engine.db.SORTED_FROM", 10), RecordDB.open_writer(tmp_path / DB) as db:
        db.put(_recs(12))
        db.commit()
        db.make_sorted()
        assert not db.wants_sorted()
        db.con.execute("DROP INDEX sort__fields")
        db.con.execute(f"CREATE INDEX sort__fields ON records ({old})")
        assert not db.has_fields_tree() and db.wants_sorted()
        assert db.make_sorted() == ("_fields",)
        assert db.has_fields_tree() and not db.wants_sorted()
    for line in ("error:xref", "why:new", "!error:bad reason:corrupt size:>1"):
        assert reads_of(Query.parse(line)) is Reads.FIELDS


def test_a_merge_that_flags_every_record_reused_keeps_the_index_of_a_big_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lowered: None
) -> None:
    """The first sweep after a cold one flags every record reused as it merges the walk with
    the index, on the connection it reads the rows on. Past :data:`engine.db.UNSORTED_PAST`
    of them the writer drops the sort B-trees, which SQLite refused while the merge's
    statement was still stepping ("database table is locked"): the index failed, was dropped
    and rebuilt, and the sweep loaded every record (2 GB at a million)."""
    from engine import dbindex
    from engine.session import Session
    from engine.sweep import _Journaled
    from tests.engine.watchkit import options

    monkeypatch.setattr(dbindex, "ROWS_BATCH", 8)
    monkeypatch.setattr(_Journaled, "BATCH", 5)
    root, out = _tree(tmp_path / "docs", 40), tmp_path / "store"
    for f in root.iterdir():  # (written long before the sweep: its verdicts stand)
        os.utime(f, (1e9, 1e9))
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    with RecordDB.open_reader(out / DB) as db:
        made = db.point().index
    heard: list[object] = []
    loads: list[int] = []
    load = Store.load
    monkeypatch.setattr(Store, "load", lambda self: loads.append(1) or load(self))
    opts = SweepOptions(out=out, tools=NONE, workers=1)
    session = Session([root], opts, heard.append, watch_options=options(False))
    try:
        session.sweep_then_watch()
    finally:
        session.close()
    said = [e.message for e in heard if isinstance(e, Notice)]
    assert not [m for m in said if "failed" in m or "rebuil" in m], said
    with RecordDB.open_reader(out / DB) as db:
        assert db.point().index == made  # (not dropped and made anew)
        assert len(db) == 40
        assert all(r.reused for r in read_jsonl(b"".join(db.lines())).records)
        assert _trees(db) == ALL  # (dropped by the flags, built again at the sweep's end)
    assert not loads


def test_a_drop_of_the_trees_refused_by_a_statement_still_reading_waits_for_its_end(
    tmp_path: Path, lowered: None
) -> None:
    """SQLite refuses to drop a B-tree while a statement of the writer's own connection is
    still stepping: the trees are kept up (every one of them: none half dropped) and the
    drop is asked again further on, once nothing reads; the index never fails for it."""
    with RecordDB.open_writer(tmp_path / DB) as db:
        _sorted_with(db, 40)
        reading = db.con.execute("SELECT path FROM records ORDER BY path")
        assert reading.fetchone() is not None  # (a statement stepping, as a merge's was)
        db.put(_recs(20))
        assert _trees(db) == ALL and not db.dropped_sorted  # (refused: kept, all of them)
        db.put(_recs(20))
        assert _trees(db) == ALL  # (not asked again before UNSORTED_PAST more)
        assert len(reading.fetchall()) == 39
        db.put(_recs(20))
        assert _trees(db) == frozenset() and db.dropped_sorted
        db.commit()
        assert len(db) == 40
