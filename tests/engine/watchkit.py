"""Helpers of the watch tests: a watched folder with a live session, bounded waits on the store."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.db import DB, ahead_lines
from engine.events import Event, RecordsChanged, SweepFinished, SweepStarted
from engine.records import Record
from engine.session import Session
from engine.store import read_jsonl
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from engine.watch import WatchOptions

WAIT_S = 20.0
"""Longest any test waits for the store to catch up (a loaded 2-core machine)."""


def options(poll: bool, **kw: float) -> WatchOptions:
    """Watch options for tests: fast polling, no periodic rescan or tools re-check."""
    base: dict[str, float] = {"poll_s": 0.1, "rescan_s": 3600.0, "tools_recheck_s": 3600.0}
    base.update(kw)
    return WatchOptions(poll=poll, **base)  # type: ignore[arg-type]


@dataclass
class Watched:
    """A folder under watch, its session, and every event the engine sent."""

    root: Path
    session: Session
    events: list[Event] = field(default_factory=list)

    def records(self) -> dict[str, Record]:
        """Path -> record, as a reader of the store sees them now: its index, which a batch
        reaches first (``extract.jsonl`` follows once the changes settle; before the first
        sweep made an index, the file)."""
        store = self.session.store
        ahead = ahead_lines(store.out / DB, store.jsonl_path)  # as the dashboard reads it
        if ahead is None:
            return {r.path: r for r in store.load_records()}
        return {r.path: r for r in read_jsonl(ahead[0]).records}

    def jsonl(self) -> dict[str, Record]:
        """Path -> record, as ``extract.jsonl`` holds them now."""
        return {r.path: r for r in self.session.store.load_records()}

    def wait(self, what: str, pred: Callable[[dict[str, Record]], bool]) -> dict[str, Record]:
        """Poll the store until ``pred`` holds (bounded); return the records then."""
        end = time.monotonic() + WAIT_S
        while True:
            recs = self.records()
            if pred(recs):
                return recs
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; store has {sorted(recs)}")
            time.sleep(0.02)

    def until(self, what: str, pred: Callable[[], bool]) -> None:
        """Poll ``pred`` until it holds (bounded)."""
        end = time.monotonic() + WAIT_S
        while not pred():
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.02)

    def mark(self) -> int:
        """An index into ``events`` once no batch is in flight: count what happens after it."""
        end = time.monotonic() + WAIT_S
        while True:
            n = len(self.events)
            events = self.events[:n]
            started = sum(1 for e in events if isinstance(e, SweepStarted))
            if started == sum(1 for e in events if isinstance(e, SweepFinished)):
                return n
            if time.monotonic() > end:
                raise AssertionError("a batch never finished")
            time.sleep(0.01)

    def batches(self, since: int = 0) -> list[SweepStarted]:
        """Incremental sweeps (watch batches and rescans) started since ``since``."""
        return [e for e in self.events[since:] if isinstance(e, SweepStarted) and not e.full]

    def extracted(self, since: int = 0) -> int:
        """Files read by the sweeps finished since ``since``."""
        return sum(e.extracted for e in self.events[since:] if isinstance(e, SweepFinished))

    def reads_of(self, path: str, since: int = 0) -> int:
        """How many times ``path`` got a freshly read record since ``since``."""
        return sum(
            1
            for e in self.events[since:]
            if isinstance(e, RecordsChanged)
            for r in e.records
            if r.path == path and not r.reused
        )

    def ever_recorded(self, path: str) -> bool:
        """Whether any event ever carried a record for ``path``."""
        return any(
            r.path == path for e in self.events if isinstance(e, RecordsChanged) for r in e.records
        )


def watching(
    root: Path, poll: bool, sweep: SweepOptions | None = None, **kw: float
) -> Iterator[Watched]:
    """Sweep ``root``, watch it, yield, then stop (the body of a fixture)."""
    events: list[Event] = []
    opts = sweep or SweepOptions(tools=ToolSet.empty(), workers=2)
    session = Session([root], opts, events.append, watch_options=options(poll, **kw))
    try:
        session.sweep_then_watch()
        yield Watched(root, session, events)
    finally:
        session.close()


@contextlib.contextmanager
def watch_process(cmd: Sequence[str]) -> Iterator[subprocess.Popen[str]]:
    """A real ``quarry watch`` (``cmd``) started, yielded once it says it watches (bounded by
    the test's timeout); killed at the end if it still runs, its stderr closed."""
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "watching" in line:
                break
        yield proc
    finally:
        ended(proc)


def ended(proc: subprocess.Popen[str]) -> None:
    """``proc`` killed if it still runs, waited for, its stderr closed (a test's teardown)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()


def no_threads_left(before: set[threading.Thread]) -> None:
    """Fail when threads started during the test (daemon ones too: observers) still run."""
    end = time.monotonic() + 5.0
    while True:
        left = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left:
            return
        if time.monotonic() > end:
            raise AssertionError(f"threads left running: {left}")
        time.sleep(0.02)


watched = contextlib.contextmanager(watching)
"""``with watched(root, poll) as w:``: the same, as a context manager."""
