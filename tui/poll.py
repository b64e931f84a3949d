"""Following a store another process writes: what changed, read off the UI thread.

The store's index (``extract.db``) says what changed after the counter the dashboard last
saw (:func:`follow_store`): the records written and the keys removed, a few indexed reads
whatever the store's size, applied to the model like a live engine's events. Only when there
is no index to trust (a store without one, another writer's file, an index rebuilt) is the
whole store read again (:func:`diff_store`):

``quarry ui --store PATH`` has no session; the app polls ``extract.jsonl``'s mtime and size,
and when they move it calls :func:`diff_store` in a thread worker. The writer replaces the
file atomically, so a read sees the old file or the new one, never half; and the model's
:class:`~tui.loader.JsonlSource` still holds the old one open. A new line whose hash is not
among the old file's line hashes is a changed (or added) record: passes over bytes in C, no
per-record Python, and the UI thread only swaps the columns in.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains, not_

from engine.db import DB, Point, follow
from engine.records import Key, Record, Summary
from engine.store import BadLine, Store
from engine.store import read_jsonl as parse_jsonl
from tui.columns import Batch
from tui.indexing import LineIndex, line_at
from tui.loader import (
    BLOCK_BYTES,
    Chunk,
    JsonlSource,
    Stamp,
    in_order,
    jsonl_stamp,
    load_rows,
    read_jsonl,
    read_summary,
)
from tui.model import RecordModel


def line_hashes(source: JsonlSource | bytes) -> Iterator[int]:
    """``hash()`` of every non-blank line of a source, in order, block by block."""
    src = source if isinstance(source, JsonlSource) else JsonlSource(data=bytes(source))
    pos = 0
    while pos < src.size:
        buf = src.read(pos, BLOCK_BYTES)
        if not buf:
            return
        end = buf.rfind(b"\n") + 1 or len(buf)
        yield from map(hash, filter(None, buf[:end].split(b"\n")))
        pos += end


@dataclass(frozen=True, slots=True)
class StoreDiff:
    """A store re-read: every row again, and which records are new or changed."""

    chunk: Chunk
    """All rows of the new file (with the lines that are not records)."""
    data: JsonlSource
    """The new file, held open."""
    changed: set[Key]
    """Keys added or changed since the previous load (to highlight)."""
    summary: Summary | None
    """The new summary (None when absent or unreadable)."""
    stamp: tuple[int, ...] | None
    """The stamp of what was read (:func:`tui.loader.jsonl_stamp`)."""


def diff_store(store: Store, model: RecordModel) -> StoreDiff:
    """Read ``store`` again; changed = keys of lines the model did not show as they are now."""
    source = read_jsonl(store)
    rows, starts, new = Batch(), LineIndex(), array("q")
    bad: list[BadLine] = []
    for chunk in load_rows(source, hashes=new):
        bad.extend(chunk.bad)
        if isinstance(chunk.rows, Batch):
            rows.extend(chunk.rows)
            starts.extend(chunk.starts)
    rows.in_order = in_order(rows)
    rows.tally()
    old_source, old_starts = model.data, model.starts
    live, alive = dict(model.live), bytes(model.alive)
    old = set(line_hashes(old_source))
    gone = compress(range(len(alive)), map(not_, alive))
    for rid in [*live, *gone]:  # rows shown otherwise than their old line
        start = old_starts.get(rid, old_source) if rid < len(old_starts) else -1
        if start >= 0:
            old.discard(hash(line_at(old_source, start)))
    old.update(hash(rec.to_json()) for rid, rec in live.items() if alive[rid])
    fresh = compress(range(len(new)), map(not_, map(contains, repeat(old), new)))
    changed = {(rows.roots[i], rows.paths[i]) for i in fresh}
    chunk = Chunk(rows, starts, source.size, source.size, tuple(bad))
    return StoreDiff(chunk, source, changed, read_summary(store)[0], source.stamp)


@dataclass(frozen=True, slots=True)
class Followed:
    """What changed in a followed store since the dashboard's counter, from its index."""

    records: list[Record]
    """Records written since (in key order)."""
    removed: list[Key]
    """Keys removed since."""
    point: Point
    """Where in the index's history the model is once these are applied."""
    summary: Summary | None
    """The store's summary now (None when absent or unreadable)."""
    stamp: Stamp | None
    """The stamp taken before the changes were read (:func:`tui.loader.jsonl_stamp`)."""


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
