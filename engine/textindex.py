"""Full-text search over the store's texts: an FTS5 trigram index inside ``extract.db``.

One row per content hash (a text shared by many files is indexed once): ``text_rows`` maps a
hash to the FTS row holding its text, with the identity (inode, size, mtime) of the text file
that was indexed, so a text written again under the same hash (a reader's new version, a
repair) is indexed again and an unchanged one is not. The FTS table keeps its own copy of each
text (a contentless table cannot forget a row without being given the very text it indexed,
which the store has replaced by then); readers get the text and the records that name it in
one snapshot.

Kept current by the records' own transactions (:class:`TextIndex` is the writer's
:attr:`engine.db.RecordDB.companion`): the texts of the records a transaction puts are read
by a thread of their own as they come and put in the index before the transaction commits,
and triggers on ``records`` note every text a removed or changed record stopped naming; at
the commit each such text that no ``ok`` record names any more leaves the index. So the
index follows the records exactly (a watch batch included), even while the text file itself
waits for the store's garbage collection. A long sweep's commits as it goes do not wait for
the texts still being read (:meth:`TextIndex.lagging`): the index then says it is catching
up (its counter behind the records'), readers read the texts themselves (slower, never a
hit missed), and the sweep's last commit brings it in step.

The trigram tokenizer finds any substring of three characters or more, in any script (CJK
has no spaces to split words at), case-insensitively: exact matching is the caller's
(:mod:`engine.textsearch`). ``meta.text_version`` says the index was built whole; ``meta.
text_seq`` the change counter it agrees with: a reader trusts it only when both hold.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from engine.records import Record
from engine.store import open_folder, open_in, text_ident
from engine.words import count

if TYPE_CHECKING:
    from engine.db import RecordDB
    from engine.store import Store

TEXT_VERSION = 1
"""Bumped whenever the text index's tables change: one of another version is built again."""

Progress = Callable[[int, int], None]
"""Called with (texts done, texts in all) while the index is built."""

_SCHEMA = """
CREATE TABLE text_rows (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE,
                        ident TEXT NOT NULL);
CREATE VIRTUAL TABLE text_fts USING fts5(body, tokenize = 'trigram');
CREATE TABLE text_unnamed (sha256 TEXT PRIMARY KEY) WITHOUT ROWID;
"""
_TRIGGERS = """
CREATE TRIGGER text_out AFTER DELETE ON records
  WHEN old.status = 'ok' AND old.sha256 IS NOT NULL BEGIN
  INSERT INTO text_unnamed SELECT old.sha256
    WHERE NOT EXISTS (SELECT 1 FROM text_unnamed WHERE sha256 = old.sha256);
END;
CREATE TRIGGER text_change AFTER UPDATE OF status, sha256 ON records
  WHEN old.status = 'ok' AND old.sha256 IS NOT NULL
   AND (new.status IS NOT 'ok' OR new.sha256 IS NOT old.sha256) BEGIN
  INSERT INTO text_unnamed SELECT old.sha256
    WHERE NOT EXISTS (SELECT 1 FROM text_unnamed WHERE sha256 = old.sha256);
END;
"""
"""A text a record stops naming is noted once. Not ``INSERT OR IGNORE``: a trigger's conflict
clause gives way to its outer statement's, and the records' upsert (``ON CONFLICT ... DO
UPDATE``) made it ABORT: two records naming one text changed in one batch (copies edited, a
share rewritten) failed the second's write with ``UNIQUE constraint failed``, and the whole
index was dropped and rebuilt (a lean sweep, holding no record, lost it)."""
_OLD_TRIGGER = "INSERT OR IGNORE INTO text_unnamed"
"""What the triggers of an index made before session 25 hold (replaced at its next writer)."""
_DROP = """
DROP TRIGGER IF EXISTS text_out;
DROP TRIGGER IF EXISTS text_change;
DROP INDEX IF EXISTS text_by_sha;
DROP TABLE IF EXISTS text_unnamed;
DROP TABLE IF EXISTS text_fts;
DROP TABLE IF EXISTS text_rows;
DELETE FROM meta WHERE key IN ('text_version', 'text_seq');
"""
_COMMIT_EVERY_S = 1.0
"""A build commits this often (a build killed midway goes on from there next time)."""
_BUILD_BATCH = 512
"""Texts a build reads and puts in at a time."""


_NAMES = ("text_rows", "text_fts", "text_unnamed", "text_out", "text_change")
"""The text index's tables and triggers, as ``sqlite_master`` names them. The records that
name a text are found by the records' own ``by_sha``: the partial index on the hash of ``ok``
records an index made before session 41 has beside it (``text_by_sha``) cost every upsert of
an ``ok`` record a second random insert, about a quarter of the upsert (dropped by its next
writer, :meth:`engine.db.RecordDB.open_writer`)."""


def _present(con: sqlite3.Connection) -> int:
    marks = ",".join("?" * len(_NAMES))
    (n,) = con.execute(
        f"SELECT count(*) FROM sqlite_master WHERE name IN ({marks})", _NAMES
    ).fetchone()
    return int(n)


def has_tables(con: sqlite3.Connection) -> bool:
    """Whether the index at ``con`` has a text index, or any part of one."""
    return _present(con) > 0


def is_ready(con: sqlite3.Connection) -> bool:
    """Whether the text index is whole (every part of it there), was built whole, and agrees
    with the records' change counter: a reader may then trust it."""
    rows = dict(
        con.execute("SELECT key, value FROM meta WHERE key IN ('text_version', 'text_seq', 'seq')")
    )
    if rows.get("text_version") != TEXT_VERSION or rows.get("text_seq") != rows.get("seq"):
        return False
    return _present(con) == len(_NAMES)


def _old_triggers(con: sqlite3.Connection) -> bool:
    """Whether the text index's triggers are those of before session 25."""
    rows = con.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger'"
        " AND name IN ('text_out', 'text_change')"
    ).fetchall()
    return any(_OLD_TRIGGER in (sql or "") for (sql,) in rows)


def _mend_triggers(con: sqlite3.Connection) -> None:
    """Replace the triggers of an index made before session 25 (see :data:`_TRIGGERS`), in
    one transaction; nothing else of it changes."""
    if not _old_triggers(con):
        return
    con.executescript(
        "BEGIN IMMEDIATE;DROP TRIGGER IF EXISTS text_out;DROP TRIGGER IF EXISTS text_change;"
        f"{_TRIGGERS}COMMIT;"
    )


def remove(db: RecordDB) -> bool:
    """Drop the text index from ``db`` (one transaction); whether there was one."""
    if not has_tables(db.con):
        return False
    db.con.executescript(f"BEGIN IMMEDIATE;{_DROP}COMMIT;")
    return True


_SAME = ("", "")
"""What :func:`_read_text` gives for the very file indexed already."""


def _read_text(
    extract: int, folders: dict[str, int], sha: str, indexed: str | None
) -> tuple[str, str] | None:
    """(ident, body) of the text of ``sha`` under the open ``extract`` folder (its folder
    opened once into ``folders``); :data:`_SAME` when it is the file indexed as ``indexed``;
    None when it is not there (a link, a folder, absent: as :meth:`Store.open_text`)."""
    try:
        part = sha[:2]
        folder = folders.get(part)
        if folder is None:
            folder = folders[part] = open_folder(part, dir_fd=extract)
        fd = open_in(folder, f"{sha}.txt", os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:  # plain reads of the descriptor: no file object a text (most are small)
        st = os.fstat(fd)  # (one stat: the kind of file and the identity)
        if not stat.S_ISREG(st.st_mode):
            return None
        ident = text_ident(st)
        if ident == indexed:
            return _SAME
        # One read of the size the stat gave (and one byte more, to see the end): a buffer
        # of 64 KiB a text, twice, was most of what a cold sweep allocated (13 GB at 100,000
        # files). A file that grew since is read on to its end.
        first = os.read(fd, st.st_size + 1)
        parts = [first]
        if len(first) > st.st_size:
            while chunk := os.read(fd, 1 << 16):
                parts.append(chunk)
        return ident, b"".join(parts).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


class _Reader:
    """Reads the texts handed to it in a thread of its own, so that the sweeper's thread (which
    hands out the reads meanwhile) only puts into the index what is read already.

    A batch handed is a list of (hash, ident indexed or None); what comes back is (hash,
    ident, body), or (hash, None, None) for a text that is not there. A text whose file is
    the one indexed comes back not at all."""

    def __init__(self, out: Path) -> None:
        self._out = out
        self._cond = threading.Condition()
        self._todo: deque[list[tuple[str, str | None]]] = deque()
        self._ready: list[_Got] = []
        self._busy = False
        self._closed = False
        self._failed: BaseException | None = None
        self._thread: threading.Thread | None = None

    def hand(self, batch: list[tuple[str, str | None]], ready: list[_Got] | None = None) -> None:
        """Read ``batch`` (in the thread, started on the first batch); ``ready``: texts read
        already (their workers sent them), taken with what the thread reads before them."""
        with self._cond:
            if ready:
                self._ready.extend(ready)
            if not batch:
                return
            self._todo.append(batch)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="quarry-text-index", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def take(self) -> tuple[list[_Got], bool]:
        """What was read since the last take, and whether more is still to come (handed and
        not read yet, or being read). sqlite3.Error when the thread failed: the caller's
        index is then dropped as after any failure of it, never left saying it is whole."""
        with self._cond:
            if self._failed is not None:
                raise sqlite3.OperationalError(f"reading texts to index: {self._failed}")
            got, self._ready = self._ready, []
            return got, bool(self._todo) or self._busy

    def settle(self) -> None:
        """Wait until every batch handed is read."""
        with self._cond:
            while (self._todo or self._busy) and self._failed is None and not self._closed:
                self._cond.wait()

    def close(self) -> None:
        """Stop the thread (after the batch it is reading); what is left is not read."""
        with self._cond:
            self._closed = True
            self._todo.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._todo and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                batch = self._todo.popleft()
                self._busy = True
            try:
                got = _read_batch(self._out, batch)
            except BaseException as exc:  # told to the sweeper's thread at its next commit
                got = []
                with self._cond:
                    self._failed = exc
            with self._cond:
                self._ready.extend(got)
                self._busy = False
                self._cond.notify_all()


_Got = tuple[str, str | None, str | None]
"""(hash, ident, body) of a text read to be indexed; ident and body None: not there."""


def _read_batch(out: Path, batch: list[tuple[str, str | None]]) -> list[_Got]:
    """Read the texts of ``batch`` under ``out/extract`` (see :class:`_Reader`), each text's
    folder opened once and each text refused as a link or not a regular file."""
    got: list[_Got] = []
    try:
        extract = open_folder(out, "extract")
    except OSError:  # no folder of texts: none is there
        return [(sha, None, None) for sha, _ in batch]
    folders: dict[str, int] = {}
    try:
        for sha, indexed in batch:
            read = _read_text(extract, folders, sha, indexed)
            if read is None:
                got.append((sha, None, None))
            elif read is not _SAME:
                got.append((sha, *read))
    finally:
        for fd in folders.values():
            os.close(fd)
        os.close(extract)
    return got


class TextIndex:
    """The text index as the holder of the store's lock keeps it, on the writer ``db``.

    Attached as ``db.companion``: :meth:`put` hears the records of each :meth:`RecordDB.put`
    and hands their texts to a thread that reads them; :meth:`before_commit` puts what is
    read into the index inside the transaction about to commit, and removes the texts no
    record names any more. A commit waits for the texts still being read, so that the index
    is whole with it (``meta.text_seq`` is its counter), except inside :meth:`lagging`: a
    long sweep's commits as it goes do not wait, the index says it is catching up (its
    ``text_seq`` behind; a reader then reads the texts themselves) until a commit that does.

    Each :meth:`put` also puts in what the thread has read by then, in the transaction in
    flight: a sweep's last commit, which its workers wait on, then has only the texts of its
    last moments to index, not the second's since the commit before (the corpus: the last
    commit's FTS inserts were ~0.3 s with both workers idle).
    """

    def __init__(self, db: RecordDB, store: Store) -> None:
        self.db = db
        self.store = store
        self._reader = _Reader(store.out)
        self._lag = False
        self._handed: set[str] = set()
        """The texts the transaction in flight handed to be read."""
        self._doubtful: set[str] = set()
        """Texts handed whose records may be gone (removed, changed or rolled back while
        they were read): put in only if a record names them when they are."""
        self._offered: dict[str, tuple[str, str]] = {}
        """Texts their workers sent (:meth:`offer`) that no record put has named yet."""
        self._early: list[_Got] = []
        """The texts :meth:`put` indexed in the transaction in flight (read again from here
        if it is rolled back)."""

    # -- the writer's companion ---------------------------------------------------------

    def offer(self, sha256: str, ident: str, body: str) -> None:
        """The text of ``sha256`` as its worker wrote it to the file of identity ``ident``:
        the record about to be put that names it takes it from here, no file read again."""
        self._offered[sha256] = (ident, body)

    def put(self, records: Iterable[Record]) -> None:
        """Hand the texts ``records`` name to the reading thread: all but those of records
        reused (no read wrote their file again) that are indexed already, and those their
        workers sent (:meth:`offer`), which go in as they are."""
        fresh: set[str] = set()
        reused: set[str] = set()
        for r in records:
            if r.sha256 is not None and r.has_text:
                (reused if r.reused else fresh).add(r.sha256)
        if not (fresh or reused) or not has_tables(self.db.con):
            return
        reused -= fresh
        known = self._indexed(list(reused)) if reused else {}
        sent: list[_Got] = []
        batch: list[tuple[str, str | None]] = []
        for sha in fresh:
            offered = self._offered.pop(sha, None)
            if offered is None:
                batch.append((sha, None))
            else:
                sent.append((sha, *offered))
        batch.extend((sha, None) for sha in reused if sha not in known)
        if batch or sent:
            self._handed.update(sha for sha, _ in batch)
            self._handed.update(sha for sha, _ident, _body in sent)
            self._reader.hand(batch, sent)
        got, _more = self._reader.take()
        self._insert(got)
        self._early.extend(got)

    def rollback(self) -> None:
        """The transaction in flight was rolled back: the texts its records handed are
        still read, and put in at a later commit only if some record names them then (those
        :meth:`put` indexed in it too)."""
        self._doubtful |= self._handed
        self._handed = set()
        if self._early:
            self._doubtful.update(sha for sha, _ident, _body in self._early)
            self._reader.hand([], self._early)
            self._early = []

    def before_commit(self, seq: int, replaced: bool) -> None:
        """Inside the transaction about to commit at ``seq``: put in the texts read, remove
        those no record names any more; the index says it agrees with ``seq`` when nothing
        handed is left to read. ``replaced``: every record was replaced (a rebuild), so every
        text not indexed yet is looked for."""
        con = self.db.con
        self._handed = set()
        self._early = []
        self._offered.clear()  # (a text sent whose record was not put: read if ever named)
        if not has_tables(con):
            return
        if not self._lag or replaced:
            self._reader.settle()
        got, more = self._reader.take()
        self._insert(got)
        if replaced:
            self._recheck(None)
            self._index_missing(None)
        gone = self._forget_unnamed()
        if more:  # (a text being read that no record names now is not put in)
            self._doubtful.update(gone)
        else:
            self._doubtful.clear()
            con.execute("INSERT OR REPLACE INTO meta VALUES ('text_seq', ?)", (seq,))

    @contextlib.contextmanager
    def lagging(self) -> Iterator[None]:
        """Commits inside do not wait for the texts still being read (see the class)."""
        self._lag = True
        try:
            yield
        finally:
            self._lag = False

    def close(self) -> None:
        """Stop the reading thread (a text handed and not put in is found at the next
        :meth:`ensure`, the index saying meanwhile that it is catching up)."""
        self._reader.close()

    # -- building -----------------------------------------------------------------------

    def ensure(
        self, progress: Progress | None = None, say: Callable[[str], None] | None = None
    ) -> None:
        """Make the text index whole and in step with the records (committed): built for a
        store that has none (``progress`` hears how far), caught up after records changed
        without it (a rebuild from ``extract.jsonl``, a writer with ``--no-text-index``)."""
        db, con = self.db, self.db.con
        if has_tables(con) and is_ready(con) and not _old_triggers(con):
            return
        if db.con.in_transaction:
            db.commit()
        _mend_triggers(con)
        if has_tables(con) and is_ready(con):
            return
        whole = _present(con) == len(_NAMES)
        building = not whole or self._version() != TEXT_VERSION
        if building and has_tables(con) and (self._version() is not None or not whole):
            remove(db)  # another version's tables, or some of ours gone (a hand, a tool)
        if not has_tables(con):
            con.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}{_TRIGGERS}COMMIT;")
        elif not building:  # records changed without us: a text may have been written again
            con.execute("BEGIN IMMEDIATE")
            self._recheck(self._agreed())
            con.execute("COMMIT")
        self._index_missing(progress, say if building else None)
        con.execute("BEGIN IMMEDIATE")
        self._forget_unnamed()
        (seq,) = con.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        con.execute("INSERT OR REPLACE INTO meta VALUES ('text_seq', ?)", (seq,))
        con.execute("INSERT OR REPLACE INTO meta VALUES ('text_version', ?)", (TEXT_VERSION,))
        con.execute("COMMIT")
        if building and say is not None:
            (n,) = con.execute("SELECT count(*) FROM text_rows").fetchone()
            if n:
                say(f"{count(n, 'text')} indexed for search")

    def _agreed(self) -> int | None:
        """The change counter the text index last agreed with (None: not known)."""
        row = self.db.con.execute("SELECT value FROM meta WHERE key = 'text_seq'").fetchone()
        return row[0] if row is not None and isinstance(row[0], int) else None

    def _version(self) -> object:
        row = self.db.con.execute("SELECT value FROM meta WHERE key = 'text_version'").fetchone()
        return row[0] if row is not None else None

    def _index_missing(
        self, progress: Progress | None, say: Callable[[str], None] | None = None
    ) -> None:
        """Index every text an ``ok`` record names that is not indexed yet (``say`` hears
        that a build starts, when there is any), read and put in a few hundred at a time.
        Outside a transaction (a build) it commits every second as it goes."""
        con = self.db.con
        missing = [
            sha
            for (sha,) in con.execute(
                "SELECT DISTINCT sha256 FROM records WHERE status = 'ok' AND sha256 IS NOT NULL"
                " AND sha256 NOT IN (SELECT sha256 FROM text_rows)"
            )
        ]
        if missing and say is not None:
            say(
                f"indexing {count(len(missing), 'text')} for search"
                " (once; --no-text-index goes without)"
            )
        own = not con.in_transaction
        started = time.monotonic()
        absent = 0
        for at in range(0, len(missing), _BUILD_BATCH):
            chunk = missing[at : at + _BUILD_BATCH]
            if own and not con.in_transaction:
                con.execute("BEGIN IMMEDIATE")
            got = _read_batch(self.store.out, [(sha, None) for sha in chunk])
            absent += sum(1 for _sha, ident, _body in got if ident is None)
            self._insert(got)
            if own and time.monotonic() - started >= _COMMIT_EVERY_S:
                con.execute("COMMIT")
                started = time.monotonic()
            if progress is not None:
                progress(at + len(chunk), len(missing))
        if own and con.in_transaction:
            con.execute("COMMIT")
        if absent and say is not None:  # (not taken for texts with no match)
            say(
                f"warning: {count(absent, 'text')} the records name "
                f"{'is' if absent == 1 else 'are'} not in the store: not indexed for search"
                " (the next sweep reads their files again)"
            )

    def _recheck(self, since: int | None) -> None:
        """Index again each indexed text whose file is not the one indexed (one open each):
        after records changed without this index, a text may have been written anew. Only
        the texts of records written after counter ``since`` when given (what the index last
        agreed with); else every one."""
        con = self.db.con
        sql = "SELECT sha256, ident FROM text_rows"
        if since is None:
            rows = con.execute(sql).fetchall()
        else:
            rows = con.execute(
                sql + " WHERE sha256 IN (SELECT sha256 FROM records INDEXED BY by_seq"
                " WHERE seq > ? AND status = 'ok')",
                (since,),
            ).fetchall()
        for at in range(0, len(rows), _BUILD_BATCH):
            self._insert(_read_batch(self.store.out, rows[at : at + _BUILD_BATCH]))

    # -- the texts of a transaction -------------------------------------------------------

    def _indexed(self, hashes: list[str]) -> dict[str, tuple[int, str]]:
        """hash -> (row, ident) of those of ``hashes`` indexed, a few hundred to a query."""
        known: dict[str, tuple[int, str]] = {}
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.db.con.execute(
                f"SELECT sha256, id, ident FROM text_rows WHERE sha256 IN ({marks})", chunk
            )
            known.update((sha, (rid, ident)) for sha, rid, ident in rows)
        return known

    def _named(self, hashes: list[str]) -> set[str]:
        """Those of ``hashes`` an ``ok`` record names (in the transaction in flight)."""
        named: set[str] = set()
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            named.update(
                sha
                for (sha,) in self.db.con.execute(
                    f"SELECT DISTINCT sha256 FROM records WHERE status = 'ok'"
                    f" AND sha256 IN ({marks})",
                    chunk,
                )
            )
        return named

    def _insert(self, got: list[_Got]) -> None:
        """Put the texts read into the index, each in place of the row its hash had: those
        some ``ok`` record names now (a record may have gone, or been rolled back, while its
        text was read), a few statements for the lot. A text not there leaves the index."""
        if not got:
            return
        con = self.db.con
        latest = {sha: (ident, body) for sha, ident, body in got}  # (read later: newer)
        hashes = list(latest)
        for i in range(0, len(hashes), 500):  # the rows they had, in a statement or two
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            con.execute(
                "DELETE FROM text_fts WHERE rowid IN"
                f" (SELECT id FROM text_rows WHERE sha256 IN ({marks}))",
                chunk,
            )
            con.execute(f"DELETE FROM text_rows WHERE sha256 IN ({marks})", chunk)
        doubtful = self._doubtful.intersection(latest)
        named = self._named(list(doubtful)) if doubtful else set()
        rows = [
            (sha, ident, body)
            for sha, (ident, body) in latest.items()
            if ident is not None and body is not None and (sha not in doubtful or sha in named)
        ]
        if not rows:
            return
        (top,) = con.execute("SELECT coalesce(max(id), 0) FROM text_rows").fetchone()
        con.executemany(
            "INSERT INTO text_rows (id, sha256, ident) VALUES (?, ?, ?)",
            [(top + n, sha, ident) for n, (sha, ident, _) in enumerate(rows, 1)],
        )
        con.executemany(
            "INSERT INTO text_fts (rowid, body) VALUES (?, ?)",
            [(top + n, body) for n, (_, _, body) in enumerate(rows, 1)],
        )

    def _forget_unnamed(self) -> list[str]:
        """Remove the texts the transaction's removals and changes left unnamed (those
        hashes)."""
        con = self.db.con
        gone = [
            (sha,)
            for (sha,) in con.execute(
                "SELECT u.sha256 FROM text_unnamed u WHERE NOT EXISTS"
                " (SELECT 1 FROM records r WHERE r.sha256 = u.sha256 AND r.status = 'ok')"
            )
        ]
        if gone:
            con.executemany(
                "DELETE FROM text_fts WHERE rowid = (SELECT id FROM text_rows WHERE sha256 = ?)",
                gone,
            )
            con.executemany("DELETE FROM text_rows WHERE sha256 = ?", gone)
        con.execute("DELETE FROM text_unnamed")
        return [sha for (sha,) in gone]
