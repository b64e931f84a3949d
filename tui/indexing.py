"""Key order, sort orders and key lookups over the model's columns, without per-row objects.

The engine's table gives the records sorted by (root, path), so row ids are already in key order:
a lookup by key is a binary search over the columns, not a dict of a million tuples (~150 MB).
Rows added live out of order switch to an explicit ``order``
array of row ids. Sorting by another column costs one C-level ``sorted`` over an array of keys
(strings ranked to ints first); the result is cached per column until a value changes.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterator, Mapping
from itertools import compress, repeat
from operator import eq
from typing import TYPE_CHECKING, Any

from engine.records import Key
from tui.columns import STATUS_NAMES, Batch

if TYPE_CHECKING:
    from engine.records import Record

_NUMERIC = ("chars", "size", "ms", "quality")
"""Columns sorted by their stored numbers (quality by code: none, good, suspect, garbled)."""
_TEXT = {"reason": "reasons", "mime": "mimes", "extractor": "extractors"}


class Ordering:
    """The columns with their liveness, key order and cached sort orders."""

    def __init__(self) -> None:
        self.cols = Batch()
        """Every row ever loaded or added, by row id."""
        self.alive = bytearray()
        """1 per live row, 0 once removed (row ids are never reused)."""
        self.n_alive = 0
        self.identity = True
        """Whether row ids are in key order (then :attr:`order` is not kept)."""
        self.order: array[int] = array("q")
        """Row ids by key, when not :attr:`identity`."""
        self._perms: dict[str, array[int]] = {}

    def key_of(self, rid: int) -> Key:
        """(root, path) of row ``rid``, live or not."""
        return (self.cols.roots[rid], self.cols.paths[rid])

    # -- growing -------------------------------------------------------------------------

    def _append_batch(self, b: Batch) -> list[int]:
        """Append ``b``; return row ids dropped because a later line has their key."""
        n = len(self.cols)
        follows = b.in_order and (n == 0 or self.key_of(n - 1) < (b.roots[0], b.paths[0]))
        self.cols.extend(b)
        self.alive.extend(b"\x01" * len(b))
        self.n_alive += len(b)
        self._perms.clear()
        if self.identity and follows:
            return []
        if self.identity:
            self.order, self.identity = array("q", range(n)), False
        self.order.extend(range(n, len(self.cols)))
        self.order = array("q", sorted(self.order, key=self.key_of))  # stable: older id first
        keys = list(map(self.key_of, self.order))
        dups = compress(self.order, map(eq, keys, keys[1:]))
        dropped = [rid for rid in dups if self.alive[rid]]
        for rid in dropped:
            self.kill(rid)
        return dropped

    def add_row(self, rec: Record) -> int:
        """Append one live record; returns its row id."""
        rid = len(self.cols)
        self.cols.append(rec)
        self.alive.append(1)
        self.n_alive += 1
        self._perms.clear()
        if self.identity and (rid == 0 or self.key_of(rid - 1) < rec.key):
            return rid
        if self.identity:
            self.order, self.identity = array("q", range(rid)), False
        self.order.insert(bisect.bisect_right(self.order, rec.key, key=self.key_of), rid)
        return rid

    def set_row(self, rid: int, rec: Record) -> None:
        """Overwrite a row's values (its key stays)."""
        self.cols.set(rid, rec)
        self._perms.clear()

    def kill(self, rid: int) -> None:
        """Mark row ``rid`` removed."""
        if self.alive[rid]:
            self.alive[rid] = 0
            self.n_alive -= 1

    # -- sorting -------------------------------------------------------------------------

    def key_function(self, column: str) -> Callable[[int], Any]:
        """Row id -> comparable value of ``column`` (missing values first)."""
        cols = self.cols
        if column == "path":
            return self.key_of
        if column == "status":
            st = cols.status
            return lambda i: STATUS_NAMES[st[i]]
        if column == "pages":
            pages = cols.pages
            return lambda i: max(pages[i], 0)
        if column in _NUMERIC:
            return getattr(cols, column).__getitem__  # type: ignore[no-any-return]
        values = getattr(cols, _TEXT[column])
        return lambda i: values[i] or ""

    def perm(self, column: str) -> array[int] | None:
        """Every row id (live or not) ascending by ``column``, ties in key order.

        None means "row id order" (sorting by path a store in key order).
        """
        if column == "path":
            return None if self.identity else self.order
        cached = self._perms.get(column)
        if cached is not None:
            return cached
        cols = self.cols
        keys: Any
        if column in _NUMERIC:
            keys = getattr(cols, column)
        elif column == "pages":
            keys = array("q", map(max, cols.pages, repeat(0)))
        elif column == "status":
            ranked = sorted(range(len(STATUS_NAMES)), key=STATUS_NAMES.__getitem__)
            table = bytearray(256)
            for rank, code in enumerate(ranked):
                table[code] = rank
            keys = cols.status.translate(table)
        else:  # rank each value of the column's table, then map the codes to ranks
            table = getattr(cols, _TEXT[column]).values
            distinct = sorted({v or "" for v in table})
            ranks: dict[Any, int] = {v: i for i, v in enumerate(distinct)}
            keys = getattr(cols, _TEXT[column]).ranks([ranks[v or ""] for v in table])
        base = range(len(cols)) if self.identity else self.order
        perm = array("q", sorted(base, key=keys.__getitem__))
        self._perms[column] = perm
        return perm

    @staticmethod
    def find_in(view: array[int], rid: int, key: Callable[[int], Any]) -> int | None:
        """Index of ``rid`` in ``view`` (ascending by ``key``), or None."""
        value = key(rid)
        i = bisect.bisect_left(view, value, key=key)
        while i < len(view) and key(view[i]) == value:
            if view[i] == rid:
                return i
            i += 1
        try:  # ties resolved out of order by an earlier incremental insert
            return view.index(rid)
        except ValueError:
            return None

    @staticmethod
    def insort(view: array[int], rid: int, key: Callable[[int], Any]) -> None:
        """Insert ``rid`` into ``view`` after its equals."""
        bisect.insort_right(view, rid, key=key)


class KeyIndex(Mapping[Key, int]):
    """``model.ids``: (root, path) -> row id of live rows, by binary search over the key order."""

    def __init__(self, model: Ordering) -> None:
        self._m = model

    def get(self, key: Key, default: Any = None) -> Any:
        """Row id of ``key`` if it is live."""
        m = self._m
        seq: Any = range(len(m.cols)) if m.identity else m.order
        i = bisect.bisect_left(seq, key, key=m.key_of)
        while i < len(seq):
            rid = seq[i]
            if m.key_of(rid) != key:
                break
            if m.alive[rid]:
                return rid
            i += 1
        return default

    def __getitem__(self, key: Key) -> int:
        rid = self.get(key)
        if rid is None:
            raise KeyError(key)
        return rid  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.get(key) is not None

    def __len__(self) -> int:
        return self._m.n_alive

    def __iter__(self) -> Iterator[Key]:
        m = self._m
        seq = range(len(m.cols)) if m.identity else m.order
        return (m.key_of(rid) for rid in seq if m.alive[rid])
