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
export that fails or is interrupted leaves no half file (and an earlier one intact); a device
or a pipe there (``/dev/null``, a FIFO) is written into, never replaced; an
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
import stat
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from engine.chunks import BATCH, KEY_ORDER, Chunk, Order, Selection, store_chunks
from engine.errors import UsageError
from engine.grep import matching_keys
from engine.names import escaped, name_b64, shown
from engine.pages import SORTS
from engine.query import Query
from engine.records import Record
from engine.store import Store
from engine.verbkit import EXIT_OK, named_store
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
FOREIGN = frozenset(
    (".xlsx", ".xlsm", ".xls", ".ods", ".tsv", ".json", ".xml", ".html", ".db", ".sqlite")
) | frozenset((".arrow", ".feather", ".orc", ".avro"))
"""Suffixes of formats an export is not, refused without ``--format``: ``-o records.xlsx``
wrote JSON lines under that name, which the spreadsheet then refused (any other suffix, or
none, is JSONL: ``-o /dev/stdout``, ``-o records.2026-12-06``)."""

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
ROW_GROUP = 16 * BATCH


# -- where the records come from ------------------------------------------------------------


def selection_of(text: str, store: Store, warn: Callable[[str], None]) -> Selection:
    """``--where TEXT`` parsed (a UsageError when it cannot mean what was typed; a pattern
    matched as text is said through ``warn``), its ``text:`` terms asked of the store."""
    query = Query.parse(text)
    refused = query.unknown or query.bad or any(t.error for t in query.texts)
    if refused and query.error:
        raise UsageError(f"--where {shown(text)!r}: {query.error}")
    if query.error:
        warn(f"warning: --where: {query.error}")
    texts = {t: matching_keys(store, t.pattern) for t in query.searches if t.pattern}
    return Selection(query, texts)


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
    if out is None:
        return Format.JSONL
    suffix = out.suffix.lower()
    if suffix in FOREIGN:
        raise UsageError(
            f"-o {shown(out.name)}: an export is JSONL, CSV or Parquet, not {shown(suffix)}:"
            " name a file ending .jsonl, .csv or .parquet (a spreadsheet opens the CSV), or give"
            " --format"
        )
    return SUFFIXES.get(suffix, Format.JSONL)


def file_target(path: Path) -> contextlib.AbstractContextManager[IO[bytes]]:
    """Where ``-o path`` is written: a new file renamed over it (:func:`atomic_file`), but
    for a name that is there and is not a regular file (a device, a pipe: ``/dev/null``,
    ``/dev/stdout``, a FIFO), written straight into, as a shell's ``>`` writes it: renamed
    over, ``/dev/full`` became a regular file (as root, any device node would have)."""
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False  # (not there: a new file)
    return _written_into(path) if special else atomic_file(path)


@contextlib.contextmanager
def _written_into(path: Path) -> Iterator[IO[bytes]]:
    with open(os.open(path, os.O_WRONLY | os.O_CLOEXEC), "wb") as fh:
        yield fh


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
    store = named_store(args.dir, args.store)
    out = output_path(args.output, store)
    if out is None:
        check_stdout(store)
    fmt = choose_format(args.format, out)
    if fmt is Format.PARQUET:
        pyarrow_modules()  # missing: said before anything is read
        if out is None and sys.stdout.isatty():
            raise UsageError("Parquet is binary: name a file with -o, or pipe it")
    warn = _warn
    where = selection_of(args.where, store, warn) if args.where else None
    order = order_of(args)
    with store_chunks(store, warn, where, order) as chunks:
        target = file_target(out) if out is not None else standard_output()
        with target as sink:
            bad = _write(fmt, _decided(chunks, where, args.where), sink)
    if bad:
        warn(f"warning: {count(bad, 'damaged record')} in the store's index left out")
    return EXIT_OK


def _decided(chunks: Iterator[Chunk], where: Selection | None, text: str) -> Iterator[Chunk]:
    """``chunks``, until a ``--where`` term whose pattern may backtrack without end gives up
    on a value (:attr:`engine.query.Term.slow`): then a UsageError, the file not replaced.
    A term given up matches nothing more: the export would have left records out, saying
    nothing."""
    for chunk in chunks:
        _not_given_up(where, text)
        yield chunk
    _not_given_up(where, text)


def _not_given_up(where: Selection | None, text: str) -> None:
    if where is not None and any(t.slow for t in where.query.terms):
        raise UsageError(f"--where {shown(text)!r}: {where.query.error}")


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
