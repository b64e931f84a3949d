"""Watch mode stays bounded: no garbage piles up batch after batch, and a full disk is said
once, retried quietly and said again only when the store takes changes again.

Every wait is bounded and polls for the condition the product promises; nothing is timed.
"""

from __future__ import annotations

import gc
import hashlib
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.gcpause import GC_YOUNG, fewer_collections
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import Watched, no_threads_left, watched

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
    # collection freed grew with the number of batches (about 70 objects a batch).
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
