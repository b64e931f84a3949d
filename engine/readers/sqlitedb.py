"""SQLite databases (an application's ``.db``, ``.sqlite``, a browser's history): each table
read as a sheet, with the standard library's ``sqlite3``.

A table's text is a ``# table NAME`` line, its column names, then each row's values,
tab-separated: text as it is (a tab or a line break inside a value becomes a space), numbers
as SQLite gives them, NULLs and BLOBs empty. Views are left out (their rows are other tables'),
as are SQLite's own tables and the shadow tables behind a full-text index (the index's
table itself is read). Text that is not UTF-8 is read with U+FFFD where it fails.

A BLOB that is a document (a PDF, an Office 97 file, a zip such as an OOXML or OpenDocument
file, an RTF: an application's attachments) is read after the tables as the database's
member ``TABLE/COLUMN/ROWID``, as an Office document's embedded documents are
(:func:`engine.readers.embedded.with_embedded`): a verdict of its own, under the container
bounds. Pictures and other bytes are left alone (a thumbnail is no document, and would cost
an OCR each); so are the BLOBs of a table without rowids, which no rowid finds again.

The file is opened read-only and immutable (``?mode=ro&immutable=1``): SQLite then takes no
lock and writes nothing beside it, no ``-journal``, ``-wal`` or ``-shm`` file, as a reader of
someone's folder must. A database in write-ahead-log mode whose application has it open (a
browser's history) holds its newest rows in the ``-wal`` file beside it, which SQLite would
read only by writing beside it: so the database and its log are copied into the read's
private scratch folder and the copy is opened there, its log applied as the application
would apply it (SQLite checks the log's header and each frame's checksum: bytes that are no
log add nothing; a link where the log belongs is not followed). A database and log past
``archive_bytes`` together are read without the log, and the read says so. The schema is not
trusted (``PRAGMA trusted_schema=OFF``): a hostile schema's functions run only if they are
harmless ones. A table the database cannot give whole (a damaged page) keeps the rows read
before the damage, and the read says so; a file whose schema cannot be read at all is
``error/corrupt``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from urllib.parse import quote

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.embedded import DOCUMENT_MAGICS, Embedded, with_embedded
from engine.readers.members import scratch_dir

_SKIPPED_TYPES = frozenset({"view", "shadow", "virtual-shadow"})
_CELL = str.maketrans({"\t": " ", "\n": " ", "\r": " "})
_ERRORS = (sqlite3.Error, UnicodeDecodeError)
"""What a damaged database raises (a name in its schema that is not UTF-8: the second)."""
_Blob = tuple[str, str, int]
"""A BLOB that is a document: its table, its column and its row's rowid."""


class SqliteReader:
    """Reads an SQLite database's tables as sheets."""

    name = "sqlite"
    version = 2
    mimes = frozenset({M.SQLITE})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write every table's column names and rows (the write-ahead log's too)."""
        with ExitStack() as stack:
            uri, skipped = _opened_where(path, ctx, stack)
            try:
                conn = sqlite3.connect(uri, uri=True)
            except _ERRORS as exc:
                raise CorruptFile(f"not a readable SQLite database: {exc}") from exc
            stack.enter_context(closing(conn))
            conn.text_factory = _text
            try:
                conn.execute("PRAGMA trusted_schema=OFF")
                names = _tables(conn)
            except _ERRORS as exc:
                raise CorruptFile(f"not a readable SQLite database: {exc}") from exc
            sink.describe("sqlite", pages=len(names))
            blobs = _Blobs(ctx.limits.archive_members)
            damaged = [
                f"{name} ({why})" for name in names if (why := _table(conn, name, sink, blobs))
            ]
            notes = [skipped] if skipped else []
            if damaged:
                notes.append(
                    f"{len(damaged)} of {len(names)} tables not read whole: {'; '.join(damaged)}"
                )
            if blobs.more:
                notes.append(
                    f"{blobs.more} documents in BLOBs not read: past archive_members "
                    f"({ctx.limits.archive_members})"
                )
            note = "; ".join(notes)[:500] or None
            info = ReadInfo("sqlite", pages=len(names), note=note)
            return with_embedded(info, ctx, sink, _documents(conn, blobs.found))


class _Blobs:
    """The BLOBs that are documents, as the tables are read: at most ``most`` of them (the
    members a container may have), and how many more there were."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.found: list[_Blob] = []
        self.more = 0

    def add(self, blob: _Blob) -> None:
        """Take one, or count it past the most."""
        if len(self.found) < self.most:
            self.found.append(blob)
        else:
            self.more += 1


def _opened_where(path: Path, ctx: ReadContext, stack: ExitStack) -> tuple[str, str | None]:
    """The URI to open ``path`` by, and what of it that leaves unread: the database itself
    (immutable) when no write-ahead log is beside it, else a copy of both in a scratch
    folder that ``stack`` removes, unless they are too big to copy."""
    log_path = path.with_name(path.name + "-wal")
    log = _regular_size(log_path)
    if not log:
        return _uri(path, immutable=True), None
    size = path.stat().st_size
    if size + log > ctx.limits.archive_bytes:
        return _uri(path, immutable=True), (
            f"the write-ahead log beside it not read ({log:,} bytes): the database and its "
            f"log pass archive_bytes ({ctx.limits.archive_bytes:,}) together"
        )
    copy = Path(stack.enter_context(scratch_dir())) / "db"
    _copy(path, copy, size)
    _copy(log_path, copy.with_name("db-wal"), log)
    return _uri(copy, immutable=False), None


def _regular_size(path: Path) -> int:
    """The size of a regular file at ``path`` (0 for none, and for a link: not followed)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _copy(source: Path, target: Path, size: int) -> None:
    """The first ``size`` bytes of ``source`` (a log still being written grows: frames past
    them SQLite ignores as incomplete), never following a link."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with open(fd, "rb") as src, open(target, "xb") as out:
        while size > 0 and (chunk := src.read(min(size, 1 << 20))):
            out.write(chunk)
            size -= len(chunk)


def _uri(path: Path, *, immutable: bool) -> str:
    """``path`` as a read-only SQLite URI (any bytes of its name escaped): immutable for the
    user's file; a private copy is opened so that its log is applied."""
    flags = "?mode=ro&immutable=1" if immutable else "?mode=ro"
    return f"file:{quote(bytes(path.resolve()), safe='/')}{flags}"


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _tables(conn: sqlite3.Connection) -> list[str]:
    """The tables to read, by name: not views, SQLite's own tables, or shadow tables."""
    try:
        rows = conn.execute("PRAGMA main.table_list").fetchall()  # SQLite 3.37: says shadow
    except sqlite3.OperationalError:  # (shadow tables then read as any)
        rows = conn.execute(
            "SELECT 'main', name, type FROM sqlite_master WHERE type = 'table'"
        ).fetchall()
    names = [
        str(row[1])
        for row in rows
        if row[2] not in _SKIPPED_TYPES and not str(row[1]).startswith("sqlite_")
    ]
    return sorted(names)


def _table(conn: sqlite3.Connection, name: str, sink: TextSink, blobs: _Blobs) -> str | None:
    """Write one table, and list its BLOBs that are documents; what stopped it short, or
    None when it was read whole."""
    sink.line(f"# table {name}".translate(_CELL))
    try:
        cursor, with_rowid = _select(conn, name)
        columns = [str(col[0]) for col in cursor.description or ()][with_rowid:]
        sink.line("\t".join(col.translate(_CELL) for col in columns))
        for row in cursor:  # a row a step: the rows before a damaged page are written
            values = row[with_rowid:]
            sink.line("\t".join(_cell(value) for value in values))
            if with_rowid:
                for column, value in zip(columns, values, strict=True):
                    if isinstance(value, bytes) and value.startswith(DOCUMENT_MAGICS):
                        blobs.add((name, column, row[0]))
    except _ERRORS as exc:
        return str(exc)[:120]
    return None


def _select(conn: sqlite3.Connection, name: str) -> tuple[sqlite3.Cursor, int]:
    """Every row of a table, with its rowid first (1) when it has one (0: WITHOUT ROWID)."""
    try:
        return conn.execute(f"SELECT rowid, * FROM main.{_quoted(name)}"), 1
    except sqlite3.OperationalError:
        return conn.execute(f"SELECT * FROM main.{_quoted(name)}"), 0


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _documents(conn: sqlite3.Connection, blobs: list[_Blob]) -> Iterator[Embedded]:
    """Each BLOB that is a document, fetched again by its rowid (one at a time: a table of
    attachments is never held whole), named ``TABLE/COLUMN/ROWID``."""
    for table, column, rowid in blobs:
        try:
            row = conn.execute(
                f"SELECT {_quoted(column)} FROM main.{_quoted(table)} WHERE rowid = ?", (rowid,)
            ).fetchone()
        except _ERRORS:
            continue  # (the table's damage is said already)
        if row is not None and isinstance(row[0], bytes):
            yield f"{_part(table)}/{_part(column)}/{rowid}", row[0]


def _part(name: str) -> str:
    """A table's or column's name as one part of a member's name."""
    part = name.replace("/", "_").translate(_CELL)
    return part if part not in ("", ".", "..") else f"[{part}]"


def _cell(value: object) -> str:
    if value is None or isinstance(value, bytes):
        return ""
    return str(value).translate(_CELL)


READERS = (SqliteReader(),)
