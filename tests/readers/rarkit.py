"""RAR 4 archives written byte by byte, members stored (no compression), for the RAR reader's
tests: nothing free writes RAR, and the format's stored form is a few fixed headers.

Layout (RAR 4.x technote): the marker block, the archive header, then per member a file
header (its CRC the low 16 bits of the CRC-32 of the header from its type byte on) followed
by the member's bytes, and the end-of-archive block.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

MARKER = b"Rar!\x1a\x07\x00"
_MAIN, _FILE, _END = 0x73, 0x74, 0x7B
_LONG_BLOCK = 0x8000  # a file header is followed by data (PACK_SIZE)
_STORE = 0x30
_UNIX = 3
_DOS_TIME = (2007 - 1980) << 25 | 10 << 21 | 1 << 16 | 15 << 11  # 2007-10-01 15:00


def _block(kind: int, flags: int, body: bytes) -> bytes:
    head = struct.pack("<BHH", kind, flags, 7 + len(body)) + body
    return struct.pack("<H", zlib.crc32(head) & 0xFFFF) + head


def member(name: str, data: bytes, *, mode: int = 0o100644) -> bytes:
    """One stored member's header and bytes."""
    raw = name.encode()
    body = struct.pack(
        "<IIBIIBBHI",
        len(data),  # PACK_SIZE
        len(data),  # UNP_SIZE
        _UNIX,
        zlib.crc32(data),
        _DOS_TIME,
        20,  # the RAR version needed to extract: 2.0
        _STORE,
        len(raw),
        mode,
    )
    return _block(_FILE, _LONG_BLOCK, body + raw) + data


def rar4(members: Sequence[tuple[str, bytes]], *, end: bool = True) -> bytes:
    """A RAR 4 archive of ``members`` (name, bytes), each stored."""
    out = MARKER + _block(_MAIN, 0, bytes(6))
    out += b"".join(member(name, data) for name, data in members)
    if end:
        out += _block(_END, 0x4000, b"")
    return out
