"""The quick sweep: a full sweep of a folder where nothing changed, judged by the stat index.

:func:`quick_sweep` is what a :class:`~engine.sweep.Sweeper` made for the ``sweep`` command
tries before it loads any record: with a valid ``extract.stat`` (:mod:`engine.statindex`) and
a walk that finds every file as the index lists it, the only work left is reading the
``error`` files again (every full sweep does) and writing the summary. :func:`leave_index`
writes the index at the end of a usual full sweep, for the next one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine import statindex
from engine.errors import StoreCorrupt
from engine.events import Notice, Progress, SweepFinished, SweepStarted
from engine.index import RecordIndex
from engine.records import Record, Status, Summary
from engine.summary import build_summary, started_ns

if TYPE_CHECKING:
    from engine.run import Run
    from engine.sweep import Sweeper
    from engine.walk import Listing

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The folder was as the index lists it: the errors were read again to the same
    verdicts, the summary is written, no record changed."""

    summary: Summary
    """The summary written."""
    extracted: int
    """Files read (the errors)."""
    reused: int
    """Files whose verdict was kept."""
    errors: int
    """Error records in the store."""


@dataclass(frozen=True, slots=True)
class ReadAgain:
    """The folder was as the index lists it, but a read of an error gave another verdict
    (or did not end): the sweeper loads the store and applies ``new`` as a usual run's."""

    run: Run
    """The run that read the errors again."""
    new: dict[Key, Record]
    """Its records."""
    scope: list[Key]
    """The records it answered for."""
    reused: int
    """Files whose verdict was kept."""
    started: float
    """When the sweep started."""


def quick_sweep(sweeper: Sweeper) -> Unchanged | ReadAgain | None:
    """The sweep of ``sweeper``'s roots, when its stat index shows that nothing changed;
    None when it cannot (the walk it may have made is kept for the usual run)."""
    started = time.time()
    opts, store = sweeper.options, sweeper.store
    if opts.rehash or opts.verify or store.is_dirty():
        return None
    index = statindex.load(store.out)
    roots = [str(r) for r in sweeper.roots]
    if index is None or any(index.files_of(r) is None for r in roots):
        return None
    try:
        summary = store.load_summary()
    except StoreCorrupt:
        return None
    now = statindex.sources()  # once: what the readers are trusted for is what is renewed
    if summary is None or not index.describes(store, sweeper.tools, started_ns(summary), now):
        return None
    listings = sweeper.walk_all()
    if sweeper.stop.is_set() or not all(index.unchanged(listing) for listing in listings):
        return None
    started = min(started, sweeper.walk_started)  # a walk made ahead began before this sweep
    files = sum(map(len, listings))
    total = sum(sum(listing.sizes) for listing in listings)
    sweeper.on_event(SweepStarted(started, tuple(roots), files, total, True))
    retry = {(r.root, r.path): r for root in roots for r in index.retries(root)}
    reused = sum(listing.nonempty_files() for listing in listings) - len(retry)
    extracted = 0
    if retry:
        run, new = _read_again(sweeper, retry, listings, started_ns(summary))
        extracted = run.extracted
        if not (
            run.finished_whole
            and not run.added_texts
            and len(new) == len(retry)
            and all(new.get(k) is r for k, r in retry.items())
        ):
            _progress(sweeper, listings, total)
            return ReadAgain(run, new, list(retry), reused, started)
        store.mark_clean()  # nothing was added: no text can lack its record
    tally = index.tally()
    versions = index.reader_versions()
    written = summary.jsonl_written  # (the file is as the last sweep wrote it)
    summary = build_summary(
        tally, sweeper.roots, sweeper.tools, started, time.time(), versions, sweeper.left_out
    )
    summary = replace(summary, jsonl_written=written)
    store.write_summary(summary)
    with contextlib.suppress(OSError):  # derived: the next sweep compares the readers again
        statindex.renew_sources(store, index, now)
    _progress(sweeper, listings, total)
    sweeper.on_event(SweepFinished(time.time(), summary, extracted, reused, True))
    return Unchanged(summary, extracted, reused, tally.counts.get(Status.ERROR, 0))


def leave_index(
    sweeper: Sweeper, summary: Summary, texts_seen: tuple[list[int], set[str]] | None
) -> None:
    """Write the stat index after a usual full sweep that wrote ``summary``. It is derived:
    a sweep does without it, so failing to write it is never the sweep's failure (a fault
    is said, not raised)."""
    store = sweeper.store
    try:
        statindex.write(
            store,
            sweeper.records,
            (str(r) for r in sweeper.roots),
            sweeper.index.tally,
            sweeper.tools,
            started_ns(summary),
            texts_seen,
        )
    except OSError:
        pass  # a full or read-only disk: the sweep's own writes said so already
    except Exception as exc:  # a fault in a cache must not lose the sweep that wrote it
        store.drop_stat_index()
        why = (
            f"{statindex.NAME} not written ({type(exc).__name__}: {exc}): "
            "the next sweep loads the store"
        )
        sweeper.on_event(Notice(time.time(), "stat-index", why, "warning"))


def _read_again(
    sweeper: Sweeper, retry: Mapping[Key, Record], listings: list[Listing], prev_started_ns: int
) -> tuple[Run, dict[Key, Record]]:
    """Read the files of the ``retry`` records as the usual run would (its rules decide),
    with only those records in view."""
    from engine.run import Run, RunContext, RunOptions

    view = RecordIndex(retry.values())
    opts = RunOptions(sweeper.options.limits, False, prev_started_ns, False)
    ctx = RunContext(
        view,
        sweeper.store,
        sweeper.executor,
        sweeper.tools,
        opts,
        sweeper.on_event,
        sweeper.stop.is_set,
    )
    wanted = [listing.pick({p for r, p in retry if r == listing.root}) for listing in listings]
    run = Run(ctx, [e for entries in wanted for e in entries], set(), True)
    new = run.execute()
    if run.executor_failed:
        sweeper.drop_executor()
    return run, new


def _progress(sweeper: Sweeper, listings: list[Listing], total: int) -> None:
    """Every file of the sweep decided."""
    files = sum(map(len, listings))
    last = next((listing.paths[-1] for listing in reversed(listings) if listing.paths), "")
    sweeper.on_event(Progress(time.time(), files, files, total, total, last))
