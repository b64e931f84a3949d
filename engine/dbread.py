"""A store's records as a table reads them: columns in key order, from the store's index.

The one reader of the store's format a viewer needs (the dashboard; no Textual here). Rows
come from an SQLite index of the store's records (:mod:`engine.db`), found as
:func:`engine.readindex.reading_index` finds it: the store's own ``extract.db`` when it is in
step with (or ahead of) ``extract.jsonl``, else one built in the user's cache from the file.
Where no index can be had on disk (no cache folder, a full disk, a cache the user cannot
write), the engine reads the file into an index in memory, block by block: the store still
opens, at the cost of that build, and nothing but the engine's own parser reads a line.

The rows are read a chunk at a time by keyset on (root, path), all in one read transaction
(one snapshot, whose change counter a follower starts from). Each chunk is one statement
that aggregates every column of its rows into one string (``group_concat``), split in C:
numbers parsed by ``int`` in a C loop into an array, the fields that take few values coded
against a table of the values met (each distinct value decoded once). A chunk whose text
holds the separator (a NUL in a foreign store's error message) is fetched row by row
instead. A full record is read by its key (its
``line``, decoded by :meth:`Record.from_json`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

from engine.browse import BROWSE_FROM
from engine.db import (
    DB,
    Agreement,
    IndexUnusable,
    Point,
    RecordDB,
    identity_of,
    key_bytes,
    name_of,
    needs_from_text,
    standing,
)
from engine.errors import StoreUnusable
from engine.readindex import (
    LeftOut,
    bad_lines_of,
    cached_index_path,
    drop_index_file,
    drop_left_by_the_dead,
    keep_bad_lines,
    reading_index,
    records_in,
)
from engine.records import BadRecord, Key, Record
from engine.store import Store, read_jsonl

FIRST_ROWS = 1000
"""Rows of the first chunk: a screen's worth and more, read in milliseconds."""
CHUNK_ROWS = 50_000
"""Rows of each later chunk."""
_PUT_ROWS = 20_000
"""Records put into an index built in memory at a time."""
FILE_BLOCK = 1 << 23
"""Bytes of ``extract.jsonl`` parsed at once when the engine builds an index in memory."""
Codes = tuple[list[Any], "array[int]"]
"""A column of values that repeat: the table of values and a code per row (into it)."""

_FEW = ("root", "status", "reason", "quality", "signal", "mime", "extractor", "error", "why")
"""Columns that take few distinct values: sent coded (a table and a code per row)."""
_PLAIN = frozenset(("root", "status", "mime"))
"""Coded columns sent without the mark that tells an empty value from none: a record always
has them (saves SQLite a concatenation a row for each, ~8% of its work)."""
_NUMBERS = ("chars", "pages", "size", "ms")
"""Integer columns (``pages`` -1 for none)."""
_SEP = b"\x00"


@dataclass(frozen=True, slots=True)
class Columns:
    """A run of records in key order, field by field (what a table of records shows)."""

    roots: list[str]
    paths: list[str]
    coded: dict[str, Codes]
    """``status``, ``reason``, ``quality`` (the verdict), ``signal`` (the worst quality
    signal, only beside a verdict), ``mime``, ``extractor``, ``error``, ``why``: the table of
    values (None for none) and a code per row; ``needs``: tables of tool-name tuples."""
    numbers: dict[str, array[int]]
    """``chars``, ``pages`` (-1 for none), ``size``, ``ms``."""
    reused: bytearray
    """1 per record whose verdict was reused."""

    def __len__(self) -> int:
        return len(self.paths)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk of rows and how far the read is."""

    rows: Columns
    done: int
    """Rows read so far (this chunk's included)."""
    total: int
    """Rows the table holds."""
    restart: bool = False
    """The rows given so far were the file's first lines only, shown while its index was
    built: the reader starts afresh with this chunk (see :class:`_Building`)."""


class _Coder(dict[Any, int]):
    """Value -> code over the chunks' values, the table in order of first appearance (one C
    dict lookup per row; a value not met yet gets the next code)."""

    def __init__(self) -> None:
        super().__init__()
        self.table: list[Any] = []

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self.table)
        self.table.append(value)
        return code

    def __call__(self, values: list[Any]) -> array[int]:
        """The codes of ``values``: a byte each while the table fits one, else wider."""
        with contextlib.suppress(ValueError):  # bytearray(map(...)): a C loop
            return array("B", bytearray(map(self.__getitem__, values)))
        for kind in ("H", "I", "Q"):
            with contextlib.suppress(OverflowError):
                return array(kind, map(self.__getitem__, values))
        raise OverflowError("too many distinct values")


def _text(raw: bytes) -> str | None:
    """A coded value as sent: b"" for none, else the value after a one-byte mark."""
    return raw[1:].decode("utf-8", "surrogatepass") if raw else None


def _plain(raw: bytes) -> str:
    """A value sent without its mark (see :data:`_PLAIN`)."""
    return raw.decode("utf-8", "surrogatepass")


def _chunk_sql(where: str) -> str:
    """One statement giving a chunk of rows as one string per column (see the module)."""
    few = ", ".join(
        f"group_concat(ifnull({c}, ''), x'00')"
        if c in _PLAIN
        else f"group_concat(ifnull('=' || {c}, ''), x'00')"
        for c in (*_FEW, "needs")
    )
    numbers = ", ".join(
        f"group_concat({'ifnull(pages, -1)' if c == 'pages' else c}, ',')" for c in _NUMBERS
    )
    inner = ", ".join(("root", "path", *_FEW[1:], "needs", *_NUMBERS, "reused"))
    return (
        f"SELECT count(*), group_concat(path, x'00'), {few}, {numbers},"
        f" group_concat(reused, '') FROM (SELECT {inner} FROM records INDEXED BY by_key"
        f" {where} ORDER BY root, path LIMIT ?)"
    )


_FIRST_SQL = _chunk_sql("")
_NEXT_SQL = _chunk_sql("WHERE (root, path) > (?, ?)")
_ROWS_SQL = (
    "SELECT root, path, status, reason, quality, signal, mime, extractor, error, why, needs,"
    " chars, ifnull(pages, -1), size, ms, reused FROM records INDEXED BY by_key"
    " WHERE (root, path) > (?, ?) ORDER BY root, path LIMIT ?"
)
_REUSED = bytes.maketrans(b"01", b"\x00\x01")


def _numbers(raw: bytes, n: int) -> array[int] | None:
    """``n`` integers from their decimal text, comma-separated (SQLite's ``printf`` to fixed
    width hex cost six times as much as the plain text and the parse in C together)."""
    try:
        out = array("q", map(int, raw.split(b",")))
    except (ValueError, OverflowError):
        return None
    return out if len(out) == n else None


def _last_key(row: tuple[Any, ...]) -> tuple[bytes, bytes] | None:
    """The key of a chunk's last row, off the end of its root and path strings; None for no
    row. Right whenever the chunk's strings split into as many
    values as it has rows (no separator inside a name), which :func:`_from_strings` checks."""
    if not row[0]:
        return None
    return row[2].rpartition(_SEP)[2], row[1].rpartition(_SEP)[2]


def _from_strings(count: int, parts: tuple[Any, ...], coders: dict[str, _Coder]) -> Columns | None:
    """A chunk from its column strings; None when a separator hides in a value."""
    paths_raw, few_raw = parts[0], parts[1 : 2 + len(_FEW)]
    texts, reused_raw = parts[2 + len(_FEW) : 6 + len(_FEW)], parts[-1]
    paths = paths_raw.decode("utf-8", "surrogatepass").split("\0")
    if len(paths) != count:
        return None
    coded: dict[str, Codes] = {}
    for name, raw in zip((*_FEW, "needs"), few_raw, strict=True):
        values = raw.split(_SEP)
        if len(values) != count:
            return None
        coder = coders[name]
        codes = coder(values)
        coded[name] = (coder.table, codes)
    numbers: dict[str, array[int]] = {}
    for name, raw in zip(_NUMBERS, texts, strict=True):
        got = _numbers(raw, count)
        if got is None:
            return None
        numbers[name] = got
    reused = bytearray(reused_raw.translate(_REUSED))
    if len(reused) != count:
        return None
    return _finish(paths, coded, numbers, reused)


def _finish(
    paths: list[str],
    coded: dict[str, Codes],
    numbers: dict[str, array[int]],
    reused: bytearray,
) -> Columns:
    """The columns with each coded table in its values (each distinct value decoded once)."""
    shown: dict[str, Codes] = {}
    for name, (table, codes) in coded.items():
        raw = bool(table) and isinstance(table[0], bytes)  # (as sent: decoded here, once each)
        values: list[Any] = table
        if raw:
            values = list(map(_plain if name in _PLAIN else _text, table))
        if name == "needs":
            values = [needs_from_text(v) for v in values]
        shown[name] = (values, codes)
    roots_table, root_codes = shown.pop("root")
    roots = list(map(roots_table.__getitem__, root_codes))
    return Columns(roots, paths, shown, numbers, reused)


def _from_rows(rows: list[tuple[Any, ...]]) -> Columns:
    """A chunk fetched row by row (its text held a separator)."""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 16
    coded: dict[str, Codes] = {}
    for i, name in enumerate((*_FEW, "needs")):
        at = 0 if name == "root" else i + 1
        raw = [name_of(v) if name == "root" else v for v in cols[at]]
        coder = _Coder()
        coded[name] = (coder.table, coder(raw))
    # (root and path are BLOBs; the text columns came as str)
    numbers = {n: array("q", cols[11 + i]) for i, n in enumerate(_NUMBERS)}
    paths = [name_of(p) for p in cols[1]]
    return _finish(paths, coded, numbers, bytearray(1 if r else 0 for r in cols[15]))


class _Ahead:
    """One call run in a thread of its own, its result waited for by :meth:`result`. A
    thread per chunk, not a pool: a load abandoned half way (the dashboard left) leaves no
    thread waiting for work."""

    def __init__(self, call: Callable[..., Any], *args: Any) -> None:
        self._out: Any = None
        self._exc: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(call, args), name="quarry-rows", daemon=True
        )
        self._thread.start()

    def _run(self, call: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._out = call(*args)
        except BaseException as exc:  # handed to whoever waits for the result
            self._exc = exc

    def result(self) -> Any:
        """What the call returned (what it raised, raised here)."""
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        return self._out


LOOKUP_KEYS = 900
"""Paths asked in one statement by :meth:`Table.records` (under SQLite's limit of 999
parameters a statement in its older builds)."""
_LOOKUP_SQL = "SELECT line FROM records WHERE root = ? AND path IN ({})"


class Table:
    """The records of one index, read in chunks in key order from one snapshot, and looked
    up by key. ``point`` is where in the store's own index's history the rows are (None when
    they come from another index: a follower then cannot ask what changed after them)."""

    def __init__(
        self,
        db: RecordDB,
        *,
        own: bool,
        check: Callable[[RecordDB], bool] = lambda _db: True,
    ) -> None:
        self._lock = threading.Lock()
        self._look_lock = threading.Lock()
        self._stopped = threading.Event()
        self._open(db, own, check)

    def stop(self) -> None:
        """End a load from any thread (a dashboard that quits): :meth:`chunks` ends before
        its next chunk, and an index being built for it stops at its next block. Ten million
        rows took 51 s to load after ``q``, a build in the user's cache minutes, and the
        process waited for them before it exited."""
        self._stopped.set()

    def _open(self, db: RecordDB, own: bool, check: Callable[[RecordDB], bool]) -> None:
        """Read ``db`` from now on (in one snapshot)."""
        self._db = db
        self._con = db.con
        self._con.execute("BEGIN")  # one snapshot for every chunk (and the counter)
        if not check(db):
            self.close()
            raise IndexUnusable("the index is no longer in step with extract.jsonl")
        self.point: Point | None = db.point() if own else None
        self.total = len(db)
        self.bad, self.bad_count = bad_lines_of(db)
        self._looks = _lookup_connection(db.path, db.con)
        self._con.text_factory = bytes  # (after the meta reads: they expect str)

    def chunks(self, first: int = FIRST_ROWS, size: int = CHUNK_ROWS) -> Iterator[Chunk]:
        """Every row, in key order: ``first`` rows, then ``size`` at a time. The snapshot is
        let go after the last (a writer's checkpoints are not held back by a finished read).

        The statement of the next chunk runs in a thread of its own while this one's strings
        become columns: SQLite lets the GIL go while it steps, so its work and Python's
        overlap (the next chunk's first key is read off the end of this one's strings). The
        first chunk's next waits until the first is taken and asked past: the first frame is
        drawn with no statement beside it."""
        coders = {name: _Coder() for name in (*_FEW, "needs")}
        done = 0
        try:
            ahead = _Ahead(self._fetch, None, first)
            while True:
                row, last, want = ahead.result()
                if row is None or not row[0] or self._stopped.is_set():
                    break  # (no statement is in flight here)
                count = row[0]
                after = _last_key(row) if last is not None else None
                if after is not None:
                    ahead = _Ahead(self._fetch, after, size)
                cols = _from_strings(count, row[1:], coders)
                if cols is None:  # a separator inside a value: this chunk row by row
                    if after is not None:
                        ahead.result()  # (read from a key that may be wrong: not used)
                    cols = self._rows(last, want)
                    after = None
                done += len(cols)
                yield Chunk(cols, done, max(self.total, done))
                if after is None:
                    key = (key_bytes(cols.roots[-1]), key_bytes(cols.paths[-1]))
                    ahead = _Ahead(self._fetch, key, size)
        finally:
            self.end_read()

    def _fetch(
        self, last: tuple[bytes, bytes] | None, want: int
    ) -> tuple[tuple[Any, ...] | None, tuple[bytes, bytes] | None, int]:
        """The column strings of the ``want`` rows after the key ``last`` (the first rows
        for None), with the key and the number asked."""
        with self._lock:
            if last is None:
                row = self._con.execute(_FIRST_SQL, (want,)).fetchone()
            else:
                row = self._con.execute(_NEXT_SQL, (*last, want)).fetchone()
        return row, last, want

    def _rows(self, last: tuple[bytes, bytes] | None, want: int) -> Columns:
        """The ``want`` rows after the key ``last``, fetched row by row."""
        with self._lock:
            self._con.text_factory = str
            try:  # (every record has a path: any key is after two empty ones)
                rows = self._con.execute(_ROWS_SQL, (*(last or (b"", b"")), want)).fetchall()
            finally:
                self._con.text_factory = bytes
        return _from_rows(rows)

    def end_read(self) -> None:
        """Let the snapshot go (the rows are read)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            if self._con.in_transaction:
                self._con.execute("COMMIT")

    def record(self, key: Key) -> Record | None:
        """The full record of ``key`` (None when it is gone or its line is not a record);
        never waits for a chunk being read (a connection of its own)."""
        with self._look_lock:
            try:
                row = self._looks.execute(
                    "SELECT line FROM records WHERE root = ? AND path = ?",
                    (key_bytes(key[0]), key_bytes(key[1])),
                ).fetchone()
            except sqlite3.Error:
                return None
        if row is None:
            return None
        try:
            return Record.from_json(bytes(row[0]))
        except BadRecord:
            return None

    def records(self, keys: Sequence[Key]) -> list[Record | None]:
        """The full records of ``keys``, in their order (None for one gone or whose line is
        not a record): the paths of a root :data:`LOOKUP_KEYS` a statement (a range of the
        key index each) and their lines decoded in one call, not a statement and a decoding
        a key (100,000 error records of a million took 3.4 s that way)."""
        by_root: dict[str, list[str]] = {}
        for root, path in keys:
            by_root.setdefault(root, []).append(path)
        found: dict[Key, Record] = {}
        for root, paths in by_root.items():
            for start in range(0, len(paths), LOOKUP_KEYS):
                part = [key_bytes(p) for p in paths[start : start + LOOKUP_KEYS]]
                sql = _LOOKUP_SQL.format(",".join("?" * len(part)))
                with self._look_lock:
                    try:
                        rows = self._looks.execute(sql, [key_bytes(root), *part]).fetchall()
                    except sqlite3.Error:
                        continue
                lines = b"\n".join(bytes(line) for (line,) in rows) + b"\n"
                found.update((r.key, r) for r in read_jsonl(lines).records)
        return [found.get(key) for key in keys]

    def close(self) -> None:
        """Let the index go (also when garbage-collected)."""
        looks = getattr(self, "_looks", None)
        if looks is not None and looks is not self._con:
            looks.close()
        self._db.close()

    __del__ = close


def _lookup_connection(path: Path, con: sqlite3.Connection) -> sqlite3.Connection:
    """A connection of its own for lookups by key (the reading one holds its snapshot while
    the rows load); the same one for an index in memory, which no other can open."""
    if str(path) == ":memory:":
        return con
    try:
        return RecordDB.open_reader(path).con
    except IndexUnusable:
        return con


class _Building(Table):
    """A store whose index is built in the user's cache at this opening: the first lines of
    its file at once (an index in memory of them, milliseconds: the first frame has rows),
    then, once the index is built, every row from it, its first chunk saying ``restart``.
    Where the build fails, the engine's index in memory of the whole file instead."""

    def __init__(self, store: Store, head: bytes) -> None:
        super().__init__(lines_index(head), own=False)
        self._store = store

    def chunks(self, first: int = FIRST_ROWS, size: int = CHUNK_ROWS) -> Iterator[Chunk]:
        """The head's rows, then every row of the built index (see the class)."""
        for chunk in super().chunks(first, size):
            yield replace(chunk, total=0)  # (how many there are is not known yet)
        jsonl = self._store.jsonl_path
        where = reading_index(self._store, stop=self._stopped.is_set)
        if self._stopped.is_set():
            return  # (nor is the whole file read into memory instead)
        old = self._db
        try:
            db = RecordDB.open_reader(where) if where is not None else None
            check = _in_step(jsonl)
        except IndexUnusable:
            db = None
        if db is None:
            db, check = memory_index(self._store), lambda _db: True
        with self._lock, self._look_lock:  # (no lookup meets the index half switched)
            if self._looks is not old.con:
                self._looks.close()
            old.close()
            self._open(db, False, check)
        restart = True
        for chunk in super().chunks(first, size):
            yield replace(chunk, restart=restart)
            restart = False
        if restart:  # no record at all now
            empty = _from_rows([])
            yield Chunk(empty, 0, 0, restart=True)


HEAD_BYTES = 1 << 18
"""The first bytes of a store's file shown while its index is built (~700 records)."""


def file_head(store: Store) -> tuple[bytes, int] | None:
    """The first lines of ``store``'s file and the file's size, when it is bigger than
    :data:`HEAD_BYTES` (None for a smaller one: its index is built at once, in a moment)."""
    try:
        fd = store.open_jsonl()
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size <= HEAD_BYTES:
            return None
        data = os.read(fd, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data[: data.rfind(b"\n") + 1], size


HEAD_INDEX = "head.{pid}.db"
"""The name of an index of a big store's first lines in the user's cache (:func:`head_index`)."""


def head_index(store: Store) -> Path | None:
    """An index of the first lines of a store too big to hold (:data:`BROWSE_FROM` records or
    more, reckoned from its first lines' length) that has no index to read yet: one is built
    in the user's cache, minutes at ten million records (:func:`engine.readindex.reading_index`).
    Written beside it at once (a few hundred records, milliseconds), for a viewer to page
    while that one is built; :func:`engine.readindex.drop_index_file` lets it go. None for
    a store with an index to read, a smaller one (a viewer holds it), or when no cache folder
    is writable."""
    cached = cached_index_path(store)
    if cached is None or reading_index(store, build=False) is not None:
        return None
    found = file_head(store)
    if found is None or not found[0]:
        return None
    head, size = found
    if size * head.count(b"\n") // len(head) < BROWSE_FROM:
        return None
    path = cached.with_name(HEAD_INDEX.format(pid=os.getpid()))
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        drop_left_by_the_dead(cached.parent, HEAD_INDEX)
        drop_index_file(path)
        memory = lines_index(head)
        target = sqlite3.connect(path)
        try:
            memory.con.backup(target)  # (SQLite's own copy, page by page)
        finally:
            target.close()
            memory.close()
    except (OSError, sqlite3.Error):
        drop_index_file(path)
        return None
    return path


def open_table(store: Store) -> Table:
    """The table of ``store``'s records: its own index when in step with (or ahead of) its
    file, else the user's cached one (built from the file first when it has none of this
    version of it), else one built in memory from the file. StoreUnusable when the file
    cannot be read; an empty table for a store without records."""
    own = store.out / DB
    jsonl = store.jsonl_path
    if standing(own, jsonl, lines=False).agreement is not Agreement.UNTRUSTED:
        with contextlib.suppress(IndexUnusable):
            return Table(RecordDB.open_reader(own), own=True, check=_in_step(jsonl))
    where = reading_index(store, build=False)
    if where is not None and where != own:
        with contextlib.suppress(IndexUnusable):
            return Table(RecordDB.open_reader(where), own=False, check=_in_step(jsonl))
    head = file_head(store) if cached_index_path(store) is not None else None
    if head is not None and head[0]:  # a big store to build an index of: its first lines meanwhile
        return _Building(store, head[0])
    where = reading_index(store)
    if where is not None and where != own:
        with contextlib.suppress(IndexUnusable):
            return Table(RecordDB.open_reader(where), own=False, check=_in_step(jsonl))
    return Table(memory_index(store), own=False)


def _in_step(jsonl: Path) -> Callable[[RecordDB], bool]:
    """Whether an index (in the snapshot being read) is still the one of the file there."""

    def check(db: RecordDB) -> bool:
        try:
            return db.source() == identity_of(jsonl)
        except sqlite3.Error:
            return False

    return check


def memory_index(store: Store) -> RecordDB:
    """An index in memory of ``store``'s ``extract.jsonl``, built by the engine's parser a
    block of lines at a time (no more than a block's records held at once). StoreUnusable
    when the file cannot be read."""
    try:
        fd = store.open_jsonl()
    except FileNotFoundError:
        return lines_index(b"")
    except OSError as exc:
        raise StoreUnusable(f"cannot read {store.jsonl_path}: {exc.strerror or exc}") from exc
    try:
        return _built(iter(lambda: os.read(fd, FILE_BLOCK), b""))
    except OSError as exc:
        raise StoreUnusable(f"cannot read {store.jsonl_path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def lines_index(data: bytes) -> RecordDB:
    """An index in memory of the bytes of an ``extract.jsonl`` (a store held in memory)."""
    return _built(data[i : i + FILE_BLOCK] for i in range(0, len(data), FILE_BLOCK))


def _built(blocks: Iterator[bytes]) -> RecordDB:
    """An index in memory of the file whose bytes come in ``blocks``; the lines that are not
    records kept in it (numbered in the whole file). A key met twice keeps its last line."""
    db = RecordDB.open_memory()
    con = db.con
    for name in ("counts_in", "counts_out", "counts_change"):  # counted once, at the end
        con.execute(f"DROP TRIGGER IF EXISTS {name}")
    left = LeftOut()
    records = records_in(blocks, left)
    while chunk := list(islice(records, _PUT_ROWS)):
        db.put(chunk)
    db.recount()
    keep_bad_lines(db, tuple(left.first), left.count)
    db.commit()
    return db
