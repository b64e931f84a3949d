"""The quick sweep: a full sweep of a folder where nothing changed, judged by the stat index.

A judge over data: it never sees the sweeper. A :class:`~engine.sweep.Sweeper` made for the
``sweep`` command asks :func:`look` before it loads any record, with the little it knows in a
:class:`QuickInput`; with a valid ``extract.stat`` (:mod:`engine.statindex`) the answer is a
:class:`Ready`, which judges the sweeper's walk (:meth:`Ready.judge`). When the walk finds
every file as the index lists it, the only work left is reading the ``error`` files again
(every full sweep does: the sweeper reads them, :meth:`Ready.kept` judges what came back) and
writing the summary (:meth:`Ready.finish`). :func:`leave_index` writes the index at the end
of a usual full sweep, for the next one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine import statindex
from engine.errors import StoreCorrupt
from engine.events import Level, Notice, NoticeKind, Progress
from engine.jsonl import line_of
from engine.plan import KEEP_RULES, RACY_NS, Keeper, LazyReaders
from engine.records import Key, Record, Status, Summary
from engine.summary import build_summary, started_ns

if TYPE_CHECKING:
    from pathlib import Path

    from engine.index import Tally
    from engine.store import Store
    from engine.textnames import TextNames
    from engine.tools import ToolSet
    from engine.walk import Listing


@dataclass(frozen=True, slots=True)
class QuickInput:
    """What the quick sweep is judged from: the store, the roots and what the sweep asks."""

    store: Store
    """The store, its writer lock held."""
    roots: tuple[Path, ...]
    """The roots, resolved, in the sweep's order."""
    tools: ToolSet
    """The tools this sweep runs with."""
    rehash: bool
    """``--rehash``: every file is hashed, so no size and mtime are trusted."""
    verify: bool
    """``--verify``: every text is checked, so no record is kept unread."""


@dataclass(frozen=True, slots=True)
class Judged:
    """A walk that found every file as the index lists it."""

    retry: dict[Key, Record]
    """The ``error`` records whose files are read again (not quarantined)."""
    reused: int
    """Files whose verdict is kept without a read."""
    files: int
    """Files the walk found."""
    total: int
    """Their bytes."""


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The folder was as the index lists it: the errors were read again to the same
    verdicts, the summary is written, no record changed."""

    summary: Summary
    """The summary written."""
    errors: int
    """Error records in the store."""


@dataclass(frozen=True, slots=True)
class Ready:
    """A stat index that describes the store as it is: it speaks for the folder if the walk
    finds every file as it lists them."""

    given: QuickInput
    """What it was looked up for."""
    index: statindex.StatIndex
    """The index."""
    summary: Summary
    """The last sweep's summary."""
    sources: str
    """:func:`engine.statindex.sources` as found now (renewed in the index at the end)."""

    @property
    def prev_started_ns(self) -> int:
        """When the sweep that wrote the index started (the racy reference of a read)."""
        return started_ns(self.summary)

    def judge(self, listings: Iterable[Listing]) -> Judged | None:
        """``listings`` (a walk of every root, in order) judged: None when a file changed."""
        listings = list(listings)
        if not all(self.index.unchanged(listing) for listing in listings):
            return None
        roots = [str(r) for r in self.given.roots]
        retry = {(r.root, r.path): r for root in roots for r in self.index.retries(root)}
        found = sum(listing.nonempty_files() for listing in listings)
        files = sum(map(len, listings))
        total = sum(sum(listing.sizes) for listing in listings)
        return Judged(retry, found - len(retry), files, total)

    @staticmethod
    def kept(retry: Mapping[Key, Record], new: Mapping[Key, Record], whole: bool) -> bool:
        """Whether the errors read again (``new``, from a run that added no text and finished
        ``whole``) kept every verdict of ``retry``: then no record changed."""
        return whole and len(new) == len(retry) and all(new.get(k) is r for k, r in retry.items())

    def finish(self, started: float, left_out: dict[str, int], others: dict[str, int]) -> Unchanged:
        """Write the summary of a sweep that changed no record (and the index's sources when
        only they changed); ``others``: the records of folders it did not sweep."""
        given, index = self.given, self.index
        tally = index.tally()
        summary = build_summary(
            tally,
            list(given.roots),
            given.tools,
            started,
            time.time(),
            readers=index.reader_versions(),
            left_out=left_out,
            others=others,
        )
        # (extract.jsonl is as the last sweep wrote it)
        summary = replace(summary, jsonl_written=self.summary.jsonl_written)
        given.store.write_summary(summary)
        with contextlib.suppress(OSError):  # derived: the next sweep compares the readers again
            statindex.renew_sources(given.store, index, self.sources)
        return Unchanged(summary, tally.counts.get(Status.ERROR, 0))


def look(given: QuickInput) -> Ready | None:
    """The stat index of ``given``'s store when it can speak for a sweep of its roots; None
    when it cannot (the sweep goes the usual way)."""
    store = given.store
    if given.rehash or given.verify or store.is_dirty():
        return None
    index = statindex.load(store.out)
    if index is None or any(index.files_of(str(r)) is None for r in given.roots):
        return None
    try:
        summary = store.load_summary()
    except StoreCorrupt:
        return None
    now = statindex.sources()  # once: what the readers are trusted for is what is renewed
    if summary is None or not index.describes(
        store, given.tools, KEEP_RULES, started_ns(summary), now
    ):
        return None
    return Ready(given, index, summary, now)


def progress(listings: list[Listing]) -> Progress:
    """Every file of the sweep decided."""
    files = sum(map(len, listings))
    total = sum(sum(listing.sizes) for listing in listings)
    last = next((listing.paths[-1] for listing in reversed(listings) if listing.paths), "")
    return Progress(time.time(), files, files, total, total, last)


def leave_index(
    given: QuickInput,
    records: Mapping[Key, Record],
    tally: Tally,
    summary: Summary,
    texts_seen: tuple[list[int], TextNames] | None,
) -> Notice | None:
    """Write the stat index after a usual full sweep that wrote ``summary``. It is derived:
    a sweep does without it, so failing to write it is never the sweep's failure (a fault
    is returned as a notice to say, not raised)."""

    def write() -> None:
        began = started_ns(summary)
        roots = tuple(str(r) for r in given.roots)
        statindex.write(
            given.store,
            statindex.Swept(records, roots, tally, began, texts_seen),
            _keeper(given.tools, began),
            statindex.environment(given.tools, KEEP_RULES),
        )

    return _derived(given.store, write)


def _derived(store: Store, write: Callable[[], None]) -> Notice | None:
    """``write()`` the stat index, derived: a sweep does without it, so a fault is a notice to
    say (and the index is removed), never the sweep's failure."""
    try:
        write()
    except OSError:
        pass  # a full or read-only disk: the sweep's own writes said so already
    except Exception as exc:  # a fault in a cache must not lose the sweep that wrote it
        store.drop_stat_index()
        why = (
            f"{statindex.NAME} not written ({type(exc).__name__}: {exc}): "
            "the next sweep loads the store"
        )
        return Notice(time.time(), NoticeKind.STAT_INDEX, why, Level.WARNING)
    return None


@dataclass(frozen=True, slots=True)
class MergedRun:
    """A full sweep of a store its index served (:mod:`engine.merge`): each root's walk was
    merged with the index, and a run read only the files that differed."""

    listings: list[Listing]
    """The walk of every root."""
    looked: dict[str, list[str]]
    """Root -> the paths the run was given (every other file of the walk was found as its
    record says, a verdict the next full sweep keeps, its text in the store)."""
    new: Mapping[Key, Record]
    """What the run decided."""
    texts: list[int]
    """The text folders' times, taken before the store's texts were listed for the merge."""
    marked: int = 0
    """Records the merge wrote back flagged reused, the run not given their files
    (:data:`engine.merge.Mark`)."""


def leave_merged(
    given: QuickInput, merged: MergedRun, tally: Tally, summary: Summary
) -> Notice | None:
    """:func:`leave_index` for the sweep ``merged``, with no record loaded: when each root's
    files the run looked at are now as their new records say (and kept as they are by the
    next full sweep), the walk itself is what the index lists. Nothing is written when one
    is not (a record the run just wrote is kept only once a sweep marks it reused: the
    index is then left by the next sweep)."""

    def write() -> None:
        began = started_ns(summary)
        walked = [_root_kept(given, listing, merged, began) for listing in merged.listings]
        if any(w is None for w in walked):
            return
        env = statindex.environment(given.tools, KEEP_RULES)
        statindex.write_walked(
            given.store, [w for w in walked if w], tally, began, env, merged.texts
        )

    return _derived(given.store, write)


def _root_kept(
    given: QuickInput, listing: Listing, merged: MergedRun, began: int
) -> tuple[Listing, list[bytes]] | None:
    """``listing`` and the lines of its ``error`` records when every file the run looked at
    is as its new record says and kept as it is by the next full sweep; else None."""
    if not listing.paths:
        return None  # (a root found empty keeps its records: the walk does not list them)
    look = merged.looked.get(listing.root, [])
    wanted = set(look)
    at = {p: i for i, p in enumerate(listing.paths) if p in wanted} if wanted else {}
    new = {k: r for k, r in merged.new.items() if k[0] == listing.root}
    judge = _keeper(given.tools, began)
    retry: list[bytes] = []
    for path in look:
        i, r = at.get(path), new.get((listing.root, path))
        if i is None:  # gone from the walk: its record must be gone too
            if r is not None:
                return None
            continue
        if r is None or r.size != listing.sizes[i] or r.mtime_ns != listing.mtimes[i]:
            return None
        kept = judge(r)
        if kept is None or kept[0] != listing.odd.get(i, ("file", ""))[0]:
            return None
        if kept[0] != "file" and kept[1] != listing.odd[i][1]:
            return None
        if r.has_text and not given.store.has_text(r.sha256 or ""):
            return None
        if kept[2]:
            retry.append(line_of(r))
    return listing, retry


def _keeper(tools: ToolSet, started_ns: int) -> Keeper:
    """The plan's judge of which records a full sweep with ``tools`` keeps as they are,
    after one that started at ``started_ns`` (each MIME type's reader looked up as a record
    of it is judged: the records need not be gone through first)."""
    from engine.readers.registry import reader_versions

    return Keeper(
        reader_versions(),
        LazyReaders({}),
        tools.fingerprint,
        started_ns - RACY_NS,
        tool_names=tools.names,
    )
