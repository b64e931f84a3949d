"""The sweep: walk -> plan -> extract -> store, with progress events.

:class:`Sweeper` holds a store's writer lock and an executor (by default the local worker
pool) for its lifetime, so the watcher can run many incremental sweeps (``run(only=...)``)
through the same pipeline as a full one. Each run is a :class:`~engine.run.Run` given what it
needs in a :class:`~engine.run.RunContext`. :func:`sweep` is the one-shot form the CLI uses.

A sweeper made with ``quick=True`` (the ``sweep`` command's) first asks the stat index's
judge (:mod:`engine.quick`, which never sees the sweeper: it is given a
:class:`~engine.quick.QuickInput` and the walk) whether anything changed; it needs no record
loaded when nothing did.

Past STYLE's 500 lines: what a run leaves to its sweeper (the scope, the records gone, the
writes and their recovery on a full disk) needs the lock and the executor it holds, and both
the usual run and the quick one end in it (:meth:`Sweeper._conclude`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import (
    Callable,
    Collection,
    Container,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from engine import ahead, merge, quick
from engine.db import DB, IndexUnusable, RecordDB, key_bytes
from engine.dbindex import IndexedRecords, IndexGone, WrittenPast, roots_of, rows_of
from engine.errors import StoreCorrupt, StoreLost, UsageError
from engine.events import (
    Level,
    Listener,
    Notice,
    NoticeKind,
    RecordsChanged,
    RunKind,
    SweepFinished,
    SweepStarted,
    ignore,
)  # fmt: skip
from engine.gcpause import fewer_collections, let_go, long_lived, no_collections
from engine.index import RecordIndex, Tally
from engine.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, Limits
from engine.mimes import DETECTION
from engine.moved import last_summary, rehome
from engine.names import shown
from engine.passwords import NO_PASSWORDS, Passwords
from engine.readindex import rebuild_with
from engine.records import Key, Record, Summary
from engine.resume import BackgroundWrite, Ledger
from engine.store import JSONL, Store, default_out, holds_others, sync_fs
from engine.summary import build_summary, iso, started_ns, summary_tally, with_cluster
from engine.tools import ToolSet, discover
from engine.walk import Entry, Listing, WalkRules, is_store_folder, walk, walk_paths
from engine.words import count

if TYPE_CHECKING:  # the run's machinery: imported when a run has something to decide
    from engine.executor import Executor, ExecutorFactory
    from engine.isolate import ReadPool
    from engine.plan import Keeper
    from engine.run import Run, RunContext
    from engine.textnames import TextNames


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """How a sweep runs; every field has a command-line flag."""

    out: Path | None = None
    """Store folder (default ``<root>/.quarry``)."""
    excludes: tuple[str, ...] = ()
    """Extra gitignore-style patterns to leave out."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """Files larger than this are skipped/too_large."""
    default_excludes: bool = True
    """Leave out editor, office and OS droppings (:data:`engine.walk.DEFAULT_IGNORED_FILES`)
    and version-control folders, counted in the summary; False gives them records too."""
    rehash: bool = False
    """Hash every file even when its size and mtime match."""
    verify: bool = False
    """Hash every file and read every content with a text again; replace texts that differ."""
    forget_missing: bool = False
    """Drop the records of a root that is gone or empty (else they are kept, and said so)."""
    no_external: bool = False
    """Use built-in readers only."""
    without: tuple[str, ...] = ()
    """Act as if these tools were not installed."""
    limits: Limits = DEFAULT_LIMITS
    """Per-read bounds."""
    workers: int = 0
    """Worker processes (0: one per core)."""
    tools: ToolSet | None = None
    """A fixed tool set (tests); None discovers tools on PATH."""
    executor: ExecutorFactory | None = None
    """Makes the executor that runs the reads; None: the local worker pool (ReadPool)."""
    readers: tuple[str, ...] = ()
    """Extra readers, ``module:attribute`` of a ``READERS`` tuple (``--reader``; the tests'
    fault reader), besides the built-in ones, for this process and its workers
    (:func:`engine.readers.registry.use_extra`); empty leaves the process's readers as they
    are."""
    text_index: bool = True
    """Keep the full-text index of the texts (:mod:`engine.textindex`); False drops it."""


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What a sweep did."""

    summary: Summary
    """The summary written."""
    extracted: int = 0
    """Files read."""
    reused: int = 0
    """Files whose verdict was kept."""
    removed: int = 0
    """Records that went away."""
    errors: int = 0
    """Error records in the store after the sweep."""
    vanished: tuple[Key, ...] = field(default=())
    """Forced keys whose file no longer exists."""
    repaired: int = 0
    """Texts read again because they were missing or (verify) did not match their content."""
    interrupted: bool = False
    """The run was asked to stop; what it decided was written, the rest kept as it was."""
    machine_failures: int = 0
    """Files not read because the machine failed (disk full...); earlier records kept."""
    held_roots: tuple[str, ...] = ()
    """Roots found gone or empty whose records were kept (see ``forget_missing``)."""
    quick: bool = False
    """Nothing had changed, as the stat index showed: no record was loaded or written."""
    failed: str = ""
    """Why the store could not be written mid-run (its index failed: a full disk...), said
    as one line; the run stopped there (``interrupted``), what it decided and had not
    committed is read again by the next sweep. Empty when it could."""


@dataclass(frozen=True, slots=True)
class RunEnd:
    """A run that ended, with what its sweeper asked of it: what ``Sweeper._conclude``
    applies. The run itself says what it was told to force and whether it was full."""

    run: Run
    """The run (its flags, counts, and the events it still holds)."""
    new: dict[Key, Record]
    """The records it decided."""
    scope: tuple[Key, ...]
    """The records it answered for: those it did not decide are gone."""
    whole: bool
    """It answered for every root's every file (the stat index may be left)."""
    started: float
    """When the sweep began (wall clock)."""
    reused: int
    """Files whose verdict was kept."""
    held: tuple[str, ...] = ()
    """Roots found gone or empty whose records were kept."""
    merged: quick.MergedRun | None = None
    """Set for a full sweep its index served (the walk merged with the index, only what
    differed read): the stat index is left from the walk, and only the texts that records
    of the run no longer name are dropped (no record is loaded for either)."""


def _look_at_every(_record: Record) -> None:
    """The judge of a ``--rehash`` sweep's merge: no record is kept without its file hashed."""
    return None


class _Journaled:
    """Records handed one at a time, committed to the index a batch at a time (``journal``:
    :meth:`engine.resume.Ledger.journal`) and told to the listener as the run tells its own
    (``emit``: the dashboard's rows take them), inside their sweep as a run's are: its start
    is said (``start``, once: :meth:`begin`) before the first batch."""

    BATCH = 4096

    def __init__(
        self,
        journal: Callable[[Sequence[Record]], None],
        emit: Listener,
        start: Callable[[], None],
    ) -> None:
        self.journal, self.emit, self.start = journal, emit, start
        self.started = False
        self.held: list[Record] = []

    def add(self, record: Record) -> None:
        """Take ``record``; a full batch is journaled."""
        self.held.append(record)
        if len(self.held) >= self.BATCH:
            self.flush()

    def begin(self) -> None:
        """Say the sweep started, unless said already."""
        if not self.started:
            self.started = True
            self.start()

    def flush(self) -> None:
        """Journal what is held, and tell it."""
        if self.held:
            self.journal(self.held)
            self.begin()
            self.emit(RecordsChanged(time.time(), tuple(self.held)))
            self.held = []


def _kind_of(
    only: Mapping[str, Collection[str]] | None, force: Collection[Key], full: bool | None
) -> RunKind:
    """Why a run runs, told from :meth:`Sweeper.run`'s arguments."""
    if full or (full is None and only is None):
        return RunKind.SWEEP
    if only is None:
        return RunKind.RESCAN
    return RunKind.RETRY if force else RunKind.CHANGES


def resolve_roots(roots: Sequence[Path]) -> list[Path]:
    """Absolute roots, each once (a folder named twice, or by a link and by its own name, is
    one root: two of them read each file twice at once); a missing or non-folder root is a
    usage error."""
    out: list[Path] = []
    given: set[Path] = set()
    for root in roots:
        p = Path(root).expanduser()
        if not p.exists():
            raise UsageError(f"no such folder: {shown(str(root))}")
        if not p.is_dir():
            name = shown(str(root))
            hint = " (quarry sweeps folders: sweep the one it is in, then 'quarry show FILE')"
            raise UsageError(f"not a folder: {name}" + (hint if p.is_file() else ""))
        if not os.access(p, os.R_OK | os.X_OK):
            raise UsageError(f"cannot read folder: {shown(str(root))}")
        if (resolved := p.resolve()) not in given:
            given.add(resolved)
            out.append(resolved)
    if not out:
        raise UsageError("no folder given")
    for inner in out:  # (each file would be read twice at once, under two roots)
        # (its folders looked up, not every pair compared: `quarry sweep */` may name 10,000)
        if outer := next((o for o in inner.parents if o in given), None):
            raise UsageError(
                f"{shown(str(inner))} is inside {shown(str(outer))}, also given: name only "
                f"{shown(str(outer))} (its sweep takes in {shown(str(inner))})"
            )
    return out


def store_for(roots: Sequence[Path], options: SweepOptions) -> Store:
    """The store a sweep of ``roots`` writes."""
    if options.out is not None:
        out = Path(options.out).expanduser().resolve()
        _check_out_below(out, roots)
    elif len(roots) > 1:
        raise UsageError("several folders need --out to say where the store goes")
    else:
        out = default_out(roots[0])
    _check_no_store_swept(roots, out)
    return Store(out)


def _check_no_store_swept(roots: Sequence[Path], out: Path) -> None:
    """A root that is a store and nothing else (its own files, no document of its own), swept
    into another store: ``quarry sweep STORE`` found nothing and left a store inside the
    store, "0 files" and exit 0. Sweeping a store into itself (``--out`` the root) stays as
    it was: a folder made a store of itself."""
    for root in roots:
        if root != out and is_store_folder(root) and not holds_others(root):
            raise UsageError(
                f"{shown(str(root))} is a store (quarry's own files, no document): sweep the "
                "folder its records came from, or look at it with 'quarry ui --store "
                f"{shown(str(root))}'"
            )


def _check_out_below(out: Path, roots: Sequence[Path]) -> None:
    """A store inside a swept folder is never walked: ``--out`` naming a folder of files of
    its own there (``quarry sweep ~/docs --out ~/docs/reports``) would leave them out of
    every sweep, unsaid. A new or empty folder, a store already, or the root itself (walked
    without the store's own files) is fine."""
    inside = next((root for root in roots if out != root and root in out.parents), None)
    if inside is not None and out.is_dir() and not is_store_folder(out) and holds_others(out):
        raise UsageError(
            f"--out {shown(str(out))} is a folder of files inside {shown(str(inside))}: "
            "the walk never enters a store, so they would be left out of the sweep; "
            "name a new or empty folder, or the swept folder itself"
        )


class Sweeper:
    """Sweeps roots into one store; hold it open (``with``) for repeated incremental runs.

    ``quick``: for a sweeper that runs one full sweep (the ``sweep`` command). Its records are
    loaded only when the stat index (:mod:`engine.statindex`) cannot show that nothing
    changed, and its full sweeps write that index for the next one.

    ``served`` (with ``quick``: the ``sweep`` command's and a watching session's): when the
    stat index cannot judge, the first full sweep merges the walk with the store's index
    (:mod:`engine.merge`) rather than load every record, and the index serves the records
    from then on.

    ``once``: for a sweeper closed after one run (the ``sweep`` and ``retry`` commands): once
    the run's reads are done, an executor that takes a while to let its workers go (a Dask
    cluster's round of teardowns) begins while the run writes the store.
    """

    def __init__(
        self,
        roots: Sequence[Path],
        options: SweepOptions,
        on_event: Listener = ignore,
        *,
        quick: bool = False,
        served: bool = False,
        once: bool = False,
    ):
        self.roots = resolve_roots(roots)
        self.options = options
        if options.readers:
            from engine.readers import registry

            registry.use_extra(options.readers)
        self.on_event = on_event
        self.kind = RunKind.SWEEP
        """Why the run in flight runs (what its start and end events say)."""
        self.store = store_for(self.roots, options)
        self.rules = WalkRules(
            options.excludes, (str(self.store.out),), options.max_bytes, options.default_excludes
        )
        self.tools = options.tools if options.tools is not None else self._discover()
        self.index: RecordIndex | IndexedRecords = RecordIndex()
        self.from_index = False
        """Set by a watching session: once a run is applied, the records are served from the
        store's index and let go from memory (:mod:`engine.dbindex`)."""
        self.ledger = Ledger(self.store, self._notices_append, text=options.text_index)
        """The store's index (:mod:`engine.db`): runs commit to it as they go."""
        self.ledger.say_now = lambda notice: self.on_event(notice)  # (before the summary)
        self.write_behind_s: float | None = None
        """Set by a watching session: a watch batch leaves ``extract.jsonl`` behind the index
        (see :meth:`write_behind`); None writes it with every run."""
        self._behind_since: float | None = None
        """When the first run not yet in ``extract.jsonl`` ended (monotonic)."""
        self._drop_later: set[str] = set()
        """Texts the runs behind may have left unnamed: ``extract.jsonl`` still names them."""
        self._background: BackgroundWrite | None = None
        """The watcher's write of ``extract.jsonl`` running in a thread, if one is
        (:meth:`start_write_behind`), until :meth:`finish_write_behind` concludes it."""
        self._jsonl_written = ""
        """When this sweeper last wrote ``extract.jsonl`` (ISO-8601), for the summary."""
        self._summary: Summary | None = None
        """The last summary written."""
        self._had: tuple[frozenset[str], int] = (frozenset(), DETECTION)
        """The readers of the store's last sweep (none: no summary, or one that does not say),
        and how it told kinds apart."""
        self._came: bool | None = None
        """Whether readers came, or kinds are told apart anew, since then."""
        self.lost_behind = False
        """A failed write took the store back to ``extract.jsonl``, which was behind: what the
        runs since its last write decided must be found again (a rescan)."""
        self._resumed: Container[Key] = frozenset()
        """Files a killed sweep decided (from the index): the next run keeps their verdicts."""
        self._resuming: int | None = None
        """A killed sweep of a store that had no record is resumed with its records served by
        the index (none loaded): the index's counter when the run resuming it began, past
        which every record that run decides is written (:meth:`_gone_since`)."""
        self._serves_resume = False
        """The index serves the records a killed sweep decided (nothing was loaded)."""
        self._lean_merge: tuple[int, Tally] | None = None
        """A killed sweep resumed by a merge and a lean run: the index's counter when the run
        began (the records of its files not written since are gone) and the counts of the
        records the merge kept."""
        self._stack = contextlib.ExitStack()
        self._executor: Executor | None = None
        self._said_cap = False  # (that fewer workers run than asked: once a session)
        self.stop = threading.Event()
        """Set it (from a signal handler or another thread) to end the run in flight early;
        what it decided is written. The caller clears it."""
        self._prev_started_ns = 0
        self._killed_before = False
        self._failed = ""
        """Why the run in flight could not write the store (see ``SweepResult.failed``)."""
        self._repair = False
        """The store held lines that are not records: the next write leaves them out."""
        self._notices: list[Notice] = []
        """Said once the first run has started (a listener may not be ready before)."""
        self.quick = quick
        self.served = served
        self.once = once
        self._loaded = False
        self._walked: list[Listing] | None = None
        """The walk a quick sweep made before finding a change: the run that follows uses it."""
        self.walk_started = 0.0
        """When the last walk of every root started: a sweep's start is never later (it is
        the next sweep's racy reference, and the walk's stats are what it trusts)."""
        self._warmed = False
        self._unloaded: _Unloaded | None = None
        """What a quick sweep that found the folder unchanged knows without a record."""
        self.left_out: dict[str, int] = {}
        """What the default exclusions left out of the last walk of every root, per rule (for
        the summary; a watch batch walks only what changed and leaves it as it was)."""
        self._others_counted: dict[str, int] | None = None
        """The records of the folders the store holds but this sweeper does not sweep."""

    def _notices_append(self, notice: Notice) -> None:
        self._notices.append(notice)

    @property
    def records(self) -> Mapping[Key, Record]:
        """The store's records by (root, path); change them only through a run."""
        return self.index.records

    def serve_from_index(self) -> None:
        """From now on, hold no record in memory between runs: each is read from the index
        when a run asks (a watching session's batches touch a few files of many)."""
        self.from_index = True
        self._lighten()

    def serve_targeted(self) -> bool:
        """Serve this sweeper's runs from the index from the start, no record loaded, when
        the index agrees with ``extract.jsonl`` and with the summary's counts: the store's
        tally is then the summary's (``quarry retry`` of one file loaded every record, twice:
        680 MB at 200,000 records). Whether it does; else the first run loads them."""
        if self._loaded or self.store.is_dirty() or not self.ledger.in_step():
            return False
        try:
            summary = self.store.load_summary()
        except StoreCorrupt:
            return False
        if summary is None:
            return False
        tally = summary_tally(summary, self.tools)
        if tally is None or not self._counts_agree(tally):
            return False
        self._unloaded = _Unloaded(tally, started_ns(summary))
        self._attach_served()
        return self._loaded

    def _counts_agree(self, tally: Tally) -> bool:
        """Whether the index's counts per status, reason and quality are ``tally``'s."""
        try:
            db = RecordDB.open_reader(self.store.out / DB)
        except IndexUnusable:
            return False
        try:
            counts = db.counts()
        except sqlite3.Error:
            return False
        finally:
            db.close()
        statuses: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        quality: Counter[str] = Counter()
        for (status, reason, verdict), n in counts.items():
            statuses[status] += n
            reasons[f"{status}/{reason}"] += n if reason else 0
            quality[verdict] += n if verdict else 0
        verdicts = {v: n for v, n in tally.quality.items() if n}
        return (
            +statuses == +tally.counts
            and +reasons == +tally.reasons
            and {v: quality[v] for v in verdicts} == verdicts
            and sum(statuses.values()) == tally.files
        )

    def keys_under(self, root: str, rel: str) -> list[Key]:
        """The keys of the store's records of ``root`` at ``rel`` or under it ("": all)."""
        return self.index.keys_under(root, [rel])

    def _lighten(self) -> None:
        """Let the records in memory go, the index answering for them, when it can."""
        if not self.from_index or not isinstance(self.index, RecordIndex):
            return
        if not self._loaded:
            self._attach_served()
            return
        if not self._index_serves():
            return
        held = self.index.tally.files
        self.index = IndexedRecords(lambda: self.ledger.db, self.index.tally, self.ledger.failed)
        let_go(held)

    def _serve_first_run(self) -> bool:
        """A run that began with no record, in a sweeper that lets its records go after it
        (``once``, or ``from_index``): its records are served from the index it committed
        them to as it went (:mod:`engine.dbindex`) before they are applied, so the records
        in memory are never indexed by content, size and text (a third of a cold sweep's
        peak: 110 MB of 350 at 200,000 files, ``tests/bench/bench_sweep.py``). Whether it
        did so."""
        if not self._serves_none_held():
            return False
        self.index = IndexedRecords(lambda: self.ledger.db, self.index.tally, self.ledger.failed)
        self.index.records.whole = True  # none before the run: no query a key to say so
        return True

    def _serves_none_held(self) -> bool:
        """This sweeper lets its records go after a run (``once``, ``from_index``), holds
        none now, and its index can take over."""
        index = self.index
        return (
            (self.once or self.from_index)
            and isinstance(index, RecordIndex)
            and not index.records
            and self._index_serves()
        )

    def _index_serves(self) -> bool:
        """Whether the index can answer for the records: open, still the store's, and no
        unreadable line of ``extract.jsonl`` waiting to be written out of the store."""
        return self.ledger.db is not None and not self._repair and not self.ledger.replaced()

    def _lean_unserved(self, run: Run) -> None:
        """A lean run whose index cannot serve its records now: replaced on disk (the file
        this sweeper still has open holds them: read back, and the index rebuilt from them at
        the run's end), or failed (what it had not committed went with it: the run stopped,
        and ends as an interrupted one; its files without a record are read by the next
        sweep, the texts no record names collected then)."""
        db = self.ledger.db
        if db is not None:
            with contextlib.suppress(sqlite3.Error, IndexGone):
                served = IndexedRecords(lambda: db, Tally())
                self.index = RecordIndex(list(served.records.values()))
                return
        run.interrupted = run.index_lost = True
        self._killed_before = True
        # (no failure: deleted or replaced on disk, and the file still open unreadable)
        lost = self.ledger.lost() if self.ledger.failure is not None else None
        why = (lost.strerror or str(lost)) if lost else "its index was deleted or replaced"
        self._failed = (
            f"cannot write the store {shown(str(self.store.out))}: {why}; the files this "
            "sweep decided and had not kept are read again by the next"
        )
        if isinstance(self.index, IndexedRecords):  # (a store that had records: as on disk)
            with contextlib.suppress(OSError, StoreCorrupt):
                self.reload()
        self.on_event(
            Notice(
                time.time(),
                NoticeKind.INTERRUPTED,
                f"the store's index failed during the sweep: of {count(run.decided, 'file')} "
                "decided, those it had not kept are read again by the next sweep",
                Level.WARNING,
            )
        )

    def _attach_served(self) -> None:
        """Take over a store that a quick sweep found as it lists the folder, served by its
        index from the start: no record is loaded (a watcher started again on an unchanged
        share of a million files holds none). Left to the first run's load when the index
        cannot answer for every record."""
        unloaded = self._unloaded
        if unloaded is None or not self.ledger.attach_in_step():
            return
        self._stack.enter_context(self.ledger)
        self._loaded = True
        self._prev_started_ns = unloaded.started_ns
        self.index = IndexedRecords(lambda: self.ledger.db, unloaded.tally, self.ledger.failed)

    def _hold_if_unserved(self) -> None:
        """Back to records in memory when the index serving them failed or was replaced on
        disk: before a run, and before the ledger rebuilds the index from the records (the
        one still open is about to be closed, a failed one is already gone)."""
        if isinstance(self.index, IndexedRecords) and (
            not self.index.usable() or self.ledger.replaced()
        ):
            self._heavy()

    def _heavy(self) -> None:
        """Back to the records in memory when the index that served them failed or was
        replaced: read from it while it still can be (a file deleted under an open
        connection still reads), else from ``extract.jsonl`` (the runs it was behind are then
        found again by a rescan)."""
        index = self.index
        if not isinstance(index, IndexedRecords):
            return
        records: list[Record] | None = None
        if index.usable():
            with contextlib.suppress(IndexGone):
                records = list(index.records.values())
        if records is None:
            records = self.store.load_records()
            if self._behind_since is not None:
                self.lost_behind = True
                self._behind_since = None
        self.index = RecordIndex(records)

    def _discover(self) -> ToolSet:
        return discover(no_external=self.options.no_external, without=self.options.without)

    def __enter__(self) -> Sweeper:
        if not self.store.exists():
            self._warm_pool()  # before the lock: it overlaps the store's folders being made
        self._stack.enter_context(self.store.writer())
        try:
            # (the summary as the last sweep left it, read once: before this one writes)
            summary = last_summary(self.store)
            if moved := rehome(self.store, summary):
                self._notices.append(moved)
            if summary is not None:
                self._had = (frozenset(summary.readers), summary.detection)
            if not self.quick:
                self._load()
        except BaseException:
            self._stack.close()
            raise
        return self

    def _load(self) -> None:
        """Take over the store as it is: what cannot be used is named, and repaired by the
        first run (which rewrites the store without it)."""
        self._loaded = True
        self._killed_before = self.store.is_dirty()
        with no_collections():
            loaded = self.store.load()
            self.index = RecordIndex(loaded.records)
            # A sweeper that lets its records go after a run resumes the first sweep of a
            # store from the index, record by record as its run asks (ten million files
            # decided before a kill are never all in memory); any other loads them.
            served = (self.once or self.from_index) and not loaded.bad
            resumed = self.ledger.attach(loaded.records, served=served)
            if resumed is not None:
                if resumed.records is None:
                    self.index = IndexedRecords(lambda: self.ledger.db, Tally(), self.ledger.failed)
                    self._serves_resume = True
                    self._resumed = self.index.records  # (it decided every record there is)
                else:
                    self.index = RecordIndex(resumed.records)
                    self._resumed = resumed.keys
                self._killed_before = True  # its texts no record names are collected
        self._stack.enter_context(self.ledger)
        self._stack.enter_context(long_lived())  # the records live as long as the sweeper
        if loaded.bad:
            self._repair = True
            self._notices.append(
                Notice(
                    time.time(),
                    NoticeKind.STORE_REPAIR,
                    f"{loaded.left_out()} (their files are read again)",
                    Level.WARNING,
                )
            )
        try:
            summary = self.store.load_summary()
        except StoreCorrupt as exc:
            summary = None
            self._notices.append(
                Notice(
                    time.time(),
                    NoticeKind.STORE_REPAIR,
                    f"{exc}: rewritten by this sweep",
                    Level.WARNING,
                )
            )
        if summary is not None:
            self._prev_started_ns = started_ns(summary)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Write ``extract.jsonl`` if it is behind, stop the workers and release the store's
        lock (released even if stopping fails; a write that fails leaves the index ahead,
        and the next sweep resumes from it)."""
        try:
            with contextlib.suppress(OSError, StoreLost):  # (said by the watcher already)
                self.write_behind()
            self.drop_executor()
        finally:
            self._stack.close()

    @property
    def behind(self) -> float | None:
        """Since when (monotonic) ``extract.jsonl`` is behind the index; None when current."""
        return self._behind_since

    def write_behind(self) -> bool:
        """Write ``extract.jsonl`` from the records if watch batches left it behind, then
        remove the texts those batches left unnamed; whether it wrote. Raises OSError when
        the write fails (the file stays behind, the index holds every change).

        A write running in the background is waited for and concluded first (closing
        writes synchronously): this writes only if the file is still behind (a failed one
        included: this write tries again, and says how it went)."""
        with contextlib.suppress(OSError):
            self.finish_write_behind()
        if self._behind_since is None:
            return False
        self._write_jsonl()
        self._caught_up()
        return True

    def start_write_behind(self, done: Callable[[], None]) -> bool:
        """Start writing ``extract.jsonl`` in a thread, from a snapshot of the index, if
        watch batches left it behind (the watcher's batches go on meanwhile; ``done`` is
        called from the thread when it ends); whether one runs now. False when the file is
        current, or cannot be written so (no index serving the records, a store to repair):
        the caller writes it with :meth:`write_behind`."""
        if self._background is not None:
            return True
        if self._behind_since is None or self._repair or not self.store.exists():
            return False
        if not isinstance(self.index, IndexedRecords) or not self.index.usable():
            return False
        self._background = self.ledger.write_in_background(self._drop_later, done)
        return self._background is not None

    def finish_write_behind(self) -> bool:
        """Conclude the background write once it ended (waited for if not yet), on the
        thread that runs the batches (never during one); whether ``extract.jsonl`` is now
        in step with the index. Raises the write's OSError (the file stays behind, the
        index holds every change; the next write tries again).

        No batch committed since its snapshot: concluded as a synchronous write is.
        Batches did: the index takes the new file as its source and stays ahead of it by
        them, and only the texts no record named in the snapshot, nor names now, go."""
        write, self._background = self._background, None
        if write is None:
            return self._behind_since is None
        write.wait()
        if write.error is not None:
            return self._failed_background(write.error)
        db = self.ledger.db
        if db is None or db is not write.writer or self.ledger.replaced():
            # the index failed or was replaced meanwhile: it holds no claim on the new file,
            # and a next write (from its records) brings the two in step again
            self._behind_since = self._behind_since or time.monotonic()
            return False
        self._jsonl_written = iso(time.time())
        if db.seq() == write.seq:
            self._caught_up()
            return True
        self._written_upto(write)
        return False

    def _failed_background(self, error: BaseException) -> bool:
        """A background write that failed: its OSError raised as a synchronous write's; a
        failed read of the snapshot written synchronously instead (the index's own failure
        is then met and handled as it always is)."""
        if isinstance(error, sqlite3.Error):
            return self.write_behind()
        raise error

    def _written_upto(self, write: BackgroundWrite) -> None:
        """``extract.jsonl`` holds the records as of ``write``'s snapshot, batches came
        after it: the index stays ahead by them, the file behind since the snapshot. A text
        no record named in the snapshot, nor names now, goes (the new file does not name
        it); one a later batch left unnamed stays for the next write (this file names it)."""
        self.ledger.written_upto(write.seq)
        self._drop_unnamed(write.unnamed)
        self._drop_later -= write.unnamed
        self._behind_since = write.started
        self._hold_if_unserved()
        if self._summary is not None:  # when it was last written
            self.store.write_summary(self._with_jsonl_state(self._summary))

    def _discard_background(self) -> None:
        """Give up a background write before the file is written here, synchronously, with
        every record (a sweep's end, a failed write's recovery): the older snapshot must not
        replace it later. Its texts stay listed for the write that follows."""
        write, self._background = self._background, None
        if write is not None:
            write.abandon()

    def _take_freed(self) -> None:
        """The texts kept records named until the history let them go join those the next
        write of ``extract.jsonl`` lets go: a watch never garbage-collects the whole store,
        so without this every text a file changing all day had (a log: a new text each
        batch) stayed until a full sweep. Marked dirty first: they are out of the index's
        list now, and a watch killed before the write leaves them to the next sweep's
        collection."""
        freed = self.ledger.freed_texts()
        if not freed:
            return
        self.store.mark_dirty()
        self._drop_later.update(freed)
        self.ledger.forget_freed(freed)

    def _drop_unnamed(self, shas: Iterable[str]) -> None:
        """Remove the texts of ``shas`` that no record and no kept record names."""
        for sha in shas:
            if not self.index.has_text_refs(sha) and not self.ledger.is_kept(sha):
                self.store.drop_text(sha)

    def _caught_up(self) -> None:
        """``extract.jsonl`` was written with every record the index holds: the texts the
        batches behind left unnamed go, and the index is in step with the file."""
        self._drop_unnamed(self._drop_later)
        self._drop_later = set()
        if not self._killed_before:  # every text the batches added is named by the file now
            self.store.mark_clean()
        self._behind_since = None
        self._jsonl_written = iso(time.time())
        self._hold_if_unserved()
        self.ledger.concluded(self.records.values(), written=True)
        if self._summary is not None:  # it said the file was behind: no longer
            self.store.write_summary(self._with_jsonl_state(self._summary))

    def _write_jsonl(self, before_write: Callable[[], None] | None = None) -> None:
        """Write ``extract.jsonl``: streamed from the index, which holds every record (each run
        journals its decisions there), so that neither the file nor every record's line is
        ever in memory; from the records held when there is no index."""
        # (records the index serves are its own: nothing to count them against)
        held = None if isinstance(self.index, IndexedRecords) else len(self.records)
        if not self.ledger.write_jsonl(held, before_write):
            if isinstance(self.index, IndexedRecords) and not self.index.usable():
                # The index served the records and failed (a full disk): what the run decided
                # went with it. The write fails, and the store goes back to its file.
                raise self.ledger.lost()
            self.store.write_records(self.records.values(), before_write=before_write)

    def _with_jsonl_state(self, summary: Summary) -> Summary:
        """``summary`` saying how current ``extract.jsonl`` is (kept for :meth:`write_behind`)."""
        self._summary = replace(
            summary, jsonl_current=self._behind_since is None, jsonl_written=self._jsonl_written
        )
        return self._summary

    def reload(self) -> None:
        """Take the records on disk again, forgetting what failed runs applied in memory only.

        A run whose store write failed (a read-only or full disk) leaves the index ahead of
        ``extract.jsonl``; from the disk's records the next run finds those changes again.
        """
        self.index = RecordIndex(self.store.load_records())

    def rediscover_tools(self) -> ToolSet:
        """Look up the tools on PATH again and use them."""
        if self.options.tools is None:
            self.tools = self._discover()
        return self.tools

    @property
    def executor(self) -> Executor:
        """The executor of reads, made on first use and made again after it broke."""
        if self._executor is None:
            from engine.executor import Announcing
            from engine.isolate import ReadPool  # multiprocessing: only when reads need a pool

            make = self.options.executor or ReadPool
            self._executor = made = make(self.options.limits, self.options.workers)
            if isinstance(made, Announcing):
                made.listen(self.on_event)
            if isinstance(made, ReadPool) and made.workers < made.asked and not self._said_cap:
                self._said_cap = True
                said = _capped(made, bool(self.options.workers))  # (said as a run starts)
                self._notices.append(Notice(time.time(), NoticeKind.WORKERS, said, Level.WARNING))
        return self._executor

    def worker_tools(self) -> dict[str, ToolSet]:
        """Each remote worker's tools (worker -> tools); empty while reads run locally."""
        from engine.executor import Distributed

        ex = self._executor
        return dict(ex.worker_tools()) if isinstance(ex, Distributed) else {}

    def _with_cluster(self, summary: Summary) -> Summary:
        """The summary saying how the tools of a cluster's workers differ (a Dask sweep)."""
        from engine.executor import Distributed, Routing

        ex = self._executor
        if not isinstance(ex, Distributed):
            return summary
        routed = ex.routed() if isinstance(ex, Routing) else {}
        return with_cluster(summary, ex.worker_tools(), routed)

    def _release_executor(self) -> None:
        """No run follows: let the executor begin letting its workers go (in the background,
        while the store is written; :meth:`drop_executor` waits for it). A Dask sweep of 818
        files spent 0.2-0.45 s in the close that came after the write."""
        from engine.executor import Releasing

        ex = self._executor
        if isinstance(ex, Releasing):
            ex.release()

    def drop_executor(self) -> None:
        """Close the executor (a broken one, or at the end); the next run makes a new one."""
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def run_context(self, rehash: bool = False, passwords: Passwords = NO_PASSWORDS) -> RunContext:
        """What the next run is given: records, store, executor, tools, options, listener.

        ``rehash``: this run hashes every file, whatever ``--rehash`` says. ``passwords``:
        what its reads may try on encrypted files.
        """
        from engine.run import RunContext, RunOptions

        o = self.options
        opts = RunOptions(
            o.limits,
            rehash or o.rehash,
            self._prev_started_ns,
            o.verify,
            passwords=passwords,
            resumed=self._resumed,
            unknown_again=self._readers_came(),
        )
        return RunContext(
            self.index,
            self.store,
            self.executor,
            self.tools,
            opts,
            self.on_event,
            self.stop.is_set,
            self.ledger.journal,
            self.ledger.set_aside,
            lambda: self.ledger.db is not None,
            self.ledger.sent_text,
        )

    # -- one run --------------------------------------------------------------------------

    def run(
        self,
        only: Mapping[str, Collection[str]] | None = None,
        force: Collection[Key] = (),
        full: bool | None = None,
        rehash: bool = False,
        passwords: Passwords = NO_PASSWORDS,
        kind: RunKind | None = None,
    ) -> SweepResult:
        """Sweep everything, or just the paths in ``only`` (root -> relative paths).

        ``rehash``: hash every file of this run whatever the stat cache says (the watcher's
        batches: an event named these paths, so their size and mtime prove nothing).
        ``passwords``: tried on the encrypted files this run reads (an operator's retry).
        ``kind``: why it runs, as its events say; None: told from the rest (a full sweep, a
        rescan of every root, a retry of the ``force`` keys, else the watcher's changes).
        """
        self.kind = kind or _kind_of(only, force, full)
        self._hold_if_unserved()
        with fewer_collections():
            if not self._loaded:
                whole = only is None and not force and full is not False and not rehash
                # else the load repairs or resumes it
                fast = whole and (self.ledger.in_step() or self._rebuilt_from_file())
                done = self._quick() if fast else None
                if done is None and fast and self.served:
                    done = self._served()
                elif done is None and whole and self.served and not fast:
                    done = self._served(resume=True)  # (a killed sweep's index, if it can)
                if done is not None:
                    return done
                self._load()
            result = self._run(only, force, full, rehash, passwords)
        if only is None and isinstance(self.index, IndexedRecords):
            let_go(self.index.tally.files)  # a rescan read every record, and let them go
        return result

    def _rebuilt_from_file(self) -> bool:
        """The index built again from ``extract.jsonl`` a block at a time, when it does not
        agree with the file and no sweep was killed (:meth:`engine.resume.Ledger.rebuild`):
        the sweep its index then serves holds no record. Whether it was."""
        return not self.store.is_dirty() and rebuild_with(self.store, self.ledger.rebuild)

    def _quick_input(self) -> quick.QuickInput:
        o = self.options
        return quick.QuickInput(self.store, tuple(self.roots), self.tools, o.rehash, o.verify)

    def _quick(self) -> SweepResult | None:
        """The full sweep as the stat index judges it, with no record loaded; None when it
        cannot judge (the walk it may have made is kept for the usual run)."""
        started = time.time()
        ready = quick.look(self._quick_input())
        if ready is None:
            return None
        listings = self.walk_all()
        judged = None if self.stop.is_set() else ready.judge(listings)
        if judged is None:
            return None
        started = min(started, self.walk_started)  # a walk made ahead began before this sweep
        roots = tuple(map(str, self.roots))
        self.on_event(SweepStarted(started, roots, judged.files, judged.total, True, self.kind))
        extracted = 0
        if judged.retry:
            run, new = self._read_again(judged.retry, listings, ready.prev_started_ns)
            extracted = run.extracted
            if not ready.kept(judged.retry, new, run.finished_whole and not run.added_texts):
                self.on_event(quick.progress(listings))
                self._load()  # errors read again to other verdicts: applied as usual
                self._walked = None
                self._say_notices()
                ended = RunEnd(run, new, tuple(judged.retry), True, started, judged.reused)
                return self._conclude(ended)
            self.store.mark_clean()  # nothing was added: no text can lack its record
        done = ready.finish(started, self.left_out, self._others())
        self._unloaded = _Unloaded(ready.index.tally(), int(started * 1e9))
        self.on_event(quick.progress(listings))
        self.on_event(
            SweepFinished(time.time(), done.summary, extracted, judged.reused, True, self.kind)
        )
        self._walked = None
        return SweepResult(done.summary, extracted, judged.reused, errors=done.errors, quick=True)

    def _served(self, resume: bool = False) -> SweepResult | None:
        """The full sweep of a watching session's store served by its index from the start
        (:mod:`engine.merge`): the walk merged with the index, and a run of only the files
        that differ. None when the index cannot serve it (the records are loaded as usual).

        ``resume``: the store's sweep was killed after it had records (its index holds
        them, and the killed sweep's decisions past them): resumed the same way, the killed
        sweep's rows trusted from its start and its errors kept, so that neither the records
        nor the files it decided are read again."""
        from engine.run import Run

        if self.options.verify:
            return None  # every text checked: the run remembers each read for its copies
        resuming = None
        if resume:
            resuming = self.ledger.attach_resumed()
            if resuming is None:
                return None
        elif self.store.is_dirty() or not self.ledger.attach_in_step():
            return None
        db = self.ledger.db
        assert db is not None
        listings: list[Listing] = []
        try:
            summary = self.store.load_summary()
            prev_ns = started_ns(summary) if summary is not None else 0
            started = time.time()
            listings, self._walked = self._walked or self._walk(), None
            started = min(started, self.walk_started)
            held = self._held_roots_served(listings, db)
            walked = {listing.root for listing in listings}
            texts, marks = self._merge_start(listings, started, True)
            keeper = self._keeper
            past = None if resuming is None else resuming.finished
            if resuming is None:
                self.ledger.sweep_begins(started, sum(map(len, listings)))
            big = len(db) > merge.HOLD_AT_MOST  # (never every record held: a lean run)
            judges: tuple[merge.Judge, merge.Judge | None] = (
                keeper(prev_ns),
                None if resuming is None else keeper(resuming.began, its_own=True),
            )
            if self.options.rehash:  # (every file hashed: no row is kept unseen)
                judges = (_look_at_every, None if resuming is None else _look_at_every)
            merged = merge.merge(
                listings,
                lambda root: rows_of(db, root, past),
                judges[0],
                texts[1],
                held=held,
                others=[r for r in roots_of(db) if r not in walked],
                mark=marks.add,
                resumed=judges[1],
                give_up=resuming is None and not big,  # (else a run holding none of them)
            )
            marks.flush()
        except (StoreCorrupt, merge.OutOfOrder, merge.MostDiffer, sqlite3.Error, OSError):
            self.ledger.close()  # the usual load opens it again
            self._walked = listings or None  # (and the run takes this walk)
            return None
        self._stack.enter_context(self.ledger)
        self._loaded = True
        self._prev_started_ns = prev_ns
        self.index = IndexedRecords(lambda: self.ledger.db, merged.tally, self.ledger.failed)
        if resuming is not None:
            self.ledger.say_resuming(resuming.decided)
            self._killed_before = True  # its texts no record names are collected
            # (an error it read whose file the run hashes again is not read again either)
            self._resumed = WrittenPast(lambda: self.ledger.db, resuming.finished)
        # Most files to look at (the first sweep after a cold one marks every record reused):
        # one pass reads every record (a query a file costs more), and as they are all read,
        # the stat index is left for the next start, as a usual full sweep leaves it.
        whole = sum(map(len, merged.only.values())) > merged.tally.files * merge.READ_ALL_ABOVE
        whole = whole and resuming is None
        # A killed sweep is resumed by a lean run (:attr:`Run.lean`), and so is a big store
        # whose files mostly changed: it asks the index for each file's record, writes each
        # one it decides and holds none (what it asks is not cached either); the store's
        # counts are the kept records' and the run's
        lean = resuming is not None or (whole and big)
        if whole and not lean:
            self.index.records.read_all()
        elif lean:
            kept = Tally()
            kept.take(merged.tally)
            kept.take(merged.looked, -1)
            self._lean_merge = (db.seq(), kept)
            self.index.records.keep = False
        if resuming is not None:
            # as a resumed first sweep's: a file whose own record cannot stand is read as a
            # cold sweep reads it, none of them held as a possible copy's source
            self.index.cold = True
        marks.begin()  # (said already if the merge flagged records)
        self._say_notices()
        entries = [e for ls in listings for e in ls.pick(set(merged.only.get(ls.root, ())))]
        scope = tuple((root, path) for root, paths in merged.only.items() for path in paths)
        run = Run(self.run_context(), entries, set(), True, texts_seen=texts, lean=lean)
        new = run.execute()
        self.on_event(quick.progress(listings))
        reused = merged.kept + run.reused
        served = quick.MergedRun(listings, merged.only, new, texts[0], merged.marked)
        ended = RunEnd(run, new, scope, whole, started, reused, tuple(held), served)
        done = self._conclude(ended)
        let_go(merged.files)  # the walk, the texts' names and what the run read
        return done

    def _held_roots_served(self, listings: list[Listing], db: RecordDB | None) -> dict[str, int]:
        """:meth:`_held_roots` for a store its index serves: a root the walk found empty
        whose records are kept."""
        if self.options.forget_missing or db is None:
            return {}
        counts: dict[str, int] = {}
        for listing in listings:
            if not listing.paths:
                (n,) = db.con.execute(
                    "SELECT count(*) FROM records WHERE root = ?", (key_bytes(listing.root),)
                ).fetchone()
                if n:
                    counts[listing.root] = n
        self._say_held(counts)
        return counts

    def _read_again(
        self, retry: Mapping[Key, Record], listings: list[Listing], prev_started_ns: int
    ) -> tuple[Run, dict[Key, Record]]:
        """Read the files of the ``retry`` records as the usual run would (its rules decide),
        with only those records in view."""
        from engine.run import Run, RunContext, RunOptions

        view = RecordIndex(retry.values())
        opts = RunOptions(self.options.limits, False, prev_started_ns, False)
        ctx = RunContext(
            view, self.store, self.executor, self.tools, opts, self.on_event, self.stop.is_set
        )
        wanted = [listing.pick({p for r, p in retry if r == listing.root}) for listing in listings]
        run = Run(ctx, [e for entries in wanted for e in entries], set(), True)
        new = run.execute()
        if run.executor_failed:
            self.drop_executor()
        return run, new

    def _warm_pool(self) -> None:
        """Start the executor's slow part now, in the background (once per sweeper): the local
        pool's forkserver, a Dask executor's cluster.

        Asked when the store is new (from ``__enter__``, before the lock) or holds no record:
        every file will be read, and the server's imports (~0.2 s) then overlap the lock, the
        store's folders, the walk and the plan instead of delaying the first read.
        """
        if self._warmed:
            return
        self._warmed = True
        from engine.executor import Warming

        pool = self.executor
        if isinstance(pool, Warming):
            pool.warm()  # a Dask executor: the cluster is reached (or started) meanwhile

    def walk_all(self) -> list[Listing]:
        """Walk every root (a listing each, in the roots' order); the run that follows uses
        this walk rather than walking again."""
        self._walked = self._walk()
        return self._walked

    def _walk(self) -> list[Listing]:
        """Every root's listing: the one the ``quarry`` script's child made ahead
        (:mod:`engine.ahead`) when it walked these very roots with these very rules, else a
        walk now."""
        taken = ahead.take([str(r) for r in self.roots], self.rules)
        if taken is not None:
            listings, self.walk_started = taken
        else:
            self.walk_started = time.time()
            listings = [walk(root, self.rules) for root in self.roots]
        left: dict[str, int] = {}
        for listing in listings:
            for rule, n in listing.left_out.items():
                left[rule] = left.get(rule, 0) + n
        self.left_out = dict(sorted(left.items()))
        return listings

    def _say_notices(self) -> None:
        """Tell the listener what the store's load found (once a run has started)."""
        for notice in self._notices:
            self.on_event(notice)
        self._notices = []

    def _run(
        self,
        only: Mapping[str, Collection[str]] | None,
        force: Collection[Key],
        full: bool | None,
        rehash: bool,
        passwords: Passwords,
    ) -> SweepResult:
        from engine.executor import Distributed
        from engine.run import Run

        full = only is None if full is None else full
        if only is None and not full and not force and not rehash and not passwords:
            done = self._rescan_served()
            if done is not None:
                return done
        if passwords and isinstance(self.executor, Distributed):
            # a Dask task crosses the network (and the scheduler's logs) in the clear
            raise UsageError(
                "passwords are given only to this machine's own workers, not to a Dask "
                "cluster: retry the encrypted files with --executor local"
            )
        started = time.time()
        if not self.index.records:
            self._warm_pool()
        entries = self._entries(only)
        if only is None:  # (a walk kept from the quick sweep, or made ahead, came first)
            started = min(started, self.walk_started)
            # (what a merge resuming it, if killed, trusts)
            self.ledger.sweep_begins(started, len(entries))
        lean = self._lean(only, force)
        resuming = lean and self._resumes_served()
        if self._serves_resume and not resuming:
            self._hold_resumed()  # (a retry, --verify: a run that is not lean holds them)
        if only is None and isinstance(self.index, IndexedRecords) and not resuming:
            self.index.records.read_all()  # (a rescan asks for every record)
        held = self._held_roots(entries) if only is None else {}
        scope = [] if resuming else [k for k in self._scope(only) if k[0] not in held]
        if resuming:
            self._begin_resume()
        self.on_event(
            SweepStarted(
                started,
                tuple(map(str, self.roots)),
                len(entries),
                sum(e.size for e in entries),
                full,
                self.kind,
            )
        )
        self._say_notices()
        run = Run(self.run_context(rehash, passwords), entries, set(force), full, lean=lean)
        new = run.execute()
        return self._conclude(
            RunEnd(run, new, tuple(scope), only is None, started, run.reused, tuple(held))
        )

    def _rescan_served(self) -> SweepResult | None:
        """A watching session's rescan (every root walked; not a full sweep: an error keeps
        its verdict) of records its index serves: the walk merged with the index
        (:mod:`engine.merge`), and a run of only the files that differ, as a served full
        sweep is. None when the index cannot serve it (every record is read, as before): a
        rescan of a million files held them all, every five minutes, where it now holds the
        walk and the files that changed."""
        from engine.run import Run

        db = self.ledger.db
        if (
            db is None
            or not isinstance(self.index, IndexedRecords)
            or not self.index.usable()
            or not self._index_serves()
            or self._serves_resume
            or self.options.verify
            or self.options.rehash
        ):
            return None
        started = time.time()
        listings, self._walked = self._walked or self._walk(), None
        started = min(started, self.walk_started)
        self.ledger.sweep_begins(started, sum(map(len, listings)))
        texts, marks = self._merge_start(listings, started, False)
        keeper = self._keeper(self._prev_started_ns, its_own=True)  # (its errors kept)
        held = self._held_roots_served(listings, db)
        walked = {listing.root for listing in listings}
        try:
            merged = merge.merge(
                listings,
                lambda root: rows_of(db, root),
                keeper,
                texts[1],
                held=held,
                others=[r for r in roots_of(db) if r not in walked],
                mark=marks.add,
                give_up=False,
            )
            marks.flush()
        except (StoreCorrupt, merge.OutOfOrder, sqlite3.Error, OSError):
            self._walked = listings  # (and the usual rescan takes this walk)
            if marks.started:  # (records flagged reused before it stopped: counted again)
                self._recount()
            return None
        self.index.tally = merged.tally  # (the records flagged reused counted so)
        marks.begin()
        self._say_notices()
        entries = [e for ls in listings for e in ls.pick(set(merged.only.get(ls.root, ())))]
        scope = tuple((root, path) for root, paths in merged.only.items() for path in paths)
        run = Run(self.run_context(), entries, set(), False, texts_seen=texts)
        new = run.execute()
        reused = merged.kept + run.reused
        served = quick.MergedRun(listings, merged.only, new, texts[0], merged.marked)
        ended = RunEnd(run, new, scope, True, started, reused, tuple(held), served)
        done = self._conclude(ended)
        let_go(merged.files)
        return done

    def _merge_start(
        self, listings: list[Listing], started: float, full: bool
    ) -> tuple[tuple[list[int], TextNames], _Journaled]:
        """What a merge of the walk ``listings`` with the index starts from: the text
        folders' times, then the texts listed after them (the run and the stat index are
        given both), and where the records it flags reused go (the sweep's start, with the
        walk's counts, is said before the first of them)."""
        texts = (self.store.text_folder_times(), self.store.text_names())
        roots = tuple(map(str, self.roots))
        files, total = sum(map(len, listings)), sum(sum(ls.sizes) for ls in listings)

        def begun() -> None:
            self.on_event(SweepStarted(started, roots, files, total, full, self.kind))

        return texts, _Journaled(self.ledger.journal, self.on_event, begun)

    def _readers_came(self) -> bool:
        """Whether this quarry has readers the store's last sweep did not, or tells kinds
        apart it did not: the files no reader took are then read again, once (the summary
        this sweep writes says it all). Asked only by runs that decide files (a quick sweep
        imports no reader)."""
        if self._came is None:
            from engine.readers.registry import reader_versions

            had, detection = self._had  # (no readers named: no summary to compare with)
            self._came = bool(had) and (detection < DETECTION or not set(reader_versions()) <= had)
        return self._came

    def _keeper(self, began: int, its_own: bool = False) -> Keeper:
        """The judge of a merge: which records of a sweep that began at ``began`` (ns) stand
        as they are (``its_own``: the decisions of the sweep it goes on with, or of a rescan:
        an ``error`` keeps its verdict)."""
        from engine.plan import RACY_NS, Keeper, LazyReaders
        from engine.readers.registry import reader_versions

        return Keeper(
            reader_versions(),
            LazyReaders({}),
            self.tools.fingerprint,
            began - RACY_NS,
            tool_names=self.tools.names,
            its_own=its_own,
            unknown_again=not its_own and self._readers_came(),
        )

    def _recount(self) -> None:
        """The served records' counts, from the index, a batch at a time."""
        if not isinstance(self.index, IndexedRecords):
            return
        tally = Tally()
        with contextlib.suppress(IndexGone, sqlite3.Error):
            for record in self.index.records.values():
                tally.add(record)
            self.index.tally = tally

    def _lean(self, only: Mapping[str, Collection[str]] | None, force: Collection[Key]) -> bool:
        """Whether the run about to start may hold none of its records (:attr:`Run.lean`):
        a whole sweep of a store that has none, by a sweeper that lets them go after it and
        whose index takes each as it is decided (a cold ``quarry sweep``)."""
        return (
            only is None
            and not force
            and not self.options.verify  # (every file hashed: each record kept for its copies)
            and (self._serves_none_held() or self._resumes_served())
        )

    def _resumes_served(self) -> bool:
        """The records are a killed sweep's, served by the index, which can still answer."""
        return (
            self._serves_resume
            and isinstance(self.index, IndexedRecords)
            and self.index.usable()
            and self._index_serves()
        )

    def _hold_resumed(self) -> None:
        """The killed sweep's records into memory, as a loading resume has them, for a run
        that cannot be lean (one whose tally is kept record by record)."""
        self._serves_resume = False
        if isinstance(self.index, IndexedRecords):
            with contextlib.suppress(IndexGone):
                self.index = RecordIndex(list(self.index.records.values()))
            if isinstance(self.index, IndexedRecords):
                self._heavy()
        self._resumed = frozenset(self.index.records)  # (each one the killed sweep's)

    def _begin_resume(self) -> None:
        """Before a lean run over records the index serves: it holds none of what it reads,
        and every record it decides is written past the index's counter now."""
        db = self.ledger.db
        assert db is not None and isinstance(self.index, IndexedRecords)
        self.index.records.keep = False
        self.index.cold = True
        self._resuming = db.seq()

    def _gone_since(self, held: Collection[str]) -> list[Key]:
        """After a finished lean run over records the index serves: the records of the swept
        roots (those not ``held``) that it did not decide, as their files were not found."""
        db, since = self.ledger.db, self._resuming
        if db is None or since is None:
            return []
        roots = [str(r) for r in self.roots if str(r) not in held]
        try:
            return db.untouched(since, roots)
        except sqlite3.Error as exc:
            self.ledger.failed(exc)
            return []

    def _not_written_since(self, seq: int, scope: Sequence[Key]) -> list[Key]:
        """After a finished lean run over a merge: the records of its ``scope`` it did not
        write (past the index's counter ``seq``), as their files were not found."""
        db = self.ledger.db
        if db is None:
            return []
        try:
            return db.not_since(seq, scope)
        except sqlite3.Error as exc:
            self.ledger.failed(exc)
            return []

    def _conclude(self, ended: RunEnd) -> SweepResult:
        """Apply what a run decided (the records of its scope it did not see are gone) and
        write the store."""
        run, new, force, full = ended.run, ended.new, ended.run.force, ended.run.full
        scope, started, reused = ended.scope, ended.started, ended.reused
        self._failed = ""  # (set by this run's end only: not one before it that raised)
        if run.executor_failed:
            self.drop_executor()
        elif self.once:
            self._release_executor()
        if run.interrupted or run.executor_failed:
            # Workers rename texts into the store as they read; answers that never came may
            # have left texts no record names: keep the marker until a full sweep collects them.
            self._killed_before = True
        first = self._serve_first_run()
        killed_before = self._killed_before  # (the write collects its texts and clears it)
        resumed = run.lean and self._resuming is not None and self._resumes_served()
        lean_merge = self._lean_merge if run.lean and self._index_serves() else None
        self._lean_merge = None
        if run.lean and not first and not resumed and lean_merge is None:
            self._lean_unserved(run)
        records = self.records
        # An interrupted run saw only some files: the others keep their records, not lose them.
        # (a served sweep's scope holds the walk's new files too: one the run gave no
        # record, gone since the walk or failed by the machine, had none to lose)
        if run.interrupted:
            gone = []
        elif resumed:
            gone = self._gone_since(ended.held)
        elif lean_merge is not None:
            gone = self._not_written_since(lean_merge[0], scope)
        else:
            gone = [k for k in scope if k not in new and k in records]
        vanished = () if run.interrupted else tuple(k for k in force if k not in new)
        if vanished:
            self.on_event(
                Notice(
                    time.time(),
                    NoticeKind.VANISHED,
                    f"{count(len(vanished), 'file')} to retry no longer there",
                    Level.WARNING,
                )
            )
        # Identity first: a reused record is the very object already held.
        changed = [k for k, r in new.items() if (old := records.get(k)) is not r and old != r]
        old_shas = {records[k].sha256 for k in gone}
        # (a merge that resumed a killed sweep lists every text, as a loading resume does)
        targeted = (
            ended.merged is not None
            and not ended.whole
            and run.finished_whole
            and not killed_before
        )
        if not full or targeted:  # a full sweep garbage-collects the whole store instead
            old_shas |= {records[k].sha256 for k in changed if k in records}
        # A text can lose its last record only when a record goes or names another text (a
        # warm sweep that merely marks every record reused need not list every text).
        unnamed = bool(gone) or any(
            _text_of(records[k]) != _text_of(new[k]) for k in changed if k in records
        )
        if run.lean and isinstance(self.index, IndexedRecords):
            self.ledger.drop(gone)  # (the tally is the index's: counted without them)
            tally = run.tally  # (``new`` holds only its hashed reads' records)
            if lean_merge is not None:
                tally = lean_merge[1]
                tally.take(run.tally)  # (a gone file's record was among those looked at)
            self.index.counted(tally)
        else:
            self.index.apply(new, gone)
            self.ledger.drop(gone)  # the index holds exactly the records, before any write
        if run.ctx.journal is None and changed:  # (the quick sweep's reads again)
            self.ledger.journal([new[k] for k in changed])
        if gone:
            run.flush_events(removed=gone)
        marked = ended.merged is not None and ended.merged.marked > 0  # (journaled by the merge)
        summary = self._write(
            run, bool(changed or gone or marked or (run.lean and run.decided)), unnamed, old_shas,
            full and not run.interrupted, started, targeted,
        )  # fmt: skip
        whole = full and not run.interrupted and not force
        self._hold_if_unserved()
        written = self._behind_since is None
        self.ledger.concluded(self.records.values(), written=written, sweep=whole)
        self._hold_if_unserved()  # (its commit failed: a full disk; the file has the records)
        self._resumed = frozenset()
        self._resuming = None
        if not run.interrupted:
            self._serves_resume = False
        self._say_notices()
        if self.quick and ended.whole and full and not force and run.finished_whole:
            records = self.records
            if first and not run.lean:  # (the run decided every record there is)
                records = new
            elif isinstance(self.index, IndexedRecords) and not run.lean:
                records = {r.key: r for r in records.values()}  # (one pass, not a query each)
            # (a lean run's are read from the index a batch at a time as they are judged)
            said = quick.leave_index(
                self._quick_input(), records, self.index.tally, summary, run.texts_seen
            )
            if said is not None:
                self.on_event(said)
        elif self.quick and targeted and ended.merged is not None and not force:
            said = quick.leave_merged(self._quick_input(), ended.merged, self.index.tally, summary)
            if said is not None:
                self.on_event(said)
        self._tell(run, run.decided if run.lean else len(new))
        self._lighten()
        self.on_event(
            SweepFinished(time.time(), summary, run.extracted, reused, full, self.kind, len(gone))
        )
        return SweepResult(
            summary,
            run.extracted,
            reused,
            len(gone),
            self.index.errors,
            vanished,
            run.repaired,
            run.interrupted,
            run.machine_failures,
            ended.held,
            failed=self._failed,
        )

    def _write(
        self,
        run: Run,
        changed: bool,
        unnamed: bool,
        old_shas: set[str | None],
        full: bool,
        started: float,
        targeted: bool = False,
    ) -> Summary:
        """Write records and summary; on a full disk (any OSError) put things back, re-raise.
        ``targeted``: only ``old_shas`` may have lost their last record (see :meth:`_persist`).

        The earlier ``extract.jsonl`` stands (it is replaced atomically or not at all); the
        records in memory go back to it and the texts this run added that it does not name
        are removed at once (they would fill the disk further). The OSError goes on to the
        caller (the CLI: exit 3 with one line; the watcher: a deferred batch or a lost store).
        """
        # Texts reach the disk before any record that names them: one sync per run, of the
        # store's file system only, in a thread while the records' lines are made (it waits on
        # the disk, they on the CPU); nothing is written before it ends.
        synced = _Background(sync_fs, self.store.out) if run.added_texts else None
        try:
            self._persist(changed, unnamed, old_shas, full, started, synced, targeted)
            summary = build_summary(
                self.index.tally,
                self.roots,
                self.tools,
                started,
                time.time(),
                left_out=self.left_out,
                others=self._others(),
            )
            summary = self._with_cluster(self._with_jsonl_state(summary))
            self.store.write_summary(summary)
        except BaseException as exc:
            _end_quietly(synced)  # the sync ends before the error goes on
            # a store folder that vanished is the caller's to judge
            if isinstance(exc, OSError) and self.store.out.is_dir():
                self._recover_from_write_failure()
            raise
        return summary

    def _others(self) -> dict[str, int]:
        """Records per folder the store holds that this sweeper does not sweep, from the
        index (the sweeper's own, or a reader's when it opened none); none when it cannot
        tell (the summary then says nothing of them). Counted once: no run of this sweeper
        writes them (a watch batch does not count millions of them again)."""
        if self._others_counted is None:
            self._others_counted = self._count_others()
        return self._others_counted

    def _count_others(self) -> dict[str, int]:
        swept = [str(root) for root in self.roots]
        try:
            if (db := self.ledger.db) is not None:
                return db.others(swept)
            if self.ledger.failure is not None:
                return {}  # (the index on disk is behind: what it says may be wrong)
            reader = RecordDB.open_reader(self.store.out / DB)
        except (sqlite3.Error, IndexUnusable):
            return {}
        try:
            return reader.others(swept)
        except sqlite3.Error:
            return {}
        finally:
            reader.close()

    def _recover_from_write_failure(self) -> None:
        """Back to what is on disk: its records, and no text that none of them names."""
        self._discard_background()  # (the file on disk is the one gone back to)
        if self._behind_since is not None:
            self.lost_behind = True  # the disk's records miss what the runs behind decided
            self._behind_since = None
            self._drop_later = set()
        self.reload()
        self.ledger.forget()  # it holds what this run committed: ahead of the disk
        keep = self.index.referenced_texts() | self.ledger.kept_texts()
        with contextlib.suppress(OSError):
            self.store.gc(keep)
        with contextlib.suppress(OSError):
            self.store.clean_tmp()

    def _texts_keeper(self) -> set[str] | Callable[[str], set[str]]:
        """What the garbage collection keeps: the texts a record names, and the history's
        (asked of the index a text folder at a time when it serves the records)."""
        kept = self.ledger.kept_texts()
        if not isinstance(self.index, IndexedRecords):
            return self.index.referenced_texts() | kept
        named = self.index.texts_keeper()
        return (lambda prefix: named(prefix) | kept) if kept else named

    def _tell(self, run: Run, decided: int) -> None:
        """Notices for what the run could not do as asked."""
        now = time.time()
        if run.repaired:
            why = f"{count(run.repaired, 'text')} missing or not matching its content: read again"
            self.on_event(Notice(now, NoticeKind.REPAIRED, why, Level.WARNING))
        if run.interrupted and not run.index_lost:  # (a lost index said what went with it)
            done = count(decided, "file")
            why = f"interrupted: {done} decided and written; the rest keep their records"
            self.on_event(Notice(now, NoticeKind.INTERRUPTED, why, Level.WARNING))

    def _held_roots(self, entries: list[Entry]) -> dict[str, int]:
        """Roots that are gone or empty while the store holds records of them -> how many.

        An unmounted share looks like an empty folder, a moved disk like a missing one: never
        a reason to drop every record and text of it, unless ``forget_missing`` says so.
        """
        if self.options.forget_missing:
            return {}
        seen = {e.root for e in entries}
        counts: dict[str, int] = {}
        for root, _path in self.records:
            if root not in seen:
                counts[root] = counts.get(root, 0) + 1
        held = {r: n for r, n in counts.items() if r in {str(x) for x in self.roots}}
        self._say_held(held)
        return held

    def _say_held(self, held: dict[str, int]) -> None:
        for root, n in held.items():
            state = "is gone" if not os.path.isdir(root) else "is empty"
            self.on_event(
                Notice(
                    time.time(),
                    NoticeKind.ROOT_MISSING,
                    f"{root} {state} but the store holds {count(n, 'record')} of it: kept "
                    "(--forget-missing drops them)",
                    Level.ERROR,
                )
            )

    def _entries(self, only: Mapping[str, Collection[str]] | None) -> list[Entry]:
        if only is None:
            walked, self._walked = self._walked, None
            listings = walked or self._walk()
            return [e for listing in listings for e in listing.entries()]
        out: list[Entry] = []
        for root, rels in only.items():
            out.extend(walk_paths(Path(root), rels, self.rules).entries())
        return out

    def _scope(self, only: Mapping[str, Collection[str]] | None) -> list[Key]:
        """Earlier records this run answers for (a record in scope and not seen is removed)."""
        if only is None:
            roots = {str(r) for r in self.roots}
            return [k for k in self.records if k[0] in roots]
        keys: list[Key] = []
        for root, rels in only.items():
            keys.extend(self.index.keys_under(root, rels))  # "": the whole root
        return keys

    def _leaves_behind(self, changed: bool, full: bool) -> bool:
        """Whether this run leaves ``extract.jsonl`` to :meth:`write_behind` (a watch batch
        that changed records, with the index taking them); else it writes the file."""
        if full or self.write_behind_s is None or self.ledger.db is None:
            return False
        if self._repair or not self.store.exists():
            return False
        if changed and self._behind_since is None:
            self._behind_since = time.monotonic()
        return self._behind_since is not None

    def _persist(
        self,
        changed: bool,
        unnamed: bool,
        old_shas: set[str | None],
        full: bool,
        started: float,
        synced: _Background | None = None,
        targeted: bool = False,
    ) -> None:
        """Write ``extract.jsonl`` if it changed and drop the texts no record names, once
        ``synced`` (the sync of this run's texts) has ended.

        ``targeted``: a full sweep its index served, begun on a clean store and finished
        whole: as after a watch batch, only the texts of ``old_shas`` (those its gone and
        changed records named) can have lost their last record, and each is asked of the
        index, rather than every text of the store listed and every record's named (2.4 s
        at 200,000 files)."""
        wait = synced.wait if synced is not None else None
        unnamed = unnamed or self._repair  # the dropped lines' texts may be named by none
        if self._leaves_behind(changed, full):
            if wait is not None:
                wait()
            # extract.jsonl still names these texts: they go once it is written without them
            self._drop_later.update(sha for sha in old_shas if sha)
            self._take_freed()
            self._prev_started_ns = int(started * 1e9)
            return
        self._discard_background()  # (this write has every record: it comes last)
        if self._behind_since is not None:  # this write catches up with the runs behind
            changed = unnamed = True
            old_shas = old_shas | self._drop_later
            self._drop_later = set()
            self._behind_since = None
        if changed or self._repair or not self.store.exists():
            self._write_jsonl(wait)
            self._jsonl_written = iso(time.time())
            if self._repair:
                self._repair = False
                self.on_event(
                    Notice(
                        time.time(),
                        NoticeKind.STORE_REPAIR,
                        f"{JSONL} rewritten without its unreadable lines",
                        Level.INFO,
                    )
                )
        if wait is not None:
            wait()  # (at once when the records were written)
        if full and not targeted and (unnamed or self._killed_before or self.store.is_dirty()):
            # Scanning every text is only needed when records changed or a sweep was killed
            # after adding texts (its marker was still there when we took the lock).
            _gone, stuck = self.store.gc(self._texts_keeper())
            self.store.gc_kept(self.ledger.aside_texts())
            if stuck:
                self.on_event(
                    Notice(
                        time.time(),
                        NoticeKind.STORE_REPAIR,
                        f"could not remove {count(len(stuck), 'unused text')}: {shown(stuck[0])}",
                        Level.WARNING,
                    )
                )
            self.store.mark_clean()
            self.ledger.forget_freed()
            self._killed_before = False
        elif not full or targeted:
            # and the texts kept records named until the history let them go
            freed = self.ledger.freed_texts()
            for sha in old_shas | freed:
                if sha and not self.index.has_text_refs(sha) and not self.ledger.is_kept(sha):
                    self.store.drop_text(sha)
            self.ledger.forget_freed(freed)
            if targeted:
                self.store.gc_kept(self.ledger.aside_texts())
            if not self._killed_before:
                self.store.mark_clean()
        self._prev_started_ns = int(started * 1e9)


@dataclass(frozen=True, slots=True)
class _Unloaded:
    """A store a quick sweep found unchanged, its records not loaded: their tally (from the
    stat index) and the sweep's start (the next run's racy reference)."""

    tally: Tally
    started_ns: int


class _Background:
    """``fn(arg)`` in a thread of its own; :meth:`wait` ends with it (and raises what it
    raised). A system call that waits on the disk (``syncfs``) lets Python run meanwhile."""

    def __init__(self, fn: Callable[[Path], None], arg: Path) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, arg), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[Path], None], arg: Path) -> None:
        try:
            fn(arg)
        except BaseException as exc:  # handed to the waiting thread
            self._error = exc

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def _capped(pool: ReadPool, asked: bool) -> str:
    """Why ``pool`` runs fewer workers than asked (``asked``: by ``--workers``, else one a
    core): the open-file limit, and how to lift it."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lift = ""
    if hard == resource.RLIM_INFINITY:
        lift = " ('ulimit -n' with a higher number lifts it)"
    elif hard > soft:
        lift = f" ('ulimit -n {hard}' lifts it)"
    wanted = f"of the {pool.asked:,} asked for" if asked else f"not one a core ({pool.asked:,})"
    workers = count(pool.workers, "read worker")
    return f"{workers}, {wanted}: the open-file limit (ulimit -n {soft}) allows no more{lift}"


def _end_quietly(job: _Background | None) -> None:
    """Wait for ``job`` while another error is on its way (that one is what the caller gets)."""
    if job is not None:
        with contextlib.suppress(BaseException):
            job.wait()


def _text_of(record: Record) -> str | None:
    """The stored text ``record`` names, if any."""
    return record.sha256 if record.has_text else None


@contextlib.contextmanager
def stop_on_signals(sweeper: Sweeper) -> Iterator[None]:
    """SIGINT and SIGTERM ask the sweeper's run to stop (it writes what it decided); a second
    signal interrupts at once (KeyboardInterrupt, the last written store stands).

    Only in the main thread (where Python runs signal handlers); elsewhere a no-op.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        if sweeper.stop.is_set():
            raise KeyboardInterrupt
        sweeper.stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def sweep(
    roots: Sequence[Path], options: SweepOptions | None = None, on_event: Listener = ignore
) -> SweepResult:
    """Sweep ``roots`` once into their store (holding its lock for the duration)."""
    opts = options or SweepOptions()
    with Sweeper(roots, opts, on_event, quick=True, served=True, once=True) as sweeper:
        return sweeper.run()
