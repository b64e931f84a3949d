"""Reading a store for the dashboard: ``extract.jsonl`` to column batches, fast and in pieces.

Pure (no Textual): the app calls :func:`load_rows` from a thread worker and hands each chunk to
the model on the UI thread. The file is read block by block (a small first block, so the first
screen fills at once), each block's lines are decoded in one msgspec call into structs holding
only the table's fields (the other ten fields are skipped in C), and turned into columns. The
bytes are not kept: a :class:`JsonlSource` keeps the file open and reads one line back when
the detail pane needs a full record.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, islice, repeat
from operator import add, attrgetter, lt
from pathlib import Path
from typing import Any

import msgspec
import orjson

from engine.store import Store
from tui.columns import STATUS_CODE, Batch, intern_all, lower_of
from tui.indexing import Lines

FIRST_BYTES = 1 << 18
"""The first block read (~700 records): enough for a screen, parsed in a millisecond."""
WINDOW_BYTES = 1 << 18
"""Bytes read at once to give back single lines (see :meth:`JsonlSource.line`)."""
BLOCK_BYTES = 1 << 23
"""Later blocks (~20k records): each holds the GIL for tens of ms at most."""


class _Row(msgspec.Struct, gc=False):
    """The fields of an ``extract.jsonl`` line the table shows; the others are skipped."""

    root: str
    path: str
    status: str
    reason: str | None = None
    mime: str = ""
    extractor: str | None = None
    chars: int = 0
    pages: int | None = None
    size: int = 0
    ms: int = 0
    reused: bool = False


_decode_rows = msgspec.json.Decoder(list[_Row]).decode
_decode_lines = msgspec.json.Decoder(_Row).decode_lines
_NEG = {None: -1}
_FIELDS = {f: attrgetter(f) for f in _Row.__struct_fields__}


@dataclass(frozen=True, slots=True)
class Chunk:
    """A slice of the store's records, in file order."""

    rows: Batch | list[Any]
    """Table rows, as columns."""
    starts: array[int] | Lines
    """Offset in the file of each row's line (to re-read its full record), or the span of
    lines they came from when every line of it was a row (offsets worked out on demand)."""
    done: int
    """Bytes of ``extract.jsonl`` parsed so far."""
    total: int
    """Bytes of ``extract.jsonl``."""


class JsonlSource:
    """An ``extract.jsonl`` held open: rows read back their line from the version loaded.

    The engine replaces the file atomically (rename), so an open handle keeps reading the
    file the model was built from even after another process wrote a new one.
    """

    def __init__(self, path: Path | None = None, data: bytes | None = None) -> None:
        self._data = data
        self._fd = -1
        self._lock = threading.Lock()
        self._window: tuple[int, bytes] = (0, b"")
        self.stamp: tuple[int, int] | None = None
        """(mtime_ns, size) of the file opened."""
        self.size = len(data) if data is not None else 0
        """Bytes in the file."""
        if path is not None:
            try:
                self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            except FileNotFoundError:
                return
            st = os.fstat(self._fd)
            self.size, self.stamp = st.st_size, (st.st_mtime_ns, st.st_size)

    def __len__(self) -> int:
        return self.size

    def read(self, offset: int, n: int) -> bytes:
        """Up to ``n`` bytes from ``offset`` (thread-safe)."""
        if self._data is not None:
            return self._data[offset : offset + n]
        if self._fd < 0:
            return b""
        if hasattr(os, "pread"):
            return os.pread(self._fd, n, offset)
        with self._lock:
            os.lseek(self._fd, offset, os.SEEK_SET)
            return os.read(self._fd, n)

    def line(self, start: int) -> bytes:
        """The line at ``start``, without its newline.

        Reads go through a 256 KiB window, so walking many rows in file order (a triage scan
        of every error record) costs one system call per few hundred lines, not one each.
        """
        base, window = self._window
        if base <= start < base + len(window):
            end = window.find(b"\n", start - base)
            if end >= 0:
                return window[start - base : end]
        want = WINDOW_BYTES
        while True:
            buf = self.read(start, want)
            end = buf.find(b"\n")
            if end >= 0:
                self._window = (start, buf)
                return buf[:end]
            if len(buf) < want:
                return buf
            want *= 4

    def close(self) -> None:
        """Let the file go (also when the source is garbage-collected)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    __del__ = close


def read_jsonl(store: Store) -> JsonlSource:
    """The store's ``extract.jsonl``, opened (empty for a new store)."""
    return JsonlSource(Path(store.jsonl_path))


def jsonl_stamp(store: Store) -> tuple[int, int] | None:
    """(mtime_ns, size) of ``extract.jsonl``, to notice another process rewriting it."""
    try:
        st = Path(store.jsonl_path).stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def load_rows(
    source: JsonlSource | bytes, chunk_rows: int = 50_000, hashes: array[int] | None = None
) -> Iterator[Chunk]:
    """Parse an ``extract.jsonl`` into chunks of rows; bad lines are skipped.

    With ``hashes``, the ``hash()`` of each kept row's line is appended to it (following).
    """
    src = source if isinstance(source, JsonlSource) else JsonlSource(data=bytes(source))
    total, pos, want = src.size, 0, FIRST_BYTES
    while pos < total:
        buf = src.read(pos, want)
        if not buf:
            break
        end = buf.rfind(b"\n") + 1
        if end == 0 and pos + len(buf) < total:
            want *= 2  # a line longer than the block
            continue
        block = buf[: end or len(buf)]
        count = block.count(b"\n") + (not block.endswith(b"\n"))
        fast = _parse_block(block, pos, count) if count <= chunk_rows else None
        if fast is not None:
            if hashes is not None:
                hashes.extend(map(hash, block.split(b"\n")[: len(fast[0])]))
            yield Chunk(*fast, min(pos + len(block), total), total)
        else:
            yield from _split_block(block, pos, total, chunk_rows, hashes)
        pos, want = pos + len(block), BLOCK_BYTES


def _parse_block(block: bytes, pos: int, count: int) -> tuple[Batch, Lines] | None:
    """The ``count`` lines of ``block`` in one decode, unsplit; None if any line is odd."""
    try:
        rows = _decode_lines(block)
    except msgspec.DecodeError:
        return None
    if len(rows) != count:  # a blank line (decode_lines skips them)
        return None
    return columns_of(rows), Lines(pos, len(block), count)


def _split_block(
    block: bytes, pos: int, total: int, chunk_rows: int, hashes: array[int] | None
) -> Iterator[Chunk]:
    lines = block.split(b"\n")
    if not lines[-1]:
        lines.pop()
    ones = map(add, map(len, lines), repeat(1))
    starts = array("q", islice(accumulate(ones, initial=pos), len(lines)))
    for i in range(0, len(lines), chunk_rows):
        part = lines[i : i + chunk_rows]
        batch, kept = parse_lines(part, starts[i : i + chunk_rows])
        if hashes is not None:
            if len(kept) != len(part):
                wanted = set(kept)
                part = [x for x, at in zip(part, starts[i:], strict=False) if at in wanted]
            hashes.extend(map(hash, part))
        done = starts[i + chunk_rows] if i + chunk_rows < len(lines) else pos + len(block)
        yield Chunk(batch, kept, min(done, total), total)


def parse_lines(lines: list[bytes], starts: array[int]) -> tuple[Batch, array[int]]:
    """Lines of ``extract.jsonl`` as columns, with the offsets of the lines kept."""
    try:
        if b"" in lines:
            raise ValueError("blank line")
        rows = _decode_rows(b"[" + b",".join(lines) + b"]")
        if len(rows) != len(lines):
            raise ValueError("a line held more than one value")
    except (msgspec.DecodeError, ValueError):  # a torn or foreign line: the slow, lenient way
        return _lenient(lines, starts)
    return columns_of(rows), starts


def columns_of(rows: list[_Row]) -> Batch:
    """Decoded rows as columns (low-cardinality strings interned), counted."""
    f = _FIELDS
    paths = list(map(f["path"], rows))
    pages = list(map(f["pages"], rows))
    batch = Batch(
        roots=intern_all(list(map(f["root"], rows))),
        paths=paths,
        lower=lower_of(paths),
        status=bytearray(map(STATUS_CODE.__getitem__, map(f["status"], rows))),
        reasons=intern_all(list(map(f["reason"], rows))),
        mimes=intern_all(list(map(f["mime"], rows))),
        extractors=intern_all(list(map(f["extractor"], rows))),
        chars=array("q", map(f["chars"], rows)),
        pages=array("q", map(_NEG.get, pages, pages)),
        size=array("q", map(f["size"], rows)),
        ms=array("q", map(f["ms"], rows)),
        reused=bytearray(map(f["reused"], rows)),
    )
    batch.in_order = in_order(batch)
    batch.tally()
    return batch


def in_order(b: Batch) -> bool:
    """Whether the keys of ``b`` strictly increase."""
    if not b.roots or len(set(b.roots)) == 1:
        return all(map(lt, b.paths, islice(b.paths, 1, None)))
    keys = b.keys()
    return all(map(lt, keys, islice(keys, 1, None)))


def _lenient(lines: list[bytes], starts: array[int]) -> tuple[Batch, array[int]]:
    batch, kept = Batch(), array("q")
    for line, start in zip(lines, starts, strict=True):
        if not line.strip():
            continue
        try:
            d = orjson.loads(line)
            if not isinstance(d, dict):
                continue
            batch.append(d)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, OverflowError):
            _undo_partial(batch, len(kept))
            continue
        kept.append(start)
    batch.in_order = in_order(batch)
    batch.tally()
    return batch, kept


def _undo_partial(batch: Batch, n: int) -> None:
    """Drop a row :meth:`Batch.append` left half-set when the record was malformed."""
    for name in Batch.__slots__:
        if name not in ("in_order", "pairs"):
            del getattr(batch, name)[n:]
