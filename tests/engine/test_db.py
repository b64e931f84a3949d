"""The store's index (engine.db): what goes in comes back byte for byte, counts, changes."""

from __future__ import annotations

import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.db import (
    CHANGED_SINCE,
    TOMBSTONES_KEPT,
    Agreement,
    IndexUnusable,
    Point,
    RecordDB,
    follow,
    identity_of,
    standing,
)
from engine.jsonl import line_of
from engine.quality import Quality
from engine.records import Record
from engine.store import atomic_write, read_jsonl

_names = st.lists(
    st.text(alphabet="ab é\udcff\udc80z\u00c0-_.", min_size=1, max_size=5).filter(
        lambda s: s not in (".", "..")
    ),
    min_size=1,
    max_size=3,
).map("/".join)
_records = st.builds(
    Record,
    root=st.sampled_from(["/r", "/données", "/r\udcfe", "/r\udc80é"]),
    path=_names,
    size=st.integers(0, 2**40),
    mtime_ns=st.integers(-(2**62), 2**62),
    status=st.sampled_from(["ok", "empty", "unsupported", "error", "skipped"]),
    sha256=st.none() | st.sampled_from(["a" * 64, "b" * 64]),
    reason=st.none() | st.sampled_from(["corrupt", "no_text", "needs_tool"]),
    chars=st.integers(0, 10**6),
    ms=st.integers(0, 10**5),
)


def _unique(records: list[Record]) -> list[Record]:
    return list({r.key: r for r in records}.values())


def _read_back(db: RecordDB) -> list[Record]:
    loaded = read_jsonl(b"".join(db.lines()))
    assert not loaded.bad
    return loaded.records


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_records, max_size=30), st.lists(_records, max_size=10))
def test_records_come_back_in_key_order_byte_for_byte_and_counted(
    tmp_path: Path, first: list[Record], later: list[Record]
) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "extract.db"  # (and its -wal, -shm)
    first, later = _unique(first), _unique(later)
    with RecordDB.open_writer(path) as db:
        db.replace_all(first, (1, 2, 3))
        start = db.seq()
        db.put(later)
        gone = [r.key for r in first[:3] if r.key not in {x.key for x in later}]
        db.drop(gone)
        db.commit()
    held = {r.key: r for r in first}
    held.update((r.key, r) for r in later)
    for key in gone:
        del held[key]
    expected = sorted(held.values(), key=lambda r: r.key)
    reader = RecordDB.open_reader(path)
    try:
        assert _read_back(reader) == expected  # Python's (root, path) order, names exact
        assert list(reader.lines()) == [line_of(r) for r in expected]
        counts = Counter((r.status, r.reason or "", "") for r in expected)
        assert reader.counts() == {k: n for k, n in counts.items() if n}
        assert len(reader) == len(expected)
        changes = reader.changes_since(start)
        assert sorted(changes.lines) == sorted(line_of(held[r.key]) for r in later)
        assert set(changes.removed) == set(gone)
        assert changes.seq == reader.seq() and not changes.reload
        assert reader.source() == (1, 2, 3)
    finally:
        reader.close()


def test_a_reader_too_far_behind_is_told_to_reload(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("engine.db.TOMBSTONES_KEPT", 2)
    path = tmp_path / "extract.db"
    recs = [Record("/r", f"f{i}", 1, 1, "ok") for i in range(6)]
    with RecordDB.open_writer(path) as db:
        db.replace_all(recs, None)
        start = db.seq()
        for r in recs[:5]:
            db.drop([r.key])
            db.commit()
        assert db.changes_since(start).reload  # its tombstones were pruned
        assert not db.changes_since(db.seq() - 1).reload
    assert TOMBSTONES_KEPT > 1000


def test_what_is_not_an_index_is_said_never_used(tmp_path: Path) -> None:
    junk = tmp_path / "extract.db"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(IndexUnusable):
        RecordDB.open_writer(junk)
    with pytest.raises(IndexUnusable):
        RecordDB.open_reader(junk)
    with pytest.raises(IndexUnusable):
        RecordDB.open_reader(tmp_path / "none.db")
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value)")
    con.execute("INSERT INTO meta VALUES ('version', 99)")
    con.commit()
    con.close()
    with pytest.raises(IndexUnusable, match="version 99"):
        RecordDB.open_writer(other)


def test_a_write_not_committed_is_not_seen(tmp_path: Path) -> None:
    path = tmp_path / "extract.db"
    with RecordDB.open_writer(path) as db:
        db.replace_all([Record("/r", "a", 1, 1, "ok")], None)
        db.put([Record("/r", "b", 1, 1, "error", reason="corrupt")])
        reader = RecordDB.open_reader(path)
        assert [r.path for r in _read_back(reader)] == ["a"]  # WAL: never blocked, old snapshot
        db.commit()
        assert [r.path for r in _read_back(reader)] == ["a", "b"]
        assert reader.unfinished() == [("/r", "b")]
        reader.close()


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.lists(_records, min_size=1, max_size=5)),
        st.tuples(st.just("drop"), st.lists(st.integers(0, 40), min_size=1, max_size=3)),
        st.tuples(st.just("file"), st.none()),
    ),
    max_size=8,
)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_records, max_size=20), _steps)
def test_a_follower_that_read_the_store_once_follows_every_change_by_the_index(
    tmp_path: Path, first: list[Record], steps: list[tuple[str, object]]
) -> None:
    """What the dashboard following a store does: read it once (the file, or the index when
    ahead of it), then only ask the index what changed; it ends with the writer's records
    whatever the writer did between (batches, removals, the file caught up)."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path, jsonl = folder / "extract.db", folder / "extract.jsonl"
    state = {r.key: r for r in first}

    def write_file() -> None:
        atomic_write(jsonl, [line_of(r) for _k, r in sorted(state.items())])

    write_file()
    with RecordDB.open_writer(path) as db:
        db.replace_all(sorted(state.values(), key=lambda r: r.key), identity_of(jsonl))
        got = standing(path, jsonl)
        assert got.agreement is Agreement.IN_STEP and got.point is not None
        seen = {r.key: r for r in read_jsonl(jsonl.read_bytes()).records}
        point = got.point
        for kind, arg in steps:
            if kind == "put":
                batch = _unique(arg)  # type: ignore[arg-type]
                db.put(batch)
                db.commit()
                state.update((r.key, r) for r in batch)
            elif kind == "drop":
                keys = sorted(state)
                gone = {keys[i % len(keys)] for i in arg} if keys else set()  # type: ignore[attr-defined]
                db.drop(gone)
                db.commit()
                for key in gone:
                    del state[key]
            else:
                write_file()
                db.in_step(identity_of(jsonl), finished=True)
            changes = follow(path, jsonl, point)
            assert changes is not None and not changes.reload
            for key in changes.removed:
                seen.pop(key, None)
            seen.update((r.key, r) for r in read_jsonl(b"".join(changes.lines)).records)
            point = Point(point.index, changes.seq)
            assert seen == state
            now = standing(path, jsonl)  # a reader starting now reads the same records
            alone = standing(path, jsonl, lines=False)  # the agreement without the records
            assert (alone.agreement, alone.point, alone.lines) == (now.agreement, now.point, b"")
            if now.agreement is Agreement.AHEAD:
                assert {r.key: r for r in read_jsonl(now.lines).records} == state
            else:
                assert now.agreement is Agreement.IN_STEP
                assert {r.key: r for r in read_jsonl(jsonl.read_bytes()).records} == state


def test_an_index_not_in_step_with_the_file_is_not_followed(tmp_path: Path) -> None:
    """A file another writer replaced, or no index at all: the follower reads the file."""
    path, jsonl = tmp_path / "extract.db", tmp_path / "extract.jsonl"
    assert follow(path, jsonl, Point("", 0)) is None
    assert standing(path, jsonl).agreement is Agreement.UNTRUSTED
    rec = Record(root="/r", path="a", size=1, mtime_ns=1, status="ok")
    atomic_write(jsonl, [line_of(rec)])
    with RecordDB.open_writer(path) as db:
        db.replace_all([rec], identity_of(jsonl))
    since = standing(path, jsonl).point
    assert since is not None and follow(path, jsonl, since) is not None
    atomic_write(jsonl, [line_of(rec.evolve(size=2))])  # not by the index's writer
    assert follow(path, jsonl, since) is None
    got = standing(path, jsonl)
    assert got.agreement is Agreement.UNTRUSTED and got.point is None


def test_an_index_made_anew_is_another_history_its_followers_reload(tmp_path: Path) -> None:
    """An index deleted and made again counts from 1 again: a follower at 5 of the old one
    must not take "nothing after 5" from the new one."""
    path, jsonl = tmp_path / "extract.db", tmp_path / "extract.jsonl"
    rec = Record(root="/r", path="a", size=1, mtime_ns=1, status="ok")
    atomic_write(jsonl, [line_of(rec)])
    with RecordDB.open_writer(path) as db:
        db.replace_all([rec], identity_of(jsonl))
        for size in range(2, 6):
            db.put([rec.evolve(size=size)])
            db.commit()
    since = standing(path, jsonl).point
    assert since is not None and since.seq == 5
    path.unlink()
    with RecordDB.open_writer(path) as db:
        db.replace_all([rec.evolve(size=9)], identity_of(jsonl))
    changes = follow(path, jsonl, since)
    assert changes is not None and changes.reload


def test_what_changed_is_found_by_the_counter_not_a_pass_over_the_store(tmp_path: Path) -> None:
    """A follower asks every tenth of a second: the few rows written since its counter must
    come from the counter's index (a walk of the key index cost 0.75 s at a million rows)."""
    with RecordDB.open_writer(tmp_path / "extract.db") as db:
        plan = " ".join(
            row[3] for row in db.con.execute(f"EXPLAIN QUERY PLAN {CHANGED_SINCE}", (0,))
        )
    assert "USING INDEX by_seq" in plan and "by_key" not in plan, plan


def test_the_texts_named_are_found_in_the_order_of_a_hash_index_not_sorted(
    tmp_path: Path,
) -> None:
    """A writer keeps its temporary tables in memory (:func:`engine.db._connect`): a query
    over every record must not sort them into one. The index on status took the content
    hashes' query to a temporary B-tree for its DISTINCT; without it, a hash index serves it."""
    from engine.dbindex import REFERENCED_IN_SQL, REFERENCED_SQL

    plans = []
    with RecordDB.open_writer(tmp_path / "extract.db") as db:
        for _ in range(2):
            rows = db.con.execute(f"EXPLAIN QUERY PLAN {REFERENCED_SQL}")
            plans.append(" ".join(row[3] for row in rows))
            # one text folder's hashes (the garbage collection's): a range of that index
            rows = db.con.execute(f"EXPLAIN QUERY PLAN {REFERENCED_IN_SQL}", ("ab", "ac"))
            ranged = " ".join(row[3] for row in rows)
            assert "SEARCH" in ranged and "sha256>? AND sha256<?" in ranged, ranged
            plans.append(ranged)
            # the full-text index's partial index on the hash, as engine.textindex makes it
            db.con.execute(
                "CREATE INDEX IF NOT EXISTS text_by_sha ON records (sha256) WHERE status = 'ok'"
            )
    for plan in plans:
        assert "TEMP B-TREE" not in plan and "sha" in plan, plan


def test_an_index_no_query_reads_is_not_kept(tmp_path: Path) -> None:
    """Each index costs every upsert: the one on status, which no query needed (the planner
    took it for the content hashes' query, and sorted them), is not made, and a writer opening
    an index made with it drops it (the records and counts stay)."""
    path = tmp_path / "extract.db"
    record = Record(root="/r", path="a.txt", size=1, mtime_ns=1, status="ok")

    def indexes() -> set[str]:
        with sqlite3.connect(path) as con:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            return {name for (name,) in rows}

    with RecordDB.open_writer(path) as db:
        db.put([record])
        db.commit()
    assert "by_status" not in indexes() and {"by_key", "by_seq", "by_sha"} <= indexes()
    with sqlite3.connect(path) as con:  # an index as the versions before this one made it
        con.execute("CREATE INDEX by_status ON records (status, root, path)")
    reader = RecordDB.open_reader(path)
    reader.close()
    assert "by_status" in indexes()  # (a reader never writes)
    with RecordDB.open_writer(path) as db:
        assert len(db) == 1 and db.counts() == {("ok", "", ""): 1}
    assert "by_status" not in indexes()


def test_a_record_back_after_its_removal_is_no_longer_gone(tmp_path: Path) -> None:
    path = tmp_path / "extract.db"
    a, b = (Record(root="/r", path=p, size=1, mtime_ns=1, status="ok") for p in ("a", "b"))
    with RecordDB.open_writer(path) as db:
        db.put([a, b])
        db.commit()
        start = db.seq()
        db.drop([a.key, b.key])
        db.commit()
        assert set(db.changes_since(start).removed) == {a.key, b.key}
        db.put([a])  # (the index holds a tombstone: the put clears it)
        db.commit()
        changes = db.changes_since(start)
        assert changes.removed == (b.key,) and changes.lines == (line_of(a),)


def test_a_rebuild_from_lines_that_repeat_a_key_counts_the_record_kept(tmp_path: Path) -> None:
    """``extract.jsonl`` written by another tool may name a file twice: the last line wins,
    and the counts are the records', not the lines'."""
    first = Record(root="/r", path="a", size=1, mtime_ns=1, status="error", reason="corrupt")
    last = Record(root="/r", path="a", size=2, mtime_ns=2, status="ok")
    other = Record(root="/r", path="b", size=1, mtime_ns=1, status="ok")
    with RecordDB.open_writer(tmp_path / "extract.db") as db:
        db.replace_all([first, other, last], (1, 2, 3))
        assert len(db) == 2 and db.counts() == {("ok", "", ""): 2}
        assert db.line("/r", "a") == line_of(last)
        assert db.con.execute("PRAGMA temp_store").fetchone() == (2,)  # (set back after)


def test_the_start_a_killed_sweep_is_trusted_from_is_its_own_never_a_later_ones(
    tmp_path: Path,
) -> None:
    """A sweep's start is kept for the merge that resumes it if it is killed; a sweep that
    begins over a killed one's rows (a resume, itself killed) keeps the earlier start, which
    holds for both sweeps' rows; a rebuild ahead of the file knows no start."""
    with RecordDB.open_writer(tmp_path / "extract.db") as db:
        db.replace_all([Record("/r", "a", 1, 1, "ok")], None)
        assert db.began() is None
        db.sweep_begins(100)
        assert db.began() == 100 and db.finished() == db.seq()
        db.put([Record("/r", "b", 1, 1, "ok")])
        db.commit()  # (then killed)
        db.sweep_begins(200)  # the sweep that resumes it
        assert db.began() == 100
        db.in_step(None, finished=True)  # it finished
        db.sweep_begins(300)
        assert db.began() == 300 and db.finished() == db.seq()
        db.put([Record("/r", "c", 1, 1, "ok")])
        db.sweep_begins(400)  # (a write in flight: the start goes with it)
        db.commit()
        assert db.began() == 300
        db.replace_all([Record("/r", "a", 1, 1, "ok")], None, finished=False)
        assert db.began() is None


def test_the_files_a_sweep_walked_are_told_to_readers_until_a_sweep_finishes(
    tmp_path: Path,
) -> None:
    """A reader in another process learns how many records a first sweep is about to write
    (its walk) long before they are read; a killed sweep's count stays, a finished sweep
    clears it."""
    path = tmp_path / "extract.db"
    with RecordDB.open_writer(path) as db:
        db.replace_all([Record("/r", "a", 1, 1, "ok")], None)
        assert db.walked() == 0
        db.sweep_begins(100, 5_000)
        reader = RecordDB.open_reader(path)
        try:
            assert reader.walked() == 5_000  # (committed at once: no record written yet)
            db.put([Record("/r", "b", 1, 1, "ok")])
            db.commit()  # (then killed)
            assert reader.walked() == 5_000
            db.sweep_begins(200, 6_000)  # the sweep that resumes it walked more
            assert reader.walked() == 6_000
            db.in_step(None, finished=True)
            assert reader.walked() == 0 and db.walked() == 0
        finally:
            reader.close()


def test_a_real_sweep_tells_its_index_how_many_files_it_walked_while_it_reads_them(
    tmp_path: Path,
) -> None:
    """The count is in the index before the first record is (a follower pages by it), and
    gone once the sweep has finished."""
    from engine.events import Event, RecordsChanged
    from engine.sweep import SweepOptions, sweep

    root = tmp_path / "root"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    seen: list[int] = []

    def listen(event: Event) -> None:
        if isinstance(event, RecordsChanged) and not seen:
            reader = RecordDB.open_reader(root / ".quarry" / "extract.db")
            try:
                seen.append(reader.walked())
            finally:
                reader.close()

    sweep([root], SweepOptions(no_external=True), listen)
    assert seen == [5]
    reader = RecordDB.open_reader(root / ".quarry" / "extract.db")
    try:
        assert reader.walked() == 0 and len(reader) == 5
    finally:
        reader.close()


_PARTS = st.sampled_from(["a", "b", "a.txt", "a!", "a-b", "a0", "é", "a b"])


@settings(max_examples=100, deadline=None)
@given(
    paths=st.lists(st.lists(_PARTS, min_size=1, max_size=3).map("/".join), unique=True),
    rel=st.lists(_PARTS, min_size=0, max_size=2).map("/".join),
    roots=st.lists(st.sampled_from(["/r", "/r2", "/s"]), min_size=1, max_size=3, unique=True),
)
def test_the_records_under_a_folder_and_the_roots_are_what_the_records_say(
    paths: list[str], rel: str, roots: list[str]
) -> None:
    """``count_under`` (a range of the key index) counts the records at a folder or under
    it, never a neighbour that shares its prefix (``a.txt``, ``a!``, ``a0`` beside ``a``);
    ``roots`` (a seek a root) gives every root."""
    recs = [Record(root, path, 1, 1, "ok") for root in roots for path in paths]
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        assert db.roots() == ({*roots} if paths else set())
        for root in roots:
            want = sum(1 for p in paths if not rel or p == rel or p.startswith(rel + "/"))
            assert db.count_under(root, rel) == want


_verdicts = st.none() | st.sampled_from([Quality("ok"), Quality("suspect"), Quality("garbled")])
_kept_steps = st.lists(
    st.lists(
        st.tuples(st.integers(0, 5), st.booleans(), _records, _verdicts, st.booleans()),
        max_size=8,
    ),
    min_size=1,
    max_size=5,
)
"""Batches of (key number, keep it?, a record, a verdict, reused?): a kept record is the one
committed under that key before the batch, flagged ``reused`` (a sweep's kept file; after
another record of its key in the same batch, the older one comes back); any other is the
record given under that key, with that verdict, flagged as drawn (a ``reused`` record whose
fields are not the row's included). A key may come twice in a batch."""


_A = Record(root="/r", path="k0", size=1, mtime_ns=1, status="ok")


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_kept_steps)
@example(  # a record changed, then its row kept, in one batch: the kept one is the last word
    [
        [(0, False, _A, None, False)],
        [(0, False, _A.evolve(status="error"), None, False), (0, True, _A, None, False)],
    ]
)
def test_kept_records_written_narrowly_leave_the_rows_and_counts_an_upsert_would(
    tmp_path: Path, steps: list[list[tuple[int, bool, Record, Quality | None, bool]]]
) -> None:
    """A kept record's row is updated in three columns, not upserted whole; whatever the mix
    in a batch (kept records, changed ones, records flagged ``reused`` whose fields the row
    does not have, a key twice), the rows, lines and counts are the ones the batches' records
    give in order."""
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "extract.db"
    held: dict[str, Record] = {}
    with RecordDB.open_writer(path) as db:
        for batch in steps:
            records, committed = [], dict(held)
            for n, keep, drawn, verdict, reused in batch:
                key = f"k{n}"
                if keep and key in committed:  # (its row as the batch begins)
                    record = committed[key].evolve(reused=True)
                else:
                    record = drawn.evolve(root="/r", path=key, quality=verdict, reused=reused)
                records.append(record)
                held[key] = record
            db.put(records)
            db.commit()
        expected = sorted(held.values(), key=lambda r: r.key)
        assert list(db.lines()) == [line_of(r) for r in expected]
        assert _read_back(db) == expected
        counted = Counter(
            (r.status, r.reason or "", r.quality.verdict if r.quality else "") for r in expected
        )
        assert db.counts() == {k: n for k, n in counted.items() if n}
        rows = db.con.execute("SELECT path, reused FROM records ORDER BY path").fetchall()
        assert rows == [(r.path.encode(), 1 if r.reused else 0) for r in expected]


def test_a_batch_of_kept_records_is_three_columns_updated_not_an_upsert(tmp_path: Path) -> None:
    """The first re-sweep of an unchanged folder keeps every record: each row is updated in
    ``reused``, the counter and the line (no count, text or sort B-tree touched), and the
    sweep's upserts, which decide when the sort B-trees are dropped, do not count them."""
    records = [
        Record(root="/r", path=f"f{i}.txt", size=i, mtime_ns=i, status="ok", sha256=f"{i:064x}")
        for i in range(50)
    ]
    statements: list[str] = []
    with RecordDB.open_writer(tmp_path / "extract.db") as db:
        db.put(records)
        db.commit()
        db.run_ended()
        db.con.set_trace_callback(statements.append)
        db.put([r.evolve(reused=True) for r in records])
        db.con.set_trace_callback(None)
        db.commit()
        assert db.upserted == 0
        assert not [s for s in statements if s.lstrip().upper().startswith("INSERT")]
        assert [s for s in statements if s.startswith("UPDATE records SET reused = 1")]
        assert all(b'"reused":true' in line for line in db.lines())
        assert db.counts() == {("ok", "", ""): 50}


def test_an_index_with_the_old_counting_trigger_has_it_replaced_by_its_next_writer(
    tmp_path: Path,
) -> None:
    """The ``counts_change`` trigger of an index made before session 35 (no ``WHEN``: a count
    taken down and up again for every row rewritten) is replaced when a writer opens it, the
    counts right under both; a reader leaves it as it is."""
    path = tmp_path / "extract.db"
    ok = Record(root="/r", path="a.txt", size=1, mtime_ns=1, status="ok")
    with RecordDB.open_writer(path) as db:
        db.put([ok, ok.evolve(path="b.txt")])
        db.commit()

    def trigger() -> str:
        with sqlite3.connect(path) as con:
            (sql,) = con.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'counts_change'"
            ).fetchone()
            return str(sql)

    assert "WHEN" in trigger()
    with sqlite3.connect(path) as con:  # the trigger as the versions before this one made it
        con.executescript(
            "DROP TRIGGER counts_change;"
            "CREATE TRIGGER counts_change AFTER UPDATE OF status, reason, quality ON records BEGIN"
            "  UPDATE counts SET n = n - 1 WHERE status = old.status"
            "    AND reason = coalesce(old.reason, '') AND quality = coalesce(old.quality, '');"
            "  INSERT INTO counts VALUES (new.status, coalesce(new.reason, ''),"
            "    coalesce(new.quality, ''), 1) ON CONFLICT DO UPDATE SET n = n + 1;"
            "END;"
        )
    RecordDB.open_reader(path).close()
    assert "WHEN" not in trigger()
    with RecordDB.open_writer(path) as db:
        db.put([ok.evolve(status="error", reason="corrupt")])
        db.commit()
        assert db.counts() == {("ok", "", ""): 1, ("error", "corrupt", ""): 1}
    assert "WHEN" in trigger()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ok", "empty", "unsupported", "error"]),
            st.lists(st.sampled_from(["tesseract", "antiword", "catdoc", "wpd2text"]), max_size=3),
        ),
        max_size=25,
    ),
    st.booleans(),
)
def test_the_files_waiting_on_each_tool_are_counted_as_the_records_say(
    drawn: list[tuple[str, list[str]]], sorted_trees: bool
) -> None:
    """``waiting`` (``quarry tools`` on a store: the index's rows that wait on a tool, with
    the triage tree built or not) counts what :class:`engine.index.Tally` counts of the very
    records, a tool named twice in one record counted twice as there."""
    from engine.index import Tally

    recs = [
        Record("/r", f"f{i}", 1, 1, status, needs=tuple(needs))
        for i, (status, needs) in enumerate(drawn)
    ]
    with RecordDB.open_memory() as db:
        db.put(recs)
        db.commit()
        if sorted_trees:
            db.make_sorted()
        assert db.waiting() == {t: n for t, n in Tally.of(recs).waiting.items() if n}
