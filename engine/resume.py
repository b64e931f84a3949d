"""The sweeper's side of the store's index (:mod:`engine.db`): commit as a sweep goes, resume
a sweep that was killed.

:class:`Ledger` is opened with the records the sweeper loaded from ``extract.jsonl``. When the
index is in step with that file it is kept; when it also holds records a sweep committed
and never finished (killed by SIGKILL, the OOM killer, a power cut), those records are the
store's records from now on, so the files they answer for are not read again. Otherwise
(no index, a damaged one, one of another version, one that agrees with another
``extract.jsonl``) the index is rebuilt from the file's records, with a notice when there was
one to rebuild.

A failure of the index itself (a full disk, a damaged file found mid-sweep) never stops a
sweep: the index is dropped with one notice, the sweep goes on as before the index existed,
and the index is rebuilt from the records at the next write that succeeds.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from engine import history
from engine.db import DB, Identity, IndexUnusable, RecordDB, identity_of
from engine.events import Level, Notice, NoticeKind
from engine.records import Key, Record
from engine.store import JSONL, Store, read_jsonl
from engine.textindex import Progress, TextIndex, has_tables, is_ready
from engine.textindex import remove as remove_text_index
from engine.words import count

T = TypeVar("T")

_FILES = (DB, DB + "-wal", DB + "-shm")
"""The index's file and SQLite's two beside it."""


@dataclass(frozen=True, slots=True)
class Resumed:
    """What the index adds to the records of ``extract.jsonl`` when a sweep was killed."""

    records: list[Record] | None
    """Every record, the killed sweep's decisions included (they replace the file's); None
    when the index serves them (:meth:`Ledger.attach` with ``served``)."""
    keys: frozenset[Key]
    """The keys the killed sweep decided; when the index serves the records, none are
    listed: the killed sweep decided every record the index holds."""


@dataclass(frozen=True, slots=True)
class Resuming:
    """A killed sweep's index as the merge that resumes it finds it."""

    finished: int
    """The change counter of the last sweep that finished: the rows past it are the killed
    sweep's."""
    began: int
    """When the killed sweep began (ns, wall clock)."""
    decided: int
    """How many records it decided."""


class Ledger:
    """The index as one sweeper writes it; ``say`` receives its notices.

    A run's records go into one transaction, committed when it has been open
    :attr:`COMMIT_S` and when the run ends: a watch batch is one transaction (a reader never
    sees a moved file under both names), a long sweep commits every second.
    """

    COMMIT_S = 1.0

    def __init__(self, store: Store, say: Callable[[Notice], None], *, text: bool = True) -> None:
        self.store = store
        self.say = say
        self.text = text
        """Keep the full-text index (:mod:`engine.textindex`); False drops one found."""
        self.say_now: Callable[[Notice], None] | None = None
        """Receives at once a notice of a wait that comes before the run's end (``say``'s are
        told once a run is under way); ``say`` when None."""
        self.progress: Progress | None = None
        """Hears how far a build of the text index is (texts done, texts in all)."""
        self.db: RecordDB | None = None
        self._stale = False
        """The index was dropped after a failure: rebuild it at the next successful write."""
        self._opened: float | None = None
        """When the transaction in flight took its first records (monotonic)."""
        self._text: TextIndex | None = None
        """The text index kept with the records, when there is one."""
        self.failure: BaseException | None = None
        """What made this ledger drop its index last, if anything did."""
        self._ino: int | None = None
        """The inode of the index this ledger opened: another there (the file deleted or
        replaced while a watcher runs) is an index lost, rebuilt from the records."""

    def attach(self, records: list[Record], *, served: bool = False) -> Resumed | None:
        """Open the index beside the ``records`` just loaded from ``extract.jsonl``; what a
        killed sweep committed after them, if anything. ``served``: the sweeper can have its
        records served by the index; a killed sweep of a store that had no record is then
        resumed without reading its records (:attr:`Resumed.records` is None)."""
        try:
            resumed = self._attach(records, served=served and not records)
            if self.db is not None:
                self._attach_text(self.db)
            return resumed
        except (OSError, sqlite3.Error, IndexUnusable) as exc:
            self._fail(exc)
            return None

    def _attach_text(self, db: RecordDB) -> None:
        """Keep the text index with the records (built or caught up first), or drop it."""
        if not self.text:
            if remove_text_index(db):
                self._notice("the text index was dropped (--no-text-index)", Level.INFO)
            return
        text = TextIndex(db, self.store)
        db.companion = text
        self._text = text
        text.ensure(self.progress, say=lambda message: self._notice(message, Level.INFO))

    def _attach(self, records: list[Record], *, served: bool) -> Resumed | None:
        source = identity_of(self.store.jsonl_path)
        existed = self._clear_odd_files()
        try:
            db = RecordDB.open_writer(self._path())
        except IndexUnusable as exc:
            self._remove()
            self._notice(f"the index could not be used ({exc}): rebuilt", Level.INFO)
            existed = False
            db = RecordDB.open_writer(self._path())
        self.db = db
        self._ino = _inode(self._path())
        if db.source() == source and (source is not None or len(db)):
            resumed = self._resume_served(db) if served else self._resume(db)
            if resumed is not None or source is not None:
                return resumed
        if existed and len(db):
            self._notice("the index did not match extract.jsonl: rebuilt from it", Level.INFO)
        db.replace_all(records, source)
        return None

    def attach_in_step(self) -> bool:
        """Open the index for a sweeper that loaded no record (a quick sweep found the folder
        as the store lists it): only when the index agrees with ``extract.jsonl`` and has no
        sweep to resume, so it answers for every record. False: nothing was opened (the
        records are loaded, and :meth:`attach` repairs what did not agree)."""
        if self.db is not None:
            return True
        if identity_of(self.store.jsonl_path) is None:
            return False
        return self._open_if(lambda db: True if self._agrees(db) else None) is not None

    def attach_resumed(self) -> Resuming | None:
        """Open the index of a killed sweep for the merge that resumes it
        (:meth:`engine.sweep.Sweeper.run`): only when it agrees with ``extract.jsonl`` (the
        store had records before the killed sweep) and knows when that sweep began (its text
        index, behind at the kill, is caught up); None: nothing was opened (the records are
        loaded, and :meth:`attach` resumes as it does)."""
        if self.db is not None:
            return None
        return self._open_if(self._resumable)

    def _open_if(self, judge: Callable[[RecordDB], T | None]) -> T | None:
        """Open the index when ``judge`` finds it usable, and keep the text index with it;
        the judge's answer, or None when nothing was opened."""
        try:
            if self._clear_odd_files() is False:
                return None
            db = RecordDB.open_writer(self._path())
        except (OSError, sqlite3.Error, IndexUnusable):
            return None
        judged = judge(db)
        if judged is None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
            return None
        return judged if self._adopt(db) else None

    def _adopt(self, db: RecordDB) -> bool:
        """Make ``db`` this ledger's index, with its text index kept; False when that
        failed (the index then dropped)."""
        self.db = db
        self._ino = _inode(self._path())
        try:
            self._attach_text(db)
        except (OSError, sqlite3.Error, IndexUnusable) as exc:
            self._fail(exc)
            return False
        return True

    def _resumable(self, db: RecordDB) -> Resuming | None:
        """What :meth:`attach_resumed` finds in ``db``, when it may resume from it."""
        try:
            source = identity_of(self.store.jsonl_path)
            # (a killed first sweep, no file yet, is resumed by a lean run: the merge would
            # send every file it did not reach to a run that holds their records)
            if source is None or db.source() != source:
                return None
            began, n = db.began(), db.unfinished_count()
            return Resuming(db.finished(), began, n) if began is not None and n else None
        except sqlite3.Error:
            return None

    def say_resuming(self, decided: int) -> None:
        """Tell that a killed sweep is resumed, its ``decided`` files not read again."""
        self._notice(
            f"resuming a sweep that did not finish: {count(decided, 'file')} it decided, not "
            "read again",
            Level.INFO,
        )

    def sweep_begins(self, started: float, files: int) -> None:
        """A whole sweep of ``files`` walked files begins (wall clock ``started``): the index
        keeps when, for the sweep that resumes it if it is killed, and how many files, for
        its readers (:meth:`engine.db.RecordDB.sweep_begins`)."""
        if self.db is None:
            return
        try:
            self.db.sweep_begins(int(started * 1e9), files)
        except sqlite3.Error as exc:
            self._fail(exc)

    def rebuild(self, records: Iterable[Record], source: Identity, bad: Callable[[], int]) -> bool:
        """Make the index hold ``records``, those of ``extract.jsonl`` (of identity ``source``)
        read a block at a time by the caller, when it does not agree with the file (a store
        copied, moved, restored from a backup, or whose index was lost), and attach it as
        :meth:`attach_in_step` does. The usual load rebuilds it from every record held at
        once (a gigabyte at 200,000 records: ten million would not fit). False when it did
        not: no usable index file, a killed sweep's decisions in it (the load resumes them),
        lines of the file that are no records (``bad()``: the load says and repairs them),
        or a failure; the usual load then does as before."""
        if self.db is not None:
            return False
        try:
            existed = self._clear_odd_files()
            db = RecordDB.open_writer(self._path())
        except (OSError, sqlite3.Error, IndexUnusable):
            return False
        try:
            if db.unfinished():
                db.close()
                return False
            # (in step but for its text index: caught up below, the records kept as they are)
            stale = existed and len(db) > 0 and db.source() != source
            if db.source() != source:
                db.replace_all(records, source)
            if bad():
                db.close()
                self._remove()  # (it agrees with the file's good lines: the load says the rest)
                return False
        except (OSError, sqlite3.Error, ValueError):
            with contextlib.suppress(sqlite3.Error):
                db.rollback()
                db.close()
            return False
        if stale:
            self._notice("the index did not match extract.jsonl: rebuilt from it", Level.INFO)
        return self._adopt(db)

    def in_step(self) -> bool:
        """Whether the index is usable as it is and agrees with ``extract.jsonl``, with no
        sweep's decisions left to resume (a sweep may then skip loading the records)."""
        try:
            db = RecordDB.open_reader(self._path())
        except IndexUnusable:
            return False
        try:
            return self._agrees(db)
        finally:
            db.close()

    def _agrees(self, db: RecordDB) -> bool:
        """Whether ``db`` agrees with ``extract.jsonl``, has no sweep to resume and keeps the
        text index as asked (else the load builds, catches up or drops it)."""
        try:
            if db.source() != identity_of(self.store.jsonl_path) or db.unfinished():
                return False
            return is_ready(db.con) if self.text else not has_tables(db.con)
        except sqlite3.Error:
            return False

    def _resume_served(self, db: RecordDB) -> Resumed | None:
        """:meth:`_resume` for a store whose every record the killed sweep decided: counted,
        never read (the sweeper's run asks the index for each as it comes to its file)."""
        n = db.unfinished_count()
        if not n:
            return None
        self.say_resuming(n)
        return Resumed(None, frozenset())

    def _resume(self, db: RecordDB) -> Resumed | None:
        keys = db.unfinished()
        if not keys:
            return None
        loaded = read_jsonl(b"".join(db.lines()))
        if loaded.bad:
            raise sqlite3.DatabaseError(f"{count(len(loaded.bad), 'damaged record')} in the index")
        self.say_resuming(len(keys))
        return Resumed(loaded.records, frozenset(keys))

    def journal(self, records: Sequence[Record]) -> None:
        """Commit ``records`` (a run's decisions, each with its text already in the store)."""
        if self.db is None:
            return
        now = time.monotonic()
        try:
            self.db.put(records)
            if self._opened is None:
                self._opened = now
            if now - self._opened >= self.COMMIT_S:
                with self._text.lagging() if self._text is not None else contextlib.nullcontext():
                    self.db.commit()  # (the texts still being read: at a later commit)
                self._opened = None
        except sqlite3.Error as exc:
            self._fail(exc)

    def replaced(self) -> bool:
        """Whether the index open here is no longer the store's (deleted or replaced on disk:
        its writes go to a file no reader sees)."""
        return self.db is not None and _inode(self._path()) != self._ino

    def failed(self, exc: BaseException) -> None:
        """A reader of the records through this index met ``exc``: dropped, rebuilt."""
        if self.db is not None:
            self._fail(exc)

    def drop(self, gone: Sequence[Key]) -> None:
        """Remove the ``gone`` keys in the transaction in flight (before the file is written
        from the index, which then holds exactly the sweep's records)."""
        if self.db is None or not gone:
            return
        try:
            self.db.drop(gone)
        except sqlite3.Error as exc:
            self._fail(exc)

    def write_jsonl(self, expected: int | None, before_replace: Callable[[], None] | None) -> bool:
        """Write ``extract.jsonl`` from the index, streamed in key order, when it holds the
        ``expected`` records (every run journals its decisions here; None: no count to hold
        it to); whether it did. When it does not hold them, or fails, it is dropped and
        rebuilt, and the caller writes the file from its records."""
        db = self.db
        if db is None:
            return False
        counted = 0

        def lines() -> Iterator[bytes]:
            nonlocal counted
            for line in db.lines():
                counted += 1
                yield line
            if expected is not None and counted != expected:
                raise _Disagrees(counted)

        try:
            self.store.write_lines(lines(), before_replace)
        except _Disagrees:
            self.forget()
            self._notice(
                f"the index held {counted:,} records, the sweep {expected:,}: "
                f"{JSONL} written from the records, the index rebuilt",
                Level.WARNING,
            )
            return False
        except sqlite3.Error as exc:
            self._fail(exc)
            return False
        return True

    def write_in_background(
        self, candidates: Iterable[str], done: Callable[[], None]
    ) -> BackgroundWrite | None:
        """Start writing ``extract.jsonl`` in a thread from a snapshot of the index taken now
        (its own read-only connection, one read transaction), while watch batches go on
        committing through the writer; ``done`` is called from the thread when it ends.
        ``candidates``: texts the batches behind may have left unnamed; the thread notes
        which of them no record names in the snapshot (the file it writes names none of
        those). None when there is no index to write from (the caller writes as before)."""
        db = self.db
        if db is None or db.con.in_transaction or self.replaced():
            return None
        try:
            reader = RecordDB.open_reader(self._path())
        except IndexUnusable:
            return None
        try:
            reader.con.execute("BEGIN")
            seq = reader.seq()  # (the first read: the snapshot is taken here)
            if seq != db.seq():  # (nothing uncommitted is in flight: never, but be sure)
                raise sqlite3.OperationalError("the snapshot is not the writer's last commit")
        except sqlite3.Error:
            reader.close()
            return None
        write = BackgroundWrite(db, reader, seq, frozenset(candidates), self.store, done)
        write.start()
        return write

    def written_upto(self, seq: int) -> None:
        """``extract.jsonl`` was written from the index as it was at counter ``seq``, and
        batches committed past it since: the index takes the new file as its source and
        stays ahead of it by those batches (readers read the records from the index)."""
        if self.db is None:
            return
        try:
            self.db.in_step_upto(identity_of(self.store.jsonl_path), seq)
        except sqlite3.Error as exc:
            self._fail(exc)

    def sent_text(self, sha256: str, ident: str, body: str) -> None:
        """A worker sent the text of ``sha256`` it wrote (:meth:`TextIndex.offer`)."""
        if self._text is not None and self.db is not None:
            self._text.offer(sha256, ident, body)

    def set_aside(self, sha256: str, text: str) -> None:
        """The stored text of ``sha256`` is being replaced; its old one is kept aside as
        ``text`` (:meth:`engine.db.RecordDB.set_aside`): the kept records that had it read it."""
        if self.db is None:
            return
        try:
            self.db.set_aside(sha256, text)
        except sqlite3.Error as exc:
            self._fail(exc)

    def concluded(
        self,
        records: Iterable[Record],
        *,
        written: bool = True,
        sweep: bool = False,
    ) -> None:
        """A run ended with the store's ``records`` (its removals dropped already:
        :meth:`drop`): commit.
        ``written``: ``extract.jsonl`` holds them (the index is in step with the file); else
        the file is behind (a watch batch left it to :meth:`engine.sweep.Sweeper.write_behind`)
        and what the index holds past it stays a sweep's decisions to resume from. ``sweep``:
        the run was a whole sweep that finished (the history lists it: ``--since -1``)."""
        source = identity_of(self.store.jsonl_path)
        if self.db is not None:
            self.db.aside.clear()  # (a next run's replaced texts are its own)
        if self.db is not None and _inode(self._path()) != self._ino:
            self.close()  # (its writes went to a file no longer there)
            self._stale = True
            self._notice(
                "the index was deleted or replaced: rebuilt from the records", Level.WARNING
            )
        try:
            if self.db is None:
                if not self._stale:
                    return
                self.db = self._open_fresh()
                if self.db is None:
                    return
                self._ino = _inode(self._path())
                # behind the file, the records rebuilt are what a killed watcher resumes from
                self.db.replace_all(records, source, finished=written)
                self._attach_text(self.db)
                self._stale = False
                return
            if written:
                self.db.in_step(source, finished=True, sweep=sweep)
            else:
                self.db.commit()
            if sweep or self.db.dropped_sorted:  # (a run that rewrote much: built again)
                self._sort(self.db)
            self.db.run_ended()
            self._opened = None
        except sqlite3.Error as exc:
            self._fail(exc)

    def _sort(self, db: RecordDB) -> None:
        """Give a big store's index its sort B-trees (:meth:`RecordDB.make_sorted`), said
        first through :attr:`say_now`: minutes at ten million records, before the summary."""
        if not db.wants_sorted():
            return
        words = (
            f"sorting the index's {len(db):,} records by each column and indexing their paths"
            " and triage fields, for the dashboard, its queries and export --sort (a big"
            " store's; minutes at ten million)"
        )
        notice = Notice(time.time(), NoticeKind.STORE_INDEX, words, Level.INFO)
        (self.say_now or self.say)(notice)
        db.make_sorted()

    def kept_texts(self) -> set[str]:
        """The texts the index's kept records name (:mod:`engine.history`): the store's
        garbage collection keeps them too. Read from the index on disk when not attached."""
        try:
            if self.db is not None:
                return history.kept_texts(self.db.con)
            with RecordDB.open_reader(self._path()) as db:
                return history.kept_texts(db.con)
        except (IndexUnusable, sqlite3.Error, OSError):
            return set()

    def aside_texts(self) -> set[str]:
        """The texts set aside that the index's kept records name (the others may go)."""
        try:
            if self.db is not None:
                return history.aside_texts(self.db.con)
            with RecordDB.open_reader(self._path()) as db:
                return history.aside_texts(db.con)
        except (IndexUnusable, sqlite3.Error, OSError):
            return set()

    def freed_texts(self) -> set[str]:
        """The texts kept records named when they were pruned (:func:`history.freed_texts`);
        empty when the index is not attached."""
        if self.db is None:
            return set()
        try:
            return history.freed_texts(self.db.con)
        except sqlite3.Error:
            return set()

    def forget_freed(self, shas: Iterable[str] | None = None) -> None:
        """The freed texts asked of (None: all, after a garbage collection of the store)."""
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                history.forget_freed(self.db.con, shas)

    def is_kept(self, sha256: str) -> bool:
        """Whether a kept record names the text ``sha256`` (a watch batch's old text stays)."""
        if self.db is None:
            return sha256 in self.kept_texts()
        try:
            return history.is_kept(self.db.con, sha256)
        except sqlite3.Error:
            return True  # unsure: the text stays (a later garbage collection may drop it)

    def forget(self) -> None:
        """The store went back to ``extract.jsonl`` (a write failed): the index, ahead of it,
        is dropped and rebuilt at the next write that succeeds."""
        self.close()
        with contextlib.suppress(OSError):
            self._remove()
        self._stale = True

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lost(self) -> OSError:
        """The failure of an index that held records nothing else held, as the write of the
        store that needed them fails (a full disk is said as one)."""
        exc = self.failure
        if isinstance(exc, OSError):
            return exc
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return OSError(errno.EIO, f"the store's index failed ({exc})")

    def close(self) -> None:
        """Close the index (what is in flight is committed)."""
        self._opened = None
        if self.db is not None:
            with contextlib.suppress(sqlite3.Error):
                self.db.close()
            self.db = None
        if self._text is not None:
            self._text.close()
            self._text = None

    # -- failures -------------------------------------------------------------------------

    def _fail(self, exc: BaseException) -> None:
        """Drop the index after ``exc``; it is rebuilt at the next write that succeeds."""
        self.failure = exc
        self.forget()
        self._notice(f"the index failed ({exc}): dropped, rebuilt at the next write", Level.WARNING)

    def _open_fresh(self) -> RecordDB | None:
        try:
            return RecordDB.open_writer(self._path())
        except (IndexUnusable, sqlite3.Error, OSError) as exc:
            self._stale = True
            self._notice(f"cannot make the index ({exc}): the sweep goes on without", Level.WARNING)
            return None

    def _path(self) -> Path:
        return self.store.out / DB

    def _remove(self) -> None:
        for name in _FILES:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.store.out, name))

    def _clear_odd_files(self) -> bool:
        """Remove a link or other non-file where the index's files belong (SQLite would open
        through a link: a received folder must not make it write elsewhere); whether an index
        file was there."""
        existed = False
        for name in _FILES:
            where = os.path.join(self.store.out, name)
            try:
                mode = os.lstat(where).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISREG(mode):
                existed = existed or name == DB
                continue
            what = "a link" if stat.S_ISLNK(mode) else "not a file"
            self._notice(
                f"{name} in the store was {what}: removed, the index is rebuilt", Level.WARNING
            )
            if stat.S_ISDIR(mode):
                os.rmdir(where)  # an empty folder only; anything else stays an error
            else:
                os.unlink(where)
        if not existed:  # a WAL without its database would be replayed into a new one
            for name in _FILES[1:]:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.store.out, name))
        return existed

    def _notice(self, message: str, level: Level) -> None:
        self.say(Notice(time.time(), NoticeKind.STORE_INDEX, message, level))


class Abandoned(Exception):
    """A background write of ``extract.jsonl`` was given up (its temporary file removed)."""


class BackgroundWrite:
    """``extract.jsonl`` written from one snapshot of the index in a thread of its own.

    A rewrite of a big store takes seconds (1.5 s a million records): on the watcher's
    thread it held back every change made meanwhile. Here it reads through its own
    read-only connection in one read transaction (WAL keeps that snapshot whole while the
    writer commits batches), and replaces the file atomically as a synchronous write does.
    What it means for the index is decided by its owner once it ended (:attr:`seq`, the
    snapshot's change counter, against the index's then), never by the thread.
    """

    def __init__(
        self,
        writer: RecordDB,
        reader: RecordDB,
        seq: int,
        candidates: frozenset[str],
        store: Store,
        done: Callable[[], None],
    ) -> None:
        self.writer = writer
        """The writer's index this snapshot is of (another by the end: it failed meanwhile)."""
        self.seq = seq
        """The change counter of the snapshot written."""
        self.started = time.monotonic()
        """When the snapshot was taken: batches after it are not in the file."""
        self.unnamed: frozenset[str] = frozenset()
        """Of the candidate texts, those no record named in the snapshot (set by the thread)."""
        self.error: BaseException | None = None
        """What made the write fail, if anything did (the file then stays as it was)."""
        self._reader = reader
        self._candidates = candidates
        self._store = store
        self._done = done
        self._abandon = threading.Event()
        self._thread = threading.Thread(target=self._run, name="quarry-write-behind", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def wait(self) -> None:
        """Wait for the thread to end; one stopped meanwhile (KeyboardInterrupt) is
        abandoned first, so that it leaves no temporary file behind."""
        try:
            self._thread.join()
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        """Give the write up and wait for the thread to end: a file not yet in place stays
        out (its temporary file removed); one already in place stays, as any file written."""
        self._abandon.set()
        self._thread.join()

    def _run(self) -> None:
        """The thread: note the unnamed texts, write the file; any failure kept for the owner."""
        try:
            reader = self._reader
            self.unnamed = frozenset(s for s in self._candidates if not reader.names_text(s))
            self._store.write_lines(self._lines())
        except BaseException as exc:  # (the owner raises it on its thread)
            self.error = exc
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._reader.close()
            self._done()

    def _lines(self) -> Iterator[bytes]:
        """The snapshot's lines, until the write is abandoned."""
        for n, line in enumerate(self._reader.lines()):
            if not n % 4096 and self._abandon.is_set():
                raise Abandoned("the write of extract.jsonl was given up")
            yield line
        if self._abandon.is_set():
            raise Abandoned("the write of extract.jsonl was given up")


class _Disagrees(Exception):
    """The index did not hold the records a sweep holds (a file written from it is dropped)."""


def _inode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return None
