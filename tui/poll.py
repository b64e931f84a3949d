"""Following a store another process writes: what changed, read off the UI thread.

The store's index (``extract.db``) says what changed after the counter the dashboard last
saw (:func:`follow_store`): the records written and the keys removed, a few indexed reads
whatever the store's size, applied to the model like a live engine's events. Only when there
is no index to trust (a store without one, another writer's file, an index rebuilt) is the
whole store read again (:func:`diff_store`), by the engine, as at the first load.

``quarry ui --store PATH`` has no session; the app polls ``extract.jsonl``'s stamp and the
index's counter, and when they move it calls :func:`follow_store` or :func:`diff_store` in a
thread worker. A record whose row (every field the dashboard keeps: the table's, the error,
why it was read, the tools it needs, its quality's signal) is not among the rows shown before
is a changed or added one: compared as whole rows in C (tuples built by ``zip``), no
per-record Python, and the UI thread only swaps the columns in. (A change to a field the
dashboard keeps no column of, a content hash alone, is not highlighted.)
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains, not_
from pathlib import Path

from engine.browse import browsable
from engine.db import DB, Point, follow
from engine.dbread import Table
from engine.records import Key, Record, Summary
from engine.store import BadLine, Store
from engine.store import read_jsonl as parse_jsonl
from tui.columns import Batch
from tui.loader import Chunk, Rows, Stamp, jsonl_stamp, load_rows, open_rows, read_summary
from tui.model import RecordModel


@dataclass(frozen=True, slots=True)
class StoreDiff:
    """A store re-read: every row again, and which records are new or changed."""

    chunk: Chunk
    """All rows of the store now (with the lines of its file that are not records)."""
    data: Rows
    """The store's records read (a full record is asked of them)."""
    changed: set[Key]
    """Keys added or changed since the previous load (to highlight)."""
    summary: Summary | None
    """The new summary (None when absent or unreadable)."""
    stamp: tuple[int, ...] | None
    """The stamp of what was read (:func:`tui.loader.jsonl_stamp`)."""


def diff_store(store: Store, model: RecordModel) -> StoreDiff:
    """Read ``store`` again; changed = keys whose row the model did not show as it is now.
    OSError when the store cannot be read."""
    source = open_rows(store)
    rows = Batch()
    bad: tuple[BadLine, ...] = ()
    bad_count = 0
    for chunk in load_rows(source):
        if chunk.bad_count:
            bad, bad_count = chunk.bad, chunk.bad_count
        rows.extend(chunk.rows)
    rows.tally()
    old = set(compress(_rows_of(model.cols), model.alive))
    new = _rows_of(rows)
    fresh = compress(range(len(new)), map(not_, map(contains, repeat(old), new)))
    changed = {(rows.roots[i], rows.paths[i]) for i in fresh}
    n = len(rows)
    chunk = Chunk(rows, n, n, bad, bad_count)
    return StoreDiff(chunk, source, changed, read_summary(store)[0], source.stamp)


def _rows_of(b: Batch) -> list[tuple[object, ...]]:
    """Each row of ``b`` as one tuple of every column the dashboard keeps (built in C)."""
    return list(
        zip(
            b.roots, b.paths, b.status, b.reasons, b.mimes, b.extractors, b.chars, b.pages,
            b.size, b.ms, b.reused, b.quality, b.signals, b.errors, b.whys, b.needs,
            strict=True,
        )
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Followed:
    """What changed in a followed store since the dashboard's counter, from its index."""

    records: list[Record]
    """Records written since (in key order)."""
    removed: list[Key]
    """Keys removed since."""
    point: Point | None
    """Where in the index's history the model is once these are applied (None: in no
    history it can follow)."""
    summary: Summary | None
    """The store's summary now (None when absent or unreadable)."""
    stamp: Stamp | None
    """The stamp taken before the changes were read (:func:`tui.loader.jsonl_stamp`)."""
    whole: bool = False
    """Anything may have changed (the index was made anew, or the follower fell too far
    behind): a browsed store is read from :attr:`index` anew."""
    index: Path | None = None
    """With :attr:`whole`: the store's index to browse now (None: none to browse)."""
    table: Table | None = None
    """With :attr:`whole`: the store's records looked up by key from now on."""


def whole_store(store: Store, rows: Rows | None = None) -> Followed:
    """A browsed store whose index cannot say what changed: the index to browse now and
    where in its history it stands (:class:`Followed` with ``whole``); ``rows``: the store
    opened already, its snapshot let go."""
    stamp = jsonl_stamp(store)
    index = browsable(store, at_least=0)
    if rows is None:
        rows = open_rows(store)  # (its point: the store's own index's, None for another's)
        rows.table.end_read()  # (none loaded: the records are looked up by key)
    summary = read_summary(store)[0]
    return Followed([], [], rows.point, summary, stamp, whole=True, index=index, table=rows.table)


def follow_store(store: Store, since: Point) -> Followed | None:
    """What changed in ``store`` after the point ``since`` of its index; None when the index
    cannot say (none there, not in step with the file, made anew, or the follower too far
    behind): then read the whole store again (:func:`diff_store`). The lines are the
    engine's, parsed by the engine's reader of the format."""
    stamp = jsonl_stamp(store)
    changes = follow(store.out / DB, store.jsonl_path, since)
    if changes is None or changes.reload:
        return None
    records = parse_jsonl(b"".join(changes.lines)).records if changes.lines else []
    return Followed(
        records,
        list(changes.removed),
        Point(since.index, changes.seq),
        read_summary(store)[0],
        stamp,
    )
