"""The store's index of records in SQLite: committed as a sweep goes, queried by readers.

``extract.db`` beside ``extract.jsonl`` holds one row per record: the columns the dashboard
sorts and filters on, and the record's ``extract.jsonl`` line byte for byte (so the records
read back are exactly the ones written, by the same validating parser as the file's). WAL
mode: one writer (the holder of the store's lock), readers in other processes never blocked
and never taking a lock; every write is a transaction, so a killed writer leaves the last
commit.

What it is for, beside the file:

- **Resume.** A sweep commits the records it decides every batch or so (:meth:`put`); killed
  at any moment, the next sweep loads the file's records plus what was committed after it,
  and reads again only the files without a committed record.
- **Changes without re-reading.** Every commit bumps a change counter (``meta.seq``) and
  stamps the rows it wrote with it; removed keys leave a tombstone with theirs. A reader
  asks :meth:`changes_since` for what changed after the counter it last saw.
- **Counts kept with the records** (``counts``, by triggers): no recount.

The index agrees with one ``extract.jsonl``: :meth:`source` is that file's identity (size,
mtime, inode) when the index was last in step with it. An index whose source is not the
file on disk (another writer, a hand, an older quarry) is rebuilt from the file, never
trusted; so is one that is damaged or of another :data:`VERSION`. Names that are not UTF-8
(a file system's raw bytes, held in ``str`` as lone surrogates) are keyed exactly, in an
encoding whose byte order is Python's order of the same names (:func:`key_bytes`).
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from engine import history
from engine.jsonl import line_of
from engine.quality import VERDICTS
from engine.records import Key, Record, needs_of

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
missing text as empty, a missing page count as 0. The sort B-trees (:data:`SORTED_FROM`)
index these very expressions, so that SQLite walks one for an ``ORDER BY`` of them."""
SORT_INDEX = "sort_"
"""How the names of the sort B-trees begin (``sort_size``...)."""
FIELDS_TREE = SORT_INDEX + "_fields"  # (no sort column's name)
"""The B-tree of a big store's index that holds every field a query line reads
(:data:`FIELDS_COLUMNS`): a query SQLite must scan walks it, about a tenth of the table's
bytes (the table holds each record's line), not the table. Built and dropped with the sort
B-trees (ten million records: ``size:>10K chars:<100`` counted in 2.0 s against 9.3 s,
``status:error !mime:pdf`` 0.5 s against 4.6 s). Until session 28 it held neither the error
nor the ``why`` (``error:xref`` walked the table: 37 s at ten million); a tree of those
columns is not this one (:meth:`RecordDB.has_fields_tree`): built again."""
FIELDS = "_fields"
"""What :meth:`RecordDB.make_sorted` calls :data:`FIELDS_TREE` among the columns it built."""
FIELDS_COLUMNS = (
    "status, reason, quality, mime, extractor, size, chars, pages, ms, why, error, root, path"
)
"""The columns of :data:`FIELDS_TREE`: the status first, so a count per status walks it in
order."""
TRIAGE_TREE = SORT_INDEX + "_triage"
"""The B-tree of a big store's index that holds the records the triage screens group (errors,
unsupported files, suspect and garbled texts, files waiting on a tool: :data:`TRIAGE_WHERE`),
by what they are grouped by (:data:`TRIAGE_COLUMNS`), each run of one kind in key order: a
screen counts its groups in one walk of the records it shows, and reads a group's first files
a seek at a time, where it walked the table (ten million records: 5 s for the errors' kinds)
or read each record's line. Built and dropped with the sort B-trees; a partial index, so it
costs nothing on the upsert of any other record."""
TRIAGE = "_triage"
"""What :meth:`RecordDB.make_sorted` calls :data:`TRIAGE_TREE` among the columns it built."""
TRIAGE_WHERE = (
    "status IN ('error', 'unsupported') OR quality IN ('suspect', 'garbled') OR needs IS NOT NULL"
)
"""The records :data:`TRIAGE_TREE` holds. A statement that reads it says this very clause,
AND-ed with its own (SQLite uses a partial index only for a clause that implies its own)."""
TRIAGE_COLUMNS = ("status", "quality", "reason", "error", "signal", "mime", "needs")
"""What :data:`TRIAGE_TREE` orders its records by before their key."""
PATHS_INDEX = "paths_fts"
"""A big store's index of the trigrams of every record's path (SQLite's FTS5, its
``trigram`` tokenizer, over the ``path`` column: it holds no copy of the paths), so that a
query's word inside a path finds its few records without a walk of every key
(:func:`engine.sqlquery.drive`; ten million records: a word in 100 paths counted in 4 ms
against 1.9 s). Built and dropped with the sort B-trees, kept in step by two triggers."""
PATHS = "_paths"
"""What :meth:`RecordDB.make_sorted` calls :data:`PATHS_INDEX` among what it built."""
_PATHS_DDL = (
    f"CREATE VIRTUAL TABLE {PATHS_INDEX} USING fts5(path, content='records',"
    " content_rowid='id', tokenize='trigram', detail='none', columnsize=0)",
    f"CREATE TRIGGER {PATHS_INDEX}_in AFTER INSERT ON records BEGIN"
    f" INSERT INTO {PATHS_INDEX}(rowid, path) VALUES (new.id, new.path); END",
    f"CREATE TRIGGER {PATHS_INDEX}_out AFTER DELETE ON records BEGIN"
    f" INSERT INTO {PATHS_INDEX}({PATHS_INDEX}, rowid, path)"
    " VALUES ('delete', old.id, old.path); END",
    f"INSERT INTO {PATHS_INDEX}({PATHS_INDEX}) VALUES ('rebuild')",
)
"""The paths' index, its triggers (a record's key never changes in place: an upsert keeps
its row id and path) and its first build, in one transaction."""

DB = "extract.db"
"""The index's file in the store folder (with SQLite's ``-wal`` and ``-shm`` beside it)."""
VERSION = 3
"""Bumped whenever the schema or what a row holds changes: an index of another is rebuilt.
3: the columns the dashboard shows beside the sort columns (``pages``, ``reused``, ``error``,
``why``, ``needs``, ``signal``), so that it reads its rows as columns, never a line."""
Identity = tuple[int, int, int]
"""(size, mtime_ns, inode) of an ``extract.jsonl``."""
SORTED_FROM = 1_000_000
"""Records from which a whole sweep's end (and a rebuild from ``extract.jsonl``) gives the
index a B-tree per sort column (:data:`ORDER_SQL`, :meth:`RecordDB.make_sorted`): at that size
a viewer pages rows in any order without sorting them all (a sort of ten million rows is
seconds), and a smaller store's dashboard holds its rows and sorts them itself. Each B-tree
costs about a fifth more on every upsert, which a small store's sweeps need not pay."""
UNSORTED_PAST = 50_000
"""Rows one run upserts (and a sixteenth of the store's at least) past which the writer
drops the sort B-trees (a mass change, a cold or resumed sweep of a big store): keeping them
up a row at a time made inserts 3.3x as slow (200,000 rows in random order, 21 s against
69 s), where the run's end builds them again in one sort each (0.4 s per 200,000 rows). A
run of fewer (a watch batch) keeps them up."""
TOMBSTONES_KEPT = 100_000
"""Tombstones past this many are pruned; a reader further behind reloads everything."""

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE records (
    id INTEGER PRIMARY KEY,
    root BLOB NOT NULL, path BLOB NOT NULL,
    status TEXT NOT NULL, reason TEXT, quality TEXT, mime TEXT, extractor TEXT,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, chars INTEGER NOT NULL,
    ms INTEGER NOT NULL, sha256 TEXT,
    pages INTEGER, reused INTEGER NOT NULL, error TEXT, why TEXT, needs TEXT, signal TEXT,
    seq INTEGER NOT NULL,
    line BLOB NOT NULL
);
CREATE TABLE gone (root BLOB NOT NULL, path BLOB NOT NULL, seq INTEGER NOT NULL,
                   PRIMARY KEY (root, path)) WITHOUT ROWID;
CREATE TABLE counts (status TEXT NOT NULL, reason TEXT NOT NULL, quality TEXT NOT NULL,
                     n INTEGER NOT NULL, PRIMARY KEY (status, reason, quality)) WITHOUT ROWID;
"""
_INDEXES = """
CREATE UNIQUE INDEX by_key ON records (root, path);
CREATE INDEX by_seq ON records (seq);
CREATE INDEX by_gone_seq ON gone (seq);
CREATE INDEX by_sha ON records (sha256);
"""
_TRIGGERS = """
CREATE TRIGGER counts_in AFTER INSERT ON records BEGIN
  INSERT INTO counts VALUES (new.status, coalesce(new.reason, ''), coalesce(new.quality, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER counts_out AFTER DELETE ON records BEGIN
  UPDATE counts SET n = n - 1 WHERE status = old.status
    AND reason = coalesce(old.reason, '') AND quality = coalesce(old.quality, '');
END;
CREATE TRIGGER counts_change AFTER UPDATE OF status, reason, quality ON records
  WHEN old.status IS NOT new.status OR old.reason IS NOT new.reason
    OR old.quality IS NOT new.quality BEGIN
  UPDATE counts SET n = n - 1 WHERE status = old.status
    AND reason = coalesce(old.reason, '') AND quality = coalesce(old.quality, '');
  INSERT INTO counts VALUES (new.status, coalesce(new.reason, ''), coalesce(new.quality, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
"""
_COLUMNS = (
    "root, path, status, reason, quality, mime, extractor, size, mtime_ns, chars, ms, sha256,"
    " pages, reused, error, why, needs, signal, seq, line"
)
_MARKS = ",".join("?" * 20)
_UPSERT = (
    f"INSERT INTO records ({_COLUMNS}) VALUES ({_MARKS})"
    " ON CONFLICT (root, path) DO UPDATE SET status = excluded.status,"
    " reason = excluded.reason, quality = excluded.quality, mime = excluded.mime,"
    " extractor = excluded.extractor, size = excluded.size, mtime_ns = excluded.mtime_ns,"
    " chars = excluded.chars, ms = excluded.ms, sha256 = excluded.sha256,"
    " pages = excluded.pages, reused = excluded.reused, error = excluded.error,"
    " why = excluded.why, needs = excluded.needs, signal = excluded.signal, seq = excluded.seq,"
    " line = excluded.line"
)
_INSERT = f"INSERT INTO records ({_COLUMNS}) VALUES ({_MARKS})"
_OLD_COUNTS_CHANGE = "ON records BEGIN"
"""How the ``counts_change`` trigger of an index made before session 35 begins: with no
``WHEN``, it took a count down and up again for every row an upsert rewrote, its verdict the
same (a fifth of a re-sweep's writes). Replaced at the index's next writer."""
_KEPT = (
    "UPDATE records SET reused = 1, seq = ?, line = ? WHERE root = ? AND path = ?"
    " AND status IS ? AND reason IS ? AND quality IS ? AND mime IS ? AND extractor IS ?"
    " AND size IS ? AND mtime_ns IS ? AND chars IS ? AND ms IS ? AND sha256 IS ?"
    " AND pages IS ? AND error IS ? AND why IS ? AND needs IS ? AND signal IS ?"
)
"""A kept record's row (see :meth:`RecordDB.put`): only ``reused``, the counter and the line
written, where every other column is the row's already."""


def _kept_params(row: tuple[object, ...]) -> tuple[object, ...]:
    """The parameters of :data:`_KEPT` for a row of :func:`row_of`."""
    return (row[18], row[19], *row[:13], *row[14:18])


def _counting(
    counted: Counter[tuple[str, str, str]], rows: Iterable[tuple[object, ...]]
) -> Iterator[tuple[object, ...]]:
    """``rows`` as they pass, each counted by (status, reason, quality) as ``counts`` keys it."""
    for row in rows:
        counted[(row[2], row[3] or "", row[4] or "")] += 1  # type: ignore[index]
        yield row


def _count_rows(counted: Counter[tuple[str, str, str]]) -> list[tuple[str, str, str, int]]:
    return [(s, r, q, n) for (s, r, q), n in counted.items() if n]


def needs_text(needs: tuple[str, ...]) -> str | None:
    """The ``needs`` column of a record: its tool names as a JSON list (None for none)."""
    return json.dumps(list(needs), ensure_ascii=False) if needs else None


def needs_from_text(raw: object) -> tuple[str, ...]:
    """The tool names of a ``needs`` column's value (:func:`needs_text` read back; none
    for a value that is not one)."""
    if not raw or not isinstance(raw, str | bytes):
        return ()
    try:
        return needs_of(json.loads(raw))
    except ValueError:
        return ()


@dataclass(frozen=True, slots=True)
class Point:
    """Where a reader is in one index's history: which index (one made anew, after it was
    deleted or damaged, is another, its counter starting again) and its change counter."""

    index: str
    seq: int


class Companion(Protocol):
    """What else a writer keeps in the same transactions as the records (the text index,
    :mod:`engine.textindex`): told of the records put, called before each commit."""

    def put(self, records: Sequence[Record]) -> None: ...

    def before_commit(self, seq: int, replaced: bool) -> None: ...

    def rollback(self) -> None: ...


CHANGED_SINCE = "SELECT line FROM records INDEXED BY by_seq WHERE seq > ? ORDER BY root, path"
"""The lines written after a counter, in key order: found by the counter, then sorted. Left
to itself, SQLite walks the key index in order for the ORDER BY, every row of the store
(0.75 s at a million records), to find the few written since."""


class IndexUnusable(Exception):
    """The index cannot be used as it is (damaged, another version, not a database): the
    caller rebuilds it from ``extract.jsonl``."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed in the index after a reader's counter: the records written (their lines)
    and the keys removed, and the counter they bring the reader to. ``reload``: the reader is
    too far behind (or the index was rebuilt): it reads every record again."""

    lines: tuple[bytes, ...]
    removed: tuple[Key, ...]
    seq: int
    reload: bool = False


def key_bytes(name: str) -> bytes:
    """A root or path as the index keys it (see the module's docstring). The lone surrogates
    that carry a name's undecodable bytes are encoded as code points (``surrogatepass``),
    not as the raw bytes: UTF-8's byte order is then the code points' order, Python's order
    of the same names (raw bytes sorted a ``\x80`` before an ``é``, the file after it)."""
    return name.encode("utf-8", "surrogatepass")


def name_of(raw: bytes) -> str:
    """The inverse of :func:`key_bytes`."""
    return raw.decode("utf-8", "surrogatepass")


def identity_of(path: Path) -> Identity | None:
    """The identity of the file at ``path`` (not following a link), or None if there is none."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def row_of(record: Record, seq: int, line: bytes | None = None) -> tuple[object, ...]:
    """``record`` as a row of ``records`` written at ``seq`` (``line``: its serialised line,
    when the caller has it already)."""
    q = record.quality
    quality = q.verdict if q is not None else None
    # the worst signal, as the dashboard shows it: none unless the verdict is one it knows
    signal = q.signals[0] if q is not None and q.signals and q.verdict in VERDICTS else None
    needs = needs_text(needs_of(record.needs))
    return (
        key_bytes(record.root), key_bytes(record.path), record.status, record.reason, quality,
        record.mime, record.extractor, record.size, record.mtime_ns, record.chars, record.ms,
        record.sha256, record.pages, 1 if record.reused else 0, record.error, record.why, needs,
        signal, seq, line if line is not None else line_of(record),
    )  # fmt: skip


class RecordDB:
    """One connection to a store's index: a writer's (:meth:`open_writer`) or a reader's."""

    def __init__(self, con: sqlite3.Connection, path: Path, writer: bool) -> None:
        self.con = con
        self.path = path
        self.writer = writer
        self._seq: int | None = None
        """The counter of the transaction in flight (a writer's, once it wrote)."""
        self.companion: Companion | None = None
        """Kept in the writer's transactions with the records (see :class:`Companion`)."""
        self._replaced = False
        """The transaction in flight replaced every record (:meth:`replace_all`)."""
        self._upserted = 0
        """Rows the run in flight upserted (:data:`UNSORTED_PAST`, :meth:`run_ended`)."""
        self._drop_at: int | None = None
        """Upserts of the run past which it drops the sort B-trees (once it is near)."""
        self._unsorted = False
        """This run dropped the sort B-trees (in a transaction not rolled back)."""
        self.aside: dict[str, str] = {}
        """Texts replaced in the run in flight: content hash -> the hash of its old text, kept
        aside (:meth:`set_aside`); the run's end clears it."""

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open_writer(cls, path: Path) -> RecordDB:
        """The index at ``path`` for writing (made empty if there is none). IndexUnusable
        when the file there is not an index of this :data:`VERSION`."""
        return cls._open(path, writer=True, fresh=not os.path.lexists(path))

    @classmethod
    def open_memory(cls) -> RecordDB:
        """A new index in memory (a reader's, of a store it can keep none for on disk)."""
        con = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        db = cls(con, Path(":memory:"), writer=True)
        db._create()
        return db

    @classmethod
    def open_reader(cls, path: Path) -> RecordDB:
        """The index at ``path`` for reading (IndexUnusable when missing, damaged or of
        another version). Never takes a lock; never writes."""
        if not path.is_file():
            raise IndexUnusable(f"no index at {path}")
        return cls._open(path, writer=False, fresh=False)

    @classmethod
    def _open(cls, path: Path, *, writer: bool, fresh: bool) -> RecordDB:
        """Connect, make the schema when ``fresh``, check the version; whatever SQLite says
        of a file that is no index of ours becomes IndexUnusable."""
        try:
            con = _connect(path, writer=writer)
        except sqlite3.Error as exc:
            raise IndexUnusable(f"{path.name}: {exc}") from exc
        db = cls(con, path, writer)
        try:
            if fresh:
                db._create()
            db._check_version()
            if writer:
                history.install(con)  # (an index of this version from before it gains it)
                # (likewise: a watching sweeper finds a content's records by it)
                con.execute("CREATE INDEX IF NOT EXISTS by_sha ON records (sha256)")
                # No query needed it (the dashboard reads its rows by key, its counts from
                # ``counts``; the planner took it for the content hashes' DISTINCT, which it
                # then sorted in a temporary B-tree), and it cost a fifth of each upsert: an
                # index of before goes.
                con.execute("DROP INDEX IF EXISTS by_status")
                # (and the text index's own partial index on the hash: by_sha serves it)
                con.execute("DROP INDEX IF EXISTS text_by_sha")
                _mend_counts(con)
        except (sqlite3.Error, IndexUnusable) as exc:
            con.close()
            raise IndexUnusable(f"{path.name}: {exc}") from exc
        return db

    def close(self) -> None:
        """Close the connection (a writer's transaction in flight is committed first)."""
        with contextlib.suppress(sqlite3.Error):
            if self.writer and self.con.in_transaction:
                self.commit()
        self.con.close()

    def __enter__(self) -> RecordDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        meta = (
            f"INSERT INTO meta VALUES ('version', {VERSION}), ('seq', 0), ('finished', 0),"
            f" ('source', NULL), ('gone_floor', 0), ('id', '{secrets.token_hex(8)}');"
        )
        # one transaction: a writer killed while making the file leaves no half schema
        self.con.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}{_INDEXES}{_TRIGGERS}{meta}COMMIT;")

    def _check_version(self) -> None:
        version = self._meta("version")
        if version != VERSION:
            raise IndexUnusable(f"an index of version {version!r}, not {VERSION}")

    def _meta(self, key: str) -> object:
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row is not None else None

    def _set(self, key: str, value: object) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- writing --------------------------------------------------------------------------

    def _begin(self) -> int:
        """The counter of the write in flight, starting a transaction if none is."""
        if self._seq is None or not self.con.in_transaction:
            self.con.execute("BEGIN IMMEDIATE")
            seq = self._meta("seq")
            self._seq = (seq if isinstance(seq, int) else 0) + 1
        return self._seq

    def put(self, records: Iterable[Record]) -> None:
        """Write ``records`` (replacing those of the same keys) in the transaction in flight.

        A record a sweep kept (``reused``: its file unchanged) differs from its row only by
        that flag, the counter and the line: its row is updated in those three columns, not
        upserted whole, when every other column is as the record has it (no count, text or
        sort B-tree touched, and not counted towards :data:`UNSORTED_PAST`: the first
        re-sweep of a million unchanged files wrote its index in 66 s against 185 s, which
        dropped and rebuilt the sort B-trees; ``tests/bench/bench_kept_rows.py``). Any other
        row, or a batch where that does not hold for each kept record, is upserted (which
        writes the same values over a row updated so)."""
        seq = self._begin()
        records = records if isinstance(records, Sequence) else list(records)
        rows = [row_of(r, seq) for r in records]
        after = history.last_row(self.con) if self.aside else 0
        upsert = self._keep_rows(rows)
        self._upserted += len(upsert)
        if self._upserted > UNSORTED_PAST and not self._unsorted:
            if self._drop_at is None:
                self._drop_at = max(UNSORTED_PAST, len(self) // 16)
            if self._upserted > self._drop_at:
                self._drop_sorted()
        if upsert:
            self.con.executemany(_UPSERT, upsert)
        if self.aside:  # the records these replace had the texts set aside
            history.name_new(self.con, after, self.aside)
        if self.companion is not None:
            self.companion.put(records)
        # (a tombstone-free index, a cold sweep's, skips a delete a record)
        if self.con.execute("SELECT 1 FROM gone LIMIT 1").fetchone() is not None:
            self.con.executemany(
                "DELETE FROM gone WHERE root = ? AND path = ?", [(r[0], r[1]) for r in rows]
            )

    def _keep_rows(self, rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        """Write the kept records' rows of ``rows`` as :data:`_KEPT` updates them; the rows
        left to upsert (all of them when a kept row's update found no row of its fields, or
        a key comes twice: then the batch's order decides, as upserts keep it)."""
        kept = [row for row in rows if row[13]]
        if not kept or len({(row[0], row[1]) for row in rows}) < len(rows):
            return rows
        done = self.con.executemany(_KEPT, [_kept_params(row) for row in kept]).rowcount
        if done != len(kept):
            return rows
        return [row for row in rows if not row[13]] if len(kept) < len(rows) else []

    def set_aside(self, sha256: str, text: str) -> None:
        """The stored text of ``sha256`` is about to be replaced by another, its old one kept
        aside as ``text`` (in the transaction in flight): the records kept that had it, and
        those this run replaces, read that one (:mod:`engine.history`)."""
        self._begin()
        self.aside[sha256] = text
        history.set_aside(self.con, sha256, text)

    def drop(self, keys: Iterable[Key]) -> None:
        """Remove the records of ``keys`` in the transaction in flight (a tombstone each)."""
        seq = self._begin()
        raw = [(key_bytes(root), key_bytes(path)) for root, path in keys]
        self.con.executemany("DELETE FROM records WHERE root = ? AND path = ?", raw)
        self.con.executemany(
            "INSERT OR REPLACE INTO gone VALUES (?, ?, ?)", [(r, p, seq) for r, p in raw]
        )

    def recount(self) -> None:
        """Set the counts from the rows, in the transaction in flight (for rows written with
        the counting triggers set aside): a sort of every row, with its temporary files on
        disk (a writer keeps them in memory, see :func:`_connect`)."""
        con = self.con
        with self._sorting_on_disk():
            con.execute("DELETE FROM counts")
            con.execute(
                "INSERT INTO counts SELECT status, coalesce(reason, ''), coalesce(quality, ''),"
                " count(*) FROM records GROUP BY 1, 2, 3"
            )

    @contextlib.contextmanager
    def _sorting_on_disk(self) -> Iterator[None]:
        """A sort of every row inside: its temporary files on disk, not in memory."""
        (was,) = self.con.execute("PRAGMA temp_store").fetchone()
        self.con.execute("PRAGMA temp_store = FILE")
        try:
            yield
        finally:
            self.con.execute(f"PRAGMA temp_store = {int(was)}")

    def sorted_columns(self) -> frozenset[str]:
        """The sort columns whose B-tree the index has (:data:`SORTED_FROM`)."""
        names = {
            name
            for (name,) in self.con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records'"
            )
        }
        return frozenset(c for c in ORDER_SQL if SORT_INDEX + c in names)

    def has_fields_tree(self) -> bool:
        """Whether the index has :data:`FIELDS_TREE`, of :data:`FIELDS_COLUMNS` (an older
        one, of fewer columns, is not it)."""
        columns = [row[2] for row in self.con.execute(f"PRAGMA index_info({FIELDS_TREE})")]
        return columns == [c.strip() for c in FIELDS_COLUMNS.split(",")]

    def has_triage_tree(self) -> bool:
        """Whether the index has :data:`TRIAGE_TREE`."""
        return self._has_index(TRIAGE_TREE)

    def has_paths_index(self) -> bool:
        """Whether the index has :data:`PATHS_INDEX`."""
        return self._has_index(PATHS_INDEX, "table")

    def _has_index(self, name: str, kind: str = "index") -> bool:
        row = self.con.execute(
            "SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)
        ).fetchone()
        return row is not None

    def wants_sorted(self) -> bool:
        """Whether :meth:`make_sorted` has B-trees to build (a big store lacking some)."""
        if len(self) < SORTED_FROM:
            return False
        sorts = len(self.sorted_columns()) < len(ORDER_SQL) - 1
        trees = self.has_fields_tree() and self.has_triage_tree() and self.has_paths_index()
        return sorts or not trees

    def make_sorted(self, stop: Callable[[], bool] | None = None) -> tuple[str, ...]:
        """Build the sort B-trees the index lacks, when it holds :data:`SORTED_FROM` records
        or more: each one statement and one commit (of no change a reader follows), its sort
        in temporary files; then :data:`FIELDS_TREE`, :data:`TRIAGE_TREE` and
        :data:`PATHS_INDEX`. The columns built (and :data:`FIELDS`, :data:`TRIAGE`,
        :data:`PATHS` for those); fewer when the disk or
        SQLite refuses, or ``stop()`` turns true (asked as SQLite works: ten million rows
        take minutes), and a viewer sorts without them, slower."""
        if self.con.in_transaction:
            self.commit()
        if len(self) < SORTED_FROM:
            return ()
        have = self.sorted_columns()
        built: list[str] = []
        if stop is not None:
            self.con.set_progress_handler(lambda: 1 if stop() else 0, 100_000)
        try:
            with self._sorting_on_disk():
                for column, order in ORDER_SQL.items():
                    if order and column not in have:
                        self.con.execute(
                            f"CREATE INDEX IF NOT EXISTS {SORT_INDEX}{column}"
                            f" ON records ({order}, root, path)"
                        )
                        built.append(column)
                if not self.has_fields_tree():
                    self.con.execute(f"DROP INDEX IF EXISTS {FIELDS_TREE}")  # (an older one)
                    self.con.execute(f"CREATE INDEX {FIELDS_TREE} ON records ({FIELDS_COLUMNS})")
                    built.append(FIELDS)
                if not self.has_triage_tree():
                    self.con.execute(
                        f"CREATE INDEX {TRIAGE_TREE} ON records"
                        f" ({', '.join(TRIAGE_COLUMNS)}, root, path) WHERE {TRIAGE_WHERE}"
                    )
                    built.append(TRIAGE)
                if not self.has_paths_index():
                    self.con.execute("BEGIN")
                    for statement in _PATHS_DDL:
                        self.con.execute(statement)
                    self.con.execute("COMMIT")
                    built.append(PATHS)
        except sqlite3.Error:
            if self.con.in_transaction:  # (the paths' index and its triggers, or none)
                self.con.execute("ROLLBACK")
        finally:
            if stop is not None:
                self.con.set_progress_handler(None, 0)
        self._unsorted = False
        return tuple(built)

    @property
    def upserted(self) -> int:
        """Rows the run in flight upserted (a kept record's narrow update is not one)."""
        return self._upserted

    @property
    def dropped_sorted(self) -> bool:
        """The run in flight dropped the sort B-trees (:data:`UNSORTED_PAST`)."""
        return self._unsorted

    def run_ended(self) -> None:
        """A run's writes ended: the next run's upserts are counted afresh."""
        self._upserted = 0
        self._drop_at = None

    def _drop_sorted(self) -> None:
        """Drop the sort B-trees in the transaction in flight (see :data:`UNSORTED_PAST`).

        SQLite refuses to drop a B-tree while another statement of this connection is still
        stepping (``SQLITE_LOCKED``: a reader of its rows between batches): the trees are then
        kept up a while longer and the drop asked again further on, never the index failed
        for it. The refusal comes at the first drop (nothing runs between them); the paths'
        table goes before its triggers, which no reader can make SQLite refuse, so the table
        is never left without them. (Not in a savepoint: SQLite then keeps every freed page
        of the trees in its statement journal, ~380 MB more at a million records.)"""
        drops = [f"DROP INDEX IF EXISTS {SORT_INDEX}{c}" for c in self.sorted_columns()]
        drops += [f"DROP INDEX IF EXISTS {FIELDS_TREE}", f"DROP INDEX IF EXISTS {TRIAGE_TREE}"]
        drops.append(f"DROP TABLE IF EXISTS {PATHS_INDEX}")
        drops += [f"DROP TRIGGER IF EXISTS {PATHS_INDEX}_{end}" for end in ("in", "out")]
        for sql in drops:
            try:
                self.con.execute(sql)
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_LOCKED:
                    raise
                self._drop_at = self._upserted + UNSORTED_PAST
                return
            self._unsorted = True  # (those dropped are built again at the run's end)

    def commit(self) -> None:
        """Commit the write in flight (its counter becomes the index's)."""
        if self._seq is not None and self.con.in_transaction:
            if self.companion is not None:
                self.companion.before_commit(self._seq, self._replaced)
            history.prune(self.con)
            self._set("seq", self._seq)
            self._prune_tombstones()
            self.con.execute("COMMIT")
        self._seq = None
        self._replaced = False

    def rollback(self) -> None:
        """Forget the write in flight."""
        if self.con.in_transaction:
            self.con.execute("ROLLBACK")
        self._seq = None
        self._replaced = False
        self._unsorted = False  # (a drop in it undone)
        if self.companion is not None:
            self.companion.rollback()

    def _prune_tombstones(self) -> None:
        (n,) = self.con.execute("SELECT count(*) FROM gone").fetchone()
        if n > TOMBSTONES_KEPT:
            (floor,) = self.con.execute(
                "SELECT seq FROM gone ORDER BY seq DESC LIMIT 1 OFFSET ?", (TOMBSTONES_KEPT,)
            ).fetchone()
            self.con.execute("DELETE FROM gone WHERE seq <= ?", (floor,))
            self._set("gone_floor", floor)

    def in_step(self, source: Identity | None, *, finished: bool, sweep: bool = False) -> None:
        """Say the index now agrees with the ``extract.jsonl`` of identity ``source``
        (committed at once). ``finished``: a sweep ended here (what it committed is no longer
        a sweep in progress, see :meth:`unfinished`); ``sweep``: a whole one, listed in the
        history (:func:`engine.history.sweeps`)."""
        seq = self._begin()
        self._set("source", ",".join(map(str, source)) if source is not None else None)
        if finished:
            self._set("finished", seq)
            self.con.execute("DELETE FROM meta WHERE key = 'walked'")
            history.start(self.con, sweep=sweep)
        self.commit()

    def in_step_upto(self, source: Identity | None, seq: int) -> None:
        """Say the ``extract.jsonl`` of identity ``source`` holds the records as they were at
        counter ``seq`` (committed at once): written from a snapshot while watch batches
        went on committing, so what they wrote past ``seq`` stays ahead of it
        (:meth:`unfinished_any`) and readers keep reading the records from the index."""
        self._begin()
        self._set("source", ",".join(map(str, source)) if source is not None else None)
        self._set("finished", seq)
        self.commit()

    def replace_all(
        self, records: Iterable[Record], source: Identity | None, *, finished: bool = True
    ) -> None:
        """Make the index hold exactly ``records`` (a rebuild from ``extract.jsonl``), in one
        transaction; the triggers are set aside while the rows go in (a million records: one
        count at the end, not a million updates). ``finished``: the records are the file's
        (else they are ahead of it, decisions to resume from: :meth:`unfinished`)."""
        con = self.con
        seq = self._begin()
        self._replaced = True
        con.execute("DROP TRIGGER IF EXISTS counts_in")
        con.execute("DROP TRIGGER IF EXISTS counts_out")
        con.execute("DROP TRIGGER IF EXISTS counts_change")
        history.pause(con)  # a rebuild changes no file's record: nothing to keep
        self._drop_sorted()  # (built again in one sort each: make_sorted)
        con.execute("DELETE FROM records")
        con.execute("DELETE FROM gone")
        con.execute("DELETE FROM counts")
        counted: Counter[tuple[str, str, str]] = Counter()
        con.executemany(_UPSERT, _counting(counted, (row_of(r, seq) for r in records)))
        # (a key given twice keeps its last row: counted from the table, not the stream)
        if sum(counted.values()) == self._rows():
            con.executemany("INSERT INTO counts VALUES (?, ?, ?, ?)", _count_rows(counted))
        else:
            self.recount()
        for ddl in _TRIGGERS.split("END;"):
            if ddl.strip():
                con.execute(ddl + "END;")
        history.resume(con)
        self._set("gone_floor", seq)  # a reader from before reloads
        self._set("source", ",".join(map(str, source)) if source is not None else None)
        self._set("finished", seq if finished else 0)
        if not finished:  # (decided when, by whom: not known)
            self.con.execute("DELETE FROM meta WHERE key = 'began'")
        self.commit()

    # -- reading --------------------------------------------------------------------------

    def seq(self) -> int:
        """The change counter: bumped by every commit."""
        seq = self._meta("seq")
        return seq if isinstance(seq, int) else 0

    def point(self) -> Point:
        """Where this index's history is now (:class:`Point`)."""
        made = self._meta("id")  # (an index from before ids were kept has none)
        return Point(made if isinstance(made, str) else "", self.seq())

    def source(self) -> Identity | None:
        """The identity of the ``extract.jsonl`` the index was last in step with."""
        value = self._meta("source")
        if not isinstance(value, str):
            return None
        try:
            size, mtime, ino = map(int, value.split(","))
        except ValueError:
            return None
        return (size, mtime, ino)

    def __len__(self) -> int:
        """The records, from the counts kept with them (a ``count(*)`` walks a whole index:
        half a second at ten million rows, seconds with a cold disk cache)."""
        (n,) = self.con.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()
        return int(n)

    def _rows(self) -> int:
        (n,) = self.con.execute("SELECT count(*) FROM records").fetchone()
        return int(n)

    def lines(self) -> Iterator[bytes]:
        """Every record's line, in key order."""
        cur = self.con.execute("SELECT line FROM records ORDER BY root, path")
        while batch := cur.fetchmany(4096):
            yield from (row[0] for row in batch)

    def names_text(self, sha256: str) -> bool:
        """Whether an ``ok`` record names the stored text of ``sha256`` (a seek in
        ``by_sha``)."""
        row = self.con.execute(
            "SELECT 1 FROM records INDEXED BY by_sha WHERE sha256 = ? AND status = 'ok' LIMIT 1",
            (sha256,),
        ).fetchone()
        return row is not None

    def line(self, root: str, path: str) -> bytes | None:
        """The line of the record of (``root``, ``path``), if there is one."""
        row = self.con.execute(
            "SELECT line FROM records WHERE root = ? AND path = ?",
            (key_bytes(root), key_bytes(path)),
        ).fetchone()
        return bytes(row[0]) if row is not None else None

    def stat(self, root: str, path: str) -> tuple[int, int] | None:
        """The size and mtime the record of (``root``, ``path``) holds, if there is one (two
        columns: no line to decode)."""
        row = self.con.execute(
            "SELECT size, mtime_ns FROM records WHERE root = ? AND path = ?",
            (key_bytes(root), key_bytes(path)),
        ).fetchone()
        return (int(row[0]), int(row[1])) if row is not None else None

    def finished(self) -> int:
        """The change counter of the last sweep that finished (0: none did): the rows written
        past it are a killed sweep's decisions (or a watcher's, past ``extract.jsonl``)."""
        finished = self._meta("finished")
        return finished if isinstance(finished, int) else 0

    def began(self) -> int | None:
        """When (ns, wall clock) the sweep began whose decisions the rows past
        :meth:`finished` are, or an earlier time; None when not known (an index a rebuild
        made, one of a quarry before it was kept). A file older than it (by the racy
        margin) that its record still describes did not change since that sweep read it."""
        began = self._meta("began")
        return began if isinstance(began, int) else None

    def sweep_begins(self, started_ns: int, files: int = 0) -> None:
        """A sweep of ``files`` walked files begins at ``started_ns``: kept as :meth:`began`
        when no row is past :meth:`finished` (with rows of a killed sweep there, its earlier
        start stays, which holds for both sweeps' rows), and ``files`` as :meth:`walked` until
        a sweep finishes. Committed at once when no write is in flight, without moving the
        change counter (no record changed)."""
        self._set("walked", files)  # (outside a transaction: committed as it is)
        past = self.con.execute("SELECT 1 FROM records WHERE seq > ? LIMIT 1", (self.finished(),))
        if past.fetchone() is not None:
            return
        self._set("began", started_ns)

    def walked(self) -> int:
        """How many files the sweep in flight (or a killed one) walked: the records the index
        is about to hold, long before they are read (a reader in another process pages a
        first sweep's store by it); 0 when no sweep is under way."""
        walked = self._meta("walked")
        return walked if isinstance(walked, int) else 0

    def unfinished(self) -> list[Key]:
        """Keys written since the last sweep that finished: a killed sweep's decisions."""
        floor = self.finished()
        rows = self.con.execute("SELECT root, path FROM records WHERE seq > ?", (floor,))
        return [(name_of(r), name_of(p)) for r, p in rows]

    def roots(self) -> set[str]:
        """The roots of the records: a seek in the key index per root (a walk of every key
        took a second at ten million records)."""
        found: set[str] = set()
        row = self.con.execute("SELECT min(root) FROM records").fetchone()
        while row is not None and row[0] is not None:
            found.add(name_of(row[0]))
            row = self.con.execute(
                "SELECT root FROM records WHERE root > ? ORDER BY root LIMIT 1", (row[0],)
            ).fetchone()
        return found

    def others(self, swept: Collection[str]) -> dict[str, int]:
        """Records per root of the roots not in ``swept`` (a seek and a range count each)."""
        return {root: self.count_under(root, "") for root in sorted(self.roots() - set(swept))}

    def keys_under(self, root: str, rel: str) -> list[Key]:
        """The keys of ``root`` at ``rel`` or under it (``rel`` "": the whole root), in key
        order: a range of the key index."""
        top = key_bytes(root)
        if not rel:
            rows = self.con.execute("SELECT path FROM records WHERE root = ? ORDER BY path", (top,))
            return [(root, name_of(path)) for (path,) in rows]
        low, high = key_bytes(rel + "/"), key_bytes(rel + "0")  # (see count_under)
        rows = self.con.execute(
            "SELECT path FROM records WHERE root = ? AND path >= ? AND path < ? ORDER BY path",
            (top, low, high),
        )
        under = [(root, name_of(path)) for (path,) in rows]
        return [(root, rel), *under] if self.line(root, rel) is not None else under

    def count_under(self, root: str, rel: str) -> int:
        """Records of ``root`` at ``rel`` or under it (``rel`` "": the whole root), counted in
        the key index's range of them."""
        top = key_bytes(root)
        if not rel:
            (n,) = self.con.execute(
                "SELECT count(*) FROM records WHERE root = ?", (top,)
            ).fetchone()
            return int(n)
        # the keys under "a/b" sort from "a/b/" to "a/b0" ("0" follows "/"): one range
        low, high = key_bytes(rel + "/"), key_bytes(rel + "0")
        (n,) = self.con.execute(
            "SELECT count(*) FROM records WHERE root = ? AND path >= ? AND path < ?",
            (top, low, high),
        ).fetchone()
        return int(n) + (1 if self.line(root, rel) is not None else 0)

    def untouched(self, seq: int, roots: Iterable[str]) -> list[Key]:
        """The keys of ``roots`` whose records were last written at counter ``seq`` or before
        (found by the counter: after a run that wrote nearly every record, a few rows)."""
        keys: list[Key] = []
        for root in roots:
            rows = self.con.execute(
                "SELECT path FROM records INDEXED BY by_seq WHERE seq <= ? AND root = ?",
                (seq, key_bytes(root)),
            )
            keys.extend((root, name_of(path)) for (path,) in rows)
        return sorted(keys)

    def not_since(self, seq: int, keys: Iterable[Key]) -> list[Key]:
        """Of ``keys``, those whose records were last written at counter ``seq`` or before
        (asked 500 keys a statement; a key without a record is not listed)."""
        left: list[Key] = []
        by_root: dict[str, list[str]] = {}
        for root, path in keys:
            by_root.setdefault(root, []).append(path)
        for root, paths in by_root.items():
            for at in range(0, len(paths), 500):
                chunk = [key_bytes(p) for p in paths[at : at + 500]]
                rows = self.con.execute(
                    "SELECT path FROM records WHERE root = ? AND seq <= ? AND path IN "
                    f"({', '.join('?' * len(chunk))})",
                    (key_bytes(root), seq, *chunk),
                )
                left.extend((root, name_of(path)) for (path,) in rows)
        return sorted(left)

    def unfinished_count(self) -> int:
        """How many records were written since the last sweep that finished (one count, no
        key held: a killed sweep of millions of files resumes without listing them)."""
        floor = self.finished()
        (n,) = self.con.execute("SELECT count(*) FROM records WHERE seq > ?", (floor,)).fetchone()
        return int(n)

    def unfinished_any(self) -> bool:
        """Whether anything was written since the last sweep that finished: a record, or a
        removal (a tombstone; a file deleted while watching is gone from the index before
        ``extract.jsonl`` catches up, and a reader must not show it from the file)."""
        floor = self.finished()
        for table in ("records", "gone"):
            row = self.con.execute(f"SELECT 1 FROM {table} WHERE seq > ? LIMIT 1", (floor,))
            if row.fetchone() is not None:
                return True
        return False

    def waiting(self) -> dict[str, int]:
        """Records per tool they wait on (``needs``): the rows of :data:`TRIAGE_TREE` that
        wait on any, one count per set of tools (``quarry tools`` loaded every record)."""
        found: dict[str, int] = {}
        rows = self.con.execute(
            f"SELECT needs, count(*) FROM records WHERE ({TRIAGE_WHERE}) AND needs IS NOT NULL"
            " GROUP BY needs"
        )
        for raw, n in rows:
            for tool in needs_from_text(raw):
                found[tool] = found.get(tool, 0) + n
        return found

    def counts(self) -> dict[tuple[str, str, str], int]:
        """(status, reason, quality) -> records ('' for none), from the counts kept."""
        rows = self.con.execute("SELECT status, reason, quality, n FROM counts WHERE n > 0")
        return {(s, r, q): n for s, r, q, n in rows}

    def changes_since(self, seq: int) -> Changes:
        """What changed after counter ``seq``, in one read transaction (one snapshot)."""
        con = self.con
        con.execute("BEGIN")
        try:
            now = self.seq()
            floor = self._meta("gone_floor")
            if isinstance(floor, int) and seq < floor:
                return Changes((), (), now, reload=True)
            if seq >= now:
                return Changes((), (), now)
            lines = tuple(
                bytes(row[0])
                for row in con.execute(
                    # by the counter, then sorted: left to itself, SQLite walks the key
                    # index in order for the ORDER BY, every row of the store (0.75 s at a
                    # million records) to find the few written since
                    "SELECT line FROM records INDEXED BY by_seq WHERE seq > ? ORDER BY root, path",
                    (seq,),
                )
            )
            removed = tuple(
                (name_of(r), name_of(p))
                for r, p in con.execute("SELECT root, path FROM gone WHERE seq > ?", (seq,))
            )
            return Changes(lines, removed, now)
        finally:
            con.execute("COMMIT")


def read_index(path: Path) -> list[Record]:
    """Every record the index at ``path`` holds, in key order (IndexUnusable when there is
    no usable index there). Read by the same validating parser as ``extract.jsonl``."""
    from engine.store import read_jsonl  # (the store imports nothing of this module)

    db = RecordDB.open_reader(path)
    try:
        return read_jsonl(b"".join(db.lines())).records
    except sqlite3.Error as exc:
        raise IndexUnusable(f"{path.name}: {exc}") from exc
    finally:
        db.close()


def change_counter(path: Path) -> int | None:
    """The change counter of the index at ``path`` (None when there is no usable index): a
    follower that saw another number reads the store again."""
    point = index_point(path)
    return point.seq if point is not None else None


def index_point(path: Path) -> Point | None:
    """Where the history of the index at ``path`` is now (None when there is no usable
    index): a dashboard paging the store a session writes reads it again when it moved."""
    try:
        db = RecordDB.open_reader(path)
    except IndexUnusable:
        return None
    try:
        return db.point()
    except sqlite3.Error:
        return None
    finally:
        db.close()


def is_ahead(path: Path, jsonl: Path) -> bool:
    """Whether the index at ``path`` holds records the ``extract.jsonl`` at ``jsonl`` does
    not yet (see :func:`ahead_lines`); a few indexed lookups."""
    try:
        db = RecordDB.open_reader(path)
    except IndexUnusable:
        return False
    try:
        return db.source() == identity_of(jsonl) and db.unfinished_any()
    except sqlite3.Error:
        return False
    finally:
        db.close()


class Agreement(enum.Enum):
    """How an index stands to the ``extract.jsonl`` beside it, for a reader."""

    AHEAD = "ahead"
    """It holds records the file does not yet: read the records from the index."""
    IN_STEP = "in step"
    """It agrees with the file: read the file, then follow the index's changes."""
    UNTRUSTED = "untrusted"
    """Missing, damaged, or in step with another file: read the file alone."""


@dataclass(frozen=True, slots=True)
class Standing:
    """What a reader of a store learns from its index before reading the records."""

    agreement: Agreement
    point: Point | None = None
    """Where in the index's history the records read are (None when it is untrusted): a
    follower asks :func:`follow` for what changed after it."""
    lines: bytes = b""
    """Every record's line, in key order, when the index is :attr:`Agreement.AHEAD`."""


def standing(path: Path, jsonl: Path, *, lines: bool = True) -> Standing:
    """How the index at ``path`` stands to the ``extract.jsonl`` at ``jsonl``, in one read
    transaction (one snapshot): ahead of it (a sweep in progress or killed, watch batches not
    yet in the file; its lines are read in the same snapshot), in step, or not to be trusted.

    In step, the counter is taken before the caller reads the file: the file it reads is that
    one or a later one (the writer only ever replaces it by a newer one), and whatever changed
    after the counter is given again by :func:`follow` (applying a record twice is harmless).
    ``lines=False``: the agreement alone (no record read, whatever the store's size)."""
    db = open_agreeing(path, jsonl)
    if db is None:
        return Standing(Agreement.UNTRUSTED)
    try:
        if db.unfinished_any():
            return Standing(Agreement.AHEAD, db.point(), b"".join(db.lines()) if lines else b"")
        return Standing(Agreement.IN_STEP, db.point())
    except sqlite3.Error:
        return Standing(Agreement.UNTRUSTED)
    finally:
        db.close()


def open_agreeing(path: Path, jsonl: Path) -> RecordDB | None:
    """The index at ``path`` as a reader in one read transaction (one snapshot), when its
    source is the ``extract.jsonl`` at ``jsonl`` as it is on disk (in step with it, or ahead
    of it); None, nothing left open, when it cannot be read or is another file's. The caller
    closes it."""
    try:
        db = RecordDB.open_reader(path)
    except IndexUnusable:
        return None
    try:
        db.con.execute("BEGIN")
        if db.source() == identity_of(jsonl):
            return db
    except sqlite3.Error:
        pass
    db.close()
    return None


def status_counts(path: Path, jsonl: Path) -> dict[str, int] | None:
    """Records per status (and ``all``) from the counts the index keeps, when the index is
    to be trusted for the ``extract.jsonl`` at ``jsonl`` (in step or ahead); None when not.
    A read of a few rows whatever the store's size: a reader shows them before it has read
    the records themselves."""
    db = open_agreeing(path, jsonl)
    if db is None:
        return None
    try:
        rows = db.con.execute("SELECT status, sum(n) FROM counts WHERE n > 0 GROUP BY status")
        counts = {status: int(n) for status, n in rows}
        return {"all": sum(counts.values()), **counts}
    except sqlite3.Error:
        return None
    finally:
        db.close()


def ahead_lines(path: Path, jsonl: Path) -> tuple[bytes, int] | None:
    """Every record's line and the change counter, when the index at ``path`` is ahead of the
    ``extract.jsonl`` at ``jsonl`` (see :func:`standing`); None when the file is as current
    (read it) or the index is not to be trusted."""
    stand = standing(path, jsonl)
    if stand.agreement is not Agreement.AHEAD or stand.point is None:
        return None
    return stand.lines, stand.point.seq


def follow(path: Path, jsonl: Path, since: Point) -> Changes | None:
    """What changed in the index at ``path`` after a follower's point ``since``, when the
    index is still to be trusted for the ``extract.jsonl`` at ``jsonl`` (in step with it, or
    ahead of it); None when it is not, or there is no usable index: the follower reads the
    file again. Another index than the follower's (made anew since) says ``reload``."""
    try:
        db = RecordDB.open_reader(path)
    except IndexUnusable:
        return None
    try:
        if db.source() != identity_of(jsonl):
            return None
        if db.point().index != since.index:
            return Changes((), (), db.seq(), reload=True)
        changes = db.changes_since(since.seq)
        # the check and the changes in two snapshots: a rewrite of the file in between is
        # caught by checking again (the writer says it is in step only after the rename)
        return changes if db.source() == identity_of(jsonl) else None
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _mend_counts(con: sqlite3.Connection) -> None:
    """Replace an index's ``counts_change`` trigger of before session 35
    (:data:`_OLD_COUNTS_CHANGE`) with today's, in one transaction; the counts are right under
    either, and nothing else changes."""
    row = con.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'counts_change'"
    ).fetchone()
    if row is None or _OLD_COUNTS_CHANGE not in (row[0] or ""):
        return
    (change,) = [ddl for ddl in _TRIGGERS.split("END;") if "counts_change" in ddl]
    con.executescript(f"BEGIN IMMEDIATE;DROP TRIGGER counts_change;{change}END;COMMIT;")


def _connect(path: Path, *, writer: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); WAL for the writer."""
    if writer:
        con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    else:
        uri = Path(path).absolute().as_uri() + "?mode=ro"
        con = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        if writer:
            # The triggers on ``records`` make each row's upsert a statement that may need
            # undoing alone: SQLite journals the pages it touches, in a temporary file by
            # default (12 writes a record, a quarter of a cold sweep's index CPU). In memory,
            # that journal is a few pages; no statement of a writer sorts many rows into a
            # temporary table (the rebuild counts in Python), so nothing big lands there.
            con.execute("PRAGMA temp_store = MEMORY")
            con.execute("PRAGMA journal_mode = WAL")
            # A commit is durable once the WAL is synced at a checkpoint: a power cut can lose
            # the last commits, never leave the index inconsistent (what a resume needs).
            con.execute("PRAGMA synchronous = NORMAL")
        con.execute("PRAGMA busy_timeout = 5000")
    except sqlite3.Error:
        con.close()
        raise
    return con
