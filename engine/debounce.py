"""Turns a stream of changed paths into batches of paths that are safe to read.

The watcher's handler threads :meth:`Debouncer.push` paths (cheap, never blocking on I/O);
the watcher's consumer thread calls :meth:`Debouncer.take`. A path is ready when

- no event has named it for ``quiet_s`` (a burst of writes is one change),
- it is not held open by a writer (native observers report the close; a slow appender that
  keeps its file open is waited for, up to ``open_quiet_s`` without an event: a write that
  no close follows, such as ``truncate(2)`` by name, must not hold its path for good), and
- its size and mtime have stopped moving: its mtime is at least ``quiet_s`` old, or a second
  look ``quiet_s`` later finds the same size and mtime (paperless' stability check).

``settle_max_s`` caps how long one path can be held back: a file written without pause (a
log) is read at least that often, even while events keep naming it, and is handed over as
*changing* so that the watcher can say so; ``batch_max_s`` caps how long ready paths wait for a
busy folder to go quiet,
so a burst of 1,000 new files becomes a few batches, not 1,000 and not one that never comes.
A path that has vanished is ready at once: its record goes.

A path the watcher told to :meth:`Debouncer.rest` (its last read was costly) is not ready
before then, whatever its events: a big log appended every second is read when its rest ends,
not at each append. A stop's :meth:`Debouncer.drain` hands it over all the same.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the watcher's loop has no need of the records at run time)
    from engine.records import Key

Batch = dict[str, list[str]]
"""Root -> relative paths, as :meth:`engine.sweep.Sweeper.run` takes them (``only``)."""


@dataclass(frozen=True, slots=True)
class Ready:
    """What :meth:`Debouncer.take` hands over."""

    batch: Batch
    """The paths to read now, by root."""
    changing: tuple[Key, ...] = ()
    """Those of them read because ``settle_max_s`` passed while they were still changing."""

    def __bool__(self) -> bool:
        return bool(self.batch)


@dataclass(frozen=True, slots=True)
class Timing:
    """How long paths wait before they are read."""

    quiet_s: float = 0.15
    """Seconds without an event (and without an mtime change) before a path is read."""
    batch_max_s: float = 1.0
    """Longest a ready path waits for the rest of a busy folder to go quiet."""
    settle_max_s: float = 30.0
    """Longest a path still being written is held back."""
    open_quiet_s: float = 2.0
    """A path written to whose close never came (``truncate(2)`` by name writes without an
    open; a writer that keeps the file open went quiet) is judged by its size and mtime
    alone after this long without an event; events of a busy writer keep it waiting."""
    max_pending: int = 200_000
    """More pending paths than this: drop them and ask for a rescan (bounded memory)."""


@dataclass(slots=True)
class _Pending:
    """What is known of one changed path while it waits."""

    first: float
    """Monotonic time of its first event in this wait."""
    last: float
    """Monotonic time of its latest event (or re-arm)."""
    writing: bool = False
    """Written to and not yet closed (only observers that report closes set this)."""
    seen: tuple[int, int] | None = None
    """(size, mtime_ns) at the previous stability check."""


class Debouncer:
    """Thread-safe set of pending paths with the readiness rules of the module docstring."""

    def __init__(
        self,
        timing: Timing,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.timing = timing
        self._clock = clock
        self._wall = wall
        self._cond = threading.Condition()
        self._pending: dict[Key, _Pending] = {}
        self._last_event = 0.0
        self._overflowed = False
        self._rest: dict[Key, float] = {}
        """Paths not ready before a time (monotonic), whatever their events."""

    def __len__(self) -> int:
        with self._cond:
            return len(self._pending)

    # -- producer side (handler threads) ---------------------------------------------------

    def push(self, root: str, rel: str, *, writing: bool | None = None) -> None:
        """Note a change to ``rel`` under ``root``.

        ``writing`` True: data was written (a close will follow); False: the writer closed
        it; None: any other change (created, deleted, moved, attributes).
        """
        now = self._clock()
        with self._cond:
            p = self._pending.get((root, rel))
            if p is None:
                if len(self._pending) >= self.timing.max_pending:
                    self._pending.clear()
                    self._overflowed = True
                p = self._pending[(root, rel)] = _Pending(now, now)
            p.last = now
            p.seen = None
            if writing is not None:
                p.writing = writing
            self._last_event = now
            self._cond.notify()

    def rest(self, key: Key, until: float) -> None:
        """Hold ``key`` back until ``until`` (the clock's time): a change to it meanwhile is
        read then, not before (see the module docstring)."""
        with self._cond:
            self._rest[key] = until
            self._cond.notify()

    def resting(self) -> frozenset[Key]:
        """The paths :meth:`rest` holds back now."""
        with self._cond:
            now = self._clock()
            return frozenset(k for k, until in self._rest.items() if until > now)

    def wake(self) -> None:
        """Make a waiting :meth:`wait` return (to stop, or to rescan)."""
        with self._cond:
            self._cond.notify_all()

    # -- consumer side ---------------------------------------------------------------------

    def wait(self, timeout: float) -> None:
        """Sleep until a path arrives, :meth:`wake` is called, or ``timeout`` passes."""
        with self._cond:
            self._cond.wait(max(0.0, timeout))

    def overflowed(self) -> bool:
        """True once after too many paths piled up (they were dropped: rescan)."""
        with self._cond:
            flag, self._overflowed = self._overflowed, False
            return flag

    def next_due(self) -> float | None:
        """Seconds until some pending path may be ready (None: nothing pending)."""
        with self._cond:
            if not self._pending:
                return None
            now = self._clock()
            t = self.timing
            soonest = min(
                max(
                    self._rest.get(k, 0.0),
                    min(
                        p.last + (t.open_quiet_s if p.writing else t.quiet_s),
                        p.first + t.settle_max_s,
                    ),
                )
                for k, p in self._pending.items()
            )
            return max(0.01, soonest - now)

    def take(self) -> Ready:
        """Remove and return the paths ready now (empty while nothing is, or the folder is busy)."""
        with self._cond:
            now = self._clock()
            candidates = [(k, p) for k, p in self._pending.items() if self._due(k, p, now)]
        ready = [(k, p) for k, p in candidates if self._settled(k, p, now)]
        with self._cond:
            # A path that had an event while we looked is not ready after all.
            ready = [(k, p) for k, p in ready if self._pending.get(k) is p and self._due(k, p, now)]
            if not ready:
                return Ready({})
            busy = now - self._last_event < self.timing.quiet_s
            waited = now - min(p.first for _, p in ready)
            if busy and waited < self.timing.batch_max_s:
                return Ready({})
            for k, _ in ready:
                del self._pending[k]
            # (a path that rested waited for its rest, not for its writer: not "changing")
            rested = {k for k, _ in ready if self._rest.pop(k, None) is not None}
            self._rest = {k: until for k, until in self._rest.items() if until > now}
        changing = tuple(
            k
            for k, p in ready
            if k not in rested and self._overdue(p, now) and self._still_moving(k, p)
        )
        return Ready(_collapse(k for k, _ in ready), changing)

    def drain(self) -> Ready:
        """Remove and return every pending path, ready or not (the watcher is stopping)."""
        with self._cond:
            keys = list(self._pending)
            self._pending.clear()
        return Ready(_collapse(keys))

    def _overdue(self, p: _Pending, now: float) -> bool:
        return now - p.first >= self.timing.settle_max_s

    def _due(self, key: Key, p: _Pending, now: float) -> bool:
        """Quiet for ``quiet_s``, or held back ``settle_max_s`` already (written without
        pause); not resting."""
        if now < self._rest.get(key, 0.0):
            return False
        return now - p.last >= self.timing.quiet_s or self._overdue(p, now)

    def _still_moving(self, key: Key, p: _Pending) -> bool:
        """Whether an overdue path was still being written when it was handed over."""
        if p.writing or self._clock() - p.last < self.timing.quiet_s:
            return True
        try:
            st = os.lstat(os.path.join(*key))
        except OSError:
            return False
        return self._wall() - st.st_mtime_ns / 1e9 < self.timing.quiet_s

    def _settled(self, key: Key, p: _Pending, now: float) -> bool:
        """Whether ``key`` has stopped changing (its stat is taken outside the lock)."""
        if self._overdue(p, now):
            return True
        if p.writing and now - p.last < self.timing.open_quiet_s:
            return False
        try:
            st = os.lstat(os.path.join(*key))
        except OSError:
            return True  # gone (the sweep removes its record) or unreadable (it records why)
        sig = (st.st_size, st.st_mtime_ns)
        age = self._wall() - st.st_mtime_ns / 1e9
        if sig == p.seen or (p.seen is None and age >= self.timing.quiet_s):
            return True
        with self._cond:  # re-arm: look again one quiet period from now
            if self._pending.get(key) is p:
                p.seen = sig
                p.last = now
        return False


def _collapse(keys: Iterable[Key]) -> Batch:
    """Group keys by root; drop a path whose folder is in the batch (the folder is walked)."""
    by_root: dict[str, set[str]] = {}
    for root, rel in keys:
        by_root.setdefault(root, set()).add(rel)
    return {
        root: [rel for rel in sorted(rels) if not any(a in rels for a in _ancestors(rel))]
        for root, rels in by_root.items()
    }


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]
