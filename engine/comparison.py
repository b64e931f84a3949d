"""Two stores compared: merged in key order, each pair judged by :func:`engine.diff.judge`.

Both stores are read as ``quarry export`` reads one (:func:`engine.chunks.store_chunks`: the
index when it is in step with ``extract.jsonl``, else the file through the store's validating
loader, so a store written by the seed's extract stage or an older quarry opens too), and
merged in key order, (root, path): a file is the same file in both when its root and path are.
Nothing is held per file but the changes: two records whose ``extract.jsonl`` lines are equal
byte for byte, or but for the read's ``reused``, ``why`` and ``ms``, are the same and are not
even parsed (a million unchanged records cost a comparison of bytes each); only where the
lines differ otherwise are the records parsed and judged.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, BinaryIO

from engine import history
from engine.chunks import store_chunks, store_roots
from engine.db import DB, IndexUnusable, RecordDB
from engine.diff import (
    LOWEST,
    LOWEST_PER_GROUP,
    Breakdown,
    DiffSummary,
    Direction,
    FileChange,
    Group,
    Kind,
    Side,
    judge,
)
from engine.errors import QuarryError, UsageError
from engine.jsonl import line_start
from engine.names import is_utf8, shown
from engine.records import Record
from engine.store import Store, read_jsonl


@dataclass(slots=True)
class _Entry:
    """One record of a store in the merge: its line, parsed only when needed."""

    line: bytes
    record: Record | None = None

    def parsed(self) -> Record | None:
        """The record (None: the line is not one)."""
        if self.record is None:
            records = read_jsonl(self.line).records
            self.record = records[0] if records else None
        return self.record


_VOLATILE = re.compile(rb',"reused":(?:true|false),"why":(?:null|"[a-z-]*"),"ms":\d+,')
"""What a sweep changes in a record it did not read again, or read again to the same verdict
(``reused``, ``why``, ``ms``), as this quarry writes them: the same bytes inside a JSON string
would have their quotes escaped, so only the record's own fields match."""


def _same_lines(a: bytes, b: bytes) -> bool:
    """Whether two lines are one record but for :data:`_VOLATILE` (two fresh sweeps of one
    folder differ in every ``ms``: a million parses saved). Lines of another writer's shape
    are never the same here; they are parsed and compared."""
    return a == b or _VOLATILE.sub(b",", a, count=1) == _VOLATILE.sub(b",", b, count=1)


def _entries(
    store: Store, warn: Callable[[str], None], lines: Iterable[bytes] | None = None
) -> Iterator[_Entry]:
    """The store's records in key order, as lines (from the index) or records (the file);
    ``lines``: these, in key order, instead of the store's (the store as it was)."""
    if lines is not None:
        yield from map(_Entry, lines)
        return
    with store_chunks(store, warn) as chunks:
        for chunk in chunks:
            known = chunk.known_records()
            if known is not None:
                yield from (_Entry(b"", r) for r in known)
            else:
                yield from map(_Entry, chunk.lines())


@dataclass(slots=True)
class _Tally:
    """A breakdown being counted."""

    changed: int = 0
    worse: int = 0
    better: int = 0
    flips: int = 0
    similarities: list[float] = field(default_factory=list)
    lowest: list[tuple[float, str]] = field(default_factory=list)

    def add(self, change: FileChange) -> None:
        self.changed += 1
        self.worse += change.direction is Direction.WORSE
        self.better += change.direction is Direction.BETTER
        self.flips += change.kind is Kind.FLIPPED
        if change.similarity is not None:
            self.similarities.append(change.similarity)
            _keep_lowest(self.lowest, (change.similarity, change.path), LOWEST_PER_GROUP)

    def frozen(self, name: str) -> Breakdown:
        median = statistics.median(self.similarities) if self.similarities else None
        lowest = tuple(sorted(self.lowest)[:LOWEST_PER_GROUP])
        return Breakdown(name, self.changed, self.worse, self.better, self.flips, median, lowest)


def _keep_lowest(items: list[Any], item: Any, n: int) -> None:
    """Add ``item``, keeping at least the ``n`` lowest of all added (pruned now and then,
    so a diff of a million changed texts holds a few items, not a million)."""
    items.append(item)
    if len(items) >= 4 * n:
        items.sort()
        del items[n:]


class Comparison:
    """Two stores compared: :meth:`changes` yields each changed file in key order; once it
    is exhausted, :meth:`summary` holds the counts and breakdowns."""

    def __init__(
        self,
        a: Store,
        b: Store,
        warn: Callable[[str], None],
        lines: tuple[Iterable[bytes], Iterable[bytes]] | None = None,
        names: tuple[str, str] | None = None,
    ) -> None:
        self.a, self.b = a, b
        self._lines = lines
        """Each side's lines in key order instead of its store's (one store at two times:
        its texts are still read from the store)."""
        self.names = names or (str(a.out), str(b.out))
        """How the output names the two sides."""
        self._warn = warn
        self._files = [0, 0]
        self._bad = [0, 0]
        self._unchanged = 0
        self._groups = dict.fromkeys(Group, 0)
        self._mimes: dict[str, _Tally] = {}
        self._readers: dict[str, _Tally] = {}
        self._lowest: list[tuple[float, str, str]] = []
        self._done = False

    @cached_property
    def pair(self) -> tuple[str, str] | None:
        """The one folder each store holds, when they differ: files then pair by their path
        in it (a folder swept on two machines, or copied: ``/home/alice/docs`` and
        ``/srv/in/docs``, where pairing by folder and path found "no file in both"). None:
        they pair by folder and path (either store holds several folders, or the same one)."""
        if self._lines is not None:
            return None  # (one store at two times: one folder)
        roots = store_roots(self.a), store_roots(self.b)
        if all(len(r) == 1 for r in roots) and roots[0] != roots[1]:
            (ra,), (rb,) = roots
            return (ra, rb)
        return None

    def changes(self) -> Iterator[FileChange]:
        """Every file that differs, in (root, path) order."""
        for change in self._merge():
            self._count(change)
            yield change
        self._done = True

    def _merge(self) -> Iterator[FileChange]:
        la, lb = self._lines or (None, None)
        left, right = _entries(self.a, self._warn, la), _entries(self.b, self._warn, lb)
        if (pair := self.pair) is not None:  # (keyed as the store after is: a retry's keys)
            left = _rooted(left, pair[0], pair[1])
        ea, eb = self._next(left, 0), self._next(right, 1)
        while ea is not None or eb is not None:
            if ea is not None and eb is not None and ea.line and _same_lines(ea.line, eb.line):
                self._unchanged += 1  # the same record, never parsed
                ea, eb = self._next(left, 0), self._next(right, 1)
                continue
            ra = ea.parsed() if ea is not None else None
            rb = eb.parsed() if eb is not None else None
            if ea is not None and ra is None:  # a line of the index that is no record
                self._bad[0] += 1
                ea = self._next(left, 0)
            elif eb is not None and rb is None:
                self._bad[1] += 1
                eb = self._next(right, 1)
            elif rb is None or (ra is not None and ra.key < rb.key):
                assert ra is not None
                yield _alone(ra, Kind.GONE)
                ea = self._next(left, 0)
            elif ra is None or rb.key < ra.key:
                yield _alone(rb, Kind.NEW)
                eb = self._next(right, 1)
            else:
                change = judge(ra, rb, self.a, self.b) if ra != rb else None
                if change is None:
                    self._unchanged += 1
                else:
                    yield change
                ea, eb = self._next(left, 0), self._next(right, 1)

    def _next(self, entries: Iterator[_Entry], side: int) -> _Entry | None:
        entry = next(entries, None)
        self._files[side] += entry is not None
        return entry

    def _count(self, change: FileChange) -> None:
        self._groups[change.group] += 1
        self._mimes.setdefault(change.mime, _Tally()).add(change)
        self._readers.setdefault(change.reader, _Tally()).add(change)
        if change.similarity is not None:
            _keep_lowest(self._lowest, (change.similarity, change.root, change.path), LOWEST)

    def summary(self) -> DiffSummary:
        """The counts and breakdowns (the stream of :meth:`changes` must be exhausted)."""
        if not self._done:
            raise RuntimeError("the changes were not all read")
        return DiffSummary(
            files_before=self._files[0] - self._bad[0],
            files_after=self._files[1] - self._bad[1],
            unchanged=self._unchanged,
            groups=dict(self._groups),
            by_mime=_breakdowns(self._mimes),
            by_reader=_breakdowns(self._readers),
            lowest=tuple(sorted(self._lowest)[:LOWEST]),
            bad_lines=sum(self._bad),
        )


def _rooted(entries: Iterator[_Entry], old: str, new: str) -> Iterator[_Entry]:
    """``entries`` of folder ``old`` as if of ``new``: a line as this quarry writes it (the
    root first) stays a line, and equal to the other side's when nothing else differs."""
    was, now = line_start(old), line_start(new)
    lines = is_utf8(old) and is_utf8(new)  # (else the exact bytes follow, in root_b64)
    for entry in entries:
        if lines and entry.line.startswith(was):
            entry.line = now + entry.line[len(was) :]
        else:
            record = entry.parsed()
            if record is not None and record.root == old:
                entry.record = replace(record, root=new)
        yield entry


def _alone(rec: Record, kind: Kind) -> FileChange:
    side = Side.of(rec, rec.quality)
    if kind is Kind.NEW:
        return FileChange(rec.root, rec.path, kind, Direction.NEITHER, None, side)
    return FileChange(rec.root, rec.path, kind, Direction.NEITHER, side, None)


def _breakdowns(tallies: dict[str, _Tally]) -> tuple[Breakdown, ...]:
    frozen = [t.frozen(name) for name, t in tallies.items()]
    return tuple(sorted(frozen, key=lambda b: (-b.changed, b.name)))


__all__ = ["AsWas", "Comparison"]


class AsWas(Store):
    """A store as it was: the texts of content hashes that were replaced since (and kept
    aside, :mod:`engine.history`) are read from where they were kept."""

    def __init__(self, store: Store, aside: dict[str, str]) -> None:
        super().__init__(store.out)
        self.aside = aside
        """Content hash -> the hash of the text it had then, kept aside."""

    def open_text(self, sha256: str) -> BinaryIO:
        """The text ``sha256`` had then (OSError as for :meth:`Store.open_text`)."""
        kept = self.aside.get(sha256)
        return self.open_kept(kept) if kept is not None else super().open_text(sha256)


class NoPast(QuarryError):
    """A store cannot be told as it was at a time (no index, no history reaching back)."""


@contextlib.contextmanager
def since(store: Store, when: float, warn: Callable[[str], None]) -> Iterator[Comparison]:
    """``store`` now against itself as it was at ``when`` (:mod:`engine.history`): both sides
    read from its index in one snapshot (held while the comparison is read), the texts from
    the store. NoPast saying why when its index keeps no history reaching back so far."""
    try:
        db = RecordDB.open_reader(store.out / DB)
    except IndexUnusable:
        raise NoPast("it has no index, so no history (sweep it with quarry)") from None
    with db:
        try:
            db.con.execute("BEGIN")  # one snapshot for both sides
            past = history.lines_at(db.con, when)
            then = AsWas(store, history.texts_at(db.con, when))
            names = (f"{store.out} at {history.iso(when)}", f"{store.out} now")
            yield Comparison(then, store, warn, (past, history.lines_now(db.con)), names)
        except history.NoHistory as exc:
            raise NoPast(f"cannot tell it as it was then: {exc}") from None
        except sqlite3.Error as exc:
            raise NoPast(f"cannot read its index: {exc}") from None


def history_start(store: Store) -> float | None:
    """When the history ``store``'s index keeps starts (None: no index, or no history yet)."""
    try:
        with RecordDB.open_reader(store.out / DB) as db:
            return history.floor(db.con)
    except (IndexUnusable, sqlite3.Error):
        return None


def since_when(store: Store, text: str) -> float:
    """The time ``--since TEXT`` names for ``store``: a sweep its history lists, as that sweep
    left the store (``last`` or ``-1``, ``-2`` the one before..., ``#N``), or a time (30m, an
    ISO time). UsageError, one line listing the sweeps, when it names neither, a sweep not
    listed, or a time before the history starts (or the store has none)."""
    where = shown(str(store.out))
    try:
        with RecordDB.open_reader(store.out / DB) as db:
            start, known = history.floor(db.con), history.sweeps(db.con)
    except (IndexUnusable, sqlite3.Error):
        raise UsageError(f"{where} has no index, so no history (sweep it with quarry)") from None
    if start is None:
        raise UsageError(f"{where} keeps no history yet (it starts once a sweep has finished)")
    try:
        when = history.sweep_time(text, known)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    if when is None:
        try:
            when = history.parse_since(text)
        except ValueError as exc:
            raise UsageError(f"{exc}, or a sweep: {history.listed(known)}") from None
    now = time.time()
    if when > now:  # a mistyped year: the store now, compared with itself, said "unchanged"
        raise UsageError(
            f"--since {text.strip()!r} is after now ({history.iso(now)}): give a time past, or "
            f"a sweep: {history.listed(known)}"
        )
    if when < start:
        raise UsageError(
            f"the history {where} keeps starts at {history.iso(start)}; its sweeps: "
            f"{history.listed(known)}"
        )
    return when
