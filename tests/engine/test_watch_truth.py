"""Watch mode keeps the store true: changes during the first sweep, events that force a hash,
files that never stop changing, and a store that vanishes or cannot be written.

Every wait is bounded and polls for the condition the product promises.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import store as store_module
from engine.debounce import Batch
from engine.events import Event, Level, Notice, StoreHealth, StoreState, SweepFinished, SweepStarted
from engine.session import Session
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from engine.walk import WalkRules
from engine.watch import Deferred, Watcher
from tests.engine.watchkit import (
    WAIT_S,
    Watched,
    ended,
    no_threads_left,
    options,
    watch_process,
    watched,
)

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
POLL = pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])


@pytest.fixture(autouse=True)
def _threads_stopped() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    no_threads_left(before)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def _text(w: Watched, path: str) -> str:
    sha = w.records()[path].sha256
    assert sha is not None
    return w.session.store.read_text(sha)


def _notices(w: Watched, kind: str) -> list[Notice]:
    return [e for e in list(w.events) if isinstance(e, Notice) and e.kind == kind]


def _health(w: Watched, state: StoreState) -> list[StoreHealth]:
    return [e for e in list(w.events) if isinstance(e, StoreHealth) and e.state is state]


def _same_size_edit_keeping_mtime(path: Path, text: str) -> None:
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@POLL
def test_changes_during_the_first_sweep_are_applied_after_it(root: Path, poll: bool) -> None:
    (root / "keep.txt").write_text("kept as it is\n")
    (root / "doomed.txt").write_text("deleted during the sweep\n")
    (root / "edited.txt").write_text("before the edit\n")
    events: list[Event] = []

    def listener(event: Event) -> None:
        events.append(event)
        # The walk is done when the first sweep starts: these changes come after it.
        if isinstance(event, SweepStarted) and event.full and len(events) == 1:
            (root / "born.txt").write_text("created during the sweep\n")
            (root / "doomed.txt").unlink()
            (root / "edited.txt").write_text("after the edit!\n")
        if isinstance(event, SweepFinished) and event.full:
            (root / "after.txt").write_text("created as the first sweep ended\n")

    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    session = Session([root], opts, listener, watch_options=options(poll))
    try:
        session.sweep_then_watch()
        w = Watched(root, session, events)
        recs = w.wait(
            "the changes made during the sweep",
            lambda r: (
                {"born.txt", "after.txt", "keep.txt", "edited.txt"} == set(r)
                and r["edited.txt"].size == len("after the edit!\n")
            ),
        )
        assert _text(w, "edited.txt") == "after the edit!\n"
        assert _text(w, "born.txt") == "created during the sweep\n"
        assert recs["keep.txt"].reused is False  # the first sweep's own record, untouched
    finally:
        session.close()


def test_an_event_forces_a_hash_even_when_size_and_mtime_are_put_back(root: Path) -> None:
    (root / "a.txt").write_text("first words\n")
    hour_ago = time.time_ns() - 3600 * 10**9  # not racy: the stat cache would trust it
    os.utime(root / "a.txt", ns=(hour_ago, hour_ago))
    with watched(root, poll=False) as w:
        old = w.records()["a.txt"]
        _same_size_edit_keeping_mtime(root / "a.txt", "other words\n")
        assert (root / "a.txt").stat().st_mtime_ns == old.mtime_ns
        recs = w.wait("the edit", lambda r: r["a.txt"].sha256 != old.sha256)
        assert (recs["a.txt"].size, recs["a.txt"].mtime_ns) == (old.size, old.mtime_ns)
        assert _text(w, "a.txt") == "other words\n"


@POLL
def test_a_file_written_without_pause_is_read_every_settle_max(root: Path, poll: bool) -> None:
    stop = threading.Event()

    def log_writer() -> None:
        with open(root / "app.log", "a") as fh:
            n = 0
            while not stop.is_set():
                fh.write(f"log line {n}\n")
                fh.flush()
                n += 1
                stop.wait(0.05)

    with watched(root, poll, settle_max_s=1.0) as w:
        writer = threading.Thread(target=log_writer)
        writer.start()
        try:
            # Twice: read while the writes go on, and again later, still while they go on.
            first = w.wait("a first read of the log", lambda r: "app.log" in r)["app.log"]
            w.wait("a later read", lambda r: r["app.log"].size > first.size)
            assert writer.is_alive()
        finally:
            stop.set()
            writer.join()
        changing = _notices(w, "still-changing")
        assert changing and "app.log" in changing[0].message
        size = (root / "app.log").stat().st_size
        w.wait("the settled log", lambda r: r["app.log"].size == size)


class _Target:
    """A WatchTarget of the test's own: the watcher drives anything that has its shape."""

    def __init__(self, root: Path, fail: int = 0) -> None:
        self.roots = [root]
        self.rules = WalkRules()
        self.batches: list[Batch] = []
        self.events: list[Event] = []
        self.fail = fail

    def apply(self, batch: Batch) -> None:
        if self.fail:
            self.fail -= 1
            raise Deferred("cannot write the store: No space left on device")
        self.batches.append(batch)

    def rescan(self) -> None:
        self.batches.append({})

    def recheck_tools(self) -> object:
        return None

    def notify(self, event: Event) -> None:
        self.events.append(event)

    def behind(self) -> float | None:
        return None

    def write_behind(self) -> None:
        raise AssertionError("never behind")


def _until(what: str, pred: object) -> None:
    end = time.monotonic() + WAIT_S
    while not pred():  # type: ignore[operator]
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_watcher_drives_any_target_and_retries_what_was_deferred(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.watch.RETRY_S", 0.2)
    target = _Target(root, fail=2)
    watcher = Watcher(target, options(False))
    watcher.observe()
    (root / "queued.txt").write_text("written before the consumer starts\n")
    watcher.start()
    try:
        _until("the retried batch", lambda: target.batches)
        assert target.batches[0][str(root)] == ["queued.txt"]
        _until("idle", watcher.idle)  # the batch stored, and its end said
        health = [e for e in target.events if isinstance(e, StoreHealth)]
        states = [e.state for e in health]
        assert states == [StoreState.TROUBLE, StoreState.OK]  # said once, not once per retry
        assert [e.level for e in health] == [Level.ERROR, Level.INFO]
        assert "No space left on device" in health[0].message
        words = {state.value for state in StoreState}
        assert not any(isinstance(e, Notice) and e.kind in words for e in target.events)
        assert watcher.trouble is None
    finally:
        watcher.stop()


def _full_disk(monkeypatch: pytest.MonkeyPatch, only: str | None = None) -> threading.Event:
    """An event that, set, makes every atomic write of the store (or of the file ``only``)
    fail as a full disk does; retries come fast."""
    monkeypatch.setattr("engine.watch.RETRY_S", 0.2)
    real = store_module.atomic_write
    broken = threading.Event()

    def write(path: Path, data: object, before_replace: object = None) -> None:
        if broken.is_set() and only in (None, path.name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data, before_replace)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "atomic_write", write)
    return broken


def test_a_full_or_read_only_store_is_a_state_the_watcher_leaves_when_it_can(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _full_disk(monkeypatch, only="extract.jsonl")
    with watched(root, poll=False) as w:
        broken.set()
        (root / "new.txt").write_text("while the disk is full\n")
        w.until("the trouble said", lambda: bool(_health(w, StoreState.TROUBLE)))
        (said,) = _health(w, StoreState.TROUBLE)
        assert "No space left" in said.message and "index" in said.message
        assert "new.txt" in w.records()  # the change is in the store's index, not lost
        assert "new.txt" not in w.jsonl()  # the file waits for the disk
        broken.clear()
        w.until("extract.jsonl caught up", lambda: "new.txt" in w.jsonl())
        w.until("said", lambda: bool(_health(w, StoreState.OK)))
        assert len(_health(w, StoreState.TROUBLE)) == 1  # said once, not once per try
        assert _text(w, "new.txt") == "while the disk is full\n"


def test_the_whole_store_full_holds_the_change_until_it_can_be_stored(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _full_disk(monkeypatch)  # the summary too: the batch itself cannot be stored
    with watched(root, poll=False) as w:
        broken.set()
        (root / "new.txt").write_text("while the disk is full\n")
        w.until("the trouble said", lambda: bool(_health(w, StoreState.TROUBLE)))
        watcher = w.session.watcher
        assert watcher is not None and watcher.trouble is not None
        assert "No space left" in watcher.trouble
        assert not watcher.idle()  # the change is held, not forgotten
        broken.clear()
        w.wait("the held change stored", lambda r: "new.txt" in r)
        w.until("back to normal", lambda: watcher.trouble is None)
        assert _health(w, StoreState.OK)
        w.until("extract.jsonl caught up", lambda: "new.txt" in w.jsonl())
        assert _text(w, "new.txt") == "while the disk is full\n"


def test_a_vanished_store_stops_the_watcher_and_is_never_made_again(root: Path) -> None:
    import shutil

    with watched(root, poll=False) as w:
        (root / "a.txt").write_text("a\n")
        w.wait("a.txt", lambda r: "a.txt" in r)
        out = w.session.store.out
        w.mark()  # no batch writing while the folder goes
        shutil.rmtree(out)
        (root / "b.txt").write_text("written after the store vanished\n")
        watcher = w.session.watcher
        assert watcher is not None
        w.until("the watcher to give up", lambda: watcher.failure is not None)
        assert "removed" in (watcher.failure or "")
        lost = _health(w, StoreState.LOST)
        assert lost and lost[0].level == "error" and "not up to date" in lost[0].message
        assert not out.exists()  # no unguarded store made again behind the lock's back


def test_quarry_watch_exits_1_when_its_store_vanishes(root: Path) -> None:
    import shutil
    import sys

    (root / "first.txt").write_text("there before\n")
    cmd = [sys.executable, "-m", "engine", "watch", str(root), "--workers", "1"]
    with watch_process(cmd) as proc:
        shutil.rmtree(root / ".quarry")
        (root / "second.txt").write_text("written after the store vanished\n")
        assert proc.wait(timeout=WAIT_S) == 1
        assert proc.stderr is not None
        rest = proc.stderr.read()
    assert "NOT up to date" in rest and "store is up to date" not in rest
    assert not (root / ".quarry").exists()


@POLL
def test_a_truncate_by_name_is_recorded_though_no_close_follows(root: Path, poll: bool) -> None:
    (root / "a.txt").write_text("a longer first text\n")
    with watched(root, poll) as w:  # settle_max_s stays 30 s: more than the test waits
        os.truncate(root / "a.txt", 7)  # a write without an open: no close event comes
        w.wait("the truncated file", lambda r: r["a.txt"].size == 7)
        assert _text(w, "a.txt") == "a longe"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_the_first_sweep_keeps_what_was_read_and_exits_0(
    root: Path, sig: signal.Signals
) -> None:
    from engine.store import Store
    from engine.sweep import sweep
    from tests import faultreader

    (root / "a.txt").write_text("swept before\n")
    (root / "b.txt").write_text("swept before too\n")
    sweep([root], SweepOptions(tools=ToolSet.empty(), workers=1))
    (root / "hang.bin").write_bytes(faultreader.fixture("hang"))  # keeps the first sweep running
    env = faultreader.env()
    cmd = [sys.executable, "-m", "engine", "watch", str(root), "--workers", "1"]
    cmd += faultreader.ARGS
    proc = subprocess.Popen(
        cmd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    store = Store(root / ".quarry")
    try:
        end = time.monotonic() + WAIT_S  # the sweep runs once the writer's pid is in the lock
        while (store.out / "lock").read_text().strip() != str(proc.pid):
            assert time.monotonic() < end and proc.poll() is None, "the watch never started"
            time.sleep(0.02)
        proc.send_signal(sig)
        assert proc.wait(timeout=WAIT_S) == 0
        assert proc.stderr is not None
        said = proc.stderr.read()
    finally:
        ended(proc)
    assert "stopped during the first sweep" in said and "up to date" not in said
    assert "watching" not in said  # no watching starts after an interrupted first sweep
    paths = {r.path for r in store.load_records()}
    assert {"a.txt", "b.txt"} <= paths and "hang.bin" not in paths
    assert store.load_summary() is not None


@POLL
def test_a_name_that_is_not_utf8_never_stops_the_batches(root: Path, poll: bool) -> None:
    odd = os.fsdecode(b"caf\xe9 \xff.txt")  # Latin-1 bytes and a byte no encoding has
    folder = os.fsdecode(b"d\xc3(")
    with watched(root, poll) as w:
        (root / odd).write_text("an odd name\n")
        (root / folder).mkdir()
        (root / folder / "in.txt").write_text("under an odd folder\n")
        (root / "plain.txt").write_text("written after them\n")
        recs = w.wait("all three", lambda r: {odd, f"{folder}/in.txt", "plain.txt"} <= set(r))
        assert _text(w, odd) == "an odd name\n"
        os.rename(root / odd, root / "renamed.txt")
        (root / "later.txt").write_text("a later change\n")
        recs = w.wait("the rename", lambda r: "renamed.txt" in r and "later.txt" in r)
        assert odd not in recs and recs["renamed.txt"].reused
        assert not _notices(w, "watch-error")
        w.until("extract.jsonl", lambda: f"{folder}/in.txt" in w.jsonl())  # once settled
        line = next(
            ln for ln in w.session.store.jsonl_path.read_bytes().splitlines() if b"in.txt" in ln
        )
        assert b'"path_b64"' in line  # the exact bytes kept, as the store's format says
