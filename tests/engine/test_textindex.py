"""The full-text index (engine/textindex.py): one row per text, kept with the records."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from engine import textindex
from engine.db import DB, RecordDB
from engine.events import Event, Notice
from engine.extract import BODY_SENT_MAX
from engine.grep import matching_keys
from engine.records import Record
from engine.resume import Ledger
from engine.store import Store, text_ident
from engine.sweep import Sweeper, SweepOptions, sweep
from engine.textindex import TextIndex, _Got, has_tables, is_ready
from engine.textsearch import NAMED_BY_SQL, matching_hashes, parse
from engine.tools import ToolSet
from tests.engine.watchkit import watched


def _opts(**kw: object) -> SweepOptions:
    return SweepOptions(tools=ToolSet.empty(), workers=1, **kw)  # type: ignore[arg-type]


def _found(out: Path, words: str) -> set[str]:
    """The paths whose text holds ``words``, as a reader of the index finds them."""
    with RecordDB.open_reader(out / DB) as db:
        assert is_ready(db.con)
        shas = matching_hashes(db.con, parse(words))
        return {
            bytes(p).decode()
            for sha in shas
            for (p,) in db.con.execute("SELECT path FROM records WHERE sha256 = ?", (sha,))
        }


def _rows(out: Path) -> int:
    with RecordDB.open_reader(out / DB) as db:
        return int(db.con.execute("SELECT count(*) FROM text_rows").fetchone()[0])


def test_one_row_per_text_and_it_follows_the_records(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("the quarterly invoice\n")
    (root / "copy.txt").write_text("the quarterly invoice\n")
    (root / "b.txt").write_text("nothing to see\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    assert _rows(out) == 2  # a text two files share is indexed once
    assert _found(out, "invoice") == {"a.txt", "copy.txt"}
    (root / "a.txt").write_text("a receipt now\n")
    (root / "b.txt").unlink()
    sweep([root], _opts(out=out))
    assert _found(out, "invoice") == {"copy.txt"}
    assert _found(out, "receipt") == {"a.txt"}
    assert _found(out, "nothing") == set()
    (root / "copy.txt").unlink()
    sweep([root], _opts(out=out))
    assert _found(out, "invoice") == set()
    assert _rows(out) == 1  # the texts no record names left the index


def test_copies_of_a_text_all_changed_in_one_commit_keep_the_index(tmp_path: Path) -> None:
    """Two records naming one text changed in one batch (copies edited, a share rewritten):
    the second noted the text as unnamed again, and the records' upsert made the trigger's
    ``INSERT OR IGNORE`` abort: the commit failed and the whole index was dropped."""
    root = tmp_path / "root"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text("the shared words\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    store = Store(out)
    records = store.load_records()
    store.put_text("cd" * 32, "other words\n")
    with store.writer(), RecordDB.open_writer(out / DB) as db:
        db.companion = TextIndex(db, store)
        db.put([r.evolve(sha256="cd" * 32, reused=False) for r in records])  # one statement
        db.commit()
        assert is_ready(db.con)
    assert _found(out, "other words") == {"a.txt", "b.txt", "c.txt"}
    assert _found(out, "shared") == set()
    assert _rows(out) == 1  # the text no record names left the index


def test_an_index_with_the_old_triggers_has_them_replaced_by_its_next_writer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name in ("a.txt", "b.txt"):
        (root / name).write_text("the shared words\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    with RecordDB.open_writer(out / DB) as db:  # as a quarry of before session 25 made them
        old = textindex._TRIGGERS.replace(
            "INSERT INTO text_unnamed SELECT old.sha256\n"
            "    WHERE NOT EXISTS (SELECT 1 FROM text_unnamed WHERE sha256 = old.sha256);",
            "INSERT OR IGNORE INTO text_unnamed VALUES (old.sha256);",
        )
        assert old.count(textindex._OLD_TRIGGER) == 2
        db.con.executescript(f"BEGIN;DROP TRIGGER text_out;DROP TRIGGER text_change;{old}COMMIT;")
        assert textindex._old_triggers(db.con)
    for name in ("a.txt", "b.txt"):  # both copies edited: one batch
        (root / name).write_text("edited words\n")
    notices: list[Event] = []
    sweep([root], _opts(out=out), notices.append)
    assert not [e for e in notices if isinstance(e, Notice) and "index" in e.message]
    with RecordDB.open_reader(out / DB) as db:
        assert not textindex._old_triggers(db.con)
    assert _found(out, "edited") == {"a.txt", "b.txt"}
    assert _found(out, "shared") == set()


def test_the_records_naming_a_text_are_found_by_the_one_hash_index(tmp_path: Path) -> None:
    """No second index on the records' hash (each costs every upsert of an ``ok`` record a
    random insert): the records' ``by_sha`` finds those naming a text, and the partial one an
    index of before session 41 has is dropped by its next writer, the index still whole."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("the quarterly invoice\n")
    (root / "copy.txt").write_text("the quarterly invoice\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))

    def indexes() -> set[str]:
        with RecordDB.open_reader(out / DB) as db:
            rows = db.con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            return {name for (name,) in rows}

    assert "by_sha" in indexes() and "text_by_sha" not in indexes()
    with RecordDB.open_reader(out / DB) as db:
        rows = db.con.execute(f"EXPLAIN QUERY PLAN {NAMED_BY_SQL}", ("[1, 2]",))
        plan = " ".join(row[3] for row in rows)
        assert "SEARCH rec USING INDEX by_sha (sha256=?)" in plan, plan
    with sqlite3.connect(out / DB) as con:  # as a quarry of before session 41 made it
        con.execute("CREATE INDEX text_by_sha ON records (sha256) WHERE status = 'ok'")
    assert _found(out, "invoice") == {"a.txt", "copy.txt"}  # (whole to a reader meanwhile)
    (root / "copy.txt").write_text("a receipt now\n")
    sweep([root], _opts(out=out))
    assert "text_by_sha" not in indexes()
    assert _found(out, "invoice") == {"a.txt"}
    assert _found(out, "receipt") == {"copy.txt"}


def test_a_store_without_one_gets_it_built_with_progress_and_notices(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for n in range(5):
        (root / f"f{n}.txt").write_text(f"document number {n} mentions zebra{n}\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out, text_index=False))
    with RecordDB.open_reader(out / DB) as db:
        assert not has_tables(db.con)
    notices: list[Notice] = []
    steps: list[tuple[int, int]] = []
    store = Store(out)
    with store.writer():
        ledger = Ledger(store, notices.append)
        ledger.progress = lambda done, total: steps.append((done, total))
        with ledger:
            ledger.attach(store.load_records())
    assert steps[-1] == (5, 5)
    assert any("indexing 5 texts for search" in n.message for n in notices)
    assert any("5 texts indexed" in n.message for n in notices)
    assert _found(out, "zebra3") == {"f3.txt"}


def test_no_text_index_drops_one_and_a_later_sweep_builds_it_again(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha bravo\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    assert _found(out, "bravo") == {"a.txt"}
    events: list[Event] = []
    (root / "b.txt").write_text("charlie delta\n")
    sweep([root], _opts(out=out, text_index=False), events.append)
    with RecordDB.open_reader(out / DB) as db:
        assert not has_tables(db.con)
    assert any(isinstance(e, Notice) and "dropped" in e.message for e in events)
    sweep([root], _opts(out=out))  # nothing changed: still not the quick path, it builds
    assert _found(out, "delta") == {"b.txt"}


def test_a_text_written_again_under_its_hash_is_indexed_again(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("old words here\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    store = Store(out)
    (rec,) = store.load_records()
    assert rec.sha256 is not None
    store.put_text(rec.sha256, "new words there\n")  # a reader's new version, say
    with store.writer(), RecordDB.open_writer(out / DB) as db:
        db.companion = TextIndex(db, store)
        db.put([rec.evolve(reused=True)])  # reused: its file was not read again
        db.commit()
        assert is_ready(db.con)
    assert _found(out, "old words") == {"a.txt"}
    with store.writer(), RecordDB.open_writer(out / DB) as db:
        db.companion = TextIndex(db, store)
        db.put([rec.evolve(reused=False, why="reader-changed")])
        db.commit()
    assert _found(out, "old words") == set()
    assert _found(out, "new words") == {"a.txt"}


def test_a_rolled_back_write_leaves_no_text(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("kept words\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    store = Store(out)
    (rec,) = store.load_records()
    store.put_text("ab" * 32, "rolled back words\n")
    with store.writer(), RecordDB.open_writer(out / DB) as db:
        db.companion = TextIndex(db, store)
        db.put([rec.evolve(path="b.txt", sha256="ab" * 32, reused=False)])
        db.rollback()
        db.put([rec.evolve(reused=True)])
        db.commit()
    assert _found(out, "rolled back") == set()
    assert _rows(out) == 1


def test_an_index_deleted_is_rebuilt_with_its_texts(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("foxtrot golf\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    for name in (DB, DB + "-wal", DB + "-shm"):
        (out / name).unlink(missing_ok=True)
    with Sweeper([root], _opts(out=out)) as s:
        s.run()
    assert _found(out, "golf") == {"a.txt"}


def test_a_text_replaced_while_watching_old_hits_gone_new_there(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "doc.txt").write_text("the original wording\n")
    (root / "other.txt").write_text("unrelated\n")
    with watched(root, False, records_quiet_s=3600.0, records_max_s=3600.0) as w:
        out = w.session.store.out
        assert _found(out, "original") == {"doc.txt"}
        old = w.records()["doc.txt"].sha256
        (root / "doc.txt").write_text("the replacement wording\n")
        w.wait("the new text in the index", lambda r: r["doc.txt"].sha256 != old)
        # the batch's one transaction: the records and the texts together
        assert _found(out, "replacement") == {"doc.txt"}
        assert _found(out, "original") == set()
        (root / "doc.txt").unlink()
        # (waited on in the index itself: a batch that only removes leaves no row newer
        # than the last finished sweep, so the watch helpers' reader takes extract.jsonl)
        w.until("the removal in the text index", lambda: _found(out, "replacement") == set())
        with RecordDB.open_reader(out / DB) as db:
            assert db.line(str(root), "doc.txt") is None  # with its record, not before
        assert _found(out, "unrelated") == {"other.txt"}


def test_the_reader_sees_the_index_only_when_in_step(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("hotel india\n")
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    con = sqlite3.connect(out / DB, isolation_level=None)
    try:  # a writer that knows no text index (an older quarry) changes the records
        con.execute("UPDATE meta SET value = value + 1 WHERE key = 'seq'")
    finally:
        con.close()
    with RecordDB.open_reader(out / DB) as db:
        assert not is_ready(db.con)


class _HeldReads:
    """Holds the text index's reading thread at its next batch until :meth:`release`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()
        real = textindex._read_batch

        def held(out: Path, batch: list[tuple[str, str | None]]) -> list[_Got]:
            self.entered.set()
            assert self.go.wait(60), "the test never released the reads"
            return real(out, batch)

        monkeypatch.setattr(textindex, "_read_batch", held)

    def release(self) -> None:
        self.go.set()


def _one_record(tmp_path: Path, body: str) -> tuple[Store, Record]:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text(body)
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    store = Store(out)
    (rec,) = store.load_records()
    return store, rec


def test_a_long_sweeps_commits_do_not_wait_for_its_texts_and_search_still_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, rec = _one_record(tmp_path, "kilo lima\n")
    assert rec.sha256 is not None
    store.put_text("cd" * 32, "mike november\n")
    new = rec.evolve(path="b.txt", sha256="cd" * 32, reused=False)
    held = _HeldReads(monkeypatch)
    with store.writer(), RecordDB.open_writer(store.out / DB) as db:
        text = TextIndex(db, store)
        db.companion = text
        db.put([new])
        assert held.entered.wait(60)
        with text.lagging():
            db.commit()  # (returns while its text is still being read: it would hang here)
        with RecordDB.open_reader(store.out / DB) as reader:
            assert not is_ready(reader.con)  # catching up: a reader reads the texts
        keys = matching_keys(store, parse("mike november"))
        assert {path for _root, path in keys} == {"b.txt"}  # never a hit missed meanwhile
        held.release()
        db.put([rec.evolve(reused=True)])
        db.commit()  # a commit that waits: in step again
        text.close()
    assert _found(store.out, "november") == {"b.txt"}
    assert _found(store.out, "lima") == {"a.txt"}


def _in_flight(db: RecordDB, sha: str) -> bool:
    """Whether the transaction in flight on ``db`` has the text of ``sha`` indexed."""
    row = db.con.execute("SELECT 1 FROM text_rows WHERE sha256 = ?", (sha,)).fetchone()
    return row is not None


@pytest.mark.parametrize("named_again", [True, False])
def test_a_put_indexes_the_texts_read_since_the_last_and_a_rollback_reads_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named_again: bool
) -> None:
    """A sweep's last commit, which its workers wait on, has only its last moments' texts to
    index: each put indexes what the thread has read by then, in the same transaction. Rolled
    back, those texts go in later only if a record names them then."""
    store, rec = _one_record(tmp_path, "kilo lima\n")
    sha = "cd" * 32
    store.put_text(sha, "oscar papa\n")
    new = rec.evolve(path="b.txt", sha256=sha, reused=False)
    held = _HeldReads(monkeypatch)
    with store.writer(), RecordDB.open_writer(store.out / DB) as db:
        text = TextIndex(db, store)
        db.companion = text
        db.put([new])
        # (held while this put ends: a thread quick enough had it read in time for this very
        # put, which a loaded machine once let happen, and the test read that as a fault)
        assert held.entered.wait(60)
        assert not _in_flight(db, sha)
        held.release()
        text._reader.settle()  # (read by its thread: the next put takes it)
        db.put([rec.evolve(reused=True)])
        assert _in_flight(db, sha)  # before any commit
        db.rollback()
        assert not _in_flight(db, sha)
        db.put([new] if named_again else [rec.evolve(reused=True)])
        db.commit()
        text.close()
    assert _found(store.out, "oscar papa") == ({"b.txt"} if named_again else set())
    assert _found(store.out, "lima") == {"a.txt"}


def test_a_text_whose_record_went_while_it_was_read_stays_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, rec = _one_record(tmp_path, "oscar papa\n")
    store.put_text("ef" * 32, "quebec romeo\n")
    new = rec.evolve(path="b.txt", sha256="ef" * 32, reused=False)
    held = _HeldReads(monkeypatch)
    with store.writer(), RecordDB.open_writer(store.out / DB) as db:
        text = TextIndex(db, store)
        db.companion = text
        db.put([new])
        assert held.entered.wait(60)
        with text.lagging():
            db.commit()
        db.drop([(new.root, new.path)])
        with text.lagging():
            db.commit()
        held.release()
        db.put([rec.evolve(reused=True)])
        db.commit()
        text.close()
    assert _found(store.out, "romeo") == set()
    assert _rows(store.out) == 1


def test_small_texts_go_in_as_their_workers_sent_them_a_long_one_is_read_from_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("sierra tango\n")
    (root / "b.txt").write_text("uniform victor\n")
    long_text = "whiskey xray " * (BODY_SENT_MAX // 10)
    (root / "long.txt").write_text(long_text)
    read_back: list[str] = []
    real = textindex._read_text

    def counted(extract: int, folders: dict[str, int], sha: str, indexed: str | None) -> object:
        read_back.append(sha)
        return real(extract, folders, sha, indexed)

    monkeypatch.setattr(textindex, "_read_text", counted)
    out = tmp_path / "store"
    sweep([root], _opts(out=out))
    by_path = {r.path: r for r in Store(out).load_records()}
    assert read_back == [by_path["long.txt"].sha256]  # the engine opened the long one alone
    assert _found(out, "sierra tango") == {"a.txt"}
    assert _found(out, "uniform victor") == {"b.txt"}
    assert _found(out, "whiskey xray") == {"long.txt"}
    with RecordDB.open_reader(out / DB) as db:
        rows = dict(db.con.execute("SELECT sha256, ident FROM text_rows"))
        bodies = dict(
            db.con.execute(
                "SELECT t.sha256, f.body FROM text_rows t JOIN text_fts f ON f.rowid = t.id"
            )
        )
    for r in by_path.values():
        assert r.sha256 is not None
        placed = out / "extract" / r.sha256[:2] / f"{r.sha256}.txt"
        assert rows[r.sha256] == text_ident(placed.stat())  # a rewrite of it is seen
        assert bodies[r.sha256] == placed.read_text(encoding="utf-8")


def test_a_text_sent_by_its_worker_whose_write_was_rolled_back_stays_out(tmp_path: Path) -> None:
    store, rec = _one_record(tmp_path, "yankee zulu\n")
    sha = "ab" * 32
    store.put_text(sha, "rolled back words\n")
    ident = text_ident((store.out / "extract" / "ab" / f"{sha}.txt").stat())
    with store.writer(), RecordDB.open_writer(store.out / DB) as db:
        text = TextIndex(db, store)
        db.companion = text
        text.offer(sha, ident, "rolled back words\n")
        db.put([rec.evolve(path="b.txt", sha256=sha, reused=False)])
        db.rollback()
        db.put([rec.evolve(reused=True)])
        db.commit()
        text.offer(sha, ident, "rolled back words\n")  # (sent, its record never put)
        db.put([rec.evolve(reused=True)])
        db.commit()
        text.close()
    assert _found(store.out, "rolled back") == set()
    assert _found(store.out, "yankee") == {"a.txt"}
    assert _rows(store.out) == 1
