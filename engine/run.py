"""One sweep run: hash, plan, read and emit, for the files a sweeper hands it.

A :class:`Run` lives for one ``Sweeper.run`` call and receives everything it uses in a
:class:`RunContext`: a view of the records, the store, the executor that runs its reads, the
tool set, its options and the listener. It never reaches back into the sweeper
(:mod:`engine.sweep` owns the lock, the executor's lifetime and the records between runs), so
this module does not import it.

The run hands its executor a stream, not a list: each read is planned as the executor draws it
(the files no record can hold first, read unhashed, while threads hash the others), so a run
holds the reads in flight, never a plan and a task for every file of a big folder. A file
planned after the read of its content was filed takes that read's verdict: one read per
content and way of reading, as when everything was planned first.

Past STYLE's 500 lines on purpose: planning, reading and emitting share one run's state (the
reads pending per content hash, the records decided so far, the events not yet sent); apart,
each part would reach into the others' state.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import stat
import threading
import time
from array import array
from collections import Counter, deque
from collections.abc import (
    Callable,
    Container,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import BinaryIO, Protocol

from engine.dbindex import IndexGone, ServedRecords
from engine.detect import name_key
from engine.errors import MachineFailure
from engine.events import Level, Listener, Notice, NoticeKind, Progress, RecordsChanged
from engine.executor import Executor, on_this_machine
from engine.extract import READ_ATTEMPTS, Ident, Outcome, ReadTask, hash_file
from engine.index import Tally
from engine.limits import DEFAULT_LIMITS, Limits
from engine.mimes import SQLITE
from engine.passwords import NO_PASSWORDS, Passwords
from engine.plan import (
    CRASH_QUARANTINE,
    WAL_SUFFIX,
    Decision,
    LazyReaders,
    ReadWith,
    decide,
    empty_record,
    logged_database,
    needs_hash,
    skipped_record,
    still_current,
)
from engine.quality import enabled as quality_enabled
from engine.quality import is_current, score_file
from engine.readers.registry import reader_versions
from engine.records import Key, Reason, Record, Status, Why
from engine.store import Store, TextFolders, folder_of, open_regular, text_dest
from engine.textnames import TextNames
from engine.tools import ToolSet
from engine.walk import Entry
from engine.words import count

HASH_CHUNK = 64
"""Files hashed per task of the engine's hashing threads."""
HASH_THREADS = 4
"""Threads that hash in the engine (files whose content may be known already)."""
HASH_AHEAD = 64
"""Chunks hashed ahead of the planning that takes them (64 x HASH_CHUNK = 4,096 files, about
what the local pool draws at once): the threads hash while reads run, and stop there."""
HASH_PATIENCE = 30.0
"""Seconds the planning waits on a chunk of hashes in which no file has been hashed: then its
files not hashed yet are read unhashed (:class:`_Hashes`). A file the engine hashes is at most
``--max-bytes`` (512 MiB by default), seconds of reading on any disk."""
_HASH_POLL = 0.25
"""Seconds between looks at the run's stop while the planning waits for a hash."""
DEDUP_BYTES = 64 * 1024
"""New files this big that share their size are hashed first, so that copies are read once;
smaller ones are read unhashed (a copy costs a second small read, not a hash of every file)."""
LEAN_MEMO = 16_384
"""Reads a lean run (:attr:`Run.lean`) remembers for the copies planned after them (about 2 KB
each: 30 MB at most): a copy planned further on is read again, as its own content."""


class RecordsView(Protocol):
    """What a run reads of the store's records (:class:`engine.index.RecordIndex` is one)."""

    @property
    def records(self) -> Mapping[Key, Record]:
        """The records by (root, path), as they were before this run."""
        ...

    def same_content(self, sha256: str, path: str) -> Record | None:
        """An earlier record with this content whose name is read as ``path``'s is (one with
        text if any has)."""
        ...

    def may_hold(self, size: int) -> bool:
        """Whether some earlier record's content could be a file of ``size`` bytes."""
        ...


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How one run decides and reads."""

    limits: Limits = DEFAULT_LIMITS
    """Bounds of every read."""
    rehash: bool = False
    """Hash every file even when its size and mtime match its record."""
    prev_started_ns: int = 0
    """When the previous run started: files modified this close before it are re-hashed."""
    verify: bool = False
    """Read every content that has a text again and replace the texts that do not match."""
    passwords: Passwords = NO_PASSWORDS
    """Passwords every read of this run may try on an encrypted file (a retry's); never shown."""
    resumed: Container[Key] = frozenset()
    """Files decided by a sweep that was killed before it ended (their records committed to
    the index): this run keeps their verdicts as that sweep's, so its errors are not read
    again as a new full sweep's would be."""
    unknown_again: bool = False
    """Readers came, or kinds are told apart anew, since the store's last sweep: a file no
    reader took is read again (an upgrade that learns a format reads the files of it)."""


@dataclass(frozen=True, slots=True)
class RunContext:
    """Everything a run needs, handed over by its sweeper."""

    view: RecordsView
    """The records before this run (never changed by it: the sweeper applies the result)."""
    store: Store
    """Where texts go; its lock is held by the caller."""
    executor: Executor
    """Runs the reads."""
    tools: ToolSet
    """The tool set the reads may use; its fingerprint goes on unsupported verdicts."""
    options: RunOptions
    """Bounds and hashing rules."""
    emit: Listener
    """Receives the run's events."""
    stopped: Callable[[], bool] = lambda: False
    """True once the run is asked to stop (SIGINT/SIGTERM): it keeps what it decided so far."""
    journal: Callable[[Sequence[Record]], None] | None = None
    """Receives the records the run decided that differ from those held, batch by batch, each
    after its text is in the store (the sweeper commits them to the index: a killed sweep
    resumes from them)."""
    set_aside: Callable[[str, str], None] | None = None
    """Told (content hash, the old text's hash) when a stored text is replaced by another read
    of the same content, after the old one is kept aside (the index's history reads it)."""
    journaled: Callable[[], bool] | None = None
    """Whether what :attr:`journal` was given is kept (the index has not failed): a lean run
    (:attr:`Run.lean`) holds its records nowhere else, and stops when it is not."""
    sent_text: Callable[[str, str, str], None] | None = None
    """Told (content hash, its file's identity, the text) of a small text a worker placed in
    the store and sent with its outcome (:attr:`engine.extract.Outcome.body`), before the
    records that name it go to :attr:`journal`: the text index takes it from there."""


class _Stopped(Exception):
    """Raised through the executor's tick (or its draw from the run's stream of reads) to
    leave its loop when the run is asked to stop."""


class _Unhashed(Enum):
    """A file of a chunk of hashes the planning gave up waiting for."""

    STALLED = "stalled"


STALLED = _Unhashed.STALLED
_HashResult = tuple[str, Ident] | OSError | None
"""A file's hash and the stat it kept throughout, the error that stopped it, or None: it
kept changing."""
_Hashed = _HashResult | _Unhashed
"""What the engine's hashing gave a file: its result, or :data:`STALLED` when the planning
gave up waiting for it (it is then read unhashed)."""


@dataclass(slots=True)
class _Todo:
    """The files a run reads or hashes, by index into its walk (8 bytes a file, not a plan)."""

    known: list[tuple[int, str]] = field(default_factory=list)
    """Unchanged files whose record does not stand (a reader's new version, a text gone),
    with their recorded hash."""
    to_hash: array[int] = field(default_factory=lambda: array("q"))
    """Files whose content may be known already (or big ones that may be copies)."""
    unknown: array[int] = field(default_factory=lambda: array("q"))
    """Files no earlier content can be: read unhashed."""
    priors: list[Record | None] = field(default_factory=list)
    """The earlier record of each of ``unknown``."""


class Run:
    """The state of one sweep run: hashing, planning, reading, and batching events."""

    BATCH = 256
    FLUSH_S = 0.1

    def __init__(
        self,
        ctx: RunContext,
        entries: list[Entry],
        force: set[Key],
        full: bool,
        *,
        texts_seen: tuple[list[int], TextNames] | None = None,
        lean: bool = False,
    ):
        self.ctx = ctx
        self.lean = lean
        """Hold no decided record: a run into a store with none, whose index serves them
        after it (each is committed to it as the run goes: :attr:`RunContext.journal`).
        :attr:`decided` and :attr:`tally` count them; :attr:`new` stays empty. The records of
        the last :data:`LEAN_MEMO` hashed reads are remembered for copies planned after them
        (a copy takes its read's verdict). A cold sweep of ten million files, or a sweep of a
        share whose every file changed, would otherwise hold a record a file until its end."""
        self.decided = 0
        """Records this run decided (emitted)."""
        self.tally = Tally()
        """A lean run's records counted for the summary (another run's stays empty)."""
        self.index_lost = False
        """A lean run's index failed: what it had not committed went with it, and the run
        stopped there (the files without a record are read by the next sweep)."""
        self._remote = not on_this_machine(ctx.executor)
        """Whether reads may run on other machines (a Dask cluster, any executor but this
        machine's own pool): their texts are checked for through the store's folders, each
        opened without following a link and kept open for the run (:class:`TextFolders`);
        this machine's workers renamed theirs into the store's folder themselves, and one
        ``lstat`` of it is enough."""
        self._texts = TextFolders(ctx.store.out) if self._remote else None
        self.records = ctx.view.records
        self.store = ctx.store
        self.entries = entries
        self.force = force
        self._relogged: set[Key] = set()
        """Databases whose write-ahead log is new or changed since its record
        (:meth:`_logs_changed`): read again though their own bytes are unchanged."""
        self.full = full
        self.total = len(entries)
        self.bytes_total = sum(e.size for e in entries)
        self.done = 0
        self.bytes_done = 0
        self.extracted = 0
        self.reused = 0
        self.added_texts = False
        self.new: dict[Key, Record] = {}
        self._filed: dict[Key, Record] = {}
        """A lean run's records of the read being filed (``new`` holds another run's)."""
        self._pending: list[Record] = []
        self._reported = 0
        self._last_flush = time.monotonic()
        self.versions = reader_versions()
        self.mime_reader: dict[str, str | None] = {}
        self._readers = LazyReaders(self.mime_reader)
        self.fingerprint = ctx.tools.fingerprint
        """The tool set's fingerprint, computed once: plan asks for it per file."""
        self.tool_names = frozenset(ctx.tools.names)
        self._read_with = ReadWith(ctx.tools)
        self.executor_failed = False
        """The executor raised MachineFailure: the sweeper replaces it before the next run."""
        self.interrupted = False
        """The run was asked to stop: files not decided keep their earlier records."""
        self.machine_failures = 0
        """Files not read because the machine failed (their earlier records are kept)."""
        self.repaired = 0
        """Texts that were missing or (verify) did not match their content, read again."""
        self._reads: dict[_ReadKey, list[tuple[Entry, str, Record | None]]] = {}
        """The reads in flight by :class:`_ReadKey` (one per content and way of reading it),
        each with the files waiting on it: filed ones leave."""
        self._sha_of: dict[Key, str] = {}
        """The hash planned for each file of a read in flight ("": read unhashed)."""
        self._ident: dict[Key, Ident] = {}
        """The stat each hashed file of a read in flight had throughout its hash."""
        self._done: dict[bytes, Record] = {}
        """Each read of a hashed file filed this run (its :func:`_memo` key) -> the record of
        the file read, which a copy planned later takes: a key of ~100 bytes and a pointer to
        a record the run holds anyway, per content read (not a plan, nor a task); a lean run,
        which holds no record, keeps the last :data:`LEAN_MEMO` (oldest first)."""
        self._verified: set[bytes] = set()
        """The reads of ``_done`` where verify found the stored text (each copy keeps its
        own verdict)."""
        self._dirty = False
        """The store is marked: a read was sent (see :meth:`_launch`)."""
        self._machine: dict[str, int] = {}
        self.texts_seen = texts_seen
        """The text folders' times, then the texts listed after them (a full run lists them
        once, or is given the listing its sweeper made)."""
        self._present: TextNames | None = texts_seen[1] if texts_seen is not None else None
        """The text folders' times and, listed after them, the texts, when the run listed them."""
        self._verifying: set[str] = set()
        self._tmp = str(self.store.tmp_dir)
        self._out = str(self.store.out)

    @property
    def finished_whole(self) -> bool:
        """Every file was decided: no stop, no lost executor, no read the machine failed."""
        return not (self.interrupted or self.executor_failed or self.machine_failures)

    def execute(self) -> dict[Key, Record]:
        """Decide every entry; return the run's records by key (the sweeper applies them)."""
        try:
            todo = self._sort()
            if not self.interrupted:
                self._read_all(todo)
        except IndexGone:
            if not self.lean:
                raise
            self._index_gone()
        self.flush_events()
        return self.new

    def _index_gone(self) -> None:
        """A lean run's index failed under a question (the run holds its records nowhere
        else): it stops there, as when a commit fails, and ends as an interrupted one."""
        self.index_lost = self.interrupted = True

    def _sort(self) -> _Todo:
        """Decide what needs no read now (links, empty files, unchanged files whose records
        stand); note the rest, by index into the walk, for :meth:`_planned` to plan as the
        executor draws its reads."""
        opts = self.ctx.options
        todo = _Todo()
        records = self.records
        stat_of = records.stat_of if self.lean and isinstance(records, ServedRecords) else None
        relogged = self._relogged = self._logs_changed(stat_of)
        again = self.full and opts.unknown_again  # (as plan() hands it to decide())
        for n, e in enumerate(self.entries):
            if n % 256 == 0 and self._stopping():
                self.interrupted = True
                break
            key = (e.root, e.path)
            if stat_of is not None and self._stat_changed(e, key, stat_of):
                todo.to_hash.append(n)  # (its record decoded once, when its hash is planned)
                continue
            prior = records.get(key)
            if e.kind != "file":
                self.emit(_same(skipped_record(e), prior))
            elif e.size == 0:
                self.emit(_same(empty_record(e, prior), prior))
            elif (
                key not in self.force
                and key not in relogged
                and not needs_hash(
                    prior, e.size, e.mtime_ns, opts.prev_started_ns, opts.rehash or opts.verify
                )
            ):
                assert prior is not None and prior.sha256 is not None
                if still_current(prior, self.versions, self._readers, self.tool_names, again) and (
                    not prior.has_text or self._has_text(prior.sha256)
                ):
                    # The warm sweep's common case: what plan() would decide, without a plan.
                    # Size and mtime match, so the kept verdict differs at most in ``reused``.
                    self.reused += 1
                    kept = prior if prior.reused else prior.evolve(reused=True)
                    self.emit(self.requalified(kept))
                else:
                    todo.known.append((n, prior.sha256))
            elif (
                opts.verify
                or self.ctx.view.may_hold(e.size)
                or (self.lean and prior is not None and prior.size == e.size)
            ):
                # its content may be known already: hash before reading (a lean run's own
                # record, a resumed sweep's, may stand: the others are read as a cold sweep's)
                todo.to_hash.append(n)
            else:
                todo.unknown.append(n)
                todo.priors.append(prior)
        self._sort_unknown(todo)
        return todo

    def _logs_changed(self, stat_of: Callable[[Key], tuple[int, int] | None] | None) -> set[Key]:
        """The databases of this run whose write-ahead log (``NAME-wal`` beside ``NAME``) the
        walk finds new or with another size or mtime than its record has: an application
        holding its database open has its newest rows there, the database file as it was
        (same size, mtime and hash), so its record would otherwise be kept without them."""
        changed: set[Key] = set()
        for e in [e for e in self.entries if e.path.endswith(WAL_SUFFIX)]:
            db = logged_database(e.path)
            if db is None or e.kind != "file":
                continue
            key = (e.root, e.path)
            if stat_of is not None:
                was = stat_of(key)
            else:
                prior = self.records.get(key)
                was = None if prior is None else (prior.size, prior.mtime_ns)
            if was != (e.size, e.mtime_ns):
                changed.add((e.root, db))
        return changed

    def _stat_changed(
        self, e: Entry, key: Key, stat_of: Callable[[Key], tuple[int, int] | None]
    ) -> bool:
        """Whether ``e`` is hashed as :meth:`_sort` would decide it from its record, known
        from the record's size and mtime (``stat_of``) alone: a file whose stat changed, of
        a size some content may have (a lean run's own record's size, or any while not
        cold)."""
        if e.kind != "file" or e.size == 0:
            return False
        was = stat_of(key)
        if was is None or was == (e.size, e.mtime_ns):
            return False
        return self.ctx.options.verify or self.ctx.view.may_hold(e.size) or was[0] == e.size

    def _has_text(self, sha: str) -> bool:
        """Whether the store holds the text of ``sha`` (a full run lists the texts once)."""
        if not self.full:
            return self.store.has_text(sha)
        if self._present is None:
            # the text folders' times first: a text removed after the listing changes them
            self.texts_seen = (self.store.text_folder_times(), self.store.text_names())
            self._present = self.texts_seen[1]
        return sha in self._present

    def _sort_unknown(self, todo: _Todo) -> None:
        """Files of a size no record has: read unhashed, except big ones that share their size
        with another of this run (possible copies: hashed, so that one read serves all)."""
        entries = self.entries
        big = Counter(s for n in todo.unknown if (s := entries[n].size) >= DEDUP_BYTES)
        if not any(c > 1 for c in big.values()):
            return
        unknown, priors = array("q"), []
        for n, prior in zip(todo.unknown, todo.priors, strict=True):
            if big.get(entries[n].size, 0) > 1:
                todo.to_hash.append(n)
            else:
                unknown.append(n)
                priors.append(prior)
        todo.unknown, todo.priors = unknown, priors

    # -- planning, as the executor draws reads ---------------------------------------------

    def _planned(self, todo: _Todo) -> Generator[ReadTask, None, None]:
        """The run's reads, planned as the executor draws them: it holds no more of them than
        it has room for, and neither does the run (10 million files never become 10 million
        plans). Files whose content is known are planned first, then the files no record can
        hold are sent unhashed (reading starts at once) while threads hash the others, which
        are planned in the walk's order as their hashes come. Raises :class:`_Stopped` when
        the run is asked to stop."""
        entries = self.entries
        hashes = _Hashes(entries, todo.to_hash)
        try:
            for n, sha in todo.known:
                e = entries[n]
                if (key := self.plan(e, sha)) is not None:
                    yield self._launch(key)
            for i, (n, prior) in enumerate(zip(todo.unknown, todo.priors, strict=True)):
                if i % 256 == 0:
                    self._check_stop()
                yield self._launch(self._read_unhashed(entries[n], prior))
                for chunk in hashes.ready():  # the hashes done meanwhile, without waiting
                    yield from self._plan_hashed(chunk)
            todo.unknown, todo.priors = array("q"), []  # sent: the executor holds the rest
            for chunk in hashes.rest(self._check_stop):
                yield from self._plan_hashed(chunk)
        finally:
            hashes.close()

    def _plan_hashed(self, chunk: list[tuple[Entry, _Hashed]]) -> Iterator[ReadTask]:
        self._check_stop()
        for e, hashed in chunk:
            if isinstance(hashed, _Unhashed):  # its hash hung: a worker's read is bounded
                read: _ReadKey | None = self._read_unhashed(e, self.records.get((e.root, e.path)))
            else:
                read = self._hashed(e, hashed)
            if read is not None:
                yield self._launch(read)

    def _check_stop(self) -> None:
        if self._stopping():
            raise _Stopped

    def _stopping(self) -> bool:
        """Asked to stop, or a lean run's index failed."""
        return self.index_lost or self.ctx.stopped()

    def _launch(self, key: _ReadKey) -> ReadTask:
        """The read of ``key``'s group (its one file so far), the store marked first."""
        if not self._dirty:
            # Workers rename texts into the store: from here a crash may leave texts no
            # record names, which the marker tells the next sweep to collect.
            self.store.mark_dirty()
            self._dirty = True
        return self._task(self._reads[key][0][0], key)

    def _read_unhashed(self, e: Entry, prior: Record | None) -> _ReadKey:
        """Send ``e`` to be read without hashing it here: no earlier record has its size, so
        no earlier content can be its own, and ``decide`` would read it. The worker hashes
        what it reads; the read is keyed by the file's path until then."""
        key = (e.root, e.path)
        if key in self.force:
            why = Why.FORCED
        else:
            why = Why.CHANGED if prior is not None and prior.sha256 is not None else Why.NEW
        self._sha_of[key] = ""
        read = _read_key("", _abspath(e))
        self._reads[read] = [(e, why, prior)]
        return read

    def _hashed(self, e: Entry, hashed: _HashResult) -> _ReadKey | None:
        """File ``e``'s hash (or why it has none); the key of the read it starts, if any."""
        if isinstance(hashed, FileNotFoundError):
            return None  # gone since the walk: its record (if any) is dropped
        if isinstance(hashed, OSError):
            why = hashed.strerror or str(hashed)
            self.emit(skipped_record(replace(e, kind="unreadable", detail=why)))
        elif hashed is None:
            self.emit(_changing(e, f"the file changed during each of {READ_ATTEMPTS} hashes"))
        else:
            sha, ident = hashed
            e = replace(e, size=ident[2], mtime_ns=ident[3])  # the stat of what was hashed
            return self.plan(e, sha, ident)
        return None

    def plan(self, e: Entry, sha: str, ident: Ident | None = None) -> _ReadKey | None:
        """Decide ``e`` (content ``sha``): reuse a record, join a read of its content, or
        start one (its key is returned: the caller sends its task)."""
        key = (e.root, e.path)
        prior = self.records.get(key)
        # A copy's record is looked for only when the file's own is not of this content
        # (decide takes its own first; in a run its index serves, the search is a query).
        own = prior is not None and prior.sha256 == sha
        same = None if own else self.ctx.view.same_content(sha, e.path)
        d = decide(
            sha,
            prior,
            same,
            reader_versions=self.versions,
            reader_for_mime=self._readers,
            tools_fingerprint=self.fingerprint,
            full=self.full and key not in self.ctx.options.resumed,
            forced=key in self.force,
            tool_names=self.tool_names,
            unknown_again=self.full and self.ctx.options.unknown_again,
        )
        if not d.read and key in self._relogged and d.base is not None and d.base.mime == SQLITE:
            d = Decision(True, Why.CHANGED, d.base)  # its rows changed in its log
        if not d.read and d.base is not None:
            base = d.base
            if base.has_text and self.ctx.options.verify:
                d = Decision(True, Why.REPAIR, base)
                self._verifying.add(sha)
            elif base.has_text and base is prior and not self._has_text(sha):
                d = Decision(True, Why.REPAIR, base)  # its text is gone from the store
            elif base.has_text and base is not prior and not self._has_text(sha):
                d = decide(
                    sha,
                    None,
                    None,
                    reader_versions={},
                    reader_for_mime={},
                    tools_fingerprint="",
                    full=True,
                    forced=False,
                )
            else:
                self.reused += 1
                self.emit(self.requalified(_reused(base, e)))
                return None
        read = _read_key(sha, e.path)
        member = (e, d.why or "new", d.base)
        memo = _memo(read)
        if memo in self._done:
            self._joined(sha, memo, member)  # its content was read this run
            return None
        self._sha_of[key] = sha
        if ident is not None:
            self._ident[key] = ident
        group = self._reads.get(read)
        if group is not None:
            group.append(member)  # joins the read of its content in flight
            return None
        self._reads[read] = [member]
        return read

    def _read_all(self, todo: _Todo) -> None:
        """Hand the executor the stream of reads and file each outcome as it comes."""
        stream = self._planned(todo)
        executor = self.ctx.executor
        try:
            first = next(stream, None)  # planned here: a run with nothing to read starts nothing
            if first is not None:
                executor.submit(itertools.chain((first,), stream))
                for task, outcome in executor.finished(tick=self._tick):
                    self._finish(_read_key(task.sha256, task.path), outcome)
                    self._tick()
        except _Stopped:
            # What is still being read keeps its earlier record; nothing of it may come later.
            executor.cancel()
            self.interrupted = True
        except IndexGone:
            if not self.lean:
                raise
            executor.cancel()
            self._index_gone()
        except MachineFailure as exc:
            self.executor_failed = True
            self._fail_the_rest(stream, str(exc))
        finally:
            stream.close()  # its hashing threads end with it
            if self._texts is not None:
                self._texts.close()
        self._report_machine_failures()

    def _fail_the_rest(self, stream: Iterator[ReadTask], why: str) -> None:
        """The executor failed: every read not filed, and every file not planned yet, keeps
        its earlier record (the rest are planned, as before there was a stream, so that
        what needs no read is still decided)."""
        for key in list(self._reads):
            self._machine_failed(self._reads.pop(key), why)
        try:
            for task in stream:
                self._machine_failed(self._reads.pop(_read_key(task.sha256, task.path)), why)
        except _Stopped:
            self.interrupted = True

    def _tick(self) -> None:
        self.maybe_flush()
        if self._stopping():
            raise _Stopped

    def _task(self, e: Entry, key: _ReadKey) -> ReadTask:
        """The read of ``e``; ``key`` is its :class:`_ReadKey` (its path when not hashed yet:
        then the task's ``sha256`` is empty and the worker hashes)."""
        limits, tools, tmp = self.ctx.options.limits, self.ctx.tools, self._tmp
        ident = self._ident.get((e.root, e.path))
        sha = key.sha256
        # A text to compare with the stored one (verify), or one that may replace a stored
        # text (whose old one is then kept aside), stays in tmp/ for the engine. A database
        # read again for its log replaces its text in place: one its application writes all
        # day would otherwise keep a copy of its whole text aside at each read.
        aside = self._may_replace(sha) and (e.root, e.path) not in self._relogged
        out = "" if sha in self._verifying or aside else self._out
        passwords = self.ctx.options.passwords
        return ReadTask(
            _abspath(e), sha, limits, tools, tmp, e.size, ident, out, passwords=passwords
        )

    def _may_replace(self, sha: str) -> bool:
        """Whether reading content ``sha`` may replace its stored text (kept records may have
        it: the old one is kept aside first)."""
        return self.ctx.set_aside is not None and bool(sha) and self._has_text(sha)

    def _keep_aside(self, sha: str, made: str) -> None:
        """Before ``made`` replaces the stored text of ``sha``: keep the stored one aside when
        they differ, and say so (a failure only loses the old text, as before there was an
        aside)."""
        if self.ctx.set_aside is None or not self.store.has_text(sha):
            return
        try:
            with self.store.open_text(sha) as stored, _read_made(made) as new:
                if _same_bytes(new, stored):
                    return
            kept = self.store.keep_text(sha)
        except OSError:
            return
        self.ctx.set_aside(sha, kept)

    def _machine_failed(self, group: list[tuple[Entry, str, Record | None]], why: str) -> None:
        """The machine failed these files: keep their earlier records, never blame them."""
        self._machine[why] = self._machine.get(why, 0) + len(group)
        self.machine_failures += len(group)
        for e, _why, base in group:
            if base is None:
                continue  # no earlier record: the file is read again next sweep
            key = (e.root, e.path)
            if base.key == key and base.sha256 != self._sha_of.get(key):
                self.emit(base)  # the old verdict of changed content: re-read next sweep
            else:
                self.emit(
                    base.evolve(
                        root=e.root, path=e.path, size=e.size, mtime_ns=e.mtime_ns, reused=True
                    )
                )

    def _report_machine_failures(self) -> None:
        for why, files in self._machine.items():
            self.ctx.emit(
                Notice(
                    time.time(),
                    NoticeKind.MACHINE_FAILURE,
                    f"{count(files, 'file')} not read, earlier records kept: {why}",
                    Level.ERROR,
                )
            )
        self._machine.clear()

    def _text_there(self, sha: str, placed: str) -> bool:
        """Whether the text of ``sha`` a worker says it placed at ``placed`` is in the store."""
        if self._texts is not None:
            return self._texts.has(sha)
        try:
            return stat.S_ISREG(os.lstat(placed).st_mode)
        except OSError:
            return False

    def _finish(self, key: _ReadKey, o: Outcome) -> None:
        """File the outcome of reading ``key``'s first file.

        ``key`` is the content hash the engine found with the name key of the group's files, or
        the file's path when the worker was left to hash it (a group of one). The text is filed
        under the hash of what the worker read. When that is not ``sha`` (the file changed
        after it was hashed), or the file went or kept changing, the outcome speaks for that
        one file only: the other files of the group still hold ``sha`` and the next of them is
        read in its place. Otherwise it speaks for every file of that content and name key,
        and a file of them planned later this run takes its verdict from it (:meth:`_joined`).
        """
        try:
            self._file_outcome(key, o)
        finally:
            self._filed.clear()

    def _file_outcome(self, key: _ReadKey, o: Outcome) -> None:
        group = self._reads.pop(key)
        sha = key.sha256
        if o.machine:
            self.store.still_ours()  # a store that went is StoreLost, not a machine failure
            self._machine_failed(group, o.error or "machine failure")
            self._verifying.discard(sha)
            return
        first, rest = group[0], group[1:]
        real = o.sha256 or sha
        whole = not (o.gone or real != sha or o.reason == Reason.CHANGING)
        if rest and not whole:
            self._reads[key] = rest
            self.ctx.executor.submit([self._task(rest[0][0], key)])
            group = [first]
        verified = self._file(sha, group, o, real)
        self._forget(group)
        if key in self._reads:
            return  # the rest of its group is read again
        self._verifying.discard(sha)
        filed = (self._filed if self.lean else self.new).get((first[0].root, first[0].path))
        if sha and whole and verified is not None and not o.lost_worker and filed is not None:
            # a copy of it may be among the files still to plan
            memo = _memo(key)
            self._done[memo] = filed
            if verified:
                self._verified.add(memo)
            if self.lean and len(self._done) > LEAN_MEMO:
                oldest = next(iter(self._done))
                del self._done[oldest]
                self._verified.discard(oldest)

    def _file(
        self, sha: str, group: list[tuple[Entry, str, Record | None]], o: Outcome, real: str
    ) -> bool | None:
        """Emit the records of ``group`` from ``o``, ``real`` the hash of what was read: True
        when verify found the stored text, False when the read was filed, None when not (the
        file went, or the machine failed it)."""
        first = group[0]
        if o.gone:
            return None  # dropped: the file is no longer there
        if not real and o.status != Status.SKIPPED:
            # Not hashed here, and its worker was lost before it said what it read: hash it
            # now (one file), so that its verdict names its content and quarantine can count.
            found = self._hash_after_loss(first[0])
            if found is None:
                return None
            real = found
        if sha in self._verifying and real == sha and self._matches(o, first[2]):
            for e, _why, base in group:
                assert base is not None
                self.emit(self.requalified(_reused(base, e)))
            return True
        if o.text_file is not None:
            try:
                if o.text_file != text_dest(self._out, real):  # not placed by its worker
                    self._keep_aside(real, o.text_file)
                    self.store.put_text_file(real, Path(o.text_file))
                elif not self._text_there(real, o.text_file):
                    # A record is never visible without its text: a worker on another machine
                    # that wrote it elsewhere (a store folder of its own) failed the machine,
                    # not the file.
                    why = "the text its worker wrote is not in the store"
                    self._machine_failed(group, why)
                    return None
                elif o.body is not None and o.body_ident is not None and self.ctx.sent_text:
                    self.ctx.sent_text(real, o.body_ident, o.body)
                self.added_texts = True
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(o.text_file)
                self._machine_failed(group, f"cannot write the store: {exc.strerror or exc}")
                return None
        self.extracted += 1
        if group[0][1] == Why.REPAIR:
            self.repaired += 1
        for e, why, base in group:
            if sha and e is first[0] and real != sha:
                prior = self.records.get((e.root, e.path))
                why, base = (Why.CHANGED if prior else Why.NEW), None
            if (
                e is first[0]
                and o.size is not None
                and o.mtime_ns is not None
                and (o.size, o.mtime_ns) != (e.size, e.mtime_ns)
            ):
                e = replace(e, size=o.size, mtime_ns=o.mtime_ns)
            self.emit(_same_verdict(self._record(e, real, why, base, o), base))
        return False

    def _forget(self, group: list[tuple[Entry, str, Record | None]]) -> None:
        """Drop what the run kept of these files while their read was in flight."""
        for e, _why, _base in group:
            key = (e.root, e.path)
            self._sha_of.pop(key, None)
            self._ident.pop(key, None)

    def _joined(self, sha: str, memo: bytes, member: tuple[Entry, str, Record | None]) -> None:
        """File ``member``, planned after the read of its content and name key was filed
        this run, as that read's group would have (but for ``ms``): its outcome speaks for
        every file of them."""
        e, why, base = member
        self._verifying.discard(sha)
        read = self._done[memo]
        if memo in self._verified:  # the stored text is the content's: verdicts stand
            self.emit(self.requalified(_reused(base if base is not None else read, e)))
            return
        mine = read.evolve(
            root=e.root, path=e.path, size=e.size, mtime_ns=e.mtime_ns, why=why, reused=False
        )
        self.emit(_same_verdict(mine, base))

    def _hash_after_loss(self, e: Entry) -> str | None:
        """The hash of a file whose read lost its worker; None when it cannot be had (its
        record, if any, is emitted: skipped/unreadable or changing; a gone file has none).

        Hashed as the planning hashes, in a daemon thread and no longer than
        :data:`HASH_PATIENCE` without an answer: the worker may have been lost to a read that
        hung (its time ran out), and a hash of that file here hung the engine for ever."""
        hashes = _Hashes([e], [0])
        try:
            ((_e, hashed),) = next(hashes.rest(self._check_stop))
        finally:
            hashes.close()
        if isinstance(hashed, tuple):
            return hashed[0]
        if isinstance(hashed, _Unhashed):
            why = (
                "reading it hung: its read ran out of time, and hashing it gave nothing in"
                f" {HASH_PATIENCE:g} s; read again next sweep"
            )
            self.emit(skipped_record(replace(e, kind="unreadable", detail=why)))
            return None
        self._hashed(e, hashed)
        return None

    def _matches(self, o: Outcome, base: Record | None) -> bool:
        """Verify: the read gave ``base``'s verdict and the very text stored for it."""
        if base is None or o.status != base.status or o.chars != base.chars:
            return False
        if o.text_file is None or base.sha256 is None:
            return False
        try:
            with self.store.open_text(base.sha256) as stored, _read_made(o.text_file) as made:
                same = _same_bytes(made, stored)
        except OSError:  # gone, unreadable, or a link: not the stored text
            return False
        if same:
            with contextlib.suppress(OSError):
                os.unlink(o.text_file)
        return same

    def _record(self, e: Entry, sha: str, why: str, base: Record | None, o: Outcome) -> Record:
        crashes = 0
        error = o.error
        reason = o.reason
        if o.lost_worker:
            same = base is not None and base.sha256 == sha
            crashes = (base.crashes if same and base else 0) + 1
            if crashes >= CRASH_QUARANTINE:
                reason = Reason.QUARANTINED
                error = (
                    f"{error}; lost a worker {crashes} sweeps in a row: not read again "
                    "until its content or reader changes"
                )
        # The tools it was read with, where a new one would change the verdict: unsupported,
        # scanned, or a container whose members wait on one.
        keeps_tools = o.status == Status.UNSUPPORTED or o.reason == Reason.SCANNED or bool(o.needs)
        return Record(
            root=e.root,
            path=e.path,
            size=e.size,
            mtime_ns=e.mtime_ns,
            status=o.status,
            sha256=None if o.status == Status.SKIPPED else sha,
            mime=o.mime,
            reason=reason,
            extractor=o.extractor,
            reader=o.reader,
            v=o.v,
            chars=o.chars,
            pages=o.pages,
            error=error,
            needs=o.needs,
            tools=self.fingerprint if keeps_tools else None,
            read_with=self._read_with(o.reader, o.tools),
            reused=False,
            why=why,
            ms=o.ms,
            crashes=crashes,
            quality=o.quality if o.status == Status.OK else None,
            members=o.members,
        )

    def requalified(self, r: Record) -> Record:
        """``r`` with its text scored by the current quality rules, from the stored text: a
        change of the rules never reads a document again."""
        if not r.has_text or is_current(r.quality) or not quality_enabled():
            return r
        assert r.sha256 is not None
        try:
            with self.store.open_text(r.sha256) as text:
                q = score_file(text, r.mime, chars=r.chars, pages=r.pages)
        except OSError:  # the text is gone or unreadable: keep the record as it was
            return r
        return r.evolve(quality=q)

    # -- events ---------------------------------------------------------------------------

    def emit(self, record: Record) -> None:
        key = (record.root, record.path)
        self.decided += 1
        if not self.lean:
            self.new[key] = record
        else:
            self.tally.add(record)
            if self._sha_of.get(key):  # a hashed read's: a copy planned later may take it
                self._filed[key] = record
        self.done += 1
        self.bytes_done += record.size
        if self.lean or self.records.get(key) is not record:
            # The very record already held is no change: listeners are not told of it, so a
            # warm sweep of 100,000 files does not replay 100,000 rows into the dashboard.
            # A lean run holds none: each record it decides is written (a resumed one's
            # too, which tells the sweeper the file was found).
            self._pending.append(record)
        if len(self._pending) >= self.BATCH:
            self.flush_events()
        else:
            self.maybe_flush()

    def maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.FLUSH_S and (
            self._pending or self.done < self.total
        ):
            self.flush_events()

    def flush_events(self, removed: Iterable[Key] = ()) -> None:
        removed = tuple(removed)
        now = time.time()
        last = self._pending[-1].path if self._pending else ""
        if self._pending and self.ctx.journal is not None:
            self.ctx.journal(self._pending)
            if self.lean and self.ctx.journaled is not None and not self.ctx.journaled():
                self.index_lost = True  # (the run stops at its next look)
        if self._pending or removed:
            self.ctx.emit(RecordsChanged(now, tuple(self._pending), removed))
        if self.done != self._reported:
            self._reported = self.done
            self.ctx.emit(
                Progress(now, self.done, self.total, self.bytes_done, self.bytes_total, last)
            )
        self._pending = []
        self._last_flush = time.monotonic()


def _reused(base: Record, e: Entry) -> Record:
    """``base``'s verdict for the file at ``e``; the same object when nothing differs."""
    if (
        base.reused
        and base.path == e.path
        and base.root == e.root
        and base.size == e.size
        and base.mtime_ns == e.mtime_ns
    ):
        return base
    return base.evolve(root=e.root, path=e.path, size=e.size, mtime_ns=e.mtime_ns, reused=True)


@dataclass(frozen=True, slots=True)
class _ReadKey:
    """What a run's reads are grouped by: one read per content and way of reading it.

    A hashed file's key is its content hash and the :func:`name_key` of its name (the same
    bytes under two suffixes may be read two ways, and each way gives its own verdict every
    sweep); a file read unhashed is keyed by its absolute path alone, its hash left empty
    (the worker hashes it).
    """

    sha256: str
    """The content hash; empty for a file read unhashed."""
    name: str
    """The name key of a hashed file's name; the absolute path of a file read unhashed."""


def _read_key(sha: str, path: str) -> _ReadKey:
    """The key of the read of ``path`` with content ``sha`` (empty: read unhashed, and
    ``path`` is then absolute)."""
    return _ReadKey(sha, name_key(path)) if sha else _ReadKey("", path)


def _memo(key: _ReadKey) -> bytes:
    """``key`` of a hashed file's read, packed: a SHA-256 as its 32 bytes (any other hash a
    store written by others holds, as its text with its length first)."""
    name = key.name.encode("utf-8", "surrogatepass")
    if len(key.sha256) == 64:
        with contextlib.suppress(ValueError):
            return b"h" + bytes.fromhex(key.sha256) + name
    sha = key.sha256.encode("utf-8", "surrogatepass")
    return b"s" + len(sha).to_bytes(4, "big") + sha + name


def _abspath(e: Entry) -> str:
    return os.path.join(e.root, e.path)


class _Hashes:
    """Hashes files in daemon threads, in chunks (a future per file costs more in its locks
    than hashing a small file does), at most :data:`HASH_AHEAD` chunks ahead of the planning
    that takes them in order.

    A hash is read in the engine's process, where no time bound stops it: a read that hangs
    (a file of a stalled network share, one a hierarchical store keeps offline until it is
    recalled) held the sweep for ever, and an interrupt with it (the pool's shutdown and the
    interpreter's exit both waited for the hung thread). So the planning never waits without
    looking at the run's stop, and a chunk none of whose files got hashed for
    :data:`HASH_PATIENCE` seconds is given up: its files not hashed yet are read unhashed by
    workers, whose reads are bounded and can be killed. A thread that hangs stays hung, a
    daemon that holds nothing up."""

    def __init__(self, entries: Sequence[Entry], order: Sequence[int]) -> None:
        self._entries = entries
        self._order = order
        self._next = 0
        self._ahead: deque[_HashJob] = deque()
        self._jobs: queue.SimpleQueue[_HashJob | None] = queue.SimpleQueue()
        self._threads = min(HASH_THREADS, -(-len(order) // HASH_CHUNK))
        for i in range(self._threads):
            threading.Thread(target=self._serve, name=f"quarry-hash-{i}", daemon=True).start()
        self._top_up()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                for e in job.entries:
                    if job.dropped:
                        break
                    job.last = time.monotonic()
                    job.results.append(_hash_file(e))
            except BaseException as exc:  # (said where the planning takes the chunk)
                job.error = exc
            finally:
                job.done.set()

    def _top_up(self) -> None:
        order = self._order
        while len(self._ahead) < HASH_AHEAD and self._next < len(order):
            job = _HashJob([self._entries[n] for n in order[self._next : self._next + HASH_CHUNK]])
            self._next += len(job.entries)
            self._ahead.append(job)
            self._jobs.put(job)

    def ready(self) -> Iterator[list[tuple[Entry, _Hashed]]]:
        """The chunks hashed so far, in order, without waiting for the next."""
        while self._ahead and self._ahead[0].done.is_set():
            yield self._take(lambda: None)

    def rest(self, check: Callable[[], None]) -> Iterator[list[tuple[Entry, _Hashed]]]:
        """Every chunk left, in order, each as soon as it is hashed or given up; ``check``
        is called while waiting (it raises to stop)."""
        while self._ahead:
            yield self._take(check)

    def _take(self, check: Callable[[], None]) -> list[tuple[Entry, _Hashed]]:
        job = self._ahead[0]
        since = time.monotonic()
        while not job.done.wait(_HASH_POLL):
            check()
            if time.monotonic() - max(since, job.last or since) > HASH_PATIENCE:
                job.dropped = True  # (its thread stops after the file it is in, if ever)
                break
        self._ahead.popleft()
        self._top_up()
        if job.error is not None:
            raise job.error
        got = job.results[: len(job.entries)]
        return [(e, got[i] if i < len(got) else STALLED) for i, e in enumerate(job.entries)]

    def close(self) -> None:
        """Stop hashing: what is not begun is dropped, what is ends with its file."""
        for job in self._ahead:
            job.dropped = True
        self._ahead.clear()
        for _ in range(self._threads):
            self._jobs.put(None)
        self._threads = 0


class _HashJob:
    """A chunk of files to hash, and how far its thread got."""

    __slots__ = ("done", "dropped", "entries", "error", "last", "results")

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.results: list[_Hashed] = []
        self.last: float | None = None
        """When its thread began its latest file (None: not begun)."""
        self.done = threading.Event()
        self.dropped = False
        self.error: BaseException | None = None


def _hash_file(e: Entry) -> _HashResult:
    """The file's hash and the Ident it had throughout; None when it kept changing."""
    for _attempt in range(READ_ATTEMPTS):
        try:
            hashed = hash_file(e.abspath)
        except OSError as exc:
            return exc
        if hashed is not None:
            return hashed
    return None


def _same(new: Record, prior: Record | None) -> Record:
    """``prior`` itself when ``new`` equals it: an unchanged link or empty file is no change
    to tell listeners of (a warm sweep used to report every link again)."""
    return prior if prior is not None and prior == new else new


def _same_verdict(new: Record, base: Record | None) -> Record:
    """``base`` itself when an error read again gave the very same verdict for the same file.

    Errors are read again on every full sweep; keeping the earlier record when nothing but
    the read's time differs makes two sweeps of an unchanged folder byte-identical.
    """
    if base is None or new.why != Why.RETRY_ERROR or base.key != new.key:
        return new
    return base if new.evolve(ms=base.ms, why=base.why, reused=base.reused) == base else new


def _changing(e: Entry, why: str) -> Record:
    return Record(
        root=e.root,
        path=e.path,
        size=e.size,
        mtime_ns=e.mtime_ns,
        status=Status.SKIPPED,
        reason=Reason.CHANGING,
        error=f"{why}; read again next sweep",
    )


def _read_made(text_file: str) -> BinaryIO:
    """A text a worker made (in the store's ``tmp/`` or already in place), opened for reading
    with no link followed."""
    with folder_of(os.path.dirname(text_file)) as folder:
        return os.fdopen(open_regular(folder, os.path.basename(text_file)), "rb")


def _same_bytes(a: BinaryIO, b: BinaryIO, block: int = 1 << 16) -> bool:
    """Whether two open files hold the same bytes (read a block at a time, as filecmp does)."""
    while True:
        x, y = a.read(block), b.read(block)
        if x != y:
            return False
        if not x:
            return True
