"""Unix ``compress`` (``.Z``, ``.tar.Z``) streams decoded: the LZW of ncompress, without a tool.

A pure-Python reader of what ``compress`` writes and ``gzip -d``/``uncompress`` read: a
``1f 9d`` signature, a byte giving the widest code (9-16 bits) and block mode (code 256
clears the table), then codes least significant bit first, widening by one bit each time the
table fills its width. At each widening and each clear, compress pads out the group of eight
codes it was writing; the reader skips the same padding.

The table holds each string whole (a list of ``bytes``), the fastest way in Python: its size
is at most what has been decoded since the last clear, which the caller bounds
(``zip_member_bytes``, ``zip_ratio``) a chunk of ~64 KiB at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

MAGIC = b"\x1f\x9d"
_BLOCK_MODE = 0x80
_CLEAR = 256
_MIN_BITS = 9
_MAX_BITS = 16
_FLUSH = 64 * 1024


class LzwError(ValueError):
    """A stream that is no compress data, or is damaged."""


def unlzw(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The bytes a compress stream stands for, a chunk of up to ~64 KiB at a time.

    Codes are read as compress writes them: least significant bit first, 9 bits wide at
    first and one wider each time the table fills its width, up to the header's maximum; at
    each change of width and at each clear (block mode) the rest of the current group of
    eight codes is skipped, as compress's reader does.
    """
    data = bytearray()
    it = iter(chunks)
    for chunk in it:
        data += chunk
        if len(data) >= 3:
            break
    if bytes(data[:2]) != MAGIC:
        raise LzwError("not compress data: no 1f 9d signature")
    if len(data) < 3:
        raise LzwError("compress data cut short in its header")
    flags = data[2]
    max_bits = flags & 0x1F
    block_mode = bool(flags & _BLOCK_MODE)
    if flags & 0x60:
        raise LzwError(f"unknown compress flags {flags:#04x}")
    if not _MIN_BITS <= max_bits <= _MAX_BITS:
        raise LzwError(f"compress data of {max_bits}-bit codes (9-16 is the format's range)")
    yield from _codes(data, it, max_bits, block_mode)


def _codes(
    data: bytearray, more: Iterator[bytes], max_bits: int, block_mode: bool
) -> Iterator[bytes]:
    table: list[bytes] = [bytes((i,)) for i in range(256)]
    if block_mode:
        table.append(b"")  # the clear code's slot
    first_free = len(table)
    max_entries = 1 << max_bits
    bits = _MIN_BITS
    limit = 1 << bits  # the table size from which codes widen
    source = _Groups(data, 3, more)
    previous = b""
    out: list[bytes] = []
    keep = out.append
    grow = table.append
    size = len(table)
    clear = _CLEAR if block_mode else -1
    pending = 0
    while group := source.take(bits):
        # a group: eight codes of ``bits`` bits, least significant first (fewer at the end)
        word = int.from_bytes(group, "little")
        mask = (1 << bits) - 1
        for _ in range(len(group) * 8 // bits):
            code = word & mask
            word >>= bits
            if code < size:
                if code == clear:
                    del table[first_free:]
                    size = first_free
                    bits = _MIN_BITS
                    limit = 1 << bits
                    previous = b""
                    break
                entry = table[code]
            elif code == size and previous:
                entry = previous + previous[:1]  # the string this very code defines
            else:
                raise LzwError("compress data damaged: a code past the table")
            if previous and size < max_entries:
                grow(previous + entry[:1])
                size += 1
            previous = entry
            keep(entry)
            pending += len(entry)
            if size >= limit:
                bits += 1  # the rest of this group is padding
                limit = _limit(bits, max_bits)
                break
        if pending >= _FLUSH:
            yield b"".join(out)
            out.clear()
            pending = 0
    if out:
        yield b"".join(out)


class _Groups:
    """The stream's bytes from ``at`` on, a group of codes at a time."""

    def __init__(self, data: bytearray, at: int, more: Iterator[bytes]) -> None:
        self._data = data
        self._at = at
        self._more = more

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes (eight codes of ``size`` bits), fewer at the stream's end;
        none when what is left holds no whole code (the last group's padding)."""
        data = self._data
        while len(data) - self._at < size:
            chunk = next(self._more, None)
            if chunk is None:
                break
            del data[: self._at]
            self._at = 0
            data += chunk
        group = bytes(data[self._at : self._at + size])
        self._at += size
        return group if len(group) * 8 >= size else b""


def _limit(bits: int, max_bits: int) -> int:
    """The table size from which codes widen past ``bits`` once they have widened to it.

    Never again at the maximum; the first width, 9 bits, widens at 512 entries whatever the
    maximum, so a 9-bit maximum still goes to 10 bits once its table is full, as gzip's and
    ncompress's readers read it (ncompress's ``compress -b 9`` writes what neither reads).
    """
    return (1 << max_bits) + 1 if bits == max_bits else 1 << bits
