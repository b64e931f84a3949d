"""The store's records in an order, a batch at a time: how ``quarry export``, ``quarry diff``
and ``quarry grep`` (reading every text) read a store without holding it whole.

The records come sorted by (root, path) from the store's index (``extract.db``) when it is in
step with ``extract.jsonl`` or ahead of it (a sweep in progress or killed, watch batches the
file does not hold yet), in one read transaction; otherwise from an index built from
``extract.jsonl`` in the user's cache (:func:`engine.readindex.reading_index`), once per
version of the file; only without a cache is the file read whole through the store's loader.
Either way its unreadable lines are said through the caller's ``warn``, in one line. A
:class:`Selection` (``--where``) and an :class:`Order` (``--sort``, ``--desc``, ``--limit``)
are run by SQLite over an index, in Python over the file. Nothing here writes the store.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.db import DB, RecordDB, open_agreeing
from engine.errors import QuarryError, StoreUnusable
from engine.jsonl import line_of
from engine.names import shown
from engine.pages import page, sort_key
from engine.query import Query, TextTerm
from engine.readindex import BuildLine, left_out, reading_index
from engine.records import Key, Record
from engine.sqlquery import Where, compile_where, drive, known_values
from engine.store import JSONL, Store, read_jsonl

BATCH = 4096
"""Records a step: what a reader holds at once from the index (and a Parquet row group's
multiple)."""


class Chunk:
    """A batch of records in key order: their store lines, their parsed records, or both
    (each made from the other when first asked for, once)."""

    def __init__(
        self, lines: list[bytes] | None = None, records: list[Record] | None = None
    ) -> None:
        self._lines = lines
        self._records = records
        self.bad = 0
        """Lines that were not records (counted when the records are first asked for)."""

    def lines(self) -> list[bytes]:
        """Each record's ``extract.jsonl`` line, newline included."""
        if self._lines is None:
            self._lines = [line_of(r) for r in self._records or ()]
        return self._lines

    def known_records(self) -> list[Record] | None:
        """The records when the chunk was made of them (from the file), without parsing
        lines; None for a chunk of lines (from the index)."""
        return self._records if self._lines is None else None

    def records(self) -> list[Record]:
        """The records, read by the store's validating parser."""
        if self._records is None:
            loaded = read_jsonl(b"".join(self._lines or ()))
            self._records, self.bad = loaded.records, len(loaded.bad)
        return self._records


class Selection:
    """The records a ``--where`` query keeps: the query, and its ``text:`` terms' answers."""

    def __init__(self, query: Query, texts: dict[TextTerm, frozenset[Key]]) -> None:
        self.query = query
        self.texts = texts

    def keeps(self, record: Record) -> bool:
        """Whether ``record`` is kept (decided in Python, for records read from the file)."""
        return self.query.matches_record(record, lambda t: record.key in self.texts[t])


@dataclass(frozen=True, slots=True)
class Order:
    """The order records are exported in, and how many: ``--sort``, ``--desc``, ``--limit``."""

    column: str = "path"
    """A sort column of the records table (:data:`engine.pages.SORTS`); ``path``: key order."""
    reverse: bool = False
    """Descending (ties too: the ascending order read backwards)."""
    limit: int | None = None
    """At most this many records (None: every one)."""

    @property
    def keyed(self) -> bool:
        """Whether this is the store's own order, whole: (root, path) ascending."""
        return self.column == "path" and not self.reverse and self.limit is None

    def apply(self, records: list[Record]) -> list[Record]:
        """``records`` (in key order) in this order, the first ``limit`` of them."""
        if self.column != "path":
            records = sorted(records, key=sort_key(self.column), reverse=self.reverse)
        elif self.reverse:
            records = records[::-1]
        return records if self.limit is None else records[: self.limit]


KEY_ORDER = Order()
"""Every record, by (root, path): the store's own order."""


@contextlib.contextmanager
def store_chunks(
    store: Store,
    warn: Callable[[str], None],
    where: Selection | None = None,
    order: Order = KEY_ORDER,
) -> Iterator[Iterator[Chunk]]:
    """The store's records in ``order`` (by default (root, path)), a :class:`Chunk` at a
    time: from the index when it is in step with ``extract.jsonl`` or ahead of it, else from
    the file (its bad lines said through ``warn``, in one line); only those ``where`` keeps,
    when given."""
    db = _index_in_step(store) or _cached_index(store, warn)
    if db is None:
        if not store.exists():  # (only an index, damaged: a first sweep's, killed)
            raise StoreUnusable(
                f"the store {shown(str(store.out))} has no {JSONL} and its index cannot be "
                "read: nothing to export (a sweep rebuilds it)"
            )
        yield _from_file(store, warn, where, order)
        return
    try:
        yield _from_index(db, where, order)
    finally:
        db.close()


def store_roots(store: Store) -> set[str]:
    """The folders ``store`` holds records of: from its index as :func:`store_chunks` reads
    it (a seek a folder), else from ``extract.jsonl`` (its bad lines left to the read that
    follows to say)."""
    db = _index_in_step(store) or _cached_index(store, lambda _message: None)
    if db is None:
        return {r.root for r in store.load().records} if store.exists() else set()
    try:
        return db.roots()
    finally:
        db.close()


def _index_in_step(store: Store) -> RecordDB | None:
    """The store's index, in a read transaction (one snapshot for the whole export), when it
    agrees with ``extract.jsonl`` (its source is the file on disk; an index ahead of the file
    agrees with it too, see :func:`engine.db.ahead_lines`); None when there is none to trust."""
    return open_agreeing(store.out / DB, store.jsonl_path)


def _cached_index(store: Store, warn: Callable[[str], None]) -> RecordDB | None:
    """The index of ``store`` in the user's cache, built from ``extract.jsonl`` when there is
    none for this version of the file (:func:`engine.readindex.reading_index`, as ``quarry
    show`` finds one), in a read transaction; the file's unreadable lines said through
    ``warn`` as a read of the file says them. None: no cache, or the build failed."""
    line = BuildLine(sys.stderr, store)
    try:
        path = reading_index(store, progress=line)
    finally:
        line.done()
    if path is None or path == store.out / DB:
        return None
    db = open_agreeing(path, store.jsonl_path)
    if db is not None and (said := left_out(path)):
        warn(f"warning: {said}")
    return db


def _from_index(
    db: RecordDB, where: Selection | None = None, order: Order = KEY_ORDER
) -> Iterator[Chunk]:
    if where is None and order.keyed:
        lines: Iterator[bytes] = db.lines()
    else:
        lines = _lines_where(db, where, order)
    try:
        while batch := [bytes(line) for _, line in zip(range(BATCH), lines, strict=False)]:
            yield Chunk(lines=batch)
    except sqlite3.Error as exc:  # damaged under us: no export is better than a wrong one
        raise QuarryError(
            f"the store's index could not be read ({exc}): the export stopped (a file named by"
            " -o is not written)"
        ) from exc


def _lines_where(db: RecordDB, where: Selection | None, order: Order) -> Iterator[bytes]:
    """The lines of the records ``where`` keeps (every one when None), in ``order``: the
    query and the sort run by SQLite."""
    clause = _clause(db, where)
    clause.install(db.con)
    return page(db.con, clause, order.column, reverse=order.reverse, limit=order.limit)


def _clause(db: RecordDB, where: Selection | None) -> Where:
    if where is None:
        return compile_where(Query.parse(""))
    clause = compile_where(where.query, where.texts, known_values(db.con))
    return drive(db, clause, where.query)  # (a path word: through the paths' index)


def _from_file(
    store: Store,
    warn: Callable[[str], None],
    where: Selection | None = None,
    order: Order = KEY_ORDER,
) -> Iterator[Chunk]:
    loaded = store.load()
    if loaded.bad:
        warn(f"warning: {loaded.left_out(str(store.jsonl_path))}")
    # Keyed as the index is: a file with a key twice (a hand, another writer) gives its last.
    by_key = {r.key: r for r in loaded.records}
    records = [by_key[k] for k in sorted(by_key)]
    if where is not None:
        records = [r for r in records if where.keeps(r)]
    records = order.apply(records)
    for start in range(0, len(records), BATCH):
        yield Chunk(records=records[start : start + BATCH])
