"""``quarry export``: the store's records for other programs, as JSONL, CSV or Parquet.

The records come sorted by (root, path) from the store's index (``extract.db``) when it is
in step with ``extract.jsonl`` or ahead of it (a sweep in progress or killed, watch batches
the file does not hold yet): streamed a batch at a time in one read transaction, so a store
of ten million records is never held whole. Otherwise (no index, a damaged one, one that
agrees with another file, a store on read-only media, the seed's) they come from an index
built from ``extract.jsonl`` in the user's cache, once per version of the file, as ``quarry
show`` finds one (:func:`engine.readindex.reading_index`): still a batch at a time. Only
without a cache (none, or a full disk) is the file read whole through the store's loader.
Either way its unreadable lines are said on stderr in one line, never fatal. Nothing here
writes the store.

- **JSONL**: the lines as the store holds them, byte for byte (the index keeps each record's
  line exactly): the export of an in-step store is its ``extract.jsonl``.
- **CSV**: one row per record, the scalar fields (:data:`COLUMNS`), each text cell through
  :func:`engine.visible.csv_text`, the rules the dashboard's CSV export follows: no cell a
  spreadsheet runs as a formula, none a terminal obeys, the exact text back from
  :func:`engine.visible.csv_text_back`. Names as the store writes them (``\\xNN`` for a
  byte that is not UTF-8) and their exact bytes in ``root_b64``/``path_b64``.
- **Parquet**: the same columns, typed (``needs`` a list), through pyarrow: an optional
  extra (``textquarry[parquet]``), imported only when asked for.

``--where QUERY`` keeps the records the dashboard's query line ``QUERY`` keeps (the same
language, :mod:`engine.query`): compiled to SQL over the index (:mod:`engine.sqlquery`), or
matched record by record when the records come from the file; ``text:`` terms are answered
by the texts' index as ``quarry grep`` answers them. A query that cannot mean what was typed
(a field that does not exist, a number that is not one) is refused before anything is
written, naming what is wrong: never an empty export that looks like an answer.

``--sort COLUMN`` (any column the dashboard sorts by), ``--desc`` and ``--limit N`` give the
records in that order, ties by (root, path), as the records table shows them: from the index
through :func:`engine.pages.page` (SQLite sorts, keeping only the first ``N`` under
``--limit``), from the file by the same key in Python. ``--sort ms --desc --limit 50``: the
fifty slowest reads.

A file named by ``-o`` is written beside its place and renamed over it once complete, so an
export that fails or is interrupted leaves no half file (and an earlier one intact); an
export never writes into the store's folder. Standard output that closes early
(``| head``) ends the export quietly, as ``quarry show`` does.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import io
import os
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from engine.db import DB, IndexUnusable, RecordDB, identity_of
from engine.errors import QuarryError, StoreUnusable, UsageError
from engine.grep import matching_keys
from engine.jsonl import line_of
from engine.names import escaped, name_b64, shown
from engine.pages import SORTS, page, sort_key
from engine.query import Query, TextTerm
from engine.readindex import left_out, reading_index
from engine.records import Key, Record
from engine.sqlquery import Where, compile_where, known_values
from engine.store import JSONL, Store, read_jsonl
from engine.verbkit import EXIT_OK, find_store, reading_store
from engine.visible import csv_text
from engine.words import count


class Format(StrEnum):
    """The formats ``quarry export`` writes."""

    JSONL = "jsonl"
    CSV = "csv"
    PARQUET = "parquet"


SUFFIXES: dict[str, Format] = {
    ".jsonl": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".csv": Format.CSV,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}
"""The format an ``-o`` file's suffix (any case) chooses when ``--format`` is not given."""

COLUMNS: tuple[str, ...] = (
    "root", "path", "size", "mtime_ns", "status", "reason", "sha256", "mime", "extractor",
    "reader", "v", "chars", "pages", "error", "why", "ms", "quality", "needs",
    "root_b64", "path_b64",
)  # fmt: skip
"""CSV and Parquet columns: the record's scalar fields in the store's order, ``quality`` its
verdict, ``needs`` its tools (space-separated in CSV), then the exact bytes of a name that is
not UTF-8 (standard base64; empty otherwise)."""

_INTS = frozenset({"size", "mtime_ns", "v", "chars", "pages", "ms"})
INSTALL_PARQUET = "pip install 'textquarry[parquet]'"
BATCH = 4096
"""Records a step: what the export holds at once from the index, and a Parquet row group's
multiple."""
ROW_GROUP = 16 * BATCH


# -- where the records come from ------------------------------------------------------------


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

    @classmethod
    def of(cls, text: str, store: Store, warn: Callable[[str], None]) -> Selection:
        """``text`` parsed (a UsageError when it cannot mean what was typed; a pattern
        matched as text is said through ``warn``), its ``text:`` terms asked of the store."""
        query = Query.parse(text)
        refused = query.unknown or query.bad or any(t.error for t in query.texts)
        if refused and query.error:
            raise UsageError(f"--where {shown(text)!r}: {query.error}")
        if query.error:
            warn(f"warning: --where: {query.error}")
        texts = {t: matching_keys(store, t.pattern) for t in query.searches if t.pattern}
        return cls(query, texts)

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


def _index_in_step(store: Store) -> RecordDB | None:
    """The store's index, in a read transaction (one snapshot for the whole export), when it
    agrees with ``extract.jsonl`` (its source is the file on disk; an index ahead of the file
    agrees with it too, see :func:`engine.db.ahead_lines`); None when there is none to trust."""
    return _reader_agreeing(store.out / DB, store)


def _cached_index(store: Store, warn: Callable[[str], None]) -> RecordDB | None:
    """The index of ``store`` in the user's cache, built from ``extract.jsonl`` when there is
    none for this version of the file (:func:`engine.readindex.reading_index`, as ``quarry
    show`` finds one), in a read transaction; the file's unreadable lines said through
    ``warn`` as a read of the file says them. None: no cache, or the build failed."""
    path = reading_index(store)
    if path is None or path == store.out / DB:
        return None
    db = _reader_agreeing(path, store)
    if db is not None and (said := left_out(path)):
        warn(f"warning: {said}")
    return db


def _reader_agreeing(path: Path, store: Store) -> RecordDB | None:
    """The index at ``path`` in a read transaction when its source is the store's
    ``extract.jsonl`` as it is on disk; None when it cannot be read or is another file's."""
    try:
        db = RecordDB.open_reader(path)
    except IndexUnusable:
        return None
    try:
        db.con.execute("BEGIN")
        if db.source() == identity_of(store.jsonl_path):
            return db
    except sqlite3.Error:
        pass
    db.close()
    return None


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
    return compile_where(where.query, where.texts, known_values(db.con))


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


# -- the formats ----------------------------------------------------------------------------


def fields_of(rec: Record) -> dict[str, Any]:
    """``rec``'s :data:`COLUMNS` as the store writes them (names and texts valid UTF-8, a
    name's exact bytes in its ``*_b64``); None for a field that holds nothing."""
    quality = rec.quality.verdict if rec.quality is not None else None
    return {
        "root": escaped(rec.root), "path": escaped(rec.path), "size": rec.size,
        "mtime_ns": rec.mtime_ns, "status": escaped(rec.status), "reason": _text(rec.reason),
        "sha256": _text(rec.sha256), "mime": escaped(rec.mime),
        "extractor": _text(rec.extractor), "reader": _text(rec.reader), "v": rec.v,
        "chars": rec.chars, "pages": rec.pages, "error": _text(rec.error),
        "why": _text(rec.why), "ms": rec.ms, "quality": _text(quality),
        "needs": [escaped(t) for t in rec.needs],
        "root_b64": name_b64(rec.root), "path_b64": name_b64(rec.path),
    }  # fmt: skip


def _text(value: str | None) -> str | None:
    return escaped(value) if value is not None else None


def csv_cells(rec: Record) -> list[str]:
    """One CSV row: a number as its digits, nothing as an empty cell, every text through
    :func:`engine.visible.csv_text` (a spreadsheet shows it and never runs it)."""
    row = fields_of(rec)
    row["needs"] = " ".join(row["needs"]) or None
    out = []
    for name in COLUMNS:
        value = row[name]
        if value is None:
            out.append("")
        elif name in _INTS:
            out.append(str(value))
        else:
            out.append(csv_text(value))
    return out


def write_jsonl(chunks: Iterator[Chunk], out: IO[bytes]) -> int:
    """The records' lines as the store holds them; the count."""
    n = 0
    for chunk in chunks:
        lines = chunk.lines()
        out.write(b"".join(lines))
        n += len(lines)
    return n


def write_csv(chunks: Iterator[Chunk], out: IO[bytes]) -> tuple[int, int]:
    """A header, then one row per record; (rows, lines that were not records)."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    try:
        writer = csv.writer(text)
        writer.writerow(COLUMNS)
        n = bad = 0
        for chunk in chunks:
            records = chunk.records()
            writer.writerows(map(csv_cells, records))
            n, bad = n + len(records), bad + chunk.bad
        text.flush()
    finally:
        text.detach()  # the caller owns ``out``: closing the wrapper must not close it
    return n, bad


def pyarrow_modules() -> tuple[Any, Any]:
    """(pyarrow, pyarrow.parquet), or a UsageError saying how to install them."""
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ImportError as exc:
        raise UsageError(
            f"Parquet needs pyarrow, which is not installed: {INSTALL_PARQUET}"
        ) from exc


def write_parquet(chunks: Iterator[Chunk], out: IO[bytes]) -> tuple[int, int]:
    """The records as one Parquet table, a row group per :data:`ROW_GROUP` records, gathered
    a column at a time (a list per column, not a dict per record: a third of the memory);
    (rows, lines that were not records)."""
    pa, pq = pyarrow_modules()
    kinds = {name: pa.int64() for name in _INTS} | {"needs": pa.list_(pa.string())}
    schema = pa.schema([(name, kinds.get(name, pa.string())) for name in COLUMNS])
    n = bad = 0
    columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
    with pq.ParquetWriter(out, schema) as writer:
        for chunk in chunks:
            records = chunk.records()
            for fields in map(fields_of, records):
                for name, value in fields.items():
                    columns[name].append(value)
            n, bad = n + len(records), bad + chunk.bad
            if len(columns["root"]) >= ROW_GROUP:
                writer.write_table(pa.Table.from_pydict(columns, schema=schema))
                columns = {name: [] for name in COLUMNS}
        if columns["root"] or not n:  # (an empty store: a table of no rows, with its columns)
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
    return n, bad


# -- where they go --------------------------------------------------------------------------


def output_path(given: str | None, store: Store) -> Path | None:
    """The file ``-o`` names (None: standard output), checked before anything is read: its
    folder exists, it is not a folder, and it is not in the store (an export never writes
    there: it would replace the store's own files)."""
    if given is None or given == "-":
        return None
    path = Path(os.path.abspath(Path(given).expanduser()))
    folder = path.parent
    if not folder.exists():
        raise UsageError(f"no such folder: {shown(str(folder))} (for -o {shown(given)})")
    if not folder.is_dir():
        raise UsageError(f"not a folder: {shown(str(folder))} (for -o {shown(given)})")
    if path.is_dir():
        raise UsageError(f"-o {shown(given)} is a folder: name the file to write")
    real, home = Path(os.path.realpath(folder)), Path(os.path.realpath(store.out))
    if real == home or home in real.parents:
        raise UsageError(
            f"-o {shown(given)} is inside the store {shown(str(store.out))}: an export never "
            "writes there (it could replace the store's own files); name a file elsewhere"
        )
    return path


def check_stdout(store: Store) -> None:
    """Refuse a standard output that is one of the store's own files (``quarry export >
    .quarry/extract.jsonl``): appended to, it would no longer be the store's records; the
    shell's ``>`` has emptied it already, and the next sweep rebuilds it."""
    try:
        out = os.fstat(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return
    if not stat.S_ISREG(out.st_mode):
        return
    with contextlib.suppress(OSError), os.scandir(store.out) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
                raise UsageError(
                    f"standard output is the store's own {shown(entry.name)}: an export never "
                    "writes into the store; redirect it elsewhere"
                )


def choose_format(given: str | None, out: Path | None) -> Format:
    """``--format`` (any case), else the format ``-o``'s suffix names, else JSONL."""
    if given is not None:
        try:
            return Format(given.strip().lower())
        except ValueError:
            names = ", ".join(f.value for f in Format)
            raise UsageError(f"unknown format {shown(given)!r}: one of {names}") from None
    if out is not None:
        return SUFFIXES.get(out.suffix.lower(), Format.JSONL)
    return Format.JSONL


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A new file beside ``path``, renamed over it once the block ends without an exception
    (synced first); removed otherwise. Made as any new file of the user's (the umask's
    mode), where ``tempfile``'s would be private."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    for _ in range(100):
        tmp = path.parent / f".quarry-export-{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name in {path.parent}")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dirfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)


@contextlib.contextmanager
def standard_output() -> Iterator[IO[bytes]]:
    """Standard output as a buffered binary file of its own: every byte is written whole
    (a buffered writer keeps writing what a pipe took only part of, where Python's ``-u``
    text stdout would drop it). A reader that goes raises BrokenPipeError to the caller,
    and nothing is left to flush into it at exit."""
    sys.stdout.flush()
    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):  # a test's capture
        yield sys.stdout.buffer
        return
    out = open(fileno, "wb", closefd=False)  # noqa: SIM115 (closed below, whatever happens)
    try:
        yield out
        out.flush()
    finally:
        with contextlib.suppress(OSError):
            out.close()  # (a broken pipe: the flush fails, the writer is closed all the same)


# -- the verb -------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    """Write the store's records to ``-o`` (or standard output) as JSONL, CSV or Parquet."""
    store = _store_of(args)
    out = output_path(args.output, store)
    if out is None:
        check_stdout(store)
    fmt = choose_format(args.format, out)
    if fmt is Format.PARQUET:
        pyarrow_modules()  # missing: said before anything is read
        if out is None and sys.stdout.isatty():
            raise UsageError("Parquet is binary: name a file with -o, or pipe it")
    warn = _warn
    where = Selection.of(args.where, store, warn) if args.where else None
    order = order_of(args)
    with store_chunks(store, warn, where, order) as chunks:
        target = atomic_file(out) if out is not None else standard_output()
        with target as sink:
            bad = _write(fmt, chunks, sink)
    if bad:
        warn(f"warning: {count(bad, 'damaged record')} in the store's index left out")
    return EXIT_OK


def order_of(args: argparse.Namespace) -> Order:
    """The ``--sort``/``--desc``/``--limit`` of ``args`` (a wrong one is a UsageError)."""
    column = args.sort or "path"
    if column not in SORTS:
        raise UsageError(f"--sort {shown(column)!r}: no such column (one of {', '.join(SORTS)})")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give a count of records, 1 or more")
    return Order(column, bool(args.desc), args.limit)


def _write(fmt: Format, chunks: Iterator[Chunk], sink: IO[bytes]) -> int:
    """Write ``chunks`` to ``sink`` as ``fmt``; the lines left out, not being records."""
    if fmt is Format.JSONL:
        write_jsonl(chunks, sink)
        return 0
    _n, bad = write_csv(chunks, sink) if fmt is Format.CSV else write_parquet(chunks, sink)
    return bad


def _store_of(args: argparse.Namespace) -> Store:
    """The store of ``DIR`` or ``--store`` (one of them), else the one above this folder."""
    if args.dir is not None and args.store is not None:
        raise UsageError("name the store once: DIR or --store, not both")
    given = args.store if args.store is not None else args.dir
    if given is not None:
        return reading_store(given)
    return find_store(Path.cwd())


def _warn(message: str) -> None:
    sys.stderr.write(shown(f"quarry: {message}") + "\n")


__all__ = [
    "COLUMNS",
    "INSTALL_PARQUET",
    "KEY_ORDER",
    "Chunk",
    "Format",
    "Order",
    "Selection",
    "atomic_file",
    "choose_format",
    "cmd_export",
    "csv_cells",
    "fields_of",
    "order_of",
    "output_path",
    "store_chunks",
    "write_csv",
    "write_jsonl",
    "write_parquet",
]
