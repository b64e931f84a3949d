"""The records of an index in the dashboard's sort orders, a page at a time.

Each column the records table sorts by has one order here, written twice: as an SQL
expression over ``records`` (:data:`ORDER_SQL`) and as a Python key over a record
(:func:`sort_value`); ties go in key order (root, then path) and a descending sort is the
ascending one read backwards, ties included, as on the dashboard. SQLite compares text and
the index's keys as UTF-8 bytes, which is the code points' order: Python's order of the same
strings (names keep a byte that is not UTF-8 as a code point, :func:`engine.db.key_bytes`).

:func:`page` reads one page by keyset: the rows after (or before) a row's place, never an
``OFFSET`` that walks every row before it. ``quarry export --sort COLUMN [--desc] [--limit N]``
reads its records through it. A store of :data:`engine.db.SORTED_FROM` records or more has a
B-tree of each order's expression (then key): SQLite walks it from the keyset's place, so a
page of the slowest files of ten million is a few milliseconds; without one, SQLite sorts
what the query keeps (a top-N sort under ``--limit``: seconds at ten million).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.db import ORDER_SQL, SORT_INDEX, key_bytes
from engine.quality import VERDICTS
from engine.records import Record
from engine.sqlquery import Where

SORTS: tuple[str, ...] = tuple(ORDER_SQL)
"""The sort columns, in the dashboard's order (:data:`engine.db.ORDER_SQL` says each one's
SQL)."""


def tree_of(column: str) -> str:
    """The B-tree of ``column``'s order (the key's for ``path``; the others a big store's,
    :data:`engine.db.SORTED_FROM`)."""
    return "by_key" if column == "path" else SORT_INDEX + column


def sort_value(record: Record, column: str) -> str | int:
    """``record``'s value in the order of ``column`` (what :data:`ORDER_SQL` computes)."""
    if column == "path":
        return ""
    if column == "quality":
        verdict = record.quality.verdict if record.quality is not None else None
        return VERDICTS.index(verdict) + 1 if verdict in VERDICTS else 0
    if column == "pages":
        return max(record.pages or 0, 0)
    value: str | int | None = getattr(record, column)
    return value if value is not None else ""


def sort_key(column: str) -> Callable[[Record], tuple[str | int, str, str]]:
    """A Python key giving ``column``'s order over records, ties by key."""
    return lambda r: (sort_value(r, column), r.root, r.path)


@dataclass(frozen=True, slots=True)
class After:
    """Where a page starts: the place of the last row of the page before it."""

    value: str | int
    root: str
    path: str

    @classmethod
    def of(cls, record: Record, column: str) -> After:
        """The place of ``record`` in ``column``'s order."""
        return cls(sort_value(record, column), record.root, record.path)


def page(
    con: sqlite3.Connection,
    where: Where,
    column: str,
    *,
    reverse: bool = False,
    after: After | None = None,
    limit: int | None = None,
) -> Iterator[bytes]:
    """The lines of the records ``where`` keeps, in ``column``'s order (``reverse``: read
    backwards), from past ``after`` (exclusive), at most ``limit`` of them; ``where`` must
    be installed on ``con`` (:meth:`Where.install`). A big store's index walks its sort
    B-tree of ``column`` (:data:`engine.db.SORTED_FROM`); another sorts the rows it keeps."""
    sql, params = page_sql(where, column, reverse=reverse, after=after, limit=limit)
    cur = con.execute(sql, params)
    while batch := cur.fetchmany(4096):
        yield from (bytes(row[0]) for row in batch)


def beyond(column: str, after: After, *, reverse: bool = False) -> tuple[str, list[object]]:
    """The clause (and its parameters) keeping the rows past ``after``'s place in
    ``column``'s order (``reverse``: before it), in the terms its sort B-tree is made of."""
    order = [e for e in (ORDER_SQL[column], "root", "path") if e]
    place: list[object] = [after.value, key_bytes(after.root), key_bytes(after.path)]
    way = "<" if reverse else ">"
    return f"({', '.join(order)}) {way} ({', '.join('?' * len(order))})", place[-len(order) :]


def page_sql(
    where: Where,
    column: str,
    *,
    reverse: bool = False,
    after: After | None = None,
    limit: int | None = None,
    offset: int = 0,
    columns: str = "line",
    walk: bool = False,
) -> tuple[str, list[object]]:
    """The statement and parameters of :func:`page` (written in the terms a sort B-tree is
    made of, so that SQLite takes it: ``tests/engine/test_pages.py`` holds the plan), giving
    ``columns``, past ``offset`` rows more. ``walk``: walk the order's B-tree (it must be
    there) even where SQLite would rather find the rows by another and sort them (a status
    tab that holds many of the records: :class:`engine.window.Window` decides)."""
    if column not in ORDER_SQL:
        raise ValueError(f"no sort column {column!r}: one of {', '.join(SORTS)}")
    order = [e for e in (ORDER_SQL[column], "root", "path") if e]
    way = " DESC" if reverse else ""
    walked = f" INDEXED BY {tree_of(column)}" if walk else ""
    if where.driven:  # (its few records by row id, then sorted: never a walk)
        walked = " NOT INDEXED"
    sql = f"SELECT {columns} FROM records{walked} WHERE ({where.sql})"
    params: list[object] = list(where.params)
    if after is not None:
        past, place = beyond(column, after, reverse=reverse)
        sql += f" AND {past}"
        params += place
    sql += " ORDER BY " + ", ".join(e + way for e in order)
    if limit is not None or offset:
        sql += " LIMIT ? OFFSET ?"
        params += [-1 if limit is None else limit, offset]
    return sql, params


__all__ = [
    "ORDER_SQL",
    "SORTS",
    "After",
    "beyond",
    "page",
    "page_sql",
    "sort_key",
    "sort_value",
    "tree_of",
]
