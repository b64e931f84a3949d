"""The records of an index in the dashboard's sort orders, a page at a time.

Each column the records table sorts by has one order here, written twice: as an SQL
expression over ``records`` (:data:`ORDER_SQL`) and as a Python key over a record
(:func:`sort_value`); ties go in key order (root, then path) and a descending sort is the
ascending one read backwards, ties included, as on the dashboard. SQLite compares text and
the index's keys as UTF-8 bytes, which is the code points' order: Python's order of the same
strings (names keep a byte that is not UTF-8 as a code point, :func:`engine.db.key_bytes`).

:func:`page` reads one page by keyset: the rows after (or before) a row's place, never an
``OFFSET`` that walks every row before it. ``quarry export --sort COLUMN [--desc] [--limit N]``
reads its records through it; without an index on the column, SQLite sorts (a top-N sort
under ``--limit``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.db import key_bytes
from engine.quality import VERDICTS
from engine.records import Record
from engine.sqlquery import Where

_QUALITY_RANK = " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(VERDICTS, start=1))
ORDER_SQL: dict[str, str] = {
    "path": "",
    "status": "status",
    "quality": f"CASE quality {_QUALITY_RANK} ELSE 0 END",
    "reason": "coalesce(reason, '')",
    "mime": "coalesce(mime, '')",
    "extractor": "coalesce(extractor, '')",
    "chars": "chars",
    "pages": "max(coalesce(pages, 0), 0)",
    "size": "size",
    "ms": "ms",
}
"""The sort columns (the dashboard's), each as the SQL value its rows are ordered by before
their key (``path``: the key alone): a verdict by rank (none first, then best to worst), a
missing text as empty, a missing page count as 0."""
SORTS: tuple[str, ...] = tuple(ORDER_SQL)


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
    be installed on ``con`` (:meth:`Where.install`)."""
    if column not in ORDER_SQL:
        raise ValueError(f"no sort column {column!r}: one of {', '.join(SORTS)}")
    order = [e for e in (ORDER_SQL[column], "root", "path") if e]
    way = " DESC" if reverse else ""
    sql = f"SELECT line FROM records WHERE ({where.sql})"
    params: list[object] = list(where.params)
    if after is not None:
        sql += (
            f" AND ({', '.join(order)}) {'<' if reverse else '>'} ({', '.join('?' * len(order))})"
        )
        place = [after.value, key_bytes(after.root), key_bytes(after.path)]
        params += place[-len(order) :]
    sql += " ORDER BY " + ", ".join(e + way for e in order)
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    cur = con.execute(sql, params)
    while batch := cur.fetchmany(4096):
        yield from (bytes(row[0]) for row in batch)


__all__ = ["ORDER_SQL", "SORTS", "After", "page", "sort_key", "sort_value"]
