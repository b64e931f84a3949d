"""The sweep: walk -> plan -> extract -> store, with progress events.

:class:`Sweeper` holds a store's writer lock and a worker pool for its lifetime, so the
watcher can run many incremental sweeps (``run(only=...)``) through the same pipeline as a
full one. :func:`sweep` is the one-shot form the CLI uses.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import UsageError
from engine.events import (
    Listener,
    Notice,
    Progress,
    RecordsChanged,
    SweepFinished,
    SweepStarted,
    ignore,
)  # fmt: skip
from engine.extract import Outcome, ReadTask
from engine.index import RecordIndex
from engine.isolate import MachineFailure, ReadPool
from engine.limits import DEFAULT_LIMITS, Limits
from engine.plan import CRASH_QUARANTINE, decide, needs_hash
from engine.readers.registry import all_readers, reader_for, reader_versions
from engine.records import Reason, Record, Status
from engine.store import Store, default_out
from engine.summary import build_summary
from engine.tools import ToolSet, discover
from engine.walk import Entry, WalkRules, walk, walk_paths

Key = tuple[str, str]
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
EMPTY_SHA = hashlib.sha256(b"").hexdigest()
_SKIP_REASON = {
    "link": Reason.LINK, "special": Reason.SPECIAL, "unreadable": Reason.UNREADABLE,
    "too_large": Reason.TOO_LARGE,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """How a sweep runs; every field has a command-line flag."""

    out: Path | None = None
    """Store folder (default ``<root>/.quarry``)."""
    excludes: tuple[str, ...] = ()
    """Extra gitignore-style patterns to leave out."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """Files larger than this are skipped/too_large."""
    rehash: bool = False
    """Hash every file even when its size and mtime match."""
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


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What a sweep did."""

    summary: object
    """The :class:`engine.records.Summary` written."""
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


def resolve_roots(roots: Sequence[Path]) -> list[Path]:
    """Absolute roots; a missing or non-folder root is a usage error."""
    out = []
    for root in roots:
        p = Path(root).expanduser()
        if not p.exists():
            raise UsageError(f"no such folder: {root}")
        if not p.is_dir():
            raise UsageError(f"not a folder: {root}")
        if not os.access(p, os.R_OK | os.X_OK):
            raise UsageError(f"cannot read folder: {root}")
        out.append(p.resolve())
    if not out:
        raise UsageError("no folder given")
    return out


def store_for(roots: Sequence[Path], options: SweepOptions) -> Store:
    """The store a sweep of ``roots`` writes."""
    if options.out is not None:
        return Store(Path(options.out).expanduser().resolve())
    if len(roots) > 1:
        raise UsageError("several folders need --out to say where the store goes")
    return Store(default_out(roots[0]))


class Sweeper:
    """Sweeps roots into one store; hold it open (``with``) for repeated incremental runs."""

    def __init__(self, roots: Sequence[Path], options: SweepOptions, on_event: Listener = ignore):
        self.roots = resolve_roots(roots)
        self.options = options
        self.on_event = on_event
        self.store = store_for(self.roots, options)
        self.rules = WalkRules(options.excludes, (str(self.store.out),), options.max_bytes)
        self.tools = options.tools if options.tools is not None else self._discover()
        self.index = RecordIndex()
        self._stack = contextlib.ExitStack()
        self._pool: ReadPool | None = None
        self._prev_started_ns = 0
        self._killed_before = False

    @property
    def records(self) -> dict[Key, Record]:
        """The store's records by (root, path); change them only through a run."""
        return self.index.records

    def _discover(self) -> ToolSet:
        return discover(no_external=self.options.no_external, without=self.options.without)

    def __enter__(self) -> Sweeper:
        self._stack.enter_context(self.store.writer())
        self._killed_before = self.store.dirty_path.exists()
        self.index = RecordIndex(self.store.load_records())
        summary = self.store.load_summary()
        if summary is not None and summary.started:
            self._prev_started_ns = int(
                dt.datetime.fromisoformat(summary.started).timestamp() * 1e9
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers and release the store's lock."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._stack.close()

    def set_tools(self, tools: ToolSet) -> None:
        """Use a new tool set from now on (the watcher's periodic re-check)."""
        self.tools = tools

    def rediscover_tools(self) -> ToolSet:
        """Look up the tools on PATH again and use them."""
        if self.options.tools is None:
            self.tools = self._discover()
        return self.tools

    @property
    def pool(self) -> ReadPool:
        """The worker pool, made on first use and made again after it broke."""
        if self._pool is None:
            self._pool = ReadPool(self.options.limits, self.options.workers)
        return self._pool

    def drop_pool(self) -> None:
        """Stop a broken pool; the next run starts a new one."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # -- one run --------------------------------------------------------------------------

    def run(
        self,
        only: Mapping[str, Collection[str]] | None = None,
        force: Collection[Key] = (),
        full: bool | None = None,
    ) -> SweepResult:
        """Sweep everything, or just the paths in ``only`` (root -> relative paths)."""
        full = only is None if full is None else full
        started = time.time()
        entries = self._entries(only)
        scope = self._scope(only)
        self.on_event(
            SweepStarted(
                started,
                tuple(map(str, self.roots)),
                len(entries),
                sum(e.size for e in entries),
                full,
            )
        )
        run = _Run(self, entries, set(force), full)
        new = run.execute()
        gone = [k for k in scope if k not in new]
        vanished = tuple(k for k in force if k not in new)
        if vanished:
            self.on_event(
                Notice(
                    time.time(),
                    "vanished",
                    f"{len(vanished)} file(s) to retry no longer exist",
                    "warning",
                )
            )
        old_shas = {self.records[k].sha256 for k in gone} | {
            self.records[k].sha256 for k in new if k in self.records
        }
        changed = {k: r for k, r in new.items() if self.records.get(k) != r}
        self.index.apply(new, gone)
        if gone:
            run.flush_events(removed=gone)
        if run.added_texts:
            # Texts reach the disk before any record that names them (one sync for the run).
            os.sync()
        self._persist(bool(changed or gone), old_shas, full, started)
        summary = build_summary(self.index.tally, self.roots, self.tools, started, time.time())
        self.store.write_summary(summary)
        errors = self.index.errors
        self.on_event(SweepFinished(time.time(), summary, run.extracted, run.reused, full))
        return SweepResult(summary, run.extracted, run.reused, len(gone), errors, vanished)

    def _entries(self, only: Mapping[str, Collection[str]] | None) -> list[Entry]:
        if only is None:
            return [e for root in self.roots for e in walk(root, self.rules)]
        out: list[Entry] = []
        for root, rels in only.items():
            out.extend(walk_paths(Path(root), rels, self.rules))
        return out

    def _scope(self, only: Mapping[str, Collection[str]] | None) -> list[Key]:
        """Earlier records this run answers for (a record in scope and not seen is removed)."""
        if only is None:
            roots = {str(r) for r in self.roots}
            return [k for k in self.records if k[0] in roots]
        keys: list[Key] = []
        for root, rels in only.items():
            prefixes = tuple(r.rstrip("/") + "/" for r in rels)
            wanted = set(rels)
            keys.extend(
                k
                for k in self.records
                if k[0] == root and (k[1] in wanted or k[1].startswith(prefixes))
            )
        return keys

    def _persist(
        self, changed: bool, old_shas: set[str | None], full: bool, started: float
    ) -> None:
        if changed or not self.store.exists():
            self.store.write_records(self.records.values())
        if full and (changed or self._killed_before or self.store.dirty_path.exists()):
            # Scanning every text is only needed when records changed or a sweep was killed
            # after adding texts (its marker was still there when we took the lock).
            self.store.gc(self.index.referenced_texts())
            self.store.mark_clean()
            self._killed_before = False
        elif not full:
            for sha in old_shas:
                if sha and not self.index.has_text_refs(sha):
                    self.store.drop_text(sha)
            if not self._killed_before:
                self.store.mark_clean()
        self._prev_started_ns = int(started * 1e9)


class _Run:
    """The state of one sweep run: hashing, planning, reading, and batching events."""

    BATCH = 256
    FLUSH_S = 0.1

    def __init__(self, sweeper: Sweeper, entries: list[Entry], force: set[Key], full: bool):
        self.s = sweeper
        self.entries = entries
        self.force = force
        self.full = full
        self.total = len(entries)
        self.bytes_total = sum(e.size for e in entries)
        self.done = 0
        self.bytes_done = 0
        self.extracted = 0
        self.reused = 0
        self.added_texts = False
        self.new: dict[Key, Record] = {}
        self._pending: list[Record] = []
        self._last_flush = time.monotonic()
        self.versions = reader_versions()
        self.mime_reader: dict[str, str | None] = {}
        self._reads: dict[str, list[tuple[Entry, str, Record | None]]] = {}
        self._sha_of: dict[Key, str] = {}
        self._machine: dict[str, int] = {}

    def reader_of(self, mime: str) -> str | None:
        if mime not in self.mime_reader:
            reader = reader_for(mime)
            self.mime_reader[mime] = reader.name if reader else None
        return self.mime_reader[mime]

    def execute(self) -> dict[Key, Record]:
        to_hash: list[Entry] = []
        for e in self.entries:
            key = (e.root, e.path)
            prior = self.s.records.get(key)
            if e.kind != "file":
                self.emit(_skipped(e))
            elif e.size == 0:
                self.emit(_empty(e, prior))
            elif key not in self.force and not needs_hash(
                prior, e.size, e.mtime_ns, self.s._prev_started_ns, self.s.options.rehash
            ):
                assert prior is not None and prior.sha256 is not None
                self.plan(e, prior.sha256)
            else:
                to_hash.append(e)
        self._hash_and_plan(to_hash)
        self._read_all()
        self.flush_events()
        return self.new

    def _hash_and_plan(self, entries: list[Entry]) -> None:
        if not entries:
            return
        with ThreadPoolExecutor(max_workers=min(8, len(entries))) as tp:
            for e, sha in zip(entries, tp.map(_hash_file, entries), strict=True):
                if isinstance(sha, OSError):
                    self.emit(
                        _skipped(
                            Entry(
                                e.root,
                                e.path,
                                e.size,
                                e.mtime_ns,
                                "unreadable",
                                sha.strerror or str(sha),
                            )
                        )
                    )
                else:
                    self.plan(e, sha)

    def plan(self, e: Entry, sha: str) -> None:
        key = (e.root, e.path)
        prior = self.s.records.get(key)
        same = self.s.index.same_content(sha)
        d = decide(
            sha,
            prior,
            same,
            reader_versions=self.versions,
            reader_for_mime=_LazyReaders(self),
            tools_fingerprint=self.s.tools.fingerprint,
            full=self.full,
            forced=key in self.force,
        )
        if not d.read and d.base is not None:
            base = d.base
            if base.has_text and base is not prior and not self.s.store.has_text(sha):
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
                self.emit(_reused(base, e))
                return
        self._sha_of[key] = sha
        self._reads.setdefault(sha, []).append((e, d.why or "new", d.base))

    def _read_all(self) -> None:
        reads = self._reads
        tasks = [self._task(group[0][0], sha) for sha, group in reads.items()]
        if not tasks:
            return  # nothing to read: do not start workers
        done: set[str] = set()
        try:
            for task, outcome in self.s.pool.read(tasks, tick=self.maybe_flush):
                done.add(task.sha256)
                self._finish(task.sha256, reads[task.sha256], outcome)
        except MachineFailure as exc:
            self.s.drop_pool()
            for sha, group in reads.items():
                if sha not in done:
                    self._machine_failed(group, str(exc))
        self._report_machine_failures()

    def _task(self, e: Entry, sha: str) -> ReadTask:
        opts = self.s.options
        return ReadTask(
            str(e.abspath), sha, opts.limits, self.s.tools, str(self.s.store.tmp_dir), e.size
        )

    def _machine_failed(self, group: list[tuple[Entry, str, Record | None]], why: str) -> None:
        """The machine failed these files: keep their earlier records, never blame them."""
        self._machine[why] = self._machine.get(why, 0) + len(group)
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
            self.s.on_event(
                Notice(
                    time.time(),
                    "machine-failure",
                    f"{files} file(s) not read, earlier records kept: {why}",
                    "error",
                )
            )
        self._machine.clear()

    def _finish(self, sha: str, group: list[tuple[Entry, str, Record | None]], o: Outcome) -> None:
        if o.machine:
            self._machine_failed(group, o.error or "machine failure")
            return
        if o.text_file is not None:
            try:
                self.s.store.put_text_file(sha, Path(o.text_file))
                self.added_texts = True
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(o.text_file)
                self._machine_failed(group, f"cannot write the store: {exc.strerror or exc}")
                return
        self.extracted += 1
        for e, why, base in group:
            self.emit(self._record(e, sha, why, base, o))

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
        keeps_tools = o.status == Status.UNSUPPORTED or o.reason == Reason.SCANNED
        return Record(
            root=e.root,
            path=e.path,
            size=e.size,
            mtime_ns=e.mtime_ns,
            status=o.status,
            sha256=sha,
            mime=o.mime,
            reason=reason,
            extractor=o.extractor,
            reader=o.reader,
            v=o.v,
            chars=o.chars,
            pages=o.pages,
            error=error,
            needs=o.needs,
            tools=self.s.tools.fingerprint if keeps_tools else None,
            reused=False,
            why=why,
            ms=o.ms,
            crashes=crashes,
        )

    # -- events ---------------------------------------------------------------------------

    def emit(self, record: Record) -> None:
        self.new[record.key] = record
        self._pending.append(record)
        self.done += 1
        self.bytes_done += record.size
        if len(self._pending) >= self.BATCH:
            self.flush_events()
        else:
            self.maybe_flush()

    def maybe_flush(self) -> None:
        if self._pending and time.monotonic() - self._last_flush >= self.FLUSH_S:
            self.flush_events()

    def flush_events(self, removed: Iterable[Key] = ()) -> None:
        removed = tuple(removed)
        if not self._pending and not removed:
            return
        now = time.time()
        last = self._pending[-1].path if self._pending else ""
        self.s.on_event(RecordsChanged(now, tuple(self._pending), removed))
        self.s.on_event(
            Progress(now, self.done, self.total, self.bytes_done, self.bytes_total, last)
        )
        self._pending = []
        self._last_flush = time.monotonic()


class _LazyReaders(Mapping[str, str | None]):
    """MIME -> reader name, looked up on demand (most sweeps touch few MIME types)."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def __getitem__(self, mime: str) -> str | None:
        return self.run.reader_of(mime)

    def __iter__(self) -> Iterator[str]:
        return iter(self.run.mime_reader)

    def __len__(self) -> int:
        return len(self.run.mime_reader)


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


def _hash_file(e: Entry) -> str | OSError:
    h = hashlib.sha256()
    try:
        with open(e.abspath, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        return exc
    return h.hexdigest()


def _skipped(e: Entry) -> Record:
    return Record(
        root=e.root,
        path=e.path,
        size=e.size,
        mtime_ns=e.mtime_ns,
        status=Status.SKIPPED,
        reason=_SKIP_REASON[e.kind],
        error=e.detail,
    )


def _empty(e: Entry, prior: Record | None) -> Record:
    return Record(
        root=e.root,
        path=e.path,
        size=0,
        mtime_ns=e.mtime_ns,
        status=Status.EMPTY,
        sha256=EMPTY_SHA,
        mime="application/x-empty",
        reason=Reason.NO_TEXT,
        error="the file is empty",
        why="new" if prior is None else (prior.why or "changed"),
        reused=prior is not None and prior.sha256 == EMPTY_SHA,
    )


def sweep(
    roots: Sequence[Path], options: SweepOptions | None = None, on_event: Listener = ignore
) -> SweepResult:
    """Sweep ``roots`` once into their store (holding its lock for the duration)."""
    with Sweeper(roots, options or SweepOptions(), on_event) as sweeper:
        return sweeper.run()


def known_readers() -> dict[str, int]:
    """Reader name -> version (for ``quarry tools`` and the summary)."""
    return {r.name: r.version for r in all_readers()}
