"""SQLite databases (an application's ``.db``, ``.sqlite``, a browser's history): each table
read as a sheet, with the standard library's ``sqlite3``.

A table's text is a ``# table NAME`` line, its column names, then each row's values,
tab-separated: text as it is (a tab or a line break inside a value becomes a space), numbers
as SQLite gives them, NULLs and BLOBs empty. Views are left out (their rows are other tables'),
as are SQLite's own tables and the shadow tables behind a full-text index (the index's
table itself is read). Text that is not UTF-8 is read with U+FFFD where it fails.

The file is opened read-only and immutable (``?mode=ro&immutable=1``): SQLite then takes no
lock and writes nothing beside it, no ``-journal``, ``-wal`` or ``-shm`` file, as a reader of
someone's folder must; a write-ahead log beside a database is another file, and the rows only
it holds are not read. The schema is not trusted (``PRAGMA trusted_schema=OFF``): a hostile
schema's functions run only if they are harmless ones. A table the database cannot give
whole (a damaged page) keeps the rows read before the damage, and the read says so; a file
whose schema cannot be read at all is ``error/corrupt``.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink

_SKIPPED_TYPES = frozenset({"view", "shadow", "virtual-shadow"})
_CELL = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


class SqliteReader:
    """Reads an SQLite database's tables as sheets."""

    name = "sqlite"
    version = 1
    mimes = frozenset({M.SQLITE})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write every table's column names and rows."""
        try:
            conn = sqlite3.connect(_uri(path), uri=True)
        except sqlite3.Error as exc:
            raise CorruptFile(f"not a readable SQLite database: {exc}") from exc
        with closing(conn):
            conn.text_factory = _text
            try:
                conn.execute("PRAGMA trusted_schema=OFF")
                names = _tables(conn)
            except sqlite3.Error as exc:
                raise CorruptFile(f"not a readable SQLite database: {exc}") from exc
            sink.describe("sqlite", pages=len(names))
            damaged = [f"{name} ({why})" for name in names if (why := _table(conn, name, sink))]
        note = None
        if damaged:
            note = f"{len(damaged)} of {len(names)} tables not read whole: {'; '.join(damaged)}"
        return ReadInfo("sqlite", pages=len(names), note=note[:500] if note else None)


def _uri(path: Path) -> str:
    """``path`` as a read-only, immutable SQLite URI (any bytes of its name escaped)."""
    return f"file:{quote(bytes(path.resolve()), safe='/')}?mode=ro&immutable=1"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _tables(conn: sqlite3.Connection) -> list[str]:
    """The tables to read, by name: not views, SQLite's own tables, or shadow tables."""
    try:
        rows = conn.execute("PRAGMA main.table_list").fetchall()  # SQLite 3.37: says shadow
    except sqlite3.OperationalError:
        rows = [
            ("main", name, kind, 0, 0, 0)
            for name, kind in conn.execute("SELECT name, type FROM sqlite_master")
            if kind in ("table", "view")
        ]
    names = [
        str(row[1])
        for row in rows
        if row[2] not in _SKIPPED_TYPES and not str(row[1]).startswith("sqlite_")
    ]
    return sorted(names)


def _table(conn: sqlite3.Connection, name: str, sink: TextSink) -> str | None:
    """Write one table; what stopped it short, or None when it was read whole."""
    sink.line(f"# table {name}".translate(_CELL))
    quoted = '"' + name.replace('"', '""') + '"'
    try:
        cursor = conn.execute(f"SELECT * FROM main.{quoted}")
        sink.line("\t".join(str(col[0]).translate(_CELL) for col in cursor.description or ()))
        for row in cursor:  # a row a step: the rows before a damaged page are written
            sink.line("\t".join(_cell(value) for value in row))
    except sqlite3.Error as exc:
        return str(exc)[:120]
    return None


def _cell(value: object) -> str:
    if value is None or isinstance(value, bytes):
        return ""
    return str(value).translate(_CELL)


READERS = (SqliteReader(),)
