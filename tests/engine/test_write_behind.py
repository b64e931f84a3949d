"""While watching, a batch goes to the store's index at once and ``extract.jsonl`` follows
once the changes settle: readers of the store (the dashboard following it, ``quarry show``)
see the batch through the index, and nothing is lost when the watcher is killed before the
file caught up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.db import DB, is_ahead, read_index
from engine.records import Summary
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from tests.engine.watchkit import WAIT_S, watched
from tui.loader import jsonl_stamp, load_rows, open_rows


def test_a_batch_is_in_the_index_before_the_file_and_the_file_follows(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "first.txt").write_text("first\n")
    with watched(root, False, records_quiet_s=3600.0, records_max_s=3600.0) as w:
        store = w.session.store
        before = jsonl_stamp(store)
        (root / "new.txt").write_text("a change\n")
        w.wait("the batch in the index", lambda r: "new.txt" in r)
        assert "new.txt" not in w.jsonl()  # the file waits for the changes to settle
        assert is_ahead(store.out / DB, store.jsonl_path)
        w.until("the summary says so", lambda: not _summary(store).jsonl_current)
        assert jsonl_stamp(store) != before  # a follower sees the store moved
        # what the dashboard following the store reads
        assert "new.txt" in {p for c in load_rows(open_rows(store)) for p in c.rows.paths}
        (root / "first.txt").unlink()
        w.wait("the removal in the index", lambda r: "first.txt" not in r)
    # closing the session writes the file: nothing is left only in the index, and no text
    # that no record names (the next sweep need not look for any)
    assert {r.path for r in Store(store.out).load_records()} == {"new.txt"}
    assert not Store(store.out).is_dirty()
    assert not is_ahead(store.out / DB, store.jsonl_path)
    assert _summary(store).jsonl_current and _summary(store).jsonl_written


def _summary(store: Store) -> Summary:
    summary = Store(store.out).load_summary()
    assert summary is not None
    return summary


def test_the_file_catches_up_once_the_changes_settle(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with watched(root, False, records_quiet_s=0.3, records_max_s=3600.0) as w:
        (root / "new.txt").write_text("a change\n")
        w.until("extract.jsonl caught up", lambda: "new.txt" in w.jsonl())
        assert not is_ahead(w.session.store.out / DB, w.session.store.jsonl_path)


def test_a_watcher_killed_before_the_file_caught_up_loses_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "first.txt").write_text("first\n")
    out = tmp_path / "out"
    sweep([root], SweepOptions(out=out, tools=ToolSet.empty()))
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine", "watch", str(root), "--out", str(out), "--workers", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + WAIT_S
        n = 0
        # keep changing a file, so the folder never settles while the index takes each batch
        while not _in_index(out, "late.txt"):
            assert time.monotonic() < end, "the batch never reached the index"
            n += 1
            (root / "late.txt").write_text(f"change {n}\n")
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    result = sweep([root], SweepOptions(out=out, tools=ToolSet.empty()))
    records = {r.path: r for r in Store(out).load_records()}
    assert set(records) == {"first.txt", "late.txt"}
    assert Store(out).read_text(records["late.txt"].sha256 or "") == (root / "late.txt").read_text()
    assert result.extracted <= 1  # the late file only, if it changed after its last batch


def _in_index(out: Path, path: str) -> bool:
    try:
        return path in {r.path for r in read_index(out / DB)}
    except Exception:  # not made yet
        return False


def test_an_index_deleted_or_damaged_while_watching_is_rebuilt_with_nothing_lost(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(5):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    with watched(root, False, records_quiet_s=3600.0, records_max_s=3600.0) as w:
        out = w.session.store.out
        (root / "one.txt").write_text("before the damage\n")
        w.wait("one.txt", lambda r: "one.txt" in r)
        for name in (DB, DB + "-wal", DB + "-shm"):
            (out / name).unlink(missing_ok=True)
        (root / "two.txt").write_text("after the index went\n")
        w.wait("every record back in a new index", lambda r: {"one.txt", "two.txt"} <= set(r))
        assert len(w.records()) == 7
        assert "two.txt" not in w.jsonl()  # still behind: the rebuilt index is ahead of it
        with open(out / DB, "r+b") as f:  # then damaged under the writer's feet
            f.truncate(4096)
        (root / "three.txt").write_text("after the damage\n")
        w.wait("rebuilt again", lambda r: {"one.txt", "two.txt", "three.txt"} <= set(r))
        assert len(w.records()) == 8
        assert any("index" in n.message for n in w.events if hasattr(n, "message"))
    assert {r.path for r in Store(out).load_records()} == {
        *(f"f{i}.txt" for i in range(5)),
        "one.txt",
        "two.txt",
        "three.txt",
    }
