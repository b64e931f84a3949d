"""Runs reads in worker processes, never in the engine's (or the dashboard's) process.

:class:`ReadPool` is the default :class:`~engine.executor.Executor`. It supervises its workers
itself, with no threads: :meth:`ReadPool.finished` sends each worker a batch of the submitted
files (drawn from the run's stream of reads :data:`FEED_TASKS` at a time, as the queue runs
low), waits on the workers' pipes and exit sentinels, and turns whatever happens into one
:class:`~engine.extract.Outcome` per file:

- a read past its wall time (``limits.timeout_s`` plus a short grace) is killed with its
  worker's whole process group and any tool the worker started: ``error/timeout``;
- a ``MemoryError`` under the worker's RLIMIT_AS, or a worker the kernel killed:
  ``error/memory``;
- any other death (a segfault, ``os._exit``): ``error/crashed``.

The culprit is always known: the worker notes each file in its shared
:class:`~engine.worker.Slot` as it begins it, so only that file is blamed and the rest of its
batch is sent again. Outcomes come back a few dozen to a message; a worker reading the last
files of a batch of small files is sent its next batch then (one batch waits in its pipe at
most), and any other is sent its next batch before the run files the outcomes it just
returned, so no worker waits on the engine. The queue is read a kind at a time (by name
extension; kinds of bigger files first, the queued order within a kind): a reader's first-use
imports (extract-msg's 0.12 s, xlrd's, py7zr's) then happen in the worker that reads that
kind rather than in each, and a batch takes at most 1/:data:`BATCH_SHARE` of a worker's share
of the queue, so that a batch of a heavy kind never outlasts the light rest. A dead or killed
worker is replaced; workers leave on their own after ``max_reads`` reads or once a read grew
them past :data:`~engine.worker.RECYCLE_RSS`. Workers start from a forkserver, so they are
small and never copy the engine's threads or memory. Workers that cannot start (three in a
row die before taking a batch) raise :class:`MachineFailure`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from engine import procs, scratch
from engine import worker as _w
from engine.errors import MachineFailure
from engine.executor import TICK_S
from engine.extract import Outcome, ReadTask
from engine.limits import KILL_GRACE_S, Limits
from engine.readers import registry
from engine.records import Reason

GRACE_S = KILL_GRACE_S
"""Most time a read gets past its own deadline (readers stop themselves first)."""
START_FAILURES = 3
"""Workers in a row that die before taking a batch before the pool gives up."""
BATCH_FILES = 256
"""Most files sent to a worker at once."""
BATCH_SHARE = 8
"""A batch takes at most 1/BATCH_SHARE of a worker's share of what is queued. With the queue
read a kind at a time, a quarter of it (as before) gave one worker 75 of the corpus's PDFs in
one batch while the other finished the light kinds and waited."""
AHEAD_FILES = 32
"""A worker with this few files of its batch left is sent its next batch (see _near_end)."""
AHEAD_MIN_BATCH = 16
"""Only a batch of at least this many files (small ones) is followed before it ends."""
BATCH_BYTES = 4 << 20
"""Files are batched until their sizes add up to this; a larger file goes alone."""
BATCH_PATH_CHARS = 32 * 1024
"""Files are batched until their paths add up to this: a batch stays well inside a pipe's
buffer, so sending it never waits on a busy worker."""
MAX_READS = 10_000
"""Reads after which a worker leaves (a fresh one takes its place): a bound on slow leaks.
A worker start costs tens of milliseconds, so this is not a per-hundred-files cost."""
START_TIMEOUT_S = 30.0
"""Time a new worker has to say it is ready."""
DRAW_S = TICK_S
"""Longest a draw from a stream goes on once something is queued (checked every 64 tasks):
drawing runs the run's planning, hashes among it, and the workers wait on the pool meanwhile."""
FEED_TASKS = 4096
"""Reads drawn at once from a stream given to :meth:`ReadPool.submit` (a run's reads, planned
as they are drawn), when fewer than half of these are queued: the pool holds no more than
that beside its batches in flight, and batches are as big as from a queue of this many."""


FDS_A_WORKER = 5
"""Descriptors the engine holds for each worker it runs (measured: 4.2, its connection, its
exit's sentinel, its scratch folder's lock; and those of one starting)."""
FDS_KEPT = 128
"""Descriptors kept for the rest of the engine: the walk, the index, the store's folders, the
hashing threads, the watcher, the files a read of a container opens."""


def workers_that_fit(asked: int, soft_limit: int | None = None) -> int:
    """How many of ``asked`` workers the process's open-file limit (``ulimit -n``) lets the
    engine run: at least one. Its default, one a core, is past the common limit of 1,024 on a
    machine of some 180 cores, and every sweep failed there ("cannot start a worker process:
    Too many open files") where fewer workers would have read every file."""
    if soft_limit is None:
        import resource

        soft_limit, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft_limit == resource.RLIM_INFINITY:
            return asked
    return max(1, min(asked, (soft_limit - FDS_KEPT) // FDS_A_WORKER))


@dataclass(eq=False)
class _Worker:
    """The pool's view of one worker process."""

    proc: BaseProcess
    conn: Connection
    slot: _w.Slot
    ready: bool = False
    began: bool = False
    """It read (or was reading) a file: a death from now on is not a failure to start."""
    leaving: bool = False
    tasks: deque[tuple[int, int, ReadTask]] = field(default_factory=deque)
    """(batch number, index in the batch, task) of every file sent and not yet answered."""
    deadline: float = float("inf")
    born: float = field(default_factory=time.monotonic)
    scratch: scratch.WorkerFolder | None = None
    """The worker's temporary folder (see :mod:`engine.scratch`), removed when it is gone."""


def grace(limits: Limits) -> float:
    """Time past the read's deadline before its worker is killed."""
    return min(GRACE_S, max(0.1, limits.timeout_s / 4))


class ReadPool:
    """Worker processes that read files under time and memory bounds: the local Executor."""

    on_this_machine = True
    """Its workers rename each text into this machine's store folder themselves (see
    :data:`engine.executor.ON_THIS_MACHINE`)."""

    def __init__(
        self, limits: Limits, workers: int = 0, max_reads: int = MAX_READS, share: int = BATCH_SHARE
    ) -> None:
        self.limits = limits
        self.asked = workers or os.cpu_count() or 1
        """The workers asked for (``--workers``, else one a core)."""
        self.workers = workers_that_fit(self.asked)
        """The workers it runs at most: those asked, as many as the open-file limit allows."""
        self.max_reads = max_reads
        self.share = share
        """A batch takes at most 1/share of a worker's share of the queue (see BATCH_SHARE).
        0: the whole queue, whatever BATCH_FILES says (a Dask worker's pool: its queue is one
        Dask task, already sized to its work and within BATCH_BYTES and BATCH_PATH_CHARS, and
        handed to its one read child in one message)."""
        self.started = 0
        """Worker processes started so far (tests and benchmarks read it)."""
        self._ctx = procs.worker_context()
        self._live: list[_Worker] = []
        self._start_failures = 0
        self._queue: deque[ReadTask] = deque()
        self._feeds: deque[Iterator[ReadTask]] = deque()
        """Streams given to :meth:`submit`, drawn from as the queue runs low."""
        self._batches = 0
        self._folders: set[scratch.WorkerFolder] = set()
        # A pool never closed (a Dask worker's, when its process ends) still removes them.
        weakref.finalize(self, scratch.remove_all, self._folders)

    def warm(self) -> None:
        """Start the forkserver that workers come from, now and in the background.

        Its imports (every reader, the quality word lists: ~0.4 s of CPU) then overlap what
        the caller does next (a cold sweep's walk) instead of delaying the first read. Returns
        at once; a forkserver already running is left as it is.
        """
        procs.start_forkserver(self._ctx)

    # -- the Executor face ------------------------------------------------------------------

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        """Queue ``tasks``; workers start when :meth:`finished` runs.

        A sequence is queued whole; any other iterable is a stream, drawn from by
        :meth:`finished` :data:`FEED_TASKS` at a time as the queue runs low (a run plans its
        reads as they are drawn), so however long, it is never held whole.
        """
        if isinstance(tasks, Sequence):
            self._queue.extend(tasks)
        else:
            self._feeds.append(iter(tasks))

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        """Yield each submitted task with its Outcome as it finishes (in any order).

        ``tick`` is called at least every :data:`~engine.executor.TICK_S` seconds while reads
        run. Raises MachineFailure when workers cannot start; outcomes yielded before that
        stand. Leaving the loop early cancels what is still pending.
        """
        queue = self._queue
        try:
            self._fill(queue)
            self._staff(len(queue))
            _by_kind(queue)  # while the workers just started get ready
            while queue or self._feeds or any(w.tasks for w in self._live):
                self._fill(queue)
                self._staff(len(queue))
                self._dispatch(queue)
                outcomes = list(self._wait(queue))
                # Idle workers get their next batch before the run files these outcomes.
                self._fill(queue)
                self._staff(len(queue))
                self._dispatch(queue)
                yield from outcomes
                if tick is not None:
                    tick()
        finally:
            if queue or self._feeds or any(w.tasks for w in self._live):
                self.cancel()  # abandoned: its answers must not reach the next run

    def read(
        self, tasks: Iterable[ReadTask], tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        """Submit ``tasks`` and yield their outcomes as they finish."""
        self.submit(tasks)
        return self.finished(tick)

    def cancel(self) -> None:
        """Forget queued tasks and streams; kill the workers reading (their answers never
        come)."""
        self._queue.clear()
        self._feeds.clear()
        for w in list(self._live):
            if w.tasks:
                self._bury(w, kill=True)

    def close(self) -> None:
        """Stop the workers (killing any read in flight)."""
        self._queue.clear()
        self._feeds.clear()
        for w in self._live:
            with contextlib.suppress(OSError, ValueError):
                _w.to_worker(w.conn, _w.Stop())
        end = time.monotonic() + 1.0
        for w in list(self._live):
            w.proc.join(max(0.0, end - time.monotonic()))
            self._bury(w, kill=True)

    # -- workers --------------------------------------------------------------------------

    def _staff(self, queued: int) -> None:
        """Start workers until there are enough for the queue: a worker waiting for work
        takes a queued task before one is started for it (a watch batch of one file with a
        worker idle starts none: a start is ~0.2 s of the change's way to the store)."""
        idle = sum(1 for w in self._live if not w.tasks)
        want = min(self.workers, len(self._live) + max(0, queued - idle))
        while len(self._live) < want:
            self._live.append(self._start())

    def staff(self) -> None:
        """Have a worker ready for the next read, starting one if none lives (a watcher
        whose first sweep read nothing: its first change then waits for no process start)."""
        if not self._live:
            self._live.append(self._start())

    def _start(self) -> _Worker:
        if not self.started:
            scratch.remove_orphans()  # what workers of a killed pool left
        slot = _w.Slot.make(self._ctx)
        try:
            folder = scratch.WorkerFolder()
        except OSError as exc:
            raise MachineFailure(f"cannot make a temporary folder: {exc.strerror or exc}") from exc
        cfg = _w.WorkerConfig(
            self.limits.memory_bytes,
            registry.extra(),
            self.max_reads,
            slot.buf,
            folder.path,
        )
        ours, theirs = self._ctx.Pipe()
        try:
            proc = procs.start_process(self._ctx, theirs, cfg)
        except OSError as exc:
            ours.close()
            folder.remove()
            raise MachineFailure(f"cannot start a worker process: {exc.strerror or exc}") from exc
        finally:
            theirs.close()
        self.started += 1
        self._folders.add(folder)
        return _Worker(proc, ours, slot, scratch=folder)

    def _bury(self, w: _Worker, *, kill: bool) -> None:
        """Forget a worker, killing its process group and what it started."""
        if kill or w.proc.is_alive():
            procs.kill_tree(w.proc.pid)
        w.proc.join(5)
        if w.proc.pid is not None:  # tools left in the dead worker's group go too
            with contextlib.suppress(OSError):
                os.killpg(w.proc.pid, signal.SIGKILL)
        if w.scratch is not None:  # what a killed read left: member copies, page images
            w.scratch.remove()
            self._folders.discard(w.scratch)
        w.conn.close()
        with contextlib.suppress(ValueError):
            self._live.remove(w)

    # -- batches --------------------------------------------------------------------------

    def _fill(self, queue: deque[ReadTask]) -> None:
        """Draw from the streams while fewer than half of :data:`FEED_TASKS` are queued, up
        to that many, for :data:`DRAW_S` at most: drawing runs the run's planning (hashes
        among it), and the workers' deadlines and answers wait meanwhile. The queue is then
        put in kinds again (see :func:`_by_kind`)."""
        if not self._feeds or len(queue) >= FEED_TASKS // 2:
            return
        until = time.monotonic() + DRAW_S
        while self._feeds and len(queue) < FEED_TASKS:
            task = next(self._feeds[0], None)
            if task is None:  # that stream is spent
                self._feeds.popleft()
                continue
            queue.append(task)
            if len(queue) % 64 == 0 and time.monotonic() > until:
                break
        _by_kind(queue)

    def _dispatch(self, queue: deque[ReadTask]) -> None:
        for w in self._live:
            if not queue:
                return
            if w.ready and not w.leaving and (not w.tasks or _near_end(w)):
                batch = self._take(queue)
                self._batches += 1
                number = self._batches
                if not w.tasks:
                    w.deadline = time.monotonic() + _budget(batch[0])
                w.tasks.extend((number, i, t) for i, t in enumerate(batch))
                with contextlib.suppress(OSError):  # a dead worker shows on its sentinel
                    _w.to_worker(w.conn, _batch(batch, number))

    def _take(self, queue: deque[ReadTask]) -> list[ReadTask]:
        """The next batch: small files together, up to a share of what is left."""
        first = queue.popleft()
        batch, size, chars = [first], first.size, len(first.path)
        # A stream not yet spent counts as a full draw: no tail to even out yet.
        left = max(len(queue), FEED_TASKS) if self._feeds else len(queue)
        if self.share == 0:
            most = left + 1
        else:
            most = max(1, min(BATCH_FILES, left // (self.share * self.workers)))
        while queue and len(batch) < most and size + queue[0].size <= BATCH_BYTES:
            nxt = queue[0]
            if (nxt.limits, nxt.tools, nxt.tmp_dir, nxt.store_dir) != (
                first.limits,
                first.tools,
                first.tmp_dir,
                first.store_dir,
            ):
                break
            chars += len(nxt.path)
            if chars > BATCH_PATH_CHARS:
                break
            if nxt.passwords != first.passwords:
                break
            size += nxt.size
            batch.append(queue.popleft())
        return batch

    # -- waiting --------------------------------------------------------------------------

    def _wait(self, queue: deque[ReadTask]) -> Iterator[tuple[ReadTask, Outcome]]:
        now = time.monotonic()
        soonest = min((w.deadline for w in self._live if w.tasks), default=now + TICK_S)
        by_handle: dict[object, _Worker] = {}
        for w in self._live:
            by_handle[w.conn] = w
            by_handle[w.proc.sentinel] = w
        handles: list[Any] = list(by_handle)
        ready = wait(handles, timeout=max(0.0, min(TICK_S, soonest - now)))
        for w in {by_handle[h] for h in ready}:
            yield from self._drain(w, queue)
        now = time.monotonic()
        for w in list(self._live):
            if not w.ready and now > w.born + START_TIMEOUT_S:
                self._bury(w, kill=True)
                self._start_failed(None)
            elif w.tasks and now > w.deadline:
                yield from self._drain(w, queue)
                if w in self._live and w.tasks and self._overdue(w):
                    yield from self._timed_out(w, queue)

    def _overdue(self, w: _Worker) -> bool:
        """Whether the read under way is past its budget; else move the deadline to its end.

        The deadline set when outcomes arrive is a guess (the next read began at some moment
        since); the slot says when the read under way began.
        """
        now = time.monotonic()
        if now <= w.deadline:
            return False
        at = _reading(w)
        if at is None:  # between reads: the next one begins now at the latest
            w.deadline = now + _budget(w.tasks[0][2])
            return False
        pos, begun, _mime = at
        end = min(begun, now) + _budget(w.tasks[pos][2])
        if now <= end:
            w.deadline = end
            return False
        return True

    def _drain(self, w: _Worker, queue: deque[ReadTask]) -> Iterator[tuple[ReadTask, Outcome]]:
        """Handle every message the worker sent; bury it if it has gone."""
        try:
            while w.conn.poll():
                yield from self._message(w, _w.from_worker(w.conn))
        except (EOFError, OSError):
            pass
        if not w.proc.is_alive() or w.conn.closed:
            yield from self._dead(w, queue)

    def _message(self, w: _Worker, msg: _w.ToPool) -> list[tuple[ReadTask, Outcome]]:
        match msg:
            case _w.Ready():
                w.ready = True
            case _w.Done(outcomes):
                out = [(w.tasks.popleft()[2], outcome) for outcome in outcomes]
                w.began = True
                self._start_failures = 0
                if w.tasks:
                    w.deadline = time.monotonic() + _budget(w.tasks[0][2])
                return out
            case _w.Bye():
                w.leaving = True
        return []

    def _dead(self, w: _Worker, queue: deque[ReadTask]) -> Iterator[tuple[ReadTask, Outcome]]:
        """A worker exited: blame the file it was reading, if any; send the rest again."""
        if w not in self._live:
            return
        # Everything it sent before it exited is in the pipe: read it all before judging. A
        # recycled worker sends its last Done and Bye and exits at once; judged on the
        # Done alone, it would look like a death while reading the next file of its batch.
        try:
            while w.conn.poll():
                yield from self._message(w, _w.from_worker(w.conn))
        except (EOFError, OSError):
            pass
        self._bury(w, kill=False)
        code = w.proc.exitcode
        at = None if w.leaving else _reading(w)
        culprit = _release(w, queue, None if at is None else at[0])
        if culprit is not None and at is not None:
            yield culprit, _w.died(culprit, at[2], code)
        elif not w.leaving and not (w.ready and (w.began or w.slot.batch() > 0)):
            # Died before it began any file (files read but not yet reported count as begun).
            self._start_failed(code)

    def _start_failed(self, code: int | None) -> None:
        self._start_failures += 1
        if self._start_failures >= START_FAILURES:
            how = _w.how(code) if code is not None else "no answer"
            raise MachineFailure(f"worker processes cannot start ({how})")

    def _timed_out(self, w: _Worker, queue: deque[ReadTask]) -> Iterator[tuple[ReadTask, Outcome]]:
        self._bury(w, kill=True)
        at = _reading(w)  # read after the kill: the slot no longer moves
        culprit = _release(w, queue, None if at is None else at[0])
        if culprit is not None and at is not None:
            took = f"read took longer than {culprit.limits.timeout_s:g} s"
            yield culprit, _w.failed(culprit, at[2], Reason.TIMEOUT, took)


def _kind(path: str) -> str:
    """A file's kind as its name says: its extension, in lower case ("" for none)."""
    dot = path.rfind(".")
    return path[dot:].lower() if dot > path.rfind("/") else ""


def _by_kind(queue: deque[ReadTask]) -> None:
    """Put the queued files of each kind together: kinds of bigger files (on average) first,
    each kind in the order it was queued.

    Batches are taken from the front, so a kind's files go to one worker or a few, and so do
    the imports its reader makes on first use. Big files first and small ones last: the last
    batches, taken when the queue is short, are small and quick, and the workers end together
    (the corpus: 4.55 -> 4.43 s of CPU, 2.56 -> 2.49 s). Detection decides the reader, not the
    name; the name is a guess that costs nothing (a few ms for 20,000 files of one kind, made
    while the workers start, and their order is left as it is).
    """
    if len(queue) < 2:
        return
    kinds = [_kind(t.path) for t in queue]
    sums: dict[str, list[int]] = {}
    for kind, task in zip(kinds, queue, strict=True):
        acc = sums.setdefault(kind, [0, 0])
        acc[0] += task.size
        acc[1] += 1
    if len(sums) < 2:
        return
    rank = {kind: (-size / files, kind) for kind, (size, files) in sums.items()}
    order = sorted(range(len(kinds)), key=lambda i: rank[kinds[i]])
    tasks = list(queue)
    queue.clear()
    queue.extend(tasks[i] for i in order)


def _near_end(w: _Worker) -> bool:
    """Whether ``w`` is reading the last :data:`AHEAD_FILES` files of a batch of small files
    and should have its next batch now (it starts it without waiting on the engine).

    Only one batch waits in the pipe at a time: the worker has begun the batch it holds (its
    slot names it), so the batch sent now is the only one it has not taken. A batch of a few
    big files is never followed early: the next file could wait behind a long read while
    another worker is free.
    """
    tasks = w.tasks
    last = tasks[-1][0]
    return (
        len(tasks) <= AHEAD_FILES
        and tasks[0][0] == last
        and tasks[-1][1] >= AHEAD_MIN_BATCH - 1
        and w.slot.batch() == last
    )


def _reading(w: _Worker) -> tuple[int, float, str | None] | None:
    """(position in ``w.tasks``, start, MIME) of the file ``w`` is reading; None if none."""
    at = w.slot.reading()
    if at is None:
        return None
    batch, index, begun, mime = at
    for pos, (number, i, _task) in enumerate(w.tasks):
        if (number, i) == (batch, index):
            return pos, begun, mime
    return None  # a file already answered: the worker was between reads


def _release(w: _Worker, queue: deque[ReadTask], culprit: int | None) -> ReadTask | None:
    """Take the file at position ``culprit`` (the one a lost worker was reading, if it is to
    blame); queue the rest again, in order: those it read but had not reported, and those
    it had not begun."""
    tasks = [t for _n, _i, t in w.tasks]
    w.tasks.clear()
    blamed = tasks.pop(culprit) if culprit is not None else None
    queue.extendleft(reversed(tasks))
    return blamed


def _budget(task: ReadTask) -> float:
    return task.limits.timeout_s + grace(task.limits)


def _batch(tasks: list[ReadTask], number: int) -> _w.Batch:
    first = tasks[0]
    items = tuple((t.path, t.sha256, t.size, t.ident) for t in tasks)
    return _w.Batch(
        first.limits, first.tools, first.tmp_dir, items, number, first.store_dir, first.passwords
    )
