"""The names of a store's texts, held in 32 bytes each.

A full sweep asks, for every record it keeps, whether the store still holds its text: once
per record, against one listing of the text folders taken at the sweep's start. As a set of
strings that listing costs ~170 bytes a text (a 64-character ``str`` and its slot in the
hash table): 170 MB at a million texts, the largest thing a warm sweep of a million files
held after its walk. :class:`TextNames` keeps each name as its 32-byte digest, sorted: the
first 8 bytes in an ``array('Q')`` searched by bisection, the other 24 in one ``bytes``
beside it. A lookup costs a few microseconds instead of a fraction of one; the answers are
the set's, exactly.

Only a name in its own folder (``extract/ab/ab….txt``) is a text: the store looks a text up
there and nowhere else (:meth:`engine.store.Store.has_text`).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Container, Iterable

from engine.records import is_sha256

_TAIL = 24
"""Bytes of a digest past the first 8."""


class TextNames(Container[str]):
    """Which content hashes have a text: built from the text folders' listings."""

    __slots__ = ("_heads", "_tails")

    def __init__(self, heads: array[int], tails: bytes | bytearray) -> None:
        self._heads = heads
        self._tails = tails

    @classmethod
    def of(cls, folders: Iterable[tuple[str, Iterable[str]]]) -> TextNames:
        """The texts of ``folders``: (folder name, the names of its texts without ``.txt``),
        in ascending order of folder name (ValueError if not). A name that is not a content
        hash, or not in the folder of its first two digits, is no text."""
        heads: array[int] = array("Q")
        tails = bytearray()
        last: str | None = None
        for folder, names in folders:
            if last is not None and folder <= last:
                raise ValueError(f"text folders out of order: {last!r} then {folder!r}")
            last = folder
            if len(folder) != 2 or not names:  # (most folders of a small store are empty)
                continue
            # a folder at a time: its digests sorted are the next stretch of the whole order
            digests = sorted(
                bytes.fromhex(name) for name in names if name[:2] == folder and is_sha256(name)
            )
            heads.extend(int.from_bytes(d[:8], "big") for d in digests)
            tails += b"".join(d[8:] for d in digests)
        return cls(heads, tails)

    def __len__(self) -> int:
        return len(self._heads)

    def __contains__(self, name: object) -> bool:
        if not is_sha256(name):
            return False
        digest = bytes.fromhex(name)  # type: ignore[arg-type]
        head, tail = int.from_bytes(digest[:8], "big"), digest[8:]
        heads, tails = self._heads, self._tails
        i = bisect_left(heads, head)
        while i < len(heads) and heads[i] == head:  # (more than once only by a collision)
            if tails[i * _TAIL : (i + 1) * _TAIL] == tail:
                return True
            i += 1
        return False

    def issuperset(self, names: Iterable[str]) -> bool:
        """Whether every one of ``names`` has a text."""
        return all(name in self for name in names)
