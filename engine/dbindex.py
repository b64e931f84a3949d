"""The records of a watched store served from its index, not held in memory.

A sweeper loads every record to sweep (:class:`engine.index.RecordIndex`): about 1.5 KB a
record, 1.5 GB for a million files. Once it watches, each batch touches a handful of files;
:class:`IndexedRecords` answers what a run asks of the records (a file's record, the records
under a folder, an earlier record of the same content, whether a text is still named) with
queries on the store's index (:mod:`engine.db`), which every run already writes, so the
watching engine holds no per-record object.

A run's records go into the same index as it decides them, while the sweeper still asks
what each file's record *was* (to tell a change, the texts it no longer names): every record
read through :attr:`IndexedRecords.records` during a run is kept until the run is applied,
so those questions see the records from before it.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from typing import TypeVar

from engine.db import RecordDB, key_bytes, name_of
from engine.detect import name_key
from engine.index import Tally
from engine.records import Key, Record, Status
from engine.store import read_jsonl
from engine.words import count

T = TypeVar("T")


REFERENCED_SQL = "SELECT DISTINCT sha256 FROM records WHERE status = 'ok' AND sha256 IS NOT NULL"
"""The content hashes whose text some record names: walked in the order of an index on the
hash, never sorted in a temporary B-tree (a writer keeps its temporary tables in memory: at
ten million records that would be hundreds of MB; a test holds the plan)."""
ROOTS_SQL = (
    "WITH RECURSIVE r(root) AS (SELECT min(root) FROM records UNION ALL"
    " SELECT (SELECT min(root) FROM records WHERE root > r.root) FROM r"
    " WHERE r.root IS NOT NULL) SELECT root FROM r WHERE root IS NOT NULL"
)
"""Each root that has records, in order: a skip-scan of the key index (a root's first key,
then the first key past it), a few searches a root where ``DISTINCT`` reads every key."""
REFERENCED_IN_SQL = REFERENCED_SQL + " AND sha256 >= ? AND sha256 < ?"
"""The same, of one range of hashes (a text folder's): a search of the hash index."""


class IndexGone(Exception):
    """The index the records were served from failed or went away (the sweeper loads the
    records again, from ``extract.jsonl``)."""


class ServedRecords(Mapping[Key, Record]):
    """The records by key, read from the index; those read during a run are kept as they
    were until it is applied (see the module's docstring)."""

    def __init__(
        self, db: Callable[[], RecordDB], on_failure: Callable[[BaseException], None]
    ) -> None:
        self._db = db
        self._on_failure = on_failure
        self.seen: dict[Key, Record | None] = {}
        """What this run read, as it was before the run wrote anything over it."""
        self.whole = False
        """Every record is in :attr:`seen` (:meth:`read_all`): a key not there has none."""
        self.keep = True
        """Keep what a run reads in :attr:`seen`; False for a lean run that asks for every
        file's record (a killed sweep resumed): it counts its own and must hold none."""

    def read_all(self) -> None:
        """Read every record now, in bulk: a run over the whole store (a rescan) asks for each,
        and a query a file costs ~45 us where this decodes a million lines in seconds. They
        are kept until the run is applied, as any record a run reads."""
        for records in self._batches():
            for record in records:
                self.seen.setdefault(record.key, record)
        self.whole = True

    def _batches(self, size: int = 50_000, root: str | None = None) -> Iterator[list[Record]]:
        """Every record (``root``: those of that root), in key order, a bulk decode of ``size``
        lines at a time; of one root the first batches are small (a caller that stops at its
        first record decodes a few)."""
        con, fail = self._db().con, self._on_failure
        if root is None:
            cur = _ask(lambda: con.execute("SELECT line FROM records ORDER BY root, path"), fail)
            sizes: Iterable[int] = itertools.repeat(size)
        else:
            sql = "SELECT line FROM records WHERE root = ? ORDER BY path"
            cur = _ask(lambda: con.execute(sql, (key_bytes(root),)), fail)
            sizes = itertools.chain((16, 256), itertools.repeat(size))
        for n in sizes:
            batch = _ask(functools.partial(cur.fetchmany, n), fail)
            if not batch:
                return
            yield read_jsonl(b"".join(line for (line,) in batch)).records

    def forget(self) -> None:
        """Drop what a run read."""
        self.seen.clear()
        self.whole = False
        self.keep = True

    def _read(self, key: Key) -> Record | None:
        if key in self.seen:
            return self.seen[key]
        if self.whole:
            return None
        line = _ask(lambda: self._db().line(*key), self._on_failure)
        record = Record.from_json(line) if line is not None else None
        if self.keep:
            self.seen[key] = record
        return record

    def stat_of(self, key: Key) -> tuple[int, int] | None:
        """The size and mtime of ``key``'s record (None: no record), without decoding it: a
        lean run (:attr:`engine.run.Run.lean`) sends a file whose stat changed to be hashed
        on that alone, and decodes its record once, when its hash is planned."""
        if key in self.seen:
            record = self.seen[key]
            return None if record is None else (record.size, record.mtime_ns)
        if self.whole:
            return None
        return _ask(lambda: self._db().stat(*key), self._on_failure)

    def __getitem__(self, key: Key) -> Record:
        record = self._read(key)
        if record is None:
            raise KeyError(key)
        return record

    def get(self, key: Key, default: Record | None = None) -> Record | None:  # type: ignore[override]
        record = self._read(key)
        return default if record is None else record

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self._read(key) is not None

    def __iter__(self) -> Iterator[Key]:
        con = self._db().con
        fail = self._on_failure
        cur = _ask(lambda: con.execute("SELECT root, path FROM records ORDER BY root, path"), fail)
        while batch := _ask(lambda: cur.fetchmany(4096), fail):
            yield from ((name_of(r), name_of(p)) for r, p in batch)

    def __bool__(self) -> bool:
        """Whether there is any record (one row looked at, not a count of them all)."""
        con = self._db().con
        row = _ask(
            lambda: con.execute("SELECT 1 FROM records LIMIT 1").fetchone(), self._on_failure
        )
        return row is not None

    def __len__(self) -> int:
        return _ask(lambda: len(self._db()), self._on_failure)

    def values(self) -> Iterator[Record]:  # type: ignore[override]
        """Every record, in key order, decoded as it is read (never all at once)."""
        for records in self._batches():
            yield from records

    def items(self) -> Iterator[tuple[Key, Record]]:  # type: ignore[override]
        """Every (key, record), in key order, decoded as it is read (not a query a key), in
        small batches: a pass that keeps none of them holds a few MB, not two batches of
        50,000 records (200 MB)."""
        for records in self._batches(4096):
            yield from ((r.key, r) for r in records)

    def roots(self) -> list[str]:
        """The roots that have records, in order: one search of the key index a root, not a
        pass over every record."""
        con, fail = self._db().con, self._on_failure
        rows = _ask(lambda: con.execute(ROOTS_SQL).fetchall(), fail)
        return [name_of(root) for (root,) in rows]

    def under(self, root: str) -> Iterator[Record]:
        """The records of ``root``, in path order, decoded a small batch at a time (a caller
        that stops early reads no more)."""
        for records in self._batches(4096, root):
            yield from records


class IndexedRecords:
    """What a sweeper and its runs ask of the records, answered by the index; the interface
    of :class:`engine.index.RecordIndex`."""

    def __init__(
        self,
        db: Callable[[], RecordDB | None],
        tally: Tally,
        on_failure: Callable[[BaseException], None] = lambda exc: None,
    ) -> None:
        self._get_db = db
        self._on_failure = on_failure
        self.records = ServedRecords(self._db, on_failure)
        self.tally = tally
        self.cold = False
        """Answer :meth:`may_hold` no, as for a store with no record: a lean run over a killed
        first sweep's records hashes only files whose own record may stand, and reads the
        others as that first sweep would have (none of them kept in memory as a possible
        copy's source)."""

    def _db(self) -> RecordDB:
        db = self._get_db()
        if db is None:
            raise IndexGone("the store's index is gone")
        return db

    def _ask(self, query: Callable[[], T]) -> T:
        return _ask(query, self._on_failure)

    def usable(self) -> bool:
        """Whether the index is still there to answer."""
        return self._get_db() is not None

    @property
    def errors(self) -> int:
        """Error records."""
        return self.tally.counts.get(Status.ERROR, 0)

    def same_content(self, sha256: str, path: str) -> Record | None:
        """An earlier record with this content whose name is read as ``path``'s is (one with
        text if any has)."""
        con = self._db().con
        want = name_key(path)
        rows = self._ask(
            lambda: con.execute(
                "SELECT line FROM records INDEXED BY by_sha WHERE sha256 = ?"
                " ORDER BY status != 'ok' LIMIT 64",
                (sha256,),
            ).fetchall()
        )
        for (line,) in rows:
            record = Record.from_json(line)
            if name_key(record.path) == want:
                return record
        return None

    def may_hold(self, size: int) -> bool:
        """Whether some record's content could be a file of ``size`` bytes: the index keeps no
        sizes by content, so always (a new file is hashed before it is read, to find a copy),
        but in a resumed first sweep (:attr:`cold`)."""
        return not self.cold

    def has_text_refs(self, sha256: str) -> bool:
        """Whether any record still names the stored text of ``sha256``."""
        db = self._db()
        return self._ask(lambda: db.names_text(sha256))

    def referenced_texts(self) -> set[str]:
        """Every content hash whose text some record names (one pass over the index)."""
        con = self._db().con
        rows = self._ask(lambda: con.execute(REFERENCED_SQL).fetchall())
        return {sha for (sha,) in rows}

    def texts_keeper(self) -> Callable[[str], set[str]]:
        """For the store's garbage collection: a text folder's name -> the hashes in it some
        record names (a range of the hash index a folder, never every hash at once)."""
        con = self._db().con

        def named(prefix: str) -> set[str]:
            end = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # (a folder: two characters)
            rows = self._ask(lambda: con.execute(REFERENCED_IN_SQL, (prefix, end)).fetchall())
            return {sha for (sha,) in rows}

        return named

    def keys_under(self, root: str, rels: Iterable[str]) -> list[Key]:
        """The keys of ``root`` whose path is one of ``rels`` or lies under one of them (""
        is the whole root), in key order: a range of the key index each."""
        db = self._db()
        found: set[Key] = set()
        for rel in rels:
            folder = rel.rstrip("/")
            if rel and not folder:
                continue  # ("/": under it are paths that begin with one, and none does)
            keys = self._ask(functools.partial(db.keys_under, root, folder))
            if rel != folder:  # ("a/" is the folder a: what is under it, not a file named a)
                keys = [key for key in keys if key[1] != folder]
            found.update(keys)
        return sorted(found)

    def counted(self, tally: Tally) -> None:
        """A run that held none of its records (:attr:`engine.run.Run.lean`) into an index
        that had none counted them as it decided them: ``tally`` is the index's now. Counted
        again from the index should the numbers disagree (a file decided twice)."""
        if tally.files != len(self.records):
            tally = Tally()
            for record in self.records.values():
                tally.add(record)
        self.tally = tally
        self.cold = False
        self.records.forget()

    def apply(self, new: Mapping[Key, Record], gone: Iterable[Key]) -> None:
        """A run's records are in the index already: count the change in the tally, from the
        records as the run found them, and forget those."""
        seen = self.records.seen
        for key in gone:
            old = seen[key] if key in seen else self.records.get(key)
            if old is not None:
                self.tally.add(old, -1)
        for key, record in new.items():
            old = seen.get(key)
            if old is record:
                continue
            if old is not None:
                self.tally.add(old, -1)
            self.tally.add(record)
        self.records.forget()


ROWS_BATCH = 4096
"""Rows :func:`rows_of` reads at a time."""


def rows_of(
    db: RecordDB, root: str, past: int | None = None
) -> Iterator[tuple[str, int, int, Record, bool]]:
    """The index's rows of ``root`` in key order (a range of the key index): (path, size,
    mtime_ns, record, whether it was written past the counter ``past``), decoded a batch at
    a time and never all held (:mod:`engine.merge`).

    Each batch is its own statement, read to its end before a row is given (keyset on the
    path): the merge writes on the same connection as it reads (the records it flags
    reused), and a statement still stepping there made SQLite refuse the writer's drop of
    the sort B-trees ("database table is locked") once those writes passed
    :data:`engine.db.UNSORTED_PAST`: the index failed, was dropped and rebuilt, and the
    sweep loaded every record (2 GB at a million, the first sweep after a cold one)."""
    sql = (
        "SELECT path, size, mtime_ns, line, seq FROM records WHERE root = ? AND path {} ?"
        " ORDER BY path LIMIT ?"
    )
    after, beyond = b"", ">="  # (the first batch from the start: an empty name included)
    while batch := db.con.execute(
        sql.format(beyond), (key_bytes(root), after, ROWS_BATCH)
    ).fetchall():
        after, beyond = batch[-1][0], ">"
        records = read_jsonl(b"".join(row[3] for row in batch)).records
        if len(records) != len(batch):
            raise sqlite3.DatabaseError(count(len(batch) - len(records), "damaged record"))
        for (path, size, mtime_ns, _line, seq), record in zip(batch, records, strict=True):
            yield name_of(path), size, mtime_ns, record, past is not None and seq > past


class WrittenPast(Container[Key]):
    """The keys whose records were written past a change counter (a killed sweep's
    decisions, its resuming sweep's): asked of the index one key at a time."""

    def __init__(self, db: Callable[[], RecordDB | None], past: int) -> None:
        self._db, self.past = db, past

    def __contains__(self, key: object) -> bool:
        db = self._db()
        if db is None or not isinstance(key, tuple) or len(key) != 2:
            return False
        root, path = key
        try:
            row = db.con.execute(
                "SELECT 1 FROM records WHERE root = ? AND path = ? AND seq > ?",
                (key_bytes(root), key_bytes(path), self.past),
            ).fetchone()
        except sqlite3.Error:
            return False  # (unsure: its file is read again, as a sweep that begins anew would)
        return row is not None


def roots_of(db: RecordDB) -> list[str]:
    """Every root the index holds records of."""
    return [name_of(r) for (r,) in db.con.execute("SELECT DISTINCT root FROM records")]


def _ask(query: Callable[[], T], on_failure: Callable[[BaseException], None]) -> T:
    """``query()``; a failure of SQLite is the index gone: ``on_failure`` is told (the
    ledger drops it) and the sweeper goes back to the records on disk."""
    try:
        return query()
    except sqlite3.Error as exc:
        on_failure(exc)
        raise IndexGone(f"the store's index failed: {exc}") from exc
