"""A storage of an OLE2 (Compound File Binary) file written out as an OLE2 file of its own.

A Word 97 document keeps an Excel table pasted into it as a storage of its own
(``ObjectPool/_NNN``: ``Workbook``, ``\\x01CompObj``...), an Excel 97 workbook a Word document
likewise (``MBD...``: ``WordDocument``, ``1Table``): the embedded document is whole, but no
file. The readers (xlrd, antiword, olefile) open files, so the storage is copied into one:
its streams, its storages below it, its class, nothing else. Version 3 (512-byte sectors),
streams under 4,096 bytes in the mini stream as the format asks, each storage's entries a
balanced tree in the format's order (all black: readers walk it, none checks its colours).
Up to 109 FAT sectors, as many as the header holds (about 7 MB); past that, nothing.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

SECTOR = 512
MINI = 64
CUTOFF = 4096
FREE, END, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEADER_FATS = 109
_PER_SECTOR = SECTOR // 4


@dataclass
class Node:
    """A directory entry to write: a storage (with children) or a stream (with data); the
    rest is filled in as the file is laid out."""

    name: str
    storage: bool
    data: bytes = b""
    clsid: bytes = bytes(16)
    children: list[Node] = field(default_factory=list)
    start: int = END
    size: int = 0
    left: int = NOSTREAM
    right: int = NOSTREAM
    child: int = NOSTREAM


def _order(node: Node) -> tuple[int, str]:
    """The format's order of names in a storage: shorter first, then by upper case."""
    return len(node.name), node.name.upper()


def storage_file(ole: Any, storage: list[str], limit: int) -> bytes | None:
    """The storage at path ``storage`` of the open olefile ``ole`` as an OLE2 file (its class
    the file's root class); None when its streams exceed ``limit`` bytes together or the file
    would need more FAT than its header holds."""
    root = Node("Root Entry", True, clsid=_clsid(ole, storage))
    total = 0
    nodes = {(): root}
    for entry in sorted(ole.listdir(streams=True, storages=True), key=len):
        if len(entry) <= len(storage) or entry[: len(storage)] != storage:
            continue
        inner = tuple(entry[len(storage) :])
        parent = nodes.get(inner[:-1])
        if parent is None:
            continue
        if ole.get_type(entry) == 1:  # (olefile's STGTY_STORAGE)
            node = Node(inner[-1], True, clsid=_clsid(ole, entry))
            nodes[inner] = node
        else:
            total += ole.get_size(entry)
            if total > limit:
                return None
            node = Node(inner[-1], False, data=ole.openstream(entry).read())
        parent.children.append(node)
    return compound_file(root)


def _clsid(ole: Any, entry: list[str]) -> bytes:
    text = ole.getclsid(entry) if entry else (ole.root.clsid if ole.root else "")
    if not text:
        return bytes(16)
    raw = bytes.fromhex(text.replace("-", ""))
    # as stored: the first three fields little-endian (olefile prints them big-endian)
    return raw[3::-1] + raw[5:3:-1] + raw[7:5:-1] + raw[8:]


def compound_file(root: Node) -> bytes | None:
    """``root``'s tree as the bytes of an OLE2 file (None past the header's FAT)."""
    entries = _flatten(root)
    sectors: list[bytes] = []
    fat: list[int] = []

    def put(blob: bytes) -> int:
        """``blob`` in sectors of its own, chained; its first sector (END when empty)."""
        count = -(-len(blob) // SECTOR)
        if not count:
            return END
        first = len(sectors)
        for i in range(count):
            sectors.append(blob[i * SECTOR : (i + 1) * SECTOR].ljust(SECTOR, b"\x00"))
            fat.append(first + i + 1 if i < count - 1 else END)
        return first

    mini: list[bytes] = []
    minifat: list[int] = []
    for node in entries[1:]:
        node.size = len(node.data)
        if node.storage or not node.data:
            node.start = END if not node.storage else 0
        elif len(node.data) < CUTOFF:
            count = -(-len(node.data) // MINI)
            node.start = len(mini)
            for i in range(count):
                mini.append(node.data[i * MINI : (i + 1) * MINI].ljust(MINI, b"\x00"))
                minifat.append(node.start + i + 1 if i < count - 1 else END)
        else:
            node.start = put(node.data)
    stream = b"".join(mini)
    root.start, root.size = put(stream), len(stream)
    minifat_bytes = struct.pack(f"<{len(minifat)}I", *minifat) if minifat else b""
    minifat_bytes += struct.pack("<I", FREE) * (-len(minifat) % _PER_SECTOR)
    first_minifat = put(minifat_bytes)
    directory = b"".join(_entry(node, i == 0) for i, node in enumerate(entries))
    directory += _empty() * (-len(entries) % (SECTOR // 128))
    first_dir = put(directory)
    fats = 1
    while len(fat) + fats > fats * _PER_SECTOR:
        fats += 1
    if fats > _HEADER_FATS:
        return None
    first_fat = len(sectors)
    fat += [FATSECT] * fats
    fat += [FREE] * (fats * _PER_SECTOR - len(fat))
    table = struct.pack(f"<{len(fat)}I", *fat)
    sectors += [table[i * SECTOR : (i + 1) * SECTOR] for i in range(fats)]
    difat = [first_fat + i for i in range(fats)] + [FREE] * (_HEADER_FATS - fats)
    header = (
        MAGIC
        + bytes(16)
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + bytes(6)
        + struct.pack("<IIIIII", 0, fats, first_dir, 0, CUTOFF, first_minifat)
        + struct.pack("<III", len(minifat_bytes) // SECTOR, END, 0)
        + struct.pack(f"<{_HEADER_FATS}I", *difat)
    )
    return header + b"".join(sectors)


def _flatten(root: Node) -> list[Node]:
    """Every node, the root first, each storage's children given their ids and a balanced
    tree of siblings (no recursion: storages may nest deep)."""
    entries = [root]
    pending = [root]
    while pending:
        storage = pending.pop()
        kids = sorted(storage.children, key=_order)
        first = len(entries)
        entries.extend(kids)
        storage.child = _balance(kids, first, 0, len(kids))
        pending.extend(kid for kid in kids if kid.storage)
    return entries


def _balance(kids: list[Node], first: int, lo: int, hi: int) -> int:
    """The id of the middle of ``kids[lo:hi]``, its halves as its left and right subtrees
    (depth log2 of a storage's entries)."""
    if lo >= hi:
        return NOSTREAM
    mid = (lo + hi) // 2
    kids[mid].left = _balance(kids, first, lo, mid)
    kids[mid].right = _balance(kids, first, mid + 1, hi)
    return first + mid


def _entry(node: Node, root: bool) -> bytes:
    raw = node.name[:31].encode("utf-16-le") + b"\x00\x00"
    kind = 5 if root else 1 if node.storage else 2
    return struct.pack(
        "<64sHBBIII16sIQQIQ",
        raw,
        len(raw),
        kind,
        1,  # black
        node.left,
        node.right,
        node.child,
        node.clsid,
        0,
        0,
        0,
        node.start if node.size or root else (0 if node.storage else END),
        node.size,
    )


def _empty() -> bytes:
    return struct.pack(
        "<64sHBBIII16sIQQIQ", b"", 0, 0, 0, NOSTREAM, NOSTREAM, NOSTREAM, bytes(16), 0, 0, 0, 0, 0
    )
