"""Full-text search over the store's texts: an FTS5 trigram index inside ``extract.db``.

One row per content hash (a text shared by many files is indexed once): ``text_rows`` maps a
hash to the FTS row holding its text, with the identity (inode, size, mtime) of the text file
that was indexed, so a text written again under the same hash (a reader's new version, a
repair) is indexed again and an unchanged one is not. The FTS table keeps its own copy of each
text (a contentless table cannot forget a row without being given the very text it indexed,
which the store has replaced by then); readers get the text and the records that name it in
one snapshot.

Kept current by the records' own transactions (:class:`TextIndex` is the writer's
:attr:`engine.db.RecordDB.companion`): the texts of the records a transaction puts are
indexed before it commits, and triggers on ``records`` note every text a removed or changed
record stopped naming; at the commit each such text that no ``ok`` record names any more
leaves the index. So the index follows the records exactly (a watch batch included), even
while the text file itself waits for the store's garbage collection.

The trigram tokenizer finds any substring of three characters or more, in any script (CJK
has no spaces to split words at), case-insensitively: exact matching is the caller's
(:mod:`engine.textsearch`). ``meta.text_version`` says the index was built whole; ``meta.
text_seq`` the change counter it agrees with: a reader trusts it only when both hold.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from engine.records import Record
from engine.store import open_folder, open_regular

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
CREATE INDEX text_by_sha ON records (sha256) WHERE status = 'ok';
CREATE TRIGGER text_out AFTER DELETE ON records
  WHEN old.status = 'ok' AND old.sha256 IS NOT NULL BEGIN
  INSERT OR IGNORE INTO text_unnamed VALUES (old.sha256);
END;
CREATE TRIGGER text_change AFTER UPDATE OF status, sha256 ON records
  WHEN old.status = 'ok' AND old.sha256 IS NOT NULL
   AND (new.status IS NOT 'ok' OR new.sha256 IS NOT old.sha256) BEGIN
  INSERT OR IGNORE INTO text_unnamed VALUES (old.sha256);
END;
"""
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


_NAMES = ("text_rows", "text_fts", "text_unnamed", "text_by_sha", "text_out", "text_change")
"""The text index's tables, index and triggers, as ``sqlite_master`` names them."""


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


def remove(db: RecordDB) -> bool:
    """Drop the text index from ``db`` (one transaction); whether there was one."""
    if not has_tables(db.con):
        return False
    db.con.executescript(f"BEGIN IMMEDIATE;{_DROP}COMMIT;")
    return True


def _ident(st: os.stat_result) -> str:
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


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
        fd = open_regular(folder, f"{sha}.txt")
    except (OSError, ValueError):
        return None
    try:  # plain reads of the descriptor: no file object a text (most are small)
        st = os.fstat(fd)
        ident = _ident(st)
        if ident == indexed:
            return _SAME
        parts = []
        while chunk := os.read(fd, max(st.st_size, 1 << 16)):
            parts.append(chunk)
        return ident, b"".join(parts).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


class TextIndex:
    """The text index as the holder of the store's lock keeps it, on the writer ``db``.

    Attached as ``db.companion``: :meth:`put` hears the records of each :meth:`RecordDB.put`,
    :meth:`before_commit` brings the texts in line with them inside the same transaction.
    """

    def __init__(self, db: RecordDB, store: Store) -> None:
        self.db = db
        self.store = store
        self._pending: dict[str, Record] = {}
        """Texts named by records put in the transaction in flight, by hash."""

    # -- the writer's companion ---------------------------------------------------------

    def put(self, records: Iterable[Record]) -> None:
        """Note the texts ``records`` name: indexed before the transaction commits."""
        pending = self._pending
        for r in records:
            if r.has_text and r.sha256 is not None:
                pending[r.sha256] = r

    def rollback(self) -> None:
        """The transaction in flight was rolled back: its records' texts are not indexed."""
        self._pending = {}

    def before_commit(self, seq: int, replaced: bool) -> None:
        """Inside the transaction about to commit at ``seq``: index the texts put, remove
        those no record names any more; ``replaced``: every record was replaced (a rebuild),
        so every text not indexed yet is looked for."""
        con = self.db.con
        if not has_tables(con):
            self._pending = {}
            return
        pending, self._pending = self._pending, {}
        if replaced:
            self._recheck()
            self._index_missing(None)
        self._index_pending({sha: record.reused for sha, record in pending.items()})
        self._forget_unnamed()
        con.execute("INSERT OR REPLACE INTO meta VALUES ('text_seq', ?)", (seq,))

    # -- building -----------------------------------------------------------------------

    def ensure(
        self, progress: Progress | None = None, say: Callable[[str], None] | None = None
    ) -> None:
        """Make the text index whole and in step with the records (committed): built for a
        store that has none (``progress`` hears how far), caught up after records changed
        without it (a rebuild from ``extract.jsonl``, a writer with ``--no-text-index``)."""
        db, con = self.db, self.db.con
        if has_tables(con) and is_ready(con):
            return
        if db.con.in_transaction:
            db.commit()
        whole = _present(con) == len(_NAMES)
        building = not whole or self._version() != TEXT_VERSION
        if building and has_tables(con) and (self._version() is not None or not whole):
            remove(db)  # another version's tables, or some of ours gone (a hand, a tool)
        if not has_tables(con):
            con.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
        elif not building:  # records changed without us: a text may have been written again
            con.execute("BEGIN IMMEDIATE")
            self._recheck()
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
                say(f"{n:,} text(s) indexed for search")

    def _version(self) -> object:
        row = self.db.con.execute("SELECT value FROM meta WHERE key = 'text_version'").fetchone()
        return row[0] if row is not None else None

    def _index_missing(
        self, progress: Progress | None, say: Callable[[str], None] | None = None
    ) -> None:
        """Index every text an ``ok`` record names that is not indexed yet (``say`` hears
        that a build starts, when there is any). Outside a transaction (a build) it commits
        every second as it goes."""
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
                f"indexing {len(missing):,} text(s) for search (once; --no-text-index goes without)"
            )
        own = not con.in_transaction
        started = time.monotonic()
        for done, sha in enumerate(missing, 1):
            if own and not con.in_transaction:
                con.execute("BEGIN IMMEDIATE")
            self._index(sha, skip_known=False)
            if own and time.monotonic() - started >= _COMMIT_EVERY_S:
                con.execute("COMMIT")
                started = time.monotonic()
            if progress is not None and (done % 256 == 0 or done == len(missing)):
                progress(done, len(missing))
        if own and con.in_transaction:
            con.execute("COMMIT")

    def _recheck(self) -> None:
        """Index again every indexed text whose file is not the one indexed (one stat each):
        after records changed without this index, a text may have been written anew."""
        con = self.db.con
        for sha, ident in con.execute("SELECT sha256, ident FROM text_rows").fetchall():
            try:
                now = _ident(os.stat(self.store.text_path(sha), follow_symlinks=False))
            except (OSError, ValueError):
                now = None
            if now != ident:
                self._index(sha, skip_known=False)

    # -- the texts of a transaction -------------------------------------------------------

    def _index_pending(self, pending: dict[str, bool]) -> None:
        """What :meth:`_index` does for each text of ``pending`` (hash -> ``skip_known``),
        for a transaction's many at once: the rows indexed already in one query a few hundred
        hashes, and each text opened in its folder under ``extract`` held open for the batch
        (each still refused as a link or not a regular file): a cold sweep of 20,000 small
        files spent 2.6 s of its sweeper's thread here, a text at a time, handing out no reads
        meanwhile."""
        if not pending:
            return
        con = self.db.con
        known: dict[str, tuple[int, str]] = {}
        hashes = list(pending)
        for i in range(0, len(hashes), 500):
            chunk = hashes[i : i + 500]
            marks = ",".join("?" * len(chunk))
            rows = con.execute(
                f"SELECT sha256, id, ident FROM text_rows WHERE sha256 IN ({marks})", chunk
            )
            known.update((sha, (rid, ident)) for sha, rid, ident in rows)
        try:
            extract = open_folder(self.store.out, "extract")
        except OSError:  # no folder of texts to hold open: a text at a time says why
            for sha, skip in pending.items():
                self._index(sha, skip_known=skip)
            return
        folders: dict[str, int] = {}
        try:
            for sha, skip in pending.items():
                row = known.get(sha)
                if row is not None and skip:
                    continue
                got = _read_text(extract, folders, sha, row[1] if row is not None else None)
                if got is _SAME:
                    continue
                self._replace(sha, row[0] if row is not None else None, got)
        finally:
            for fd in folders.values():
                os.close(fd)
            os.close(extract)

    def _replace(self, sha: str, old: int | None, got: tuple[str, str] | None) -> None:
        """Put (ident, body) ``got`` in the index for ``sha`` in place of row ``old``."""
        con = self.db.con
        if old is not None:
            con.execute("DELETE FROM text_fts WHERE rowid = ?", (old,))
            con.execute("DELETE FROM text_rows WHERE id = ?", (old,))
        if got is None:
            return
        ident, body = got
        cur = con.execute("INSERT INTO text_rows (sha256, ident) VALUES (?, ?)", (sha, ident))
        con.execute("INSERT INTO text_fts (rowid, body) VALUES (?, ?)", (cur.lastrowid, body))

    # -- one text -----------------------------------------------------------------------

    def _index(self, sha: str, *, skip_known: bool) -> None:
        """(Re)index the text of ``sha`` unless the one indexed is that very file.
        ``skip_known``: a text already indexed is taken as current (its record was reused,
        so no read wrote its file again)."""
        con = self.db.con
        row = con.execute("SELECT id, ident FROM text_rows WHERE sha256 = ?", (sha,)).fetchone()
        if row is not None and skip_known:
            return
        try:
            with self.store.open_text(sha) as fh:
                ident = _ident(os.fstat(fh.fileno()))
                if row is not None and row[1] == ident:
                    return
                body = fh.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            body = None  # not there (a repair reads its file again and puts it back)
        if row is not None:
            con.execute("DELETE FROM text_fts WHERE rowid = ?", (row[0],))
            con.execute("DELETE FROM text_rows WHERE id = ?", (row[0],))
        if body is None:
            return
        cur = con.execute("INSERT INTO text_rows (sha256, ident) VALUES (?, ?)", (sha, ident))
        con.execute("INSERT INTO text_fts (rowid, body) VALUES (?, ?)", (cur.lastrowid, body))

    def _forget_unnamed(self) -> None:
        """Remove the texts the transaction's removals and changes left unnamed."""
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
