"""A database an application holds open in WAL mode is kept current through its log.

SQLite in write-ahead-log mode (a browser's history, a chat client's messages, most
applications' own databases) writes new rows to ``NAME-wal`` beside ``NAME``; the database
file keeps its size, mtime and bytes until a checkpoint, which may not come while the
application runs. Its record was kept by every sweep and watch batch after the first: the
rows added since were in no text. A log new or changed since its record now reads its
database again (the reader applies the log), in each way a store is brought up to date: a
sweep its index serves, one holding every record, a watch batch, a watching session's rescan.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from engine.plan import logged_database
from engine.records import Record, Status, Why
from engine.session import RELOG_S, with_logged
from engine.store import Store, text_dest
from engine.sweep import Sweeper, SweepOptions, SweepResult
from engine.tools import ToolSet
from tests.engine.watchkit import watching

OPTS = SweepOptions(tools=ToolSet.empty(), workers=1)


@contextlib.contextmanager
def app_database(path: Path) -> Iterator[sqlite3.Connection]:
    """A database held open in WAL mode as an application holds it: its rows in the log."""
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA wal_autocheckpoint = 0")  # (no checkpoint: the log keeps growing)
        con.execute("CREATE TABLE notes (body TEXT)")
        con.execute("INSERT INTO notes VALUES ('first note alpha')")
        an_hour_ago = time.time() - 3600  # (not racy: a sweep trusts its size and mtime)
        for f in path.parent.iterdir():
            os.utime(f, (an_hour_ago, an_hour_ago))
        yield con
    finally:
        con.close()


def _text(out: Path, record: Record) -> str:
    assert record.sha256 is not None
    return Path(text_dest(str(out), record.sha256)).read_text(encoding="utf-8")


def _records(out: Path) -> dict[str, Record]:
    return {r.path: r for r in Store(out).load_records()}


def _read_again(result: SweepResult, out: Path) -> None:
    """The database was read again with its log, and nothing else but its log and its index
    (``-shm``, which SQLite writes through a mapping: its mtime may move or not)."""
    read = {path for path, r in _records(out).items() if not r.reused}
    assert {"app.db", "app.db-wal"} <= read <= {"app.db", "app.db-wal", "app.db-shm"}
    assert result.extracted == len(read)


def _sweep(root: Path, out: Path, *, served: bool, monkeypatch: pytest.MonkeyPatch) -> SweepResult:
    sweeper = Sweeper([root], replace(OPTS, out=out), quick=True, served=True)
    with sweeper, monkeypatch.context() as patched:
        if not served:  # every record loaded, every file in the run (as before the index)
            patched.setattr(Sweeper, "_served", lambda self, resume=False: None)
        return sweeper.run()


@pytest.mark.parametrize("served", [True, False], ids=["served-by-index", "records-loaded"])
def test_rows_added_to_an_open_databases_log_reach_its_text_in_the_next_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: bool
) -> None:
    root, out = tmp_path / "share", tmp_path / "store"
    root.mkdir()
    for i in range(5):  # other files, kept by each sweep
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    with app_database(root / "app.db") as con:
        _sweep(root, out, served=served, monkeypatch=monkeypatch)
        before = _records(out)["app.db"]
        assert before.status == Status.OK and "first note alpha" in _text(out, before)
        db_stat = os.stat(root / "app.db")
        between = time.time()

        con.execute("INSERT INTO notes VALUES ('second note bravo')")
        assert os.stat(root / "app.db").st_mtime_ns == db_stat.st_mtime_ns  # (all in the log)
        again = _sweep(root, out, served=served, monkeypatch=monkeypatch)
        after = _records(out)["app.db"]
        assert after.sha256 == before.sha256  # the database file's bytes are the same
        assert "second note bravo" in _text(out, after)
        assert after.why == Why.CHANGED and not after.reused
        # its text replaced in place, not a copy of the old one kept aside at each read
        assert not any((out / "history").rglob("*.txt"))
        # which quarry diff --since says, not "unchanged" (both sides read the new text)
        since = datetime.fromtimestamp(between).astimezone().isoformat()
        diff = subprocess.run(
            [sys.executable, "-m", "engine", "diff", str(out), "--since", since, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        (change,) = json.loads(diff.stdout)["files"]
        assert (change["path"], change["kind"]) == ("app.db", "text")
        assert "not kept" in change["note"]
        _read_again(again, out)

        settled = _sweep(root, out, served=served, monkeypatch=monkeypatch)
        assert settled.extracted == 0  # the log as its record says: nothing read again
        fresh = _sweep(root, tmp_path / "fresh", served=served, monkeypatch=monkeypatch)
        assert settled.summary.counts == fresh.summary.counts
        assert _records(out)["app.db"].chars == _records(tmp_path / "fresh")["app.db"].chars


def test_a_changed_log_beside_a_file_that_is_no_database_reads_nothing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "share", tmp_path / "store"
    root.mkdir()
    (root / "notes.txt").write_text("a note\n")
    (root / "notes.txt-wal").write_bytes(b"\x00\x01 some log of something else")
    an_hour_ago = time.time() - 3600
    os.utime(root / "notes.txt", (an_hour_ago, an_hour_ago))
    _sweep(root, out, served=True, monkeypatch=monkeypatch)
    (root / "notes.txt-wal").write_bytes(b"\x00\x01 another log, longer than the first")
    again = _sweep(root, out, served=True, monkeypatch=monkeypatch)
    assert again.extracted == 1  # the log alone
    assert _records(out)["notes.txt"].reused


@pytest.mark.parametrize("poll", [False, True], ids=["inotify", "polling"])
def test_a_watched_databases_new_rows_reach_the_store_through_its_log(
    tmp_path: Path, poll: bool
) -> None:
    root = tmp_path / "share"
    root.mkdir()
    with (
        app_database(root / "app.db") as con,
        contextlib.contextmanager(watching)(root, poll) as watched,
    ):
        recs = watched.wait("the first sweep", lambda r: "app.db" in r)
        chars = recs["app.db"].chars
        con.execute("INSERT INTO notes VALUES ('second note bravo, watched')")
        recs = watched.wait(
            "the database read again with its log",
            lambda r: "app.db" in r and r["app.db"].chars > chars,
        )
        assert "second note bravo, watched" in _text(watched.session.store.out, recs["app.db"])


@pytest.mark.parametrize("served", [True, False], ids=["merged-with-index", "records-held"])
def test_a_watching_sessions_rescan_reads_a_database_whose_log_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: bool
) -> None:
    root, out = tmp_path / "share", tmp_path / "store"
    root.mkdir()
    (root / "other.txt").write_text("kept\n")
    with app_database(root / "app.db") as con:
        sweeper = Sweeper([root], replace(OPTS, out=out), quick=True, served=True)
        with sweeper:
            sweeper.from_index = True  # (as a watching session holds it)
            sweeper.run()
            con.execute("INSERT INTO notes VALUES ('second note bravo, rescanned')")
            with monkeypatch.context() as patched:
                if not served:
                    patched.setattr(Sweeper, "_rescan_served", lambda self: None)
                rescan = sweeper.run(full=False)
            _read_again(rescan, out)
            again = sweeper.run(full=False)
            assert again.extracted == 0
    record = _records(out)["app.db"]
    assert "second note bravo, rescanned" in _text(out, record) and record.why == Why.CHANGED


def test_a_logs_database_is_its_name_without_the_suffix() -> None:
    assert logged_database("app.db-wal") == "app.db"
    assert logged_database("a/b/History-wal") == "a/b/History"
    assert logged_database("app.db") is None
    assert logged_database("-wal") is None
    assert logged_database("a/-wal") is None
    assert logged_database("app.db-walrus") is None


def test_a_watch_batch_takes_the_database_beside_each_log(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "app.db").write_bytes(b"x")
    (tmp_path / "gone.db-wal").write_bytes(b"x")  # its database is not there
    root = str(tmp_path)
    batch = {root: ["a/app.db-shm", "a/app.db-wal", "gone.db-wal", "z.txt"]}
    last: dict[tuple[str, str], float] = {}
    assert with_logged(batch, last, 1000.0) == {
        root: ["a/app.db", "a/app.db-shm", "a/app.db-wal", "gone.db-wal", "z.txt"]
    }
    assert last == {(root, "a/app.db"): 1000.0}
    same = {root: ["a/app.db", "a/app.db-wal"]}  # (read anyway: its own file changed)
    assert with_logged(same, {}, 1000.0) is same


def test_a_database_whose_log_keeps_changing_is_read_at_most_once_a_minute(
    tmp_path: Path,
) -> None:
    """Its log leaves the batches between (its record keeps the log's old size, so the batch
    after the minute, or the rescan, reads the database for what came meanwhile)."""
    (tmp_path / "app.db").write_bytes(b"x")
    root = str(tmp_path)
    last: dict[tuple[str, str], float] = {}
    logged = {root: ["app.db-shm", "app.db-wal"]}
    assert with_logged(logged, last, 1000.0)[root] == ["app.db", "app.db-shm", "app.db-wal"]
    assert with_logged(logged, last, 1000.0 + RELOG_S - 1)[root] == ["app.db-shm"]
    assert with_logged({root: ["app.db-wal"]}, last, 1000.0 + RELOG_S - 1)[root] == []
    assert with_logged(logged, last, 1000.0 + RELOG_S)[root] == [
        "app.db",
        "app.db-shm",
        "app.db-wal",
    ]
