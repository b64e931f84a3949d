"""Reading a store for the dashboard: the engine's table of its records as column batches.

Pure (no Textual), and no reader of the store's format: the rows come from the engine
(:mod:`engine.dbread`: the store's index, or one the engine builds from ``extract.jsonl``),
already as columns in key order; here they only become the model's :class:`Batch` (the
engine's coded columns taken as they are, the status and quality codes mapped onto the
dashboard's own). The app calls :func:`open_rows` and iterates :func:`load_rows` from a
thread worker and hands each chunk to the model on the UI thread.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from engine.db import DB, Point, change_counter
from engine.dbread import Columns, Table, lines_index, open_table
from engine.errors import QuarryError, StoreUnusable
from engine.records import Summary
from engine.store import BadLine, Store
from tui.coded import Coded
from tui.columns import QUALITY_CODE, STATUS_CODE, Batch, lower_of


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of the store's records, in key order."""

    rows: Batch
    """Table rows, as columns."""
    done: int
    """Records read so far."""
    total: int
    """Records in the store."""
    bad: tuple[BadLine, ...] = ()
    """The first few lines of ``extract.jsonl`` that are not records (on a load's first
    chunk only)."""
    bad_count: int = 0
    """How many lines are not records (on a load's first chunk only)."""
    restart: bool = False
    """The rows given before were the first lines of a store whose index was being built:
    the model starts afresh with these."""


Stamp = tuple[int, int, int]
"""(mtime_ns, size) of ``extract.jsonl`` and the change counter of the store's index."""


def jsonl_stamp(store: Store) -> Stamp | None:
    """(mtime_ns, size) of ``extract.jsonl`` and the index's change counter (-1 for none):
    either moving means another process wrote the store. None when there is neither."""
    size, mtime_ns, _ctime, _inode = store.jsonl_identity()
    counter = change_counter(store.out / DB)
    if size < 0 and counter is None:
        return None
    return (mtime_ns if size >= 0 else -1, size, -1 if counter is None else counter)


@dataclass
class Rows:
    """A store opened for the dashboard: the engine's table of its records and the stamp
    taken before it was opened (a later change is told from it)."""

    table: Table
    stamp: Stamp | None

    @property
    def point(self) -> Point | None:
        """Where in the store's index's history the rows are (None: no index to follow)."""
        return self.table.point


def open_rows(store: Store) -> Rows:
    """The records of ``store`` to load (OSError when its file cannot be read: a folder in
    its place, no permission)."""
    stamp = jsonl_stamp(store)
    try:
        table = open_table(store)
    except StoreUnusable as exc:
        cause = exc.__cause__
        raise cause if isinstance(cause, OSError) else OSError(str(exc)) from exc
    return Rows(table, stamp)


def rows_of(data: bytes) -> Rows:
    """The records of the bytes of an ``extract.jsonl`` (a store held in memory), read by the
    engine as it reads a store's file."""
    return Rows(Table(lines_index(data), own=False), None)


def load_rows(
    rows: Rows | bytes, first: int | None = None, size: int | None = None
) -> Iterator[Chunk]:
    """The chunks of ``rows`` (or of the bytes of an ``extract.jsonl``) as column batches,
    in key order; the first carries the lines that are not records."""
    rows = rows_of(rows) if isinstance(rows, bytes) else rows
    table = rows.table
    sizes = {k: v for k, v in (("first", first), ("size", size)) if v is not None}
    bad, count = table.bad, table.bad_count
    for chunk in table.chunks(**sizes):
        if chunk.restart:  # (the lines left out are those of the whole file now)
            bad, count = table.bad, table.bad_count
        batch = batch_of(chunk.rows)
        yield Chunk(batch, chunk.done, chunk.total, bad, count, chunk.restart)
        bad, count = (), 0
    if count or bad:  # no record at all: the lines left out are still said
        yield Chunk(Batch(), 0, 0, bad, count)


def _mapped(codes: array[int], table: list[int]) -> bytearray:
    """Codes mapped through ``table`` (one byte each)."""
    if codes.typecode == "B":
        return bytearray(codes.tobytes().translate(bytes(table) + bytes(256 - len(table))))
    return bytearray(map(table.__getitem__, codes))


def batch_of(cols: Columns) -> Batch:
    """The engine's columns as the model's (its coded columns taken as they are)."""
    c = cols.coded
    status_values, status_codes = c["status"]
    quality_values, quality_codes = c["quality"]
    mime_values, mime_codes = c["mime"]
    batch = Batch(
        roots=cols.roots,
        paths=cols.paths,
        lower=lower_of(cols.paths),
        status=_mapped(status_codes, [STATUS_CODE[str(s)] for s in status_values]),
        reasons=Coded(*c["reason"]),
        mimes=Coded([m or "" for m in mime_values], mime_codes),
        extractors=Coded(*c["extractor"]),
        chars=cols.numbers["chars"],
        pages=cols.numbers["pages"],
        size=cols.numbers["size"],
        ms=cols.numbers["ms"],
        reused=cols.reused,
        quality=_mapped(quality_codes, [QUALITY_CODE.get(q, 0) for q in quality_values]),
        signals=Coded(*c["signal"]),
        errors=Coded(*c["error"]),
        whys=Coded(*c["why"]),
        needs=Coded(*c["needs"]),
    )
    batch.tally()
    return batch


def read_summary(store: Store) -> tuple[Summary | None, str]:
    """The store's summary and "" (None and "" when there is none), or None and why not."""
    try:
        summary = store.load_summary()
    except (QuarryError, OSError, ValueError, TypeError, AttributeError) as exc:
        # a summary from another writer, a folder, garbage: the records still show
        return None, f"extract.summary.json cannot be read ({type(exc).__name__}: {exc})"
    if summary is not None and not _summary_ok(summary):
        return None, "extract.summary.json has fields of the wrong type: not used"
    return summary, ""


def _summary_ok(s: Summary) -> bool:
    """Whether the fields the dashboard reads have the types the engine writes."""

    def counts(d: object) -> bool:
        return isinstance(d, dict) and all(
            isinstance(k, str) and isinstance(v, int) for k, v in d.items()
        )

    return (
        all(isinstance(r, str) for r in s.roots)
        and isinstance(s.files, int)
        and counts(s.counts)
        and counts(s.tools_missing)
        and isinstance(s.tools_found, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in s.tools_found.items())
        and isinstance(s.finished, str)
    )
