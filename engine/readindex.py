"""The index a reader of a store looks records up in, when the store has none it can trust.

A store written by this quarry keeps its index beside its records (``extract.db``). A store
that has none in step with its ``extract.jsonl`` (one written by the seed's extract stage or
an older quarry, one on read-only media or in another user's folder, one whose index was
lost) is still read many times: ``quarry show`` of one file after another read the whole
file each time (seconds at a million records). A reader never writes into a store it does
not hold (it has no lock there, and may have no right to): its index is built in the user's
cache folder instead, from ``extract.jsonl`` alone (no document is read), once per version
of the file, and looked up from then on. The cache is a convenience: where there is none
(no cache folder, a full disk, another reader building it at the same moment), the caller
reads the file as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from pathlib import Path
from typing import TextIO

from engine.db import DB, Agreement, Identity, IndexUnusable, RecordDB, identity_of, standing
from engine.errors import QuarryError
from engine.names import shown
from engine.records import Record
from engine.store import BadLine, Store, read_jsonl
from engine.store import left_out as left_out_words
from engine.toolcache import cache_path

LEFT_OUT = "left_out"
"""The cached index's meta key for the lines of ``extract.jsonl`` that are not records, in
the words ``quarry show`` says them (the file's readers say them; so do the index's)."""
BAD_LINES = "bad_lines"
"""An index's meta key for the lines of its ``extract.jsonl`` that are not records: their
count and the first few, as JSON (see :func:`bad_lines_of`)."""
FOLDER = "indexes"
"""Under the cache folder (``$XDG_CACHE_HOME/textquarry``): one folder per store."""
BUILD_BLOCK = 1 << 23
"""Bytes of ``extract.jsonl`` read and parsed at a time while an index is built from it."""


@dataclass
class LeftOut:
    """The lines of an ``extract.jsonl`` read a block at a time that are not records: the
    first few (numbered in the whole file) and how many."""

    first: list[BadLine] = field(default_factory=list)
    count: int = 0


def records_in(blocks: Iterable[bytes], left: LeftOut) -> Iterator[Record]:
    """The records of the ``extract.jsonl`` whose bytes come in ``blocks``, parsed a block of
    whole lines at a time: no more than a block's records are held at once, whatever the
    file's size (ten million records are 5 GB of lines). The lines that are not records go
    into ``left``."""
    lines_before = 0
    rest = b""
    for block in chain(blocks, (b"",)):
        data = rest + block
        end = data.rfind(b"\n") + 1 if block else len(data)
        part, rest = data[:end], data[end:]
        if not part:
            continue
        loaded = read_jsonl(part)
        left.count += len(loaded.bad)
        room = 5 - len(left.first)
        left.first.extend(BadLine(b.line + lines_before, b.why) for b in loaded.bad[:room])
        lines_before += part.count(b"\n") + (0 if part.endswith(b"\n") else 1)
        yield from loaded.records


def rebuild_with(
    store: Store, rebuild: Callable[[Iterable[Record], Identity, Callable[[], int]], bool]
) -> bool:
    """``rebuild(records, source, bad)`` given the records of ``store``'s ``extract.jsonl`` a
    block at a time (:func:`records_in`), the file's identity and how many of its lines were
    no records so far (:meth:`engine.resume.Ledger.rebuild`, for a writer holding the store);
    its answer, or False when there is no file to read."""
    source = identity_of(store.jsonl_path)
    if source is None:
        return False
    left = LeftOut()
    try:
        fd = store.open_jsonl()
    except OSError:
        return False
    try:
        blocks = iter(partial(os.read, fd, BUILD_BLOCK), b"")
        return rebuild(records_in(blocks, left), source, lambda: left.count)
    finally:
        os.close(fd)


Progress = Callable[[int, int], None]
"""Told how far a build is: (bytes of the file read, the file's size)."""


class BuildLine:
    """A :data:`Progress` for a verb that waits for a store's index to be built (minutes at
    ten million records): one line of a terminal saying how far, cleared at :meth:`done`.
    Says nothing on a stream that is no terminal (a log, a pipe)."""

    def __init__(self, stream: TextIO, store: Store) -> None:
        self._stream = stream
        self._name = shown(str(store.jsonl_path))
        try:
            self._live = stream.isatty()
        except (AttributeError, ValueError, OSError):
            self._live = False
        self._last = -1

    def __call__(self, done: int, size: int) -> None:
        percent = 100 * done // size if size else 100
        if not self._live or percent == self._last:
            return
        self._last = percent
        step = f"{percent}%" if done < size else "sorting it by each column"
        self._write(
            f"\r\x1b[Kquarry: indexing {self._name} in the user's cache (once for this"
            f" version of it): {step}"
        )

    def done(self) -> None:
        """Clear the line, if one was said."""
        if self._last >= 0:
            self._write("\r\x1b[K")

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.write(text)
            self._stream.flush()


def cached_index_path(store: Store) -> Path | None:
    """Where the index of ``store`` is kept in the user's cache (None: no cache folder)."""
    base = cache_path()
    if base is None:
        return None
    real = os.path.realpath(store.out).encode("utf-8", "surrogateescape")
    return base.parent / FOLDER / hashlib.sha256(real).hexdigest()[:32] / DB


def reading_index(
    store: Store,
    *,
    build: bool = True,
    stop: Callable[[], bool] | None = None,
    progress: Progress | None = None,
) -> Path | None:
    """The index to read ``store``'s records from: the store's own when it is in step with
    (or ahead of) ``extract.jsonl``; else the user's cached one, built from the file first
    when it is missing or agrees with another version of it (``build``). None when there is
    no file to build from, no cache, or the build failed or was stopped (``stop()`` true,
    asked between blocks of the file): read the file. ``progress(done, size)`` is told the
    bytes of the file read after each block of a build, then ``(size, size)`` as its sort
    trees are made (minutes at ten million records)."""
    own = store.out / DB
    # (the agreement alone: an index ahead of the file must not cost a read of every line)
    if standing(own, store.jsonl_path, lines=False).agreement is not Agreement.UNTRUSTED:
        return own
    cached = cached_index_path(store)
    if cached is None or identity_of(store.jsonl_path) is None:
        return None
    if standing(cached, store.jsonl_path, lines=False).agreement is Agreement.IN_STEP:
        return cached
    return _build(store, cached, stop, progress) if build else None


class _Stopped(Exception):
    """A build was asked to stop (its caller no longer wants the index)."""


def _blocks(fd: int, stop: Callable[[], bool] | None) -> Iterator[bytes]:
    """The file's blocks for a build; raises :class:`_Stopped` when ``stop()`` says so."""
    for block in iter(lambda: os.read(fd, BUILD_BLOCK), b""):
        if stop is not None and stop():
            raise _Stopped
        yield block


def _told(blocks: Iterator[bytes], fd: int, progress: Progress | None) -> Iterator[bytes]:
    """``blocks``, ``progress`` told the bytes read after each."""
    if progress is None:
        yield from blocks
        return
    size, done = os.fstat(fd).st_size, 0
    for block in blocks:
        yield block
        done += len(block)
        progress(done, max(size, done))


def _build(
    store: Store,
    path: Path,
    stop: Callable[[], bool] | None = None,
    progress: Progress | None = None,
) -> Path | None:
    """Build the index of ``store`` at ``path``: into a file of its own, renamed into place
    once complete (a reader never sees it half built, and two readers building at once each
    rename a whole one). Stopped, failed or interrupted (Ctrl-C in a verb waiting for it), it
    leaves nothing behind; what a killed builder left (gigabytes at ten million records) the
    next build removes."""
    source = identity_of(store.jsonl_path)  # before the read: a later file is another version
    tmp = path.with_name(TMP_INDEX.format(pid=os.getpid()))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        drop_index_file(tmp)
        drop_left_by_the_dead(path.parent, TMP_INDEX)
        fd = store.open_jsonl()
        try:
            left = LeftOut()
            blocks = _told(_blocks(fd, stop), fd, progress)
            with RecordDB.open_writer(tmp) as db:
                # a block's records at a time: loading them all first took 12 GB and more
                # for a store of ten million records
                db.replace_all(records_in(blocks, left), source)
                if left.count:  # said by every reader of it, as by a reader of the file
                    db.con.execute(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                        (LEFT_OUT, left_out_words(left.count, left.first, str(store.jsonl_path))),
                    )
                    keep_bad_lines(db, tuple(left.first), left.count)
                db.make_sorted(stop)  # (a big store's: a viewer pages it in any order)
                if stop is not None and stop():
                    raise _Stopped
                # one file, no WAL beside it, before it is renamed (a reader opens it read-only)
                db.con.execute("PRAGMA journal_mode = DELETE")
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        drop_index_file(tmp)
        failed = (OSError, IndexUnusable, ValueError, QuarryError, sqlite3.Error, _Stopped)
        if isinstance(exc, failed):
            return None
        raise  # (KeyboardInterrupt, SystemExit: gone with nothing half built)
    return path


TMP_INDEX = DB + ".{pid}.tmp"
"""The name of an index being built in the user's cache, by the process ``pid``."""


def drop_index_file(path: Path) -> None:
    """Remove an index file and what SQLite keeps beside it (its WAL, shared memory,
    journal); nothing when gone."""
    for name in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))):
        with contextlib.suppress(OSError):
            os.unlink(name)


def drop_left_by_the_dead(folder: Path, name: str) -> None:
    """Remove the index files in ``folder`` named as ``name`` names them (``{pid}`` standing
    for the process that made each) whose process no longer runs (killed before it could)."""
    before, _, after = name.partition("{pid}")
    for path in folder.glob(name.format(pid="*")):
        if not _alive(path.name[len(before) : len(path.name) - len(after)]):
            drop_index_file(path)


def _alive(pid: str) -> bool:
    """Whether the process ``pid`` (as a file name holds it) runs on this machine (another
    user's too); False for no number."""
    try:
        os.kill(int(pid), 0)
    except (ValueError, OverflowError, ProcessLookupError):
        return False
    except OSError:
        return True  # (another user's: it runs)
    return True


def left_out(path: Path) -> str:
    """What the index at ``path`` left out of its ``extract.jsonl`` (lines that are not
    records), in words; "" when nothing, or when it is no index built here."""
    try:
        with RecordDB.open_reader(path) as db:
            row = db.con.execute("SELECT value FROM meta WHERE key = ?", (LEFT_OUT,)).fetchone()
    except (IndexUnusable, sqlite3.Error):
        return ""
    return row[0] if row is not None and isinstance(row[0], str) else ""


def bad_lines_of(db: RecordDB) -> tuple[tuple[BadLine, ...], int]:
    """The first few lines of the index's ``extract.jsonl`` that are not records, and how
    many there are (an index built by a reader keeps them: :func:`keep_bad_lines`)."""
    try:
        row = db.con.execute("SELECT value FROM meta WHERE key = ?", (BAD_LINES,)).fetchone()
        if row is None or not row[0]:
            return (), 0
        value = json.loads(row[0])
        count, first = int(value[0]), [BadLine(int(n), str(w)) for n, w in value[1]]
    except (sqlite3.Error, ValueError, TypeError, IndexError, KeyError):
        return (), 0
    return tuple(first), count


def keep_bad_lines(db: RecordDB, bad: tuple[BadLine, ...], count: int | None = None) -> None:
    """Keep the count and the first few of the lines left out (in the transaction in
    flight, or at once)."""
    value = json.dumps([len(bad) if count is None else count, [[b.line, b.why] for b in bad[:5]]])
    db.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (BAD_LINES, value))
