"""One view of an index's records (a query, a sort) read at any position, never held whole.

A viewer of a store too big to hold (the dashboard at ten million records, issue 26) asks
for the rows on screen: the rows at positions ``start`` to ``start + n`` of the records a
clause keeps, in a sort column's order (:mod:`engine.pages`: ties by key, a descending sort
the ascending one read backwards). A :class:`Window` answers from the index:

- from a row whose place it knows (every :data:`STEP`-th row it read, and the last), by
  keyset: the rows after that place, never an ``OFFSET`` that walks every row before it.
  Scrolling, paging and a cursor's moves are walks of the rows shown;
- a jump far from every known place (the scroll bar dragged, a search's answer): by
  ``OFFSET`` from whichever end is nearer, which walks that many entries of the order's
  B-tree (:data:`engine.db.SORTED_FROM`) but reads none of their rows.

:meth:`Window.count` is the records the clause keeps (the ``counts`` table when it keeps
every record, else a count SQLite walks), :meth:`Window.position` a record's place in the
order. A window is one snapshot's view: a reader that saw the index change makes a new one.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_left
from typing import Any

from engine.db import ORDER_SQL, key_bytes, name_of
from engine.pages import After, beyond, page_sql, tree_of
from engine.records import Key
from engine.sqlquery import Where

STEP = 256
"""Every how many rows read a window keeps a row's place (a jump lands near one)."""
FAR = 20_000
"""Rows past a known place beyond which a read jumps by ``OFFSET`` instead of walking them
(both walk the order's B-tree; the walk also decodes every row)."""
WALK_SHARE = 0.01
"""The share of the records a view must keep for its pages to walk the order's B-tree,
skipping the rows it does not keep, rather than let SQLite find the kept ones by another
index and sort them all for each page (a status tab of a tenth of two million records sorted
by ms: ~0.4 s a page; walked, the rows of a page and the ones between them)."""
ROW = "root, path, status, quality, reason, mime, extractor, chars, pages, size, ms, reused"
"""The columns of a row a window gives (see :data:`Row`)."""

Row = tuple[Any, ...]
"""(root, path, status, quality, reason, mime, extractor, chars, pages, size, ms, reused): a
name as a ``str`` (:func:`engine.db.name_of`), a missing field None, ``reused`` a bool."""


class Window:
    """The records ``where`` keeps in ``column``'s order, read a few rows at a time."""

    def __init__(
        self, con: sqlite3.Connection, where: Where, column: str = "path", *, reverse: bool = False
    ) -> None:
        if column not in ORDER_SQL:
            raise ValueError(f"no sort column {column!r}")
        self._con = con
        self._where = where
        self.column = column
        self.reverse = reverse
        self._value = ORDER_SQL[column] or "''"
        self._table = "records NOT INDEXED" if where.driven else "records"
        """What the counts read: a driven clause's few records by row id."""
        where.install(con)
        self._count: int | None = None
        self._walk: bool | None = None
        self._places: dict[int, After] = {}
        """Position -> the place of the row there (the rows after it are read from it)."""
        self._known: list[int] = []
        """The positions of :attr:`_places`, ascending."""

    def counted(self, n: int) -> None:
        """The records the clause keeps, known to the caller (counted with others in one
        walk): not counted again."""
        self._count = n

    def count(self) -> int:
        """The records the clause keeps (asked once)."""
        if self._count is None:
            if self._where.sql == "1":
                sql, params = "SELECT coalesce(sum(n), 0) FROM counts", []
            else:
                sql = f"SELECT count(*) FROM {self._table} WHERE ({self._where.sql})"
                params = list(self._where.params)
            (self._count,) = self._con.execute(sql, params).fetchone()
        return self._count

    def rows(self, start: int, n: int) -> list[Row]:
        """The rows at positions ``start`` to ``start + n`` (fewer at the end)."""
        count = self.count()
        start = max(0, start)
        n = min(n, count - start)
        if n <= 0:
            return []
        i = bisect_left(self._known, start) - 1  # the nearest place before start
        known = self._known[i] if i >= 0 else -1
        walk = start - known - 1
        from_end = count - start - n
        if walk <= FAR:
            after = self._places[known] if known >= 0 else None
            got = self._read(self.reverse, after, walk + n, 0)[walk:]
        elif from_end < start:
            got = self._read(not self.reverse, None, n, from_end)[::-1]
        else:
            got = self._read(self.reverse, None, n, start)
        self._remember(start, got)
        return [row[1:] for row in got]

    def position(self, key: Key) -> int | None:
        """Where the record of ``key`` is in the order (None: the clause does not keep it)."""
        where = self._where
        row = self._con.execute(
            f"SELECT {self._value} FROM records WHERE root = ? AND path = ? AND ({where.sql})",
            (key_bytes(key[0]), key_bytes(key[1]), *where.params),
        ).fetchone()
        if row is None:
            return None
        # the rows before it: past its place read the other way
        before, place = beyond(self.column, After(row[0], *key), reverse=not self.reverse)
        (n,) = self._con.execute(
            f"SELECT count(*) FROM {self._table} WHERE ({where.sql}) AND {before}",
            (*where.params, *place),
        ).fetchone()
        return int(n)

    def _walks(self) -> bool:
        """Whether pages walk the order's B-tree whatever SQLite would choose: it is there,
        and the view keeps at least :data:`WALK_SHARE` of the records (asked once). Not a
        jump: by ``OFFSET``, a walk looks up every row it skips to judge it (a status tab of
        a tenth of two million records: 11 s to its middle, against ~1 s sorted)."""
        if self._walk is None:
            tree = tree_of(self.column)
            there = self._con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (tree,)
            ).fetchone()
            (total,) = self._con.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()
            self._walk = (
                there is not None and not self._where.driven and self.count() >= WALK_SHARE * total
            )
        return self._walk

    def _read(self, reverse: bool, after: After | None, n: int, offset: int) -> list[Row]:
        sql, params = page_sql(
            self._where,
            self.column,
            reverse=reverse,
            after=after,
            limit=n,
            offset=offset,
            columns=f"{self._value}, {ROW}",
            walk=offset == 0 and self._walks(),  # (a jump skips only kept rows when sorted)
        )
        return [_row(raw) for raw in self._con.execute(sql, params).fetchall()]

    def _remember(self, start: int, got: list[Row]) -> None:
        """Keep the place of every :data:`STEP`-th row of ``got`` and of its last."""
        last = len(got) - 1
        for i, row in enumerate(got):
            pos = start + i
            if (pos % STEP == STEP - 1 or i == last) and pos not in self._places:
                self._places[pos] = After(row[0], row[1], row[2])
                self._known.insert(bisect_left(self._known, pos), pos)


def _row(raw: tuple[Any, ...]) -> Row:
    """A row as a window gives it, its sort value first (see :data:`Row`)."""
    value, root, path, *rest, reused = raw
    return (value, name_of(root), name_of(path), *rest, bool(reused))


__all__ = ["FAR", "ROW", "STEP", "WALK_SHARE", "Row", "Window"]
