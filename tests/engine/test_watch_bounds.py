"""Watch mode stays bounded: no garbage piles up batch after batch, and a full disk is said
once, retried quietly and said again only when the store takes changes again.

Every wait is bounded and polls for the condition the product promises; nothing is timed.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import io
import itertools
import os
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import store as store_module
from engine.console import SweepReporter
from engine.events import Event, RecordsChanged
from engine.extract import Outcome, ReadTask, machine_failure
from engine.gcpause import GC_YOUNG, fewer_collections
from engine.isolate import ReadPool
from engine.records import Record
from engine.session import Session
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import Watched, no_threads_left, options, watched

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


@pytest.fixture(autouse=True)
def _threads_stopped() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    no_threads_left(before)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    for i in range(20):
        (folder / f"f{i:02d}.txt").write_text(f"file {i}\n")
    return folder


class _Cycle:
    """An object that refers to itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_cycles_runs_leave_are_freed_by_the_collectors_own_collections() -> None:
    gc.collect()
    left: list[weakref.ref[_Cycle]] = []
    for _ in range(20):
        with fewer_collections():
            # a run's objects, enough of them for young collections during the run
            made = [[] for _ in range(2 * GC_YOUNG)]  # type: ignore[var-annotated]
            cycle = _Cycle()  # made last: no collection sees it alive
            left.append(weakref.ref(cycle))
            del made
        del cycle  # garbage once the run is over, as a run's own objects are
    alive = sum(1 for ref in left if ref() is not None)
    # A freeze at each run's start hid every cycle before any collection could see it.
    assert alive <= len(left) // 2, f"{alive} of {len(left)} cycles never collected"


def _one_batch(w: Watched, n: int) -> None:
    """Change a file and wait until its batch is over (its record stored, the watcher idle)."""
    name, text = f"f{n % 20:02d}.txt", f"file {n % 20}, version {n}\n"
    (w.root / name).write_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    w.wait(f"version {n}", lambda r: r[name].sha256 == sha)
    watcher = w.session.watcher
    assert watcher is not None
    w.until("the watcher idle", watcher.idle)


def test_watch_batches_leave_no_garbage_that_grows_with_their_number(root: Path) -> None:
    with watched(root, poll=False) as w:
        for n in range(3):
            _one_batch(w, n)
        w.mark()
        gc.collect()
        for n in range(3, 11):
            _one_batch(w, n)
        after_8 = gc.collect()
        for n in range(11, 43):
            _one_batch(w, n)
        after_32 = gc.collect()
    # Each batch's run was a cycle, and every run froze the cycles before it: what a full
    # collection freed grew with the number of batches (172 after 8, 700 after 32).
    assert after_32 <= after_8 + 200, (after_8, after_32)


def test_a_batchs_run_is_freed_without_the_cyclic_collector(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import run as run_module

    runs: list[weakref.ref[run_module.Run]] = []
    made = run_module.Run.__init__

    def init(self: run_module.Run, *args: object, **kw: object) -> None:
        made(self, *args, **kw)  # type: ignore[arg-type]
        runs.append(weakref.ref(self))

    monkeypatch.setattr(run_module.Run, "__init__", init)
    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    with Sweeper([root], opts) as sweeper:
        sweeper.run()
        was = gc.isenabled()
        gc.disable()
        try:
            for n in range(3):
                (root / "f00.txt").write_text(f"version {n}\n")
                sweeper.run(only={str(root): ["f00.txt"]}, full=False, rehash=True)
            alive = sum(1 for ref in runs if ref() is not None)
        finally:
            if was:
                gc.enable()
    assert len(runs) == 4
    assert alive == 0  # a run that referred to itself waited for the collector, batch after batch


def test_tries_come_less_and_less_often_up_to_a_bound() -> None:
    from engine.watch import RETRY_MAX_S, RETRY_S, retry_after

    waits = [retry_after(n) for n in range(1, 40)]
    assert waits[0] == RETRY_S
    assert all(b >= a for a, b in itertools.pairwise(waits))
    assert waits[1] == 2 * RETRY_S and max(waits) == waits[-1] == RETRY_MAX_S


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[int]]:
    """A fault that fills the store's disk while set: the engine's writes of its files and
    the workers' writes of texts fail with ENOSPC. Returns the fault and a count of the runs
    made while it was set."""
    full = threading.Event()
    runs = [0]
    space = os.strerror(errno.ENOSPC)
    write = store_module.atomic_write

    def full_write(path: Path, data: bytes, before_replace: object = None) -> None:
        if full.is_set():
            raise OSError(errno.ENOSPC, space, str(path))
        write(path, data, before_replace)  # type: ignore[arg-type]

    finished = ReadPool.finished

    def full_finished(self: ReadPool, tick: object = None) -> Iterator[tuple[ReadTask, Outcome]]:
        # Workers write texts in processes of their own: a full disk reaches the engine as
        # the Outcome a worker gives when its write fails (tests/engine/test_isolate.py).
        for task, o in finished(self, tick):  # type: ignore[arg-type]
            if full.is_set() and o.text_file is not None:
                o = machine_failure(o.mime, f"cannot write the text: {space}")
            yield task, o

    run = Sweeper.run

    def counted(self: Sweeper, *args: object, **kw: object) -> object:
        runs[0] += full.is_set()
        return run(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "atomic_write", full_write)
    monkeypatch.setattr(ReadPool, "finished", full_finished)
    monkeypatch.setattr(Sweeper, "run", counted)
    return full, runs


def test_a_full_disk_is_said_once_tried_quietly_and_its_end_said_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.watch.RETRY_S", 0.05)
    monkeypatch.setattr("engine.watch.RETRY_MAX_S", 0.2, raising=False)
    full, runs = _disk_full(monkeypatch)
    log = io.StringIO()  # what `quarry watch` prints when its output is not a terminal
    reporter = SweepReporter(log)
    events: list[Event] = []

    def listen(event: Event) -> None:
        events.append(event)
        reporter(event)

    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    session = Session([root], opts, listen, watch_options=options(False))
    texts = {f"f{i:02d}.txt": f"file {i}, written while the disk is full\n" for i in range(20)}
    try:
        session.sweep_then_watch()
        w = Watched(root, session, events)
        w.mark()
        start = len(log.getvalue().splitlines())
        full.set()
        for name, text in texts.items():
            (root / name).write_text(text)
        w.until("the first try and three more", lambda: runs[0] >= 4)
        watcher = session.watcher
        assert watcher is not None and watcher.trouble is not None
        assert "No space left on device" in watcher.trouble
        full.clear()
        shas = {n: hashlib.sha256(t.encode()).hexdigest() for n, t in texts.items()}
        recs = w.wait(
            "the store current", lambda r: all(n in r and r[n].sha256 == shas[n] for n in shas)
        )
        w.until("the trouble over", lambda: watcher.trouble is None and watcher.idle())
        lines = log.getvalue().splitlines()[start:]
    finally:
        session.close()
    assert all(session.store.read_text(shas[n]) == texts[n] for n in texts)
    assert {r.path for r in recs.values()} == set(texts)
    summary = session.store.load_summary()
    assert summary is not None and summary.files == len(texts)

    def said(words: str) -> int:
        return sum(words in line for line in lines)

    assert said("changes not stored") == 1, lines
    assert said("No space left on device") <= 2, lines  # that notice, and the run's own once
    assert said("the store takes changes again") == 1, lines
    for name in texts:  # read before the first failure, and stored at last: never per try
        assert said(name) <= 2, [line for line in lines if name in line]


def test_a_quiet_try_tells_the_records_it_did_store(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.watch.RETRY_S", 0.05)
    monkeypatch.setattr("engine.watch.RETRY_MAX_S", 0.2, raising=False)
    stuck = threading.Event()  # f00.txt's text cannot be written while set; the others can
    finished = ReadPool.finished

    def one_fails(self: ReadPool, tick: object = None) -> Iterator[tuple[ReadTask, Outcome]]:
        for task, o in finished(self, tick):  # type: ignore[arg-type]
            if stuck.is_set() and task.path.endswith("f00.txt") and o.text_file is not None:
                o = machine_failure(o.mime, f"cannot write the text: {os.strerror(errno.EDQUOT)}")
            yield task, o

    monkeypatch.setattr(ReadPool, "finished", one_fails)
    with watched(root, poll=False, sweep=SweepOptions(tools=ToolSet.empty(), workers=1)) as w:
        watcher = w.session.watcher
        assert watcher is not None
        stuck.set()
        (root / "f00.txt").write_text("cannot be stored for now\n")
        w.until("the trouble", lambda: watcher.trouble is not None)
        mark = len(w.events)
        (root / "f01.txt").write_text("stored by a quiet try\n")
        sha = hashlib.sha256(b"stored by a quiet try\n").hexdigest()
        w.wait("f01.txt stored", lambda r: r["f01.txt"].sha256 == sha)
        # the listeners (the dashboard) hear of what the store took, while f00.txt still fails
        w.until("f01.txt told", lambda: any(r.sha256 == sha for r in _told(w.events[mark:])))
        assert watcher.trouble is not None
        stuck.clear()
        w.until("the trouble over", lambda: watcher.trouble is None and watcher.idle())
        assert w.records()["f00.txt"].size == len("cannot be stored for now\n")


def _told(events: list[Event]) -> list[Record]:
    return [r for e in events if isinstance(e, RecordsChanged) for r in e.records]
