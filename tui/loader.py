"""Reading a store for the dashboard: ``extract.jsonl`` to rows in chunks, fast.

Pure (no Textual): the app calls :func:`load_rows` from a thread worker and hands each chunk
to the model on the UI thread. orjson plus compact tuples loads a million records in about
the time the standard library needs to parse a fifth of them.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from engine.store import Store
from tui.model import Row, interned, row_of


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of the store's records, in file order."""

    rows: list[Row]
    """Table rows."""
    starts: array[int]
    """Offset in the file of each row's line (to re-read its full record)."""
    done: int
    """Bytes of ``extract.jsonl`` parsed so far."""
    total: int
    """Bytes of ``extract.jsonl``."""


def read_jsonl(store: Store) -> bytes:
    """The bytes of the store's ``extract.jsonl`` (empty for a new store)."""
    try:
        return store.jsonl_path.read_bytes()
    except FileNotFoundError:
        return b""


def load_rows(data: bytes, chunk_rows: int = 50_000) -> Iterator[Chunk]:
    """Parse ``data`` (an ``extract.jsonl``) into chunks of rows; bad lines are skipped."""
    loads = orjson.loads
    intern = interned().setdefault
    total = len(data)
    pos = 0
    enabled = gc.isenabled()
    gc.disable()  # a million small tuples would otherwise trigger full collections
    try:
        while pos < total:
            rows: list[Row] = []
            starts: array[int] = []
            add, mark = rows.append, starts.append
            while pos < total and len(rows) < chunk_rows:
                end = data.find(b"\n", pos)
                if end < 0:
                    end = total
                if end > pos:
                    try:
                        d = loads(data[pos:end])
                        try:  # inline: this loop is the cost of opening a million records
                            add(
                                (
                                    intern(d["root"], d["root"]),
                                    d["path"],
                                    intern(d["status"], d["status"]),
                                    intern(d["reason"], d["reason"]),
                                    intern(d["mime"], d["mime"]),
                                    intern(d["extractor"], d["extractor"]),
                                    d["chars"],
                                    d["pages"],
                                    d["size"],
                                    d["ms"],
                                    d["reused"],
                                )
                            )
                        except KeyError:  # an older or foreign writer: the slow, lenient way
                            add(row_of(d))
                        mark(pos)
                    except (orjson.JSONDecodeError, KeyError, TypeError):
                        pass  # a torn or foreign line: the next poll reads the file again
                pos = end + 1
            yield Chunk(rows, starts, min(pos, total), total)
    finally:
        if enabled:
            gc.enable()


def jsonl_stamp(store: Store) -> tuple[int, int] | None:
    """(mtime_ns, size) of ``extract.jsonl``, to notice another process rewriting it."""
    try:
        st = Path(store.jsonl_path).stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)
