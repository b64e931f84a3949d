"""A sweep-then-watch run over roots into one store: the dashboard's handle on the engine.

:class:`Session` owns a :class:`engine.sweep.Sweeper` (and so the store's lock) and
implements the :class:`engine.watch.WatchTarget` protocol that its :class:`Watcher` drives:
this module imports the watcher, never the other way round. :func:`watch_forever` is
``quarry watch``.

The dashboard calls these from its thread workers; every method but :meth:`Session.start_watch`
and :meth:`Session.close` blocks while it works. Events reach ``on_event`` from engine threads.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from multiprocessing import resource_tracker
from pathlib import Path
from types import FrameType

from engine.debounce import Batch
from engine.errors import MachineFailure, SessionClosed, StoreLost
from engine.events import (
    Event,
    Level,
    Listener,
    Notice,
    NoticeKind,
    RecordsChanged,
    RunKind,
    StoreHealth,
    StoreState,
    ToolsChanged,
    ignore,
)
from engine.names import shown
from engine.passwords import NO_PASSWORDS, Passwords
from engine.plan import logged_database
from engine.records import Record, lacked
from engine.store import JSONL, Store
from engine.sweep import Sweeper, SweepOptions, SweepResult
from engine.tools import ToolSet
from engine.walk import WalkRules
from engine.watch import Costs, Deferred, Watcher, WatchOptions, retry_after

_STORE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.EIO}
)
"""A store write failing with one of these is the machine's trouble, not a bug: retried."""


class Session:
    """Owns a :class:`Sweeper` (and so the store's lock) and, once started, a watcher."""

    def __init__(
        self,
        roots: Sequence[Path],
        options: SweepOptions | None = None,
        on_event: Listener = ignore,
        *,
        watch_options: WatchOptions | None = None,
    ) -> None:
        self.on_event = on_event
        # The worker pool needs multiprocessing's resource tracker, which is started with
        # the process's stderr; an embedding app (Textual) replaces stderr while it runs, and
        # a tracker started then fails ("bad value(s) in fds_to_keep"). Start it now.
        resource_tracker.ensure_running()
        self._sweeper = Sweeper(
            roots, options or SweepOptions(), self._emit, quick=True, served=True
        )
        self._lock = threading.RLock()
        self._life = threading.RLock()  # starting and stopping the watcher (see close)
        self._watcher: Watcher | None = None
        self._watch_options = watch_options
        self._closed = False
        self._released = False
        """The store is released (close() ended, or is ending): no run may start."""
        self._machine = "the machine failed"
        self._deferred = False
        """The last batch or rescan was kept out of the store: the next one is a quiet try."""
        self._quiet: list[Event] | None = None
        """A quiet try's events, held until it is known whether the store took it."""
        self._stored = False
        """Whether the last run wrote the store (it may still have files the machine failed)."""
        self._records_tries = 0
        self._records_retry_at = 0.0
        self.swept_whole = False
        """Whether a sweep_then_watch() read every file (not stopped early, nor never run)."""
        self.first_failed = ""
        """Why sweep_then_watch()'s sweep could not write the store, if it could not (see
        ``SweepResult.failed``): it stopped there, and nothing is watched."""
        self._held_roots: tuple[str, ...] = ()
        """Roots the last walk of them all found gone or empty, their records kept (an
        unmounted share's mount point is an empty folder)."""
        self._relogged_at: dict[tuple[str, str], float] = {}
        """When a watch batch last read each database again for its log (monotonic)."""
        self._costs: dict[tuple[str, str], float] | None = None
        """While a watch batch runs: what each file it read cost (see :func:`read_cost`)."""
        self._sweeper.__enter__()  # last: what it says goes through _emit, which needs the above

    def not_current(self) -> str | None:
        """Why the store is not up to date with the folders watched, if it is not: the first
        sweep could not write it, the watcher gave up on it, changes are kept out of it (a
        full disk), or a root is gone (its records kept)."""
        watcher = self._watcher
        if self.first_failed:
            return self.first_failed
        if watcher is not None and (why := watcher.failure or watcher.trouble or watcher.gone):
            return why
        if held := self._held_roots:
            names = ", ".join(shown(root) for root in held)
            was = "was" if len(held) == 1 else "were"
            return f"{names} {was} gone or empty at the last walk (records kept)"
        return None

    def _emit(self, event: Event) -> None:
        costs = self._costs
        if costs is not None and isinstance(event, RecordsChanged):
            costs.update((r.key, read_cost(r)) for r in event.records if not r.reused)
        if isinstance(event, Notice) and event.kind is NoticeKind.MACHINE_FAILURE:
            self._machine = event.message  # the words for a Deferred, if the run had failures
        quiet = self._quiet
        if quiet is not None:
            quiet.append(event)
        else:
            self.on_event(event)

    @property
    def store(self) -> Store:
        """The output store."""
        return self._sweeper.store

    @property
    def roots(self) -> list[Path]:
        """The swept roots."""
        return self._sweeper.roots

    @property
    def rules(self) -> WalkRules:
        """The walk's ignore rules, which the watcher's handlers apply too."""
        return self._sweeper.rules

    @property
    def tools(self) -> ToolSet:
        """The tools in use."""
        return self._sweeper.tools

    def worker_tools(self) -> dict[str, ToolSet]:
        """Each Dask worker's tools (worker -> tools); empty while reads run locally."""
        return self._sweeper.worker_tools()

    @property
    def record_count(self) -> int:
        """Records in the store (as the sweeper counts them: with the store closed too)."""
        return self._sweeper.index.tally.files

    @property
    def sweeper(self) -> Sweeper:
        """The underlying sweeper."""
        return self._sweeper

    @property
    def watcher(self) -> Watcher | None:
        """The watcher, once observing started."""
        return self._watcher

    @property
    def lock(self) -> threading.RLock:
        """Held while a sweep, batch or retry runs: one at a time."""
        return self._lock

    def _open(self) -> Sweeper:
        """The sweeper, for a run under the lock; SessionClosed once the store is released."""
        if self._released:
            raise SessionClosed("the session is closed: its store is no longer held")
        return self._sweeper

    def sweep(self) -> SweepResult:
        """A full sweep."""
        with self._lock:
            return self._open().run()

    def sweep_then_watch(self) -> SweepResult:
        """Start the observers, sweep, then apply what changed meanwhile and keep following.

        The observers run before the sweep walks anything, so a file created, changed or
        deleted while the sweep runs (or right after it wrote the store) is queued and applied
        by the first batches after it; nothing waits for the periodic rescan. A sweep stopped
        early (``sweeper.stop``) starts no watching.
        """
        self._observe()
        with self._lock:  # close() sees the verdict as soon as it holds the lock
            sweeper = self._open()
            # the index serves the records from the first run on: a new store's first sweep
            # holds none of them (Sweeper._lean)
            sweeper.from_index = True
            result = sweeper.run()
            self.swept_whole = not result.interrupted
            self.first_failed = result.failed
            self._held_roots = result.held_roots
            if self.swept_whole:
                # each batch touches a few files of many: the index answers for the rest
                self._sweeper.serve_from_index()
                self._staff()
        if self.swept_whole:  # an interrupted sweep: the caller is stopping, no watching
            self.start_watch()
        return result

    def _staff(self) -> None:
        """A worker ready for the watcher's first change (a first sweep that read nothing
        started none: the first edit waited ~0.2 s for one, the most of its way to the
        index at a million files; `tests/bench/bench_watch_live.py`). A pool that cannot
        start one now says so at the first read, as it would have."""
        from engine.executor import Staffing

        executor = self._sweeper.executor
        if isinstance(executor, Staffing):
            with contextlib.suppress(MachineFailure):
                executor.staff()

    def retry(
        self, keys: Iterable[tuple[str, str]], passwords: Passwords = NO_PASSWORDS
    ) -> SweepResult:
        """Read the given (root, path) records again, whatever their verdict; ``passwords``
        are tried on those that are encrypted (held in memory, never shown)."""
        keys = list(keys)
        only: dict[str, list[str]] = {}
        for root, path in keys:
            only.setdefault(root, []).append(path)
        with self._lock:
            return self._open().run(only=only, force=keys, full=False, passwords=passwords)

    def recheck_tools(self) -> ToolSet:
        """Look up tools again; a tool that appeared retries exactly the records it unlocks.

        A tool that went away changes nothing already extracted (files read from now on get
        ``needs_tool``); a version change alone reads nothing again.
        """
        with self._lock:
            self._open()
            before = set(self._sweeper.tools.names)
            tools = self._sweeper.rediscover_tools()
            after = set(tools.names)
            if before != after:
                appeared = tuple(sorted(after - before))
                self.on_event(
                    ToolsChanged(time.time(), tools.names, appeared, tuple(sorted(before - after)))
                )
                only = unlocked_by(self._sweeper.records.values(), appeared)
                if only:
                    self._sweeper.run(only=only, full=False, kind=RunKind.TOOLS)
            return tools

    # -- the watcher's target (engine.watch.WatchTarget) ----------------------------------

    def apply(self, batch: Batch) -> Costs:
        """Bring the batch's paths up to date; every file in it is hashed (an event named it).
        A database whose write-ahead log is in the batch comes too (the run reads it again if
        the log changed: its newest rows are there, its own file unchanged), at most once in
        :data:`RELOG_S` (see :func:`with_logged`). What each file read cost, for the watcher
        to read one that keeps changing less often (:func:`read_cost`)."""
        batch = with_logged(batch, self._relogged_at, time.monotonic())
        costs: dict[tuple[str, str], float] = {}
        if any(batch.values()):
            self._costs = costs
            try:
                self._guarded(lambda: self._open().run(only=batch, full=False, rehash=True))
            finally:
                self._costs = None
        return costs

    def rescan(self) -> None:
        """Walk every root; the stat cache applies (no event named these files)."""

        def walked() -> SweepResult:
            result = self._open().run(full=False)
            self._held_roots = result.held_roots
            return result

        self._guarded(walked)

    def notify(self, event: Event) -> None:
        """Hand a watcher's event to the listener."""
        self.on_event(event)

    def behind(self) -> float | None:
        """Since when ``extract.jsonl`` misses batches the index holds (None: current, or
        a failed write waits for its next try)."""
        if time.monotonic() < self._records_retry_at:
            return None
        return self._sweeper.behind

    def write_behind(self) -> None:
        """Write ``extract.jsonl`` from the index's records; a failure is said once and tried
        again later (the index holds every change meanwhile, and a restart resumes from it)."""
        self._records(self._sweeper.write_behind)

    def start_write_behind(self, done: Callable[[], None]) -> bool:
        """Start writing ``extract.jsonl`` in the background, from a snapshot of the index,
        so that the batches go on meanwhile (``done`` is called from its thread when it
        ends); whether one runs now. False: none was started, the file was written here
        (no index to write it from) or was current."""
        with self._lock:
            if self._closed:
                return False
            if self._sweeper.start_write_behind(done):
                return True
        self.write_behind()
        return False

    def finish_write_behind(self) -> None:
        """Conclude the background write that ended, under the lock (never during a batch):
        the index in step with the new file, or still ahead of it by the batches that came
        meanwhile; a failure said once and tried again later, as :meth:`write_behind`'s."""
        self._records(self._sweeper.finish_write_behind)

    def _records(self, write: Callable[[], object]) -> None:
        """Run ``write`` (of ``extract.jsonl``) under the lock; its OSError is said once and
        tried again later, the first success after one said (and the retries' wait ended:
        a background write that succeeds while batches keep coming is still behind them,
        and a folder that never settles would otherwise never hear the file is written)."""
        with self._lock:
            if self._closed:  # (closing wrote it, or said why it could not)
                return
            try:
                write()
            except OSError as exc:
                self._records_failed(exc)
                return
            if self._records_tries:
                said = "is up to date again"
                if self._sweeper.behind is not None:
                    said = "is written again; later changes are in the store's index"
                self.on_event(StoreHealth(time.time(), StoreState.OK, f"{JSONL} {said}"))
            self._records_tries, self._records_retry_at = 0, 0.0

    def _records_failed(self, exc: OSError) -> None:
        """A failed write of ``extract.jsonl``: said the first time, tried again later."""
        self._records_tries += 1
        self._records_retry_at = time.monotonic() + retry_after(self._records_tries)
        if self._records_tries == 1:
            self.on_event(
                StoreHealth(
                    time.time(),
                    StoreState.TROUBLE,
                    f"cannot write {JSONL}: {exc.strerror or exc}; every change is in "
                    "the store's index; trying again",
                )
            )

    def _guarded(self, run: Callable[[], SweepResult]) -> None:
        """Run under the lock; turn the machine's failures into Deferred, a lost store into
        StoreLost.

        After a Deferred the next run is a quiet try: its events (the files read again, the
        same failure) are held, told if the store takes it, and dropped if the machine keeps
        it out again, but for the records it did store (the files it could read, when others
        failed); the watcher has said the trouble once and says when it ends.
        """
        with self._lock:
            self._quiet = [] if self._deferred else None
            self._stored = False
            try:
                self._checked(run)
            except Deferred:
                self._deferred = True
                if self._sweeper.lost_behind and self._watcher is not None:
                    # the store went back to an extract.jsonl older than earlier batches
                    self._sweeper.lost_behind = False
                    self._watcher.request_rescan("changes not yet in extract.jsonl were undone")
                held, self._quiet = self._quiet or [], None  # the rest is no news
                for event in held:
                    if self._stored and isinstance(event, RecordsChanged):
                        self.on_event(event)
                raise
            except BaseException:
                self._tell_held()  # a failure of another kind: all it said
                raise
            self._deferred = False
            self._tell_held()  # stored: what the try did, told now
            if self._sweeper.lost_behind and self._watcher is not None:
                # the index the records were served from failed: what it alone held is found
                # again from the files
                self._sweeper.lost_behind = False
                self._watcher.request_rescan("the store's index failed")

    def _tell_held(self) -> None:
        held, self._quiet = self._quiet, None
        for event in held or ():
            self.on_event(event)

    def _checked(self, run: Callable[[], SweepResult]) -> None:
        """``run``; what it says of the machine raised as Deferred, of the store as StoreLost."""
        try:
            result = run()
            self._stored = True  # what it decided is in the store, even with machine failures
        except OSError as exc:
            lost = self.store.lock_lost()
            if lost is not None:
                raise StoreLost(lost) from exc
            if exc.errno not in _STORE_ERRNOS:
                raise
            # The sweeper has put its records back to the disk's (and removed the texts
            # no record names): a retry finds these changes again.
            raise Deferred(f"cannot write the store: {exc.strerror or exc}") from exc
        if result.machine_failures:
            raise Deferred(self._machine)
        if result.interrupted:  # its paths are held and applied again, not lost
            raise Deferred("the batch was interrupted")

    # -- watching ---------------------------------------------------------------------------

    def _observe(self) -> Watcher:
        with self._life:
            if self._closed:  # observers started now would never be stopped
                raise SessionClosed("the session is closed: nothing more is watched")
            if self._watcher is None:
                self._watcher = Watcher(self, self._watch_options)
                # batches go to the index; extract.jsonl follows once they settle
                self._sweeper.write_behind_s = self._watcher.options.records_quiet_s
            self._watcher.observe()
            return self._watcher

    def start_watch(self) -> None:
        """Start following the roots (non-blocking); observers already started are kept."""
        with self._life:
            if self._closed:
                return
            watcher = self._observe()
            if not watcher.started:
                watcher.start()

    def close(self) -> None:
        """Stop watching and release the store; a first sweep still running ends early.

        While watching, what is queued is applied first (the batch in flight finishes). Before
        that, the first sweep stops as a signal stops it, writing what it read (the other
        files keep their records): quitting never waits for a whole folder to be read. Every
        later run raises SessionClosed: the lock is released, and another writer may hold it
        by then. Safe to call twice, from any thread; the store is released even when
        stopping a thread fails.
        """
        # ``_life`` orders close() against a thread still starting observers or the
        # consumer: none can start after this, and none is half started when stopped.
        with self._life:
            if self._closed:
                return
            self._closed = True
            watcher = self._watcher
            if watcher is None or not watcher.started:
                self._sweeper.stop.set()
            try:
                if watcher is not None:
                    watcher.stop()  # (its last batch applies what was queued: store held)
            finally:
                with self._lock:
                    self._released = True
                    self._sweeper.close()


def unlocked_by(records: Iterable[Record], appeared: Iterable[str]) -> dict[str, list[str]]:
    """Root -> paths of the records waiting for one of the tools in ``appeared``, or read
    without one (:attr:`Record.read_with`)."""
    new = set(appeared)
    only: dict[str, list[str]] = {}
    for r in records:
        # needs_tool, scanned, or a container's members; or a read that lacked it
        if new.intersection(r.needs) or new.intersection(lacked(r.read_with)):
            only.setdefault(r.root, []).append(r.path)
    return only


def watch_forever(
    dirs: Sequence[Path],
    sweep_options: SweepOptions,
    watch_options: WatchOptions,
    on_event: Listener,
) -> int:
    """``quarry watch``: observe, sweep, then follow ``dirs`` until SIGINT/SIGTERM.

    Exit code 0 when stopped by a signal, the first sweep included: a signal during it stops
    the sweep, which keeps (writes) what it read. Exit code 1 when the watcher could not keep
    the store true: its folder vanished (the watcher stopped by itself), changes were still
    kept out of it (read-only, full) or a watched folder was gone when the signal came, or the
    first sweep could not write it (its index failed: a full disk).
    """
    stop = threading.Event()
    watching = threading.Event()

    sweeping: Session | None = None

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        first = not stop.is_set()
        stop.set()
        watcher = sweeping.watcher if sweeping is not None else None
        if watching.is_set() or (watcher is not None and watcher.started):
            return  # the main loop sees ``stop`` and closes the session
        if not first:
            raise KeyboardInterrupt  # a second signal: at once (the last written store stands)
        if sweeping is not None:
            sweeping.sweeper.stop.set()  # the first sweep ends early and writes what it read

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        session = sweeping = Session(dirs, sweep_options, on_event, watch_options=watch_options)
        if stop.is_set():  # a signal while the session was made: its sweep stops at once
            session.sweeper.stop.set()
        try:
            swept = session.sweep_then_watch()
            if not swept.interrupted:
                watching.set()
                _follow(session, stop, on_event)
        finally:
            session.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return _farewell(session, swept, on_event)


def _follow(session: Session, stop: threading.Event, on_event: Listener) -> None:
    """Wait for a signal, or for the watcher to give up on a store that vanished."""
    watcher = session.watcher
    while watcher is not None and watcher.failure is None:
        if stop.wait(0.2):
            on_event(
                Notice(time.time(), NoticeKind.STOPPING, "stopping: finishing the batch in flight")
            )
            return


def _farewell(session: Session, swept: SweepResult, on_event: Listener) -> int:
    """The last line: the store's state as it is, never "up to date" when it is not.

    An interrupted first sweep (a signal, or its store that could not be written) has written
    what it decided (the others keep their records); the watcher did not start, since the
    store is not whole enough to follow."""
    problem = swept.failed or session.not_current()
    if problem:
        message, level, code = f"stopped; the store is NOT up to date: {problem}", Level.ERROR, 1
    elif swept.interrupted:
        message = "stopped during the first sweep; the store keeps what it read so far"
        level, code = Level.WARNING, 0
    else:
        message, level, code = "stopped; the store is up to date", Level.INFO, 0
    on_event(Notice(time.time(), NoticeKind.STOPPED, message, level))
    return code


CHAR_S = 3e-7
"""Seconds of work a character of text costs past its read: the engine's share (its hash, its
full-text index, the old text's entries taken out of that) and the worker's (decoding, the
quality verdict, writing it). Measured: a 6.4 MB log appended to under ``quarry watch`` cost
1.9 CPU-s a batch, its read's own ``ms`` 30."""


def read_cost(record: Record) -> float:
    """What reading ``record``'s file cost, in seconds of work: its read's time, and its
    text's (:data:`CHAR_S` a character)."""
    return record.ms / 1000 + record.chars * CHAR_S


RELOG_S = 60.0
"""Least time between two reads of a database a watch batch makes for its log. An application
writes its log all day (a browser's history every few seconds, a mail client's index), and
each read is of the whole database; a log that changes sooner waits for the next batch after
this (or the periodic rescan, which reads it then: its record still has the log's old size)."""


def with_logged(batch: Batch, last: dict[tuple[str, str], float], now: float) -> Batch:
    """``batch`` with the database beside each write-ahead log in it (``app.db`` beside
    ``app.db-wal``) that is a file and not in it already; ``last``: when each was last added
    (updated). A database added less than :data:`RELOG_S` ago is not added again, and its log
    leaves the batch: its record keeps the log's old size, so that a later batch or the rescan
    reads the database for it."""
    added: dict[str, list[str]] = {}
    held: dict[str, set[str]] = {}
    for root, rels in batch.items():
        have = set(rels)
        for rel in rels:
            db = logged_database(rel)
            if db is None or db in have or not os.path.isfile(os.path.join(root, db)):
                continue
            if (root, db) in last and now - last[(root, db)] < RELOG_S:
                held.setdefault(root, set()).add(rel)
                continue
            last[(root, db)] = now
            added.setdefault(root, []).append(db)
            have.add(db)
    if not added and not held:
        return batch
    return {
        root: sorted({*rels, *added.get(root, ())} - held.get(root, set()))
        for root, rels in batch.items()
    }
