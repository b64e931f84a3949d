"""A big store browsed from its index, never held: counts, windows, the keys of a few kinds.

The dashboard holds every row of a store it shows (~290 MB a million). Past
:data:`BROWSE_FROM` records it holds none (issue 26: ten million within 500 MB): it asks a
:class:`Browse` of the store's index for what is on screen. One read snapshot at a time
(:meth:`Browse.renew` takes the next, once the index's counter has moved), so the counts,
a :class:`~engine.window.Window`'s pages and a record's position agree with each other.

What the triage screens list (the errors, the suspect texts, the files waiting on a tool)
is read as keys, in key order, by one statement each; the full records are asked of the
store's table by key, as for a held store.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from engine.db import (
    DB,
    FIELDS_COLUMNS,
    FIELDS_TREE,
    ORDER_SQL,
    SORT_INDEX,
    SORTED_FROM,
    Agreement,
    IndexUnusable,
    Point,
    RecordDB,
    key_bytes,
    name_of,
    needs_from_text,
)
from engine.db import standing as index_standing
from engine.pages import page
from engine.quality import VERDICTS
from engine.query import Query
from engine.readindex import cached_index_path
from engine.records import Key, Record
from engine.sqlquery import FEW, Where, driven_if_few, paths_match
from engine.store import Store, read_jsonl
from engine.window import Window

BROWSE_FROM = SORTED_FROM
"""Records from which a dashboard browses the index instead of holding every row (the
index has its sort B-trees from there: a page in any order is a walk, not a sort)."""

SPLIT_FROM = 1_000_000
"""Records from which a query's count walks two halves at once (:meth:`Browse.by_status_now`):
below, one walk takes well under a second and a second thread costs more than it saves."""
EXPORT_BATCH = 4096
"""Lines :meth:`Browse.records_in_order` reads and parses at a time."""
FEW_DISTINCT = 1_000
"""The values a field may hold for a query's word over it to be decided once a value."""
Counted = dict[tuple[str, str, str], int]
"""(status, reason, quality) -> records (a missing reason or verdict as ``''``)."""


def browsable(store: Store, at_least: int | None = None, *, cached: bool = True) -> Path | None:
    """The index of ``store`` to browse (its own, or the user's cached one, in step with
    ``extract.jsonl``) when it holds at least ``at_least`` (:data:`BROWSE_FROM`) records;
    None when there is no such index or it holds fewer (a few reads, whatever the size).
    ``cached=False``: its own index only (a session writes that one, never the cache's)."""
    least = BROWSE_FROM if at_least is None else at_least
    jsonl = store.jsonl_path
    own = store.out / DB
    candidates = [own]
    in_cache = cached_index_path(store) if cached else None
    if in_cache is not None:
        candidates.append(in_cache)
    for path in candidates:
        wanted = (Agreement.IN_STEP,) if path != own else (Agreement.IN_STEP, Agreement.AHEAD)
        with contextlib.suppress(OSError, sqlite3.Error):
            if index_standing(path, jsonl, lines=False).agreement not in wanted:
                continue
            try:
                db = RecordDB.open_reader(path)
            except IndexUnusable:
                continue
            try:
                return path if len(db) >= least else None
            finally:
                db.close()
    return None


def walked(store: Store) -> int:
    """How many files the sweep another process is making of ``store`` walked
    (:meth:`engine.db.RecordDB.walked`): the records its index is about to hold, known long
    before they are read; 0 when no sweep is under way or the store has no index of its own."""
    with contextlib.suppress(OSError, sqlite3.Error, IndexUnusable):
        db = RecordDB.open_reader(store.out / DB)
        try:
            return db.walked()
        finally:
            db.close()
    return 0


class Reads(enum.Enum):
    """What of a record a query reads."""

    KEY = "key"
    """The key and the status alone (path words, ``status:``, ``text:`` by the key)."""
    FIELDS = "fields"
    """Only fields :data:`~engine.db.FIELDS_TREE` holds (every field of the query line)."""
    ROW = "row"
    """Fields of the row itself."""


_IN_FIELDS_TREE = frozenset(c.strip() for c in FIELDS_COLUMNS.split(","))


def reads_of(query: Query) -> Reads:
    """What of a record ``query`` reads."""
    fields = {t.field for t in query.terms} | {c.field for c in query.numbers}
    if fields <= {"path", "status"}:
        return Reads.KEY
    return Reads.FIELDS if fields <= _IN_FIELDS_TREE else Reads.ROW


class Browse:
    """One index read a snapshot at a time: its counts, windows onto it, keys of a kind."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = RecordDB.open_reader(path)
        self._con = self._db.con
        self.counted: Counted = {}
        """The index's counts in the snapshot read."""
        self._lock = threading.Lock()
        self._distinct: dict[str, frozenset[str]] | None = None
        """The values of the MIME type and the extractor (:meth:`values`), read once a
        snapshot."""
        self.fields_tree = False
        """Whether the index has :data:`~engine.db.FIELDS_TREE` (in the snapshot read)."""
        self.paths_index = False
        """Whether the index has :data:`~engine.db.PATHS_INDEX` (in the snapshot read)."""
        self.triage_tree = False
        """Whether the index has :data:`~engine.db.TRIAGE_TREE` (in the snapshot read)."""
        self.point = Point("", -1)
        """Where in the index's history the snapshot read is."""
        self.renew()

    def renew(self) -> None:
        """Read the index as it is now (the snapshot before is let go)."""
        con = self._con
        if con.in_transaction:
            con.execute("COMMIT")
        con.execute("BEGIN")  # (a read transaction: every statement sees one snapshot)
        rows = con.execute("SELECT status, reason, quality, n FROM counts WHERE n > 0")
        self.counted = {(s, r, q): int(n) for s, r, q, n in rows}
        with self._lock:
            self._distinct = None
        self.fields_tree = self._db.has_fields_tree()
        self.paths_index = self._db.has_paths_index()
        self.triage_tree = self._db.has_triage_tree()
        self.point = self._db.point()

    def __len__(self) -> int:
        return sum(self.counted.values())

    def per_status(self) -> dict[str, int]:
        """The records of each status in the snapshot read (from :attr:`counted`)."""
        per: dict[str, int] = {}
        for (status, _reason, _quality), n in self.counted.items():
            per[status] = per.get(status, 0) + n
        return per

    def by_status(self, where: Where, reads: Reads = Reads.ROW) -> dict[str, int]:
        """Records ``where`` keeps, per status (one walk of them); ``reads``: what of a
        record the clause reads (:func:`reads_of`), which says what to walk."""
        where.install(self._con)
        rows = self._con.execute(self._by_status_sql(where, reads), where.params)
        return {status: int(n) for status, n in rows}

    def _by_status_sql(self, where: Where, reads: Reads) -> str:
        """A count per status of the records ``where`` keeps: by walking ``sort_status``
        when the clause reads the key and status alone, :data:`~engine.db.FIELDS_TREE` when
        it reads only fields that tree holds, else the table in its own order (through an
        index, each row is a seek: 24.6 s for ``mime:pdf`` over ten million, against 6.5 s
        walked, 4.3 s through the fields tree)."""
        if where.driven:
            table = "records NOT INDEXED"  # (its few records by row id)
        elif reads is Reads.KEY:
            table = "records"
        elif reads is Reads.FIELDS and self.fields_tree:
            table = f"records INDEXED BY {FIELDS_TREE}"
        else:
            table = "records NOT INDEXED"
        return f"SELECT status, count(*) FROM {table} WHERE ({where.sql}) GROUP BY status"

    def drive(self, where: Where, query: Query) -> Where:
        """:func:`engine.sqlquery.drive`, asked on a connection of its own (workers ask it
        too)."""
        match = paths_match(query)
        if match is None or not self.paths_index:
            return where
        db = RecordDB.open_reader(self.path)
        try:
            return driven_if_few(db.con, where, match)
        finally:
            db.close()

    def by_status_now(self, where: Where, reads: Reads = Reads.ROW) -> dict[str, int]:
        """:meth:`by_status` on a connection of its own (a worker thread's: the index as it
        is now, not the snapshot). A walk of a B-tree that begins with the status (every
        query but one the paths' index drives, or one that reads a row) is cut in two by
        status, of about as many records each, walked at once on two connections: SQLite
        lets the GIL go as it steps, so two cores walk (ten million records, `why:new`
        1.09 s -> 0.77 s, a word in every path 1.10 s -> 0.76 s)."""
        halves = self._halves(where, reads)
        if halves is None:
            rows = self._read(self._by_status_sql(where, reads), where.params, where)
            return {status: int(n) for status, n in rows}
        found: dict[str, int] = {}
        other: list[list[Any]] = []
        failed: list[BaseException] = []

        def walk(statuses: list[str], into: list[list[Any]]) -> None:
            part = Where(
                f"status IN ({', '.join('?' * len(statuses))}) AND ({where.sql})",
                (*statuses, *where.params),
                where.terms,
                where.texts,
            )
            try:
                into.append(self._read(self._by_status_sql(part, reads), part.params, part))
            except BaseException as exc:  # (said on the caller's thread)
                failed.append(exc)

        beside = threading.Thread(target=walk, args=(halves[1], other), daemon=True)
        beside.start()
        mine: list[list[Any]] = []
        walk(halves[0], mine)
        beside.join()
        if failed:
            raise failed[0]
        for status, n in (*mine[0], *other[0]):
            found[status] = found.get(status, 0) + int(n)
        return found

    def _halves(self, where: Where, reads: Reads) -> tuple[list[str], list[str]] | None:
        """The statuses cut in two halves of about as many records each, for a count walked
        on two connections (:meth:`by_status_now`); None when one walk does as well: a
        small index, a clause driven by the paths' index (a few rows), one that reads a row
        (the table walked whole: each half would walk it all), or one status holding
        three quarters of the records."""
        if where.driven or len(self) < SPLIT_FROM:
            return None
        if reads is Reads.ROW or not self.fields_tree:  # (built and dropped with sort_status)
            return None
        per = self.per_status()
        halves: tuple[list[str], list[str]] = ([], [])
        sizes = [0, 0]
        for status, n in sorted(per.items(), key=lambda item: (-item[1], item[0])):
            side = 0 if sizes[0] <= sizes[1] else 1
            halves[side].append(status)
            sizes[side] += n
        if not halves[1] or max(sizes) * 4 > sum(sizes) * 3:
            return None
        return halves

    def values(self) -> dict[str, frozenset[str]]:
        """Every value of the few-valued fields (:func:`engine.sqlquery.known_values`), and
        of the MIME type and the extractor when they hold few (:data:`FEW_DISTINCT`): a
        query's word over one of them is then decided once a value, not once a record
        (``mime:pdf`` over ten million records: a list of two values)."""
        counted = self.counted
        out = {field: frozenset(key[i] for key in counted) for i, field in enumerate(FEW)}
        with self._lock:
            if self._distinct is None:
                self._distinct = self._read_distinct()
            out.update(self._distinct)
        return out

    def _read_distinct(self) -> dict[str, frozenset[str]]:
        """The values of the MIME type and the extractor, each read from its sort B-tree a
        value at a time (a seek each: no walk of the rows); none past :data:`FEW_DISTINCT`."""
        out: dict[str, frozenset[str]] = {}
        try:
            db = RecordDB.open_reader(self.path)
        except IndexUnusable:
            return out
        try:
            have = db.sorted_columns()
            for column in ("mime", "extractor"):
                if column not in have:
                    continue
                order = ORDER_SQL[column]
                tree = f"records INDEXED BY {SORT_INDEX}{column}"
                first = f"SELECT {order} FROM {tree} ORDER BY {order} LIMIT 1"
                after = f"SELECT {order} FROM {tree} WHERE {order} > ? ORDER BY {order} LIMIT 1"
                found: list[str] = []
                row = db.con.execute(first).fetchone()
                while row is not None and len(found) <= FEW_DISTINCT:
                    found.append(row[0])
                    row = db.con.execute(after, (row[0],)).fetchone()
                if len(found) <= FEW_DISTINCT:
                    out[column] = frozenset(found)
        except sqlite3.Error:
            return {}
        finally:
            db.close()
        return out

    def window(self, where: Where, column: str, *, reverse: bool = False) -> Window:
        """The records ``where`` keeps in ``column``'s order, a page at a time."""
        return Window(self._con, where, column, reverse=reverse)

    def records_in_order(
        self, where: Where, column: str, *, reverse: bool = False
    ) -> Iterator[Record]:
        """Every record ``where`` keeps, in ``column``'s order, read as it is iterated on a
        connection of its own, in one snapshot, :data:`EXPORT_BATCH` lines at a time (an
        export of a view of millions from a worker: its keys are never held)."""
        db = RecordDB.open_reader(self.path)
        try:
            db.con.execute("BEGIN")
            where.install(db.con)
            lines = page(db.con, where, column, reverse=reverse)
            while batch := list(islice(lines, EXPORT_BATCH)):
                yield from read_jsonl(b"".join(batch)).records
        finally:
            db.close()

    def has(self, key: Key) -> bool:
        """Whether a record of ``key`` is in the index."""
        row = self._con.execute(
            "SELECT 1 FROM records WHERE root = ? AND path = ?",
            (key_bytes(key[0]), key_bytes(key[1])),
        ).fetchone()
        return row is not None

    def _read(
        self, sql: str, params: tuple[object, ...] = (), where: Where | None = None
    ) -> list[Any]:
        """Every row of one statement, on a connection of its own: the key sets are asked
        from worker threads too (the index as it is now, not the snapshot)."""
        db = RecordDB.open_reader(self.path)
        try:
            if where is not None:
                where.install(db.con)
            return db.con.execute(sql, params).fetchall()
        finally:
            db.close()

    def keys(self, where: Where, limit: int = -1) -> list[Key]:
        """The keys of the records ``where`` keeps, in key order (the first ``limit``)."""
        rows = self._read(
            f"SELECT root, path FROM records WHERE ({where.sql}) ORDER BY root, path LIMIT ?",
            (*where.params, limit),
            where,
        )
        return [(name_of(root), name_of(path)) for root, path in rows]

    def keys_of(
        self, status: str, reasons: Iterable[str | None] = (), limit: int = -1
    ) -> list[Key]:
        """The keys of the records of ``status`` (and one of ``reasons``, when given), the
        first ``limit`` in key order."""
        wanted = list(reasons)
        sql, params = "status = ?", [status]
        if wanted:
            named = [r for r in wanted if r is not None]
            parts = [f"reason IN ({', '.join('?' * len(named))})"] if named else []
            if None in wanted:
                parts.append("reason IS NULL")
            sql += f" AND ({' OR '.join(parts)})"
            params += named
        return self.keys(Where(sql, tuple(params)), limit)

    def keys_of_quality(self, verdicts: Iterable[str], limit: int = -1) -> list[Key]:
        """The keys of the records whose verdict is one of ``verdicts`` (the first
        ``limit`` in key order)."""
        known = [v for v in verdicts if v in VERDICTS]
        if not known:
            return []
        marks = ", ".join("?" * len(known))
        return self.keys(Where(f"quality IN ({marks})", tuple(known)), limit)

    def waiting(self) -> list[tuple[Key, tuple[str, ...]]]:
        """(key, tools) of every record that names tools that would unlock it."""
        rows = self._read(
            "SELECT root, path, needs FROM records WHERE needs IS NOT NULL ORDER BY root, path"
        )
        out = []
        for root, path, needs in rows:
            tools = needs_from_text(needs)
            if tools:
                out.append(((name_of(root), name_of(path)), tools))
        return out

    def error_messages(self) -> set[tuple[str | None, str | None]]:
        """Every distinct (reason, error) of the error records: found through
        ``sort_status`` when they are few, else by a walk of the table in its own order (a
        tenth of ten million records: 5.2 s walked, 7.5 s a seek each)."""
        errors = self.per_status().get("error", 0)
        table = "records NOT INDEXED" if errors * 20 > len(self) else "records"
        rows = self._read(f"SELECT DISTINCT reason, error FROM {table} WHERE status = 'error'")
        return {(r, e) for r, e in rows}

    def close(self) -> None:
        """Let the index go."""
        with contextlib.suppress(sqlite3.Error):
            if self._con.in_transaction:
                self._con.execute("COMMIT")
        self._db.close()


__all__ = ["BROWSE_FROM", "Browse", "Reads", "browsable", "reads_of"]
