"""The records a file had before: kept in the store's index, so a store can be compared with
itself as it was (``quarry diff STORE --since TIME``).

Whenever a sweep, a watch batch or a retry changes what a file's record says (its status,
reason, quality verdict, content hash, extractor or characters; not the read's ``reused``,
``why`` or ``ms``), removes it, or adds a file after the first sweep, a row of ``history``
keeps the record it had (its ``extract.jsonl`` line; none for a file that was not there) with
the time it stopped being current. Triggers on ``records`` write it, so it is in the very
transaction of the change: a killed writer leaves both or neither. A rebuild of the index from
``extract.jsonl`` (:meth:`engine.db.RecordDB.replace_all`) sets them aside: it changes nothing.

Bounded two ways, both settable: the last :data:`VERSIONS` rows a file (``QUARRY_HISTORY_
VERSIONS``) and :data:`DAYS` days (``QUARRY_HISTORY_DAYS``), read when a writer opens the
index. What is pruned moves ``meta.history_floor``, the earliest time the store can still be
told as it was: every file's rows after it are whole (a trigger's own conflict clause would
give way to the upsert's, so the floor is only ever updated, never replaced). The texts the
kept records name are kept by the store's garbage collection (:func:`kept_texts`) while the
rows are.

A text is filed under its file's content hash, so reading the same bytes again to another text
(a reader's upgrade, OCR switched on, a retry with a password) replaces it in place. Before it
is replaced, the sweep keeps the old text aside (:meth:`engine.store.Store.keep_text`, under the
text's own hash) and names it in the ``text`` column of the rows whose record had it
(:func:`set_aside`, :func:`name_new`): a kept record then reads that text (:func:`texts_at`),
and the texts named so are kept while their rows are (:func:`aside_texts`).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from datetime import datetime

VERSIONS = 5
"""Rows kept a file by default: its last five records before the current one."""
DAYS = 30.0
"""Days a kept record stays by default."""
VERSIONS_ENV = "QUARRY_HISTORY_VERSIONS"
DAYS_ENV = "QUARRY_HISTORY_DAYS"

_NOW = "((julianday('now') - 2440587.5) * 86400.0)"
"""Seconds since the epoch, in SQL (to the millisecond)."""
_CHANGED = (
    "old.status IS NOT new.status OR old.reason IS NOT new.reason OR old.quality IS NOT"
    " new.quality OR old.sha256 IS NOT new.sha256 OR old.extractor IS NOT new.extractor OR"
    " old.chars IS NOT new.chars"
)
_KEEP = "INSERT INTO history (root, path, at, sha256, line) VALUES"
_NTH = (
    "(SELECT {col} FROM history WHERE root = new.root AND path = new.path ORDER BY id DESC"
    " LIMIT 1 OFFSET (SELECT value FROM meta WHERE key = 'history_versions'))"
)
_TABLE = """
CREATE TABLE IF NOT EXISTS history (id INTEGER PRIMARY KEY, root BLOB NOT NULL,
    path BLOB NOT NULL, at REAL NOT NULL, sha256 TEXT, line BLOB, text TEXT);
CREATE INDEX IF NOT EXISTS history_by_key ON history (root, path, id);
CREATE INDEX IF NOT EXISTS history_by_at ON history (at);
CREATE INDEX IF NOT EXISTS history_by_sha ON history (sha256);
CREATE TABLE IF NOT EXISTS sweeps (id INTEGER PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS freed (sha256 TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS history_freed AFTER DELETE ON history
  WHEN old.sha256 IS NOT NULL BEGIN
  INSERT OR IGNORE INTO freed VALUES (old.sha256);
END;
CREATE TRIGGER IF NOT EXISTS history_bound AFTER INSERT ON history BEGIN
  UPDATE meta SET value = max(value, {nth_at}) WHERE key = 'history_floor'
    AND {nth_at} IS NOT NULL;
  DELETE FROM history WHERE root = new.root AND path = new.path AND id <= coalesce({nth_id}, -1);
END;
""".format(nth_at=_NTH.format(col="at"), nth_id=_NTH.format(col="id"))
_TRIGGERS = f"""
CREATE TRIGGER IF NOT EXISTS history_change AFTER UPDATE ON records WHEN {_CHANGED} BEGIN
  {_KEEP} (old.root, old.path, {_NOW}, CASE WHEN old.status = 'ok' THEN old.sha256 END,
    old.line);
END;
CREATE TRIGGER IF NOT EXISTS history_gone AFTER DELETE ON records BEGIN
  {_KEEP} (old.root, old.path, {_NOW}, CASE WHEN old.status = 'ok' THEN old.sha256 END,
    old.line);
END;
CREATE TRIGGER IF NOT EXISTS history_new AFTER INSERT ON records
  WHEN (SELECT value FROM meta WHERE key = 'history_floor') IS NOT NULL BEGIN
  {_KEEP} (new.root, new.path, {_NOW}, NULL, NULL);
END;
"""
Row = tuple[bytes, bytes, bytes]
"""(root, path, line) of a record in the index."""
_TRIGGER_NAMES = ("history_change", "history_gone", "history_new")


class NoHistory(Exception):
    """The index keeps no history that reaches back to the time asked for (or none at all)."""


def bounds() -> tuple[int, float]:
    """(versions a file, days) from the environment, else the defaults; a value that is no
    number, or a negative one, takes its default. 0 versions keeps no history."""
    versions, days = VERSIONS, DAYS
    with contextlib.suppress(ValueError):
        asked_versions = int(os.environ.get(VERSIONS_ENV, VERSIONS))
        versions = asked_versions if asked_versions >= 0 else VERSIONS
    with contextlib.suppress(ValueError):
        asked = float(os.environ.get(DAYS_ENV, DAYS))
        days = asked if math.isfinite(asked) and asked >= 0 else DAYS
    return versions, days


def install(con: sqlite3.Connection) -> None:
    """Make the history's table and triggers if missing (an index of this version written
    before them gains them), and set its bounds (one transaction, at a writer's open)."""
    versions, days = bounds()
    con.executescript(f"BEGIN IMMEDIATE;{_TABLE}{_TRIGGERS}COMMIT;")
    if not _has_text_column(con):  # (a history kept before texts were set aside)
        con.execute("ALTER TABLE history ADD COLUMN text TEXT")
    con.executemany(  # (each its own commit: the connection is in autocommit mode)
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [("history_versions", versions), ("history_seconds", days * 86400.0)],
    )


def pause(con: sqlite3.Connection) -> None:
    """Set the triggers aside in the transaction in flight (a rebuild changes no record)."""
    for name in _TRIGGER_NAMES:
        con.execute(f"DROP TRIGGER IF EXISTS {name}")


def resume(con: sqlite3.Connection) -> None:
    """Put the triggers back (in the transaction in flight)."""
    for ddl in _TRIGGERS.split("END;"):
        if ddl.strip():
            con.execute(ddl + "END;")


def start(con: sqlite3.Connection, *, sweep: bool = False) -> None:
    """A run finished (in the transaction in flight): the history starts here if it had
    not (the files a first sweep adds are no news; from now on a new file is kept as one).
    ``sweep``: a whole sweep of the roots, listed by :func:`sweeps` (``--since -1``)."""
    if not _has_table(con):
        return
    now = time.time()
    if _meta(con, "history_floor") is None:
        con.execute("INSERT INTO meta VALUES ('history_floor', ?)", (now,))
    if sweep and _has_sweeps(con):
        con.execute("INSERT INTO sweeps (at) VALUES (?)", (now,))
        con.execute(
            "DELETE FROM sweeps WHERE at < (SELECT value FROM meta WHERE key = 'history_floor')"
        )  # (one the history no longer reaches)


def sweeps(con: sqlite3.Connection) -> list[tuple[int, float]]:
    """(number, when it finished) of the whole sweeps the history reaches back to, oldest
    first: ``--since`` names one as it left the store."""
    start = floor(con)
    if start is None or not _has_sweeps(con):
        return []
    q = "SELECT id, at FROM sweeps WHERE at >= ? ORDER BY id"
    return [(int(i), float(at)) for i, at in con.execute(q, (start,))]


_SWEEP = re.compile(r"(?:last|-(\d+)|#?(\d+))")


def sweep_time(text: str, known: list[tuple[int, float]]) -> float | None:
    """When the sweep ``text`` names finished: ``last`` (``-1``), ``-2`` the one before...,
    ``#N`` (or ``N``) the sweep numbered N among ``known`` (:func:`sweeps`). None when
    ``text`` names no sweep (a time, perhaps); ValueError, listing the sweeps, when it names
    one that is not there."""
    m = _SWEEP.fullmatch(text.strip().lower())
    if m is None:
        return None
    back, number = m.group(1), m.group(2)
    if number is not None:
        found = [at for i, at in known if i == int(number)]
    else:
        n = int(back) if back is not None else 1
        found = [known[-n][1]] if 0 < n <= len(known) else []
    if not found:
        raise ValueError(
            f"--since {text.strip()!r} names no sweep this store keeps: {listed(known)}"
        )
    return found[0]


def listed(known: list[tuple[int, float]], most: int = 5) -> str:
    """The sweeps as a user names them (the last ``most``), for a message."""
    if not known:
        return "it lists none yet (a whole sweep that changes its index is listed)"
    n = len(known)
    shown = [f"#{i} (-{n - k}) {iso(at)}" for k, (i, at) in enumerate(known)][-most:]
    more = f"{n - most} earlier, " if n > most else ""
    return f"{more}{'; '.join(shown)} (give last, -N, #N or a time)"


def prune(con: sqlite3.Connection) -> None:
    """Before a writer's commit: drop the rows older than the time bound (moving the floor)."""
    if not _has_table(con):
        return
    row = con.execute("SELECT value FROM meta WHERE key = 'history_seconds'").fetchone()
    limit = time.time() - float(row[0]) if row and row[0] is not None else None
    if limit is not None:
        (old,) = con.execute("SELECT max(at) FROM history WHERE at < ?", (limit,)).fetchone()
        if old is not None:
            con.execute("DELETE FROM history WHERE at < ?", (limit,))
            con.execute("UPDATE meta SET value = max(value, ?) WHERE key = 'history_floor'", (old,))


def kept_texts(con: sqlite3.Connection) -> set[str]:
    """The content hashes whose stored texts kept records read (they must stay in the store;
    a record whose text was set aside reads that one instead)."""
    if not _has_table(con):
        return set()
    q = "SELECT DISTINCT sha256 FROM history" + (
        " WHERE text IS NULL" if _has_text_column(con) else ""
    )
    return {sha for (sha,) in con.execute(q) if sha is not None}


def is_kept(con: sqlite3.Connection, sha256: str) -> bool:
    """Whether a kept record reads the stored text of ``sha256``."""
    if not _has_table(con):
        return False
    q = "SELECT 1 FROM history WHERE sha256 = ?" + (
        " AND text IS NULL" if _has_text_column(con) else ""
    )
    return con.execute(q + " LIMIT 1", (sha256,)).fetchone() is not None


def freed_texts(con: sqlite3.Connection) -> set[str]:
    """The texts that kept records named when they were pruned (the ``history_freed``
    trigger lists them): a sweep that drops only the texts its own changes left unnamed
    asks of these too, or they would stay in the store until one lists every text."""
    if not _has_table(con, "freed"):
        return set()
    return {sha for (sha,) in con.execute("SELECT sha256 FROM freed")}


def forget_freed(con: sqlite3.Connection, shas: Iterable[str] | None = None) -> None:
    """Those of :func:`freed_texts` that were asked of (None: every one, after a garbage
    collection of the whole store)."""
    if not _has_table(con, "freed"):
        return
    if shas is None:
        con.execute("DELETE FROM freed")
    else:
        con.executemany("DELETE FROM freed WHERE sha256 = ?", [(sha,) for sha in shas])


def aside_texts(con: sqlite3.Connection) -> set[str]:
    """The hashes of the texts set aside that kept records name (the others may go)."""
    if not _has_table(con) or not _has_text_column(con):
        return set()
    q = "SELECT DISTINCT text FROM history WHERE text IS NOT NULL"
    return {text for (text,) in con.execute(q)}


def set_aside(con: sqlite3.Connection, sha256: str, text: str) -> None:
    """(In the transaction in flight.) The stored text of ``sha256`` is being replaced by
    another; the old one is kept aside as ``text``: the kept records that read it read that."""
    if _has_table(con) and _has_text_column(con):
        q = "UPDATE history SET text = ? WHERE sha256 = ? AND text IS NULL"
        con.execute(q, (text, sha256))


def last_row(con: sqlite3.Connection) -> int:
    """The id of the newest kept record (0: none): :func:`name_new` names those after it."""
    if not _has_table(con):
        return 0
    (last,) = con.execute("SELECT max(id) FROM history").fetchone()
    return int(last or 0)


def name_new(con: sqlite3.Connection, after: int, aside: dict[str, str]) -> None:
    """(In the transaction in flight.) The records kept after row ``after`` whose text was set
    aside in this run (``aside``: content hash -> the old text's hash) read it from there:
    they were current before their text was replaced."""
    if not aside or not _has_table(con) or not _has_text_column(con):
        return
    rows = con.execute(
        "SELECT id, sha256 FROM history WHERE id > ? AND text IS NULL AND sha256 IS NOT NULL",
        (after,),
    ).fetchall()
    named = [(aside[sha], i) for i, sha in rows if sha in aside]
    con.executemany("UPDATE history SET text = ? WHERE id = ?", named)


def floor(con: sqlite3.Connection) -> float | None:
    """The earliest time the store can be told as it was (None: no history kept yet)."""
    value = _meta(con, "history_floor") if _has_table(con) else None
    return float(value) if isinstance(value, (int, float)) else None


def lines_at(con: sqlite3.Connection, when: float) -> Iterator[bytes]:
    """The store's records as they were at ``when`` (seconds since the epoch), as
    ``extract.jsonl`` lines in key order: each file's first record kept after ``when`` (a file
    added since: none), else its current one. NoHistory (at once, not when first read) when
    the history does not reach back so far. Read it with :func:`lines_now` in one read
    transaction of ``con``: both are then of one snapshot."""
    start = floor(con)
    if start is None:
        raise NoHistory("its index keeps no history yet (it starts once a sweep has finished)")
    if when < start:
        raise NoHistory(f"the history it keeps starts at {iso(start)}")
    past = con.execute(
        "SELECT h.root, h.path, h.line FROM history h JOIN (SELECT min(id) AS id FROM history"
        " WHERE at > ? GROUP BY root, path) f ON h.id = f.id ORDER BY h.root, h.path",
        (when,),
    ).fetchall()  # (the files changed since: few beside the store)
    return _merged(past, con.execute("SELECT root, path, line FROM records ORDER BY root, path"))


def texts_at(con: sqlite3.Connection, when: float) -> dict[str, str]:
    """The texts set aside that the records of :func:`lines_at` read: content hash -> the
    kept text's hash (the others read the store's text of their content hash)."""
    if not _has_text_column(con):
        return {}
    rows = con.execute(
        "SELECT h.sha256, h.text FROM history h JOIN (SELECT min(id) AS id FROM history"
        " WHERE at > ? GROUP BY root, path) f ON h.id = f.id WHERE h.text IS NOT NULL",
        (when,),
    )
    return dict(rows.fetchall())


def lines_now(con: sqlite3.Connection) -> Iterator[bytes]:
    """The store's records now, as lines in key order (the index's byte order of the keys is
    Python's order of the names)."""
    for (line,) in con.execute("SELECT line FROM records ORDER BY root, path"):
        yield bytes(line)


def _merged(past: list[tuple[bytes, bytes, bytes | None]], now: Iterable[Row]) -> Iterator[bytes]:
    """``now``'s lines with ``past``'s in place of theirs (None: the file was not there)."""
    i = 0
    for root, path, line in now:
        while i < len(past) and (past[i][0], past[i][1]) < (root, path):
            yield from _line(past[i][2])  # a file removed since
            i += 1
        if i < len(past) and (past[i][0], past[i][1]) == (root, path):
            yield from _line(past[i][2])
            i += 1
        else:
            yield bytes(line)
    for _root, _path, old in past[i:]:
        yield from _line(old)


def _line(line: bytes | None) -> Iterator[bytes]:
    if line is not None:
        yield bytes(line)


_AGO = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: float | None = None) -> float:
    """``--since``'s time: a duration ago (``90s``, ``30m``, ``1h``, ``2d``, ``1w``) or an ISO
    8601 time (``2026-12-01T10:00``, local time unless it says its zone). ValueError if
    neither."""
    now = time.time() if now is None else now
    ago = _AGO.fullmatch(text.strip().lower())
    if ago:
        return now - float(ago.group(1)) * _UNIT[ago.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise ValueError(
            f"--since {text!r} is no time: give one ago (30m, 1h, 2d, 1w) or an ISO time "
            "(2026-12-01T10:00)"
        ) from None


def iso(seconds: float) -> str:
    """A time as people read it, in local time to the second."""
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec="seconds")


def _has_table(con: sqlite3.Connection, name: str = "history") -> bool:
    q = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    return con.execute(q, (name,)).fetchone() is not None


def _has_sweeps(con: sqlite3.Connection) -> bool:
    q = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sweeps'"
    return con.execute(q).fetchone() is not None


def _has_text_column(con: sqlite3.Connection) -> bool:
    return any(row[1] == "text" for row in con.execute("PRAGMA table_info(history)"))


def _meta(con: sqlite3.Connection, key: str) -> object:
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row is not None else None


__all__ = [
    "DAYS",
    "DAYS_ENV",
    "VERSIONS",
    "VERSIONS_ENV",
    "NoHistory",
    "aside_texts",
    "bounds",
    "floor",
    "install",
    "is_kept",
    "iso",
    "kept_texts",
    "last_row",
    "lines_at",
    "lines_now",
    "listed",
    "name_new",
    "parse_since",
    "pause",
    "prune",
    "resume",
    "set_aside",
    "start",
    "sweep_time",
    "sweeps",
    "texts_at",
]
