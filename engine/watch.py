"""Live watch mode: the store follows the folder.

Producer -> queue -> consumer, as watchdog itself is built::

    observer per root --(handler: map + ignore, only queues)--> Debouncer
    consumer thread: Debouncer.take() -> Sweeper.run(only=batch, full=False) under session.lock

The consumer also runs the safety nets: a periodic rescan (``rescan_s``), an immediate one when
events were lost (inotify queue overflow, too many pending paths, an observer that died, a
``.quarryignore`` at the top changed), a restart of a dead observer, and the periodic tools
re-check (:meth:`engine.session.Session.recheck_tools`: a tool that appears retries the records
it unlocks). Every batch goes through the sweep's pipeline, so it leaves the store consistent
and reuses texts by content hash (a moved file is not read again).

:func:`watch_forever` is ``quarry watch``: initial sweep, then watch until SIGINT/SIGTERM,
finish the batch in flight, stop the observers, exit 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from engine.debounce import Batch, Debouncer, Timing
from engine.events import Listener, Notice
from engine.sweep import SweepOptions
from engine.watchfs import QueueingHandler, Started, healthy, start_observer

if TYPE_CHECKING:
    from watchdog.events import FileSystemEventHandler

    from engine.session import Session

RETRY_S = 5.0
"""Wait before restarting a dead observer again, or rescanning after a failed batch."""
TICK_S = 1.0
"""Longest the consumer sleeps between looks at the observers' health."""


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """How the watcher watches; ``poll`` and ``rescan_s`` have command-line flags."""

    poll: bool = False
    """Use the polling observer (network shares, where inotify sees nothing)."""
    rescan_s: float = 300.0
    """Seconds between full rescans that catch whatever events were missed."""
    debounce_s: float = 0.15
    """Quiet period: seconds without an event before a changed path is read."""
    batch_max_s: float = 1.0
    """Longest a ready path waits for a busy folder to go quiet."""
    settle_max_s: float = 30.0
    """Longest a file that is still being written is waited for."""
    tools_recheck_s: float = 60.0
    """Seconds between looks at the external tools on PATH."""
    poll_s: float = 1.0
    """Polling observer's interval in seconds."""

    def timing(self, polling: bool) -> Timing:
        """Debounce timing; polling sees a change only once per interval, so waits longer."""
        quiet = max(self.debounce_s, 3 * self.poll_s) if polling else self.debounce_s
        return Timing(quiet, max(self.batch_max_s, quiet), self.settle_max_s)


class _OverflowHook(logging.Handler):
    """watchdog only logs an inotify queue overflow; turn that log line into a rescan."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__(logging.WARNING)
        self.watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.watcher.request_rescan("the kernel's event queue overflowed")


class Watcher:
    """Keeps a :class:`Session`'s store current while files change; start() / stop()."""

    def __init__(self, session: Session, options: WatchOptions | None = None) -> None:
        self.session = session
        self.options = options or WatchOptions()
        self.debouncer = Debouncer(self.options.timing(self.options.poll))
        self._observers: dict[Path, Started] = {}
        self._retry_at: dict[Path, float] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._rescan_reason: str | None = None
        now = time.monotonic()
        self._next_rescan = now + self.options.rescan_s
        self._next_tools = now + self.options.tools_recheck_s
        self._hook = _OverflowHook(self)
        self._thread: threading.Thread | None = None

    @property
    def polling(self) -> bool:
        """Whether any root is watched by the polling observer."""
        return any(s.polling for s in self._observers.values())

    def start(self) -> None:
        """Start an observer per root and the consumer thread (non-blocking)."""
        logging.getLogger("watchdog.observers").addHandler(self._hook)
        for root in self.session.roots:
            self._observe(root)
        how = f"by polling every {self.options.poll_s:g} s" if self.polling else "natively"
        self._notice("watching", f"watching {len(self.session.roots)} folder(s) {how}")
        self._thread = threading.Thread(target=self._loop, name="quarry-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Finish the batch in flight, stop the consumer and every observer."""
        self._stop.set()
        self.debouncer.wake()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for started in self._observers.values():
            started.observer.stop()
        for started in self._observers.values():
            started.observer.join()
        self._observers.clear()
        logging.getLogger("watchdog.observers").removeHandler(self._hook)

    def request_rescan(self, reason: str) -> None:
        """Walk every root on the consumer's next turn (thread-safe; the first reason wins)."""
        with self._lock:
            self._rescan_reason = self._rescan_reason or reason
        self.debouncer.wake()

    # -- observers -------------------------------------------------------------------------

    def _observe(self, root: Path) -> None:
        rules = self.session.sweeper.rules

        def make_handler(tracks_close: bool) -> FileSystemEventHandler:
            return QueueingHandler(
                root,
                rules,
                self.debouncer,
                tracks_close=tracks_close,
                on_rescan=self.request_rescan,
            )

        started = start_observer(
            root, make_handler, poll=self.options.poll, poll_s=self.options.poll_s,
            skip_dirs=rules.skip_dirs,
        )  # fmt: skip
        self._observers[root] = started
        if started.polling:
            self.debouncer.timing = self.options.timing(True)
        if started.fallback:
            self._notice(
                "polling", f"{root}: {started.fallback}; polling every {self.options.poll_s:g} s",
                "warning",
            )  # fmt: skip

    def _check_observers(self, now: float) -> None:
        for root in self.session.roots:
            started = self._observers.get(root)
            if started is not None and healthy(started.observer):
                continue
            if now < self._retry_at.get(root, 0.0):
                continue
            if started is not None:
                started.observer.stop()
                started.observer.join()
                del self._observers[root]
                self._notice("watch-error", f"watching {root} stopped; restarting", "warning")
            try:
                self._observe(root)
            except OSError as exc:
                self._retry_at[root] = now + RETRY_S
                self._notice("watch-error", f"cannot watch {root}: {exc.strerror or exc}", "error")
                continue
            self.request_rescan(f"watching {root} restarted")

    # -- the consumer ----------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception as exc:  # the watcher must outlive any one batch
                self._notice("watch-error", f"watch step failed: {exc!r}; rescan soon", "error")
                self._next_rescan = min(self._next_rescan, time.monotonic() + RETRY_S)
                self._stop.wait(RETRY_S / 5)

    def _step(self) -> None:
        now = time.monotonic()
        self._check_observers(now)
        if self.debouncer.overflowed():
            self.request_rescan("too many changes queued at once")
        reason = self._due_rescan(now)
        if reason is not None:
            self._rescan(reason)
        elif now >= self._next_tools:
            self._next_tools = now + self.options.tools_recheck_s
            self.session.recheck_tools()
        elif batch := self.debouncer.take():
            self._run_batch(batch)
        else:
            self.debouncer.wait(self._sleep_for(now))

    def _due_rescan(self, now: float) -> str | None:
        with self._lock:
            reason, self._rescan_reason = self._rescan_reason, None
        if reason is None and now >= self._next_rescan:
            reason = "periodic"
        return reason

    def _sleep_for(self, now: float) -> float:
        due = self.debouncer.next_due()
        deadlines = [TICK_S, self._next_rescan - now, self._next_tools - now]
        return max(0.0, min(deadlines if due is None else [*deadlines, due]))

    def _run_batch(self, batch: Batch) -> None:
        with self.session.lock:
            self.session.sweeper.run(only=batch, full=False)

    def _rescan(self, reason: str) -> None:
        self._notice("rescan", f"rescan: {reason}")
        with self.session.lock:
            self.session.sweeper.run(full=False)
        self._next_rescan = time.monotonic() + self.options.rescan_s

    def _notice(self, kind: str, message: str, level: str = "info") -> None:
        self.session.on_event(Notice(time.time(), kind, message, level))


def watch_forever(
    dirs: Sequence[Path],
    sweep_options: SweepOptions,
    watch_options: WatchOptions,
    on_event: Listener,
) -> int:
    """``quarry watch``: sweep, then follow ``dirs`` until SIGINT/SIGTERM; exit code 0.

    A signal during the initial sweep interrupts it (the store keeps its last consistent
    state); once watching, a signal finishes the batch in flight, then stops.
    """
    from engine.session import Session

    stop = threading.Event()
    watching = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        if not watching.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        session = Session(dirs, sweep_options, on_event, watch_options=watch_options)
        try:
            session.sweep()
            session.start_watch()
            watching.set()
            while not stop.wait(0.5):
                pass
            on_event(Notice(time.time(), "stopping", "stopping: finishing the batch in flight"))
        finally:
            session.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    on_event(Notice(time.time(), "stopped", "stopped; the store is up to date"))
    return 0
