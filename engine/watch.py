"""Live watch mode: the store follows the folder.

Producer -> queue -> consumer, as watchdog itself is built::

    observer per root --(handler: map + ignore, only queues)--> Debouncer
    consumer thread: Debouncer.take() -> WatchTarget.apply(batch)

The watcher drives a :class:`WatchTarget` (:class:`engine.session.Session` is the one the
product uses) and imports nothing of it: the target owns the store, its lock and the sweep
pipeline; the watcher owns the observers, the queue and the safety nets. Every batch goes
through the sweep's pipeline, so it leaves the store consistent and reuses texts by content
hash (a moved file is not read again); a path an event named is always hashed (the stat cache
is for sweeps without events).

The observers start before the first sweep (:meth:`Watcher.observe`): what changes while it
runs waits in the queue and is applied right after it (:meth:`Watcher.start`).

``extract.jsonl`` follows the batches once they settle, written in the background from one
snapshot of the index (:meth:`WatchTarget.start_write_behind`: seconds at millions of
records, which a change made meanwhile must not wait for); the consumer concludes it between
batches (:meth:`WatchTarget.finish_write_behind`), woken by its end.

A file whose last read was costly and that keeps changing (a log of megabytes appended every
second, a spreadsheet saved every minute by its application) rests between reads: it is read
again no sooner than ``rest_ratio`` times what its last read cost (its text indexed included,
:data:`Costs`), at most ``rest_max_s``, so that one such file takes at most a tenth of the
machine; the change made meanwhile is read when the rest ends, a notice says so once a file.

Safety nets, all on the consumer: a periodic rescan (``rescan_s``), an immediate one when
events were lost (inotify queue overflow, too many pending paths, an observer that died, a
``.quarryignore`` at the top changed), a restart of a dead observer, and the periodic tools
re-check. A batch the machine kept from the store (:class:`Deferred`: the store's folder is
read-only or full, the pool cannot start) keeps its paths and is tried again, ``RETRY_S``
later, then twice as long after each failed try up to ``RETRY_MAX_S``: the trouble is said
once, the tries are quiet (the target tells nothing of a try that fails again), and its end is
said once, each a :class:`engine.events.StoreHealth` event; a store whose folder or lock
vanished (:class:`engine.errors.StoreLost`) stops the watcher for good
(:attr:`Watcher.failure`, said as a lost store), since our lock no longer keeps a second writer
out.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.debounce import Batch, Debouncer, Ready, Timing
from engine.errors import StoreLost
from engine.events import Event, Level, Notice, NoticeKind, StoreHealth, StoreState
from engine.names import shown
from engine.watchfs import QueueingHandler, Started, folder_id, healthy, start_observer

if TYPE_CHECKING:
    from watchdog.events import FileSystemEventHandler

    from engine.walk import WalkRules

RETRY_S = 5.0
"""Wait before restarting a dead observer again, or retrying what the machine kept out."""
RETRY_MAX_S = 60.0
"""Longest wait between tries of what the machine keeps out (the wait doubles from
``RETRY_S``): a disk that stays full is not read at again every few seconds."""
TICK_S = 1.0
"""Longest the consumer sleeps between looks at the observers' health."""
STOP_JOIN_S = 5.0
"""Longest wait for one observer's threads to end when the watcher stops."""


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
    """Longest a file that is still being written is waited for: it is read at least this often."""
    tools_recheck_s: float = 60.0
    """Seconds between looks at the external tools on PATH."""
    poll_s: float = 1.0
    """Polling observer's interval in seconds."""
    records_quiet_s: float = 2.0
    """``extract.jsonl`` is written from the index once no batch came for this long..."""
    records_max_s: float = 10.0
    """...and at least this often while batches keep coming (a folder that never settles)."""
    rest_ratio: float = 10.0
    """A file read again waits this many times what its last read cost (0: never waits)..."""
    rest_max_s: float = 300.0
    """...at most this long: a file that changes all day is read at least this often."""

    def timing(self, polling: bool) -> Timing:
        """Debounce timing; polling sees a change only once per interval, so waits longer."""
        quiet = max(self.debounce_s, 3 * self.poll_s) if polling else self.debounce_s
        return Timing(quiet, max(self.batch_max_s, quiet), max(self.settle_max_s, quiet))


Costs = Mapping[tuple[str, str], float]
"""(root, path) -> seconds of work the batch's read of that file cost (see
:meth:`WatchTarget.apply`)."""

REST_MIN_S = 1.0
"""A rest shorter than this is none: a file that reads in a tenth of a second is always read at
once (the quiet period already gathers a burst of writes)."""
TOLD_MOST = 10_000
"""Files whose rest was said, remembered so that each is said once (past this: said again)."""


class Deferred(Exception):
    """Raised by a :class:`WatchTarget` when the machine, not the files, kept a change out of
    the store (its folder read-only or full, a worker pool that cannot start).

    The store still holds its last consistent state; the watcher keeps the paths and tries
    again. The message says why, in one line.
    """


class WatchTarget(Protocol):
    """What the watcher drives: the roots it watches and where their changes go."""

    @property
    def roots(self) -> Sequence[Path]:
        """The folders to watch."""
        ...

    @property
    def rules(self) -> WalkRules:
        """The walk's ignore rules (the store's folder among them)."""
        ...

    def apply(self, batch: Batch) -> Costs | None:
        """Bring the records of these paths up to date, hashing every file they name; what
        each file read cost (none for a file whose record was kept), or None.

        A folder in the batch is walked whole. Raises :class:`Deferred` when the machine kept
        the change out, :class:`engine.errors.StoreLost` when the store went away.
        """
        ...

    def rescan(self) -> None:
        """Walk every root and bring the store up to date (raises as :meth:`apply`)."""
        ...

    def recheck_tools(self) -> object:
        """Look up the external tools again; retry what a new one unlocks."""
        ...

    def notify(self, event: Event) -> None:
        """Pass an event on to the listeners (log lines, the dashboard)."""
        ...

    def behind(self) -> float | None:
        """Since when (monotonic) the batches applied are not all in ``extract.jsonl``."""
        ...

    def write_behind(self) -> None:
        """Bring ``extract.jsonl`` up to date with what the batches applied."""
        ...

    def start_write_behind(self, done: Callable[[], None]) -> bool:
        """Start bringing ``extract.jsonl`` up to date in the background, the batches going
        on meanwhile; ``done`` is called (from another thread) once it ended. Whether one
        runs now: False when none was started (written at once, or nothing to write)."""
        ...

    def finish_write_behind(self) -> None:
        """Conclude the background write that ended (called on the watcher's thread)."""
        ...


class _OverflowHook(logging.Handler):
    """watchdog only logs an inotify queue overflow; turn that log line into a rescan."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__(logging.WARNING)
        self.watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.watcher.request_rescan("the kernel's event queue overflowed")


class Watcher:
    """Keeps a :class:`WatchTarget`'s store current while files change.

    :meth:`observe` starts the observers (events queue up), :meth:`start` the consumer that
    applies them, :meth:`stop` applies what is still queued and stops both.
    """

    def __init__(self, target: WatchTarget, options: WatchOptions | None = None) -> None:
        self.target = target
        self.options = options or WatchOptions()
        self.debouncer = Debouncer(self.options.timing(self.options.poll))
        self.failure: str | None = None
        """Why the watcher stopped for good (the store vanished); None while it runs."""
        self.trouble: str | None = None
        """Why changes are being kept out of the store right now; None when they are not."""
        self.tries = 0
        """Tries in a row that the machine kept out of the store (0 when the last one went in)."""
        self._observers: dict[Path, Started] = {}
        self._gone: set[Path] = set()
        """Roots with no folder at their name now: their records are kept, not followed."""
        self._retry_at: dict[Path, float] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._rescan_reason: str | None = None
        self._held: dict[str, set[str]] = {}
        self._held_at = 0.0
        self._busy = False
        self._last_batch = 0.0
        """When the last batch or rescan ended (monotonic): extract.jsonl waits for quiet."""
        self._writing = False
        """A background write of ``extract.jsonl`` was started and is not concluded yet."""
        self._written = threading.Event()
        """Set by the background write's thread when it ended: concluded at the next step."""
        now = time.monotonic()
        self._next_rescan = now + self.options.rescan_s
        self._next_tools = now + self.options.tools_recheck_s
        self._hook = _OverflowHook(self)
        self._thread: threading.Thread | None = None
        self._told_rest: set[tuple[str, str]] = set()

    @property
    def started(self) -> bool:
        """Whether the consumer runs (or ran): :meth:`start` was called."""
        return self._thread is not None

    @property
    def busy(self) -> bool:
        """Whether the consumer is running a batch, a rescan or a tools re-check right now."""
        return self._busy

    @property
    def gone(self) -> str | None:
        """What is gone of the roots watched (their records kept), said as a problem; None
        when every root is there."""
        gone = sorted(shown(str(root)) for root in tuple(self._gone))
        if not gone:
            return None
        return f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} gone (records kept)"

    @property
    def polling(self) -> bool:
        """Whether any root is watched by the polling observer."""
        return any(s.polling for s in self._observers.values())

    def observe(self) -> None:
        """Start an observer per root; events queue until :meth:`start` (idempotent)."""
        if self._observers:
            return
        logging.getLogger("watchdog.observers").addHandler(self._hook)
        for root in self.target.roots:
            self._observe(root)

    def start(self) -> None:
        """Start observing (if not yet) and the consumer thread (non-blocking)."""
        self.observe()
        how = f"by polling every {self.options.poll_s:g} s" if self.polling else "natively"
        n = len(self.target.roots)
        self._notice(NoticeKind.WATCHING, f"watching {n} folder{'' if n == 1 else 's'} {how}")
        self._next_rescan = time.monotonic() + self.options.rescan_s
        self._thread = threading.Thread(target=self._loop, name="quarry-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Apply what is queued (the batch in flight finishes first), stop every thread."""
        self._stop.set()
        self.debouncer.wake()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for root, started in self._observers.items():
            try:
                started.observer.stop()
            except Exception as exc:  # watchdog 7.1's inotify bookkeeping can trip on stop
                # (KeyError after nested folders went); the threads are told to stop already.
                self._notice(
                    NoticeKind.WATCH_ERROR, f"stopping {shown(str(root))}: {exc!r}", Level.WARNING
                )
        for root, started in self._observers.items():
            # After such a failed stop an emitter can stay blocked in its inotify read, and an
            # unbounded join would hang the exit; watchdog's threads are daemons, so a bounded
            # join lets the process end and release the store.
            started.observer.join(timeout=STOP_JOIN_S)
            if started.observer.is_alive():
                self._notice(
                    NoticeKind.WATCH_ERROR,
                    f"{shown(str(root))}: observer did not stop",
                    Level.WARNING,
                )
        self._observers.clear()
        logging.getLogger("watchdog.observers").removeHandler(self._hook)

    def request_rescan(self, reason: str) -> None:
        """Walk every root on the consumer's next turn (thread-safe; the first reason wins)."""
        with self._lock:
            self._rescan_reason = self._rescan_reason or reason
        self.debouncer.wake()

    def idle(self) -> bool:
        """Nothing queued, held back or asked for, and no batch running.

        Events the observers have not delivered yet are not known here: a caller that must
        know everything was seen writes a file of its own and waits for its record too.
        """
        if len(self.debouncer) or self._held or self._rescan_reason is not None:
            return False  # looked at before _busy: a batch taken meanwhile is still busy
        return not self._busy and self.started

    # -- observers -------------------------------------------------------------------------

    def _observe(self, root: Path) -> None:
        rules = self.target.rules

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
            skip_dirs=rules.skip_dirs, defaults=rules.defaults,
        )  # fmt: skip
        self._observers[root] = started
        if started.polling:
            self.debouncer.timing = self.options.timing(True)
        if started.fallback:
            self._notice(
                NoticeKind.POLLING,
                f"{shown(str(root))}: {started.fallback}; polling every {self.options.poll_s:g} s",
                Level.WARNING,
            )

    def _check_observers(self, now: float) -> None:
        for root in self.target.roots:
            if self._root_moved(root):
                continue
            started = self._observers.get(root)
            if started is not None and healthy(started.observer):
                continue
            if now < self._retry_at.get(root, 0.0):
                continue
            name = shown(str(root))
            if started is not None:
                self._unobserve(root)
                self._notice(
                    NoticeKind.WATCH_ERROR, f"watching {name} stopped; restarting", Level.WARNING
                )
            self._reobserve(root, now, f"watching {name} restarted")

    def _root_moved(self, root: Path) -> bool:
        """Whether ``root`` is gone, or came back, or is another folder than the one watched,
        handled here: a gone root's observer is stopped (it would follow the folder wherever
        it was moved, or stop by itself as it was deleted) and its records kept, said once;
        once a folder is there again it is watched anew and rescanned."""
        here = folder_id(root)
        name = shown(str(root))
        started = self._observers.get(root)
        if here is None:
            if root not in self._gone:
                self._gone.add(root)
                self._unobserve(root)
                self._notice(
                    NoticeKind.ROOT_GONE,
                    f"{name} is gone (deleted, moved away or unmounted): its records are kept; "
                    "watched again when a folder is there again",
                    Level.WARNING,
                )
            return True
        if root in self._gone:
            self._gone.discard(root)
            self._unobserve(root)
            self._notice(NoticeKind.ROOT_BACK, f"{name} is there again: watched anew")
            self._reobserve(root, time.monotonic(), f"{name} is there again")
            return True
        if started is not None and started.folder is not None and started.folder != here:
            self._unobserve(root)
            self._notice(NoticeKind.WATCHING, f"{name} is another folder now: watched anew")
            self._reobserve(root, time.monotonic(), f"{name} is another folder now")
            return True
        return False

    def _unobserve(self, root: Path) -> None:
        started = self._observers.pop(root, None)
        if started is not None:
            started.observer.stop()
            started.observer.join(timeout=STOP_JOIN_S)

    def _reobserve(self, root: Path, now: float, why: str) -> None:
        """Watch ``root`` again and rescan it, or say why it cannot be (tried again later)."""
        try:
            self._observe(root)
        except OSError as exc:
            self._retry_at[root] = now + RETRY_S
            self._notice(
                NoticeKind.WATCH_ERROR,
                f"cannot watch {shown(str(root))}: {exc.strerror or exc}",
                Level.ERROR,
            )
            return
        self.request_rescan(why)

    # -- the consumer ----------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._guarded(self._step)
            self._guarded(self._drain)
        except StoreLost as exc:
            self._lost(str(exc))

    def _guarded(self, step: Callable[[], None]) -> None:
        try:
            step()
        except StoreLost:
            raise
        except Exception as exc:  # the watcher must outlive any one batch
            self._notice(
                NoticeKind.WATCH_ERROR, f"watch step failed: {exc!r}; rescan soon", Level.ERROR
            )
            self._next_rescan = min(self._next_rescan, time.monotonic() + RETRY_S)
            self._stop.wait(RETRY_S / 5)
        finally:
            self._busy = False

    def _step(self) -> None:
        self._busy = True
        now = time.monotonic()
        self._check_observers(now)
        self._conclude_records()
        if self.debouncer.overflowed():
            self.request_rescan("too many changes queued at once")
        reason = self._due_rescan(now)
        if reason is not None and len(self._gone) == len(self.target.roots):
            # nothing there to rescan (a rescan is asked for as a root is there again)
            self._next_rescan = now + self.options.rescan_s
            reason = None
        if reason is not None:
            self._rescan(reason)
        elif now >= self._next_tools:
            self._next_tools = now + self.options.tools_recheck_s
            self.target.recheck_tools()
        elif self._held and now >= self._held_at:
            held, self._held = self._held, {}
            self._run_batch(Ready({root: sorted(rels) for root, rels in held.items()}))
        elif ready := self.debouncer.take():
            if self.trouble is not None:  # joins what waits for the next try, not a try now
                self._hold(ready)
            else:
                self._run_batch(ready)
            self._last_batch = time.monotonic()
            if self._records_due(self._last_batch):  # a folder that never settles
                self._write_records()
        elif self._records_due(now):
            self._write_records()
        else:
            self._busy = False
            self.debouncer.wait(self._sleep_for(now))

    def _drain(self) -> None:
        """On stop: apply every path still queued or held, settled or not."""
        self._busy = True
        ready = self.debouncer.drain()
        for root, rels in self._held.items():
            ready.batch.setdefault(root, []).extend(rels)
        self._held = {}
        if ready:
            self._run_batch(ready)

    def _due_rescan(self, now: float) -> str | None:
        with self._lock:
            reason, self._rescan_reason = self._rescan_reason, None
        if reason is None and now >= self._next_rescan:
            reason = "periodic"
        return reason

    def _write_records(self) -> None:
        """Start the write of ``extract.jsonl`` in the background: a rewrite of a big store
        takes seconds (1.5 s a million records), and a change made meanwhile must not wait
        for it. Its end wakes the consumer, which concludes it (:meth:`_conclude_records`)."""
        self._written.clear()
        self._writing = self.target.start_write_behind(self._records_written)

    def _records_written(self) -> None:
        """Called by the background write's thread as it ends: conclude it soon."""
        self._written.set()
        self.debouncer.wake()

    def _conclude_records(self) -> None:
        """Conclude the background write once it ended, here, between batches (the target
        decides whether ``extract.jsonl`` is now in step or still behind later batches)."""
        if self._writing and self._written.is_set():
            self._writing = False
            self.target.finish_write_behind()

    def _records_due(self, now: float) -> bool:
        """Whether ``extract.jsonl`` is behind and due: after a quiet period, or at most
        :attr:`WatchOptions.records_max_s` after the first batch it misses; never while a
        write of it runs (the next one starts once that one is concluded)."""
        since = self.target.behind()
        if since is None or self._writing:
            return False
        o = self.options
        return now - self._last_batch >= o.records_quiet_s or now - since >= o.records_max_s

    def _records_at(self, now: float) -> float | None:
        """When ``extract.jsonl`` is next due, if it is behind."""
        since = self.target.behind()
        if since is None or self._writing:  # (its end wakes the consumer)
            return None
        o = self.options
        return min(self._last_batch + o.records_quiet_s, since + o.records_max_s)

    def _sleep_for(self, now: float) -> float:
        if self._written.is_set() and self._writing:  # ended before the wait: conclude now
            return 0.0
        deadlines = [TICK_S, self._next_rescan - now, self._next_tools - now]
        if (records := self._records_at(now)) is not None:
            deadlines.append(records - now)
        if (due := self.debouncer.next_due()) is not None:
            deadlines.append(due)
        if self._held:
            deadlines.append(self._held_at - now)
        return max(0.0, min(deadlines))

    def _run_batch(self, ready: Ready) -> None:
        ready = self._followed(ready)
        if not ready:
            return
        for root, rel in ready.changing:
            self._notice(
                NoticeKind.STILL_CHANGING,
                f"{shown(rel)} in {shown(root)} is still being written: read after "
                f"{self.debouncer.timing.settle_max_s:g} s anyway; read again when it settles",
            )
        try:
            costs = self.target.apply(ready.batch)
        except Deferred as exc:
            self._hold(ready)
            self._troubled(str(exc))
            self._held_at = time.monotonic() + retry_after(self.tries)
            return
        self._cleared()
        if costs:
            self._rest(costs)

    def _rest(self, costs: Costs) -> None:
        """Hold back the files whose read was costly (see the module docstring)."""
        now = time.monotonic()
        o = self.options
        for key, cost in costs.items():
            wait = min(o.rest_max_s, o.rest_ratio * cost)
            if wait < REST_MIN_S:
                continue
            self.debouncer.rest(key, now + wait)
            if key in self._told_rest:
                continue
            if len(self._told_rest) >= TOLD_MOST:
                self._told_rest.clear()
            self._told_rest.add(key)
            root, rel = key
            self._notice(
                NoticeKind.RESTING,
                f"{shown(rel)} in {shown(root)} costs about {cost:.1f} s a read: while it "
                f"keeps changing, it is read at most every {wait:.0f} s",
            )

    def _followed(self, ready: Ready) -> Ready:
        """``ready`` without the paths of roots that are gone: they came from the folder
        where the root was moved (an observer follows its folder, not the name) or from its
        deletion; the records are kept while it is gone, and the rescan once a folder is there
        again sets them right."""
        gone = {str(root) for root in tuple(self._gone)}
        if not gone.intersection(ready.batch):
            return ready
        batch = {root: rels for root, rels in ready.batch.items() if root not in gone}
        return Ready(batch, tuple(key for key in ready.changing if key[0] not in gone))

    def _hold(self, ready: Ready) -> None:
        for root, rels in ready.batch.items():
            self._held.setdefault(root, set()).update(rels)

    def _rescan(self, reason: str) -> None:
        if self.trouble is None:  # a rescan tried again while the store is kept out: quietly
            self._notice(NoticeKind.RESCAN, f"rescan: {reason}")
        try:
            self.target.rescan()
        except Deferred as exc:
            self._troubled(str(exc))
            self._next_rescan = self._held_at = time.monotonic() + retry_after(self.tries)
            return
        self._next_rescan = self._last_batch = time.monotonic()
        self._next_rescan += self.options.rescan_s
        self._cleared()

    def _troubled(self, why: str) -> None:
        self.tries += 1
        if self.trouble is None or _gist(why) != _gist(self.trouble):  # once per new trouble
            self._health(
                StoreState.TROUBLE,
                f"changes not stored: {why}; the store is not up to date; trying again in "
                f"{RETRY_S:g} s, then less often (at most every {RETRY_MAX_S:g} s) until it "
                "takes them",
            )
        self.trouble = why

    def _cleared(self) -> None:
        if self.trouble is not None and not self._held:
            self.trouble = None
            self.tries = 0
            self._health(StoreState.OK, "the store takes changes again; it is up to date")

    def _lost(self, why: str) -> None:
        self.failure = why
        self._health(StoreState.LOST, f"{why}: stopped watching; the store is not up to date")

    def _notice(self, kind: NoticeKind, message: str, level: Level = Level.INFO) -> None:
        self.target.notify(Notice(time.time(), kind, message, level))

    def _health(self, state: StoreState, message: str) -> None:
        self.target.notify(StoreHealth(time.time(), state, message))


def _gist(why: str) -> str:
    """What a trouble comes down to: its last words (the system's, such as "No space left on
    device"), without counts. A full disk that kept out the texts of 3 files, then of 2, then
    the records, is one trouble, said once."""
    return re.sub(r"[0-9]+", "#", why.rsplit(": ", 1)[-1])


def retry_after(tries: int) -> float:
    """Seconds to wait after ``tries`` tries in a row that the machine kept out: ``RETRY_S``
    after the first, twice as long after each next one, never more than ``RETRY_MAX_S``."""
    return min(RETRY_MAX_S, RETRY_S * 2.0 ** min(max(tries - 1, 0), 30))
