"""``quarry grep``: where a pattern occurs in the store's texts, as ``grep -r`` would say it.

One line per match, ``path:page:line: snippet`` (the name through
:func:`engine.names.shown`, relative to the current folder when under it; the matches of a
line that one snippet shows whole are one line), or one JSON object per match with
``--json``. The texts come from the full-text index (:mod:`engine.textindex`) when it is
whole and in step with the records, built first when there is none and the store's lock is
free (progress on stderr); else, and with ``--no-text-index``, every text is read from the
store. A text shared by several files is reported for each of them. Exit codes as grep's: 0
a match, 1 none, 2 trouble (no store, a bad pattern), in one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from engine.chunks import store_chunks
from engine.db import DB, IndexUnusable, RecordDB, identity_of, open_agreeing
from engine.errors import QuarryError, StoreLocked, StoreUnusable, UsageError
from engine.moved import moved_roots
from engine.names import escaped, name_b64, shown
from engine.records import Key
from engine.store import Store
from engine.textindex import has_tables, is_ready
from engine.textsearch import Match, Query, candidates, matches, matching_rows, named_by, parse
from engine.words import count

EXIT_FOUND, EXIT_NONE, EXIT_TROUBLE = 0, 1, 2


def cmd_grep(args: argparse.Namespace) -> int:
    """The ``grep`` verb: every match of the pattern in the store's texts."""
    found = False
    try:
        query = parse(args.pattern, regex=args.regex, ignore_case=args.ignore_case)
        store, under = _store_of(args)
        write = _json_line if args.json else _TextLines()
        use = not args.no_text_index
        # A copied or moved folder not yet swept there: its records are still keyed by the
        # folder it was copied from, its files are here.
        moved = moved_roots(store)
        under = _as_recorded(under, moved)
        for key, sha, match in search(store, query, index=use, build=use, under=under):
            found = True
            write((moved.get(key[0], key[0]), key[1]), sha, match)
    except BrokenPipeError:  # the reader went (``| head``): its choice, nothing more to say
        with contextlib.suppress(OSError, ValueError):  # (what is buffered goes nowhere)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return EXIT_FOUND if found else EXIT_NONE
    except QuarryError as exc:
        return _trouble(str(exc))
    except sqlite3.Error as exc:
        return _trouble(f"the store's index could not be read ({exc})")
    except OSError as exc:
        where = f": {exc.filename}" if isinstance(exc.filename, str) else ""
        return _trouble(f"{exc.strerror or exc}{where}")
    sys.stdout.flush()
    return EXIT_FOUND if found else EXIT_NONE


def search(
    store: Store,
    query: Query,
    *,
    index: bool = True,
    build: bool = True,
    under: str | None = None,
) -> Iterator[tuple[Key, str, Match]]:
    """Every match of ``query``: (record key, text hash, match), in key order then text order.
    ``index``: use the text index where it can answer (else every text is read); ``build``:
    make it first if it is missing; ``under``: only the files under this absolute path."""
    db = _ready_index(store, build) if index else None
    found: dict[int, list[Match]] = {}
    keys: list[tuple[Key, str, int]] = []
    usable = db is not None
    if db is not None:
        try:
            for rowid, body in candidates(db.con, query):
                hits = list(matches(body, query))
                if hits:
                    found[rowid] = hits
            keys = [((_name(r), _name(p)), sha, i) for r, p, sha, i in named_by(db.con, found)]
        except sqlite3.Error as exc:  # damaged under us: the texts still answer
            _say(f"the text index could not be read ({exc}): every text is read")
            usable = False
        finally:
            db.close()
    if not usable:
        yield from _scan(store, query, under)
        return
    for key, sha, rowid in sorted(k for k in keys if _within(k[0], under)):
        for m in found[rowid]:
            yield key, sha, m


def matching_keys(store: Store, query: Query) -> frozenset[Key]:
    """The records (root, path) whose text ``query`` matches, for the dashboard's query line
    (``text:"words"``): from the text index when it can answer, else by reading each text.
    Never writes the store (a reader never builds the index)."""
    db = _open_ready(store)
    if db is not None:
        try:
            rows = named_by(db.con, matching_rows(db.con, query))
            return frozenset((_name(r), _name(p)) for r, p, _sha, _id in rows)
        except sqlite3.Error:
            pass  # damaged under us: the texts still answer
        finally:
            db.close()
    found = _scan(store, query, None, first=True, warn=lambda _said: None)  # (a dashboard's)
    return frozenset(key for key, _sha, _m in found)


def _as_recorded(under: str | None, moved: Mapping[str, str]) -> str | None:
    """``under`` as the records name it: under the root a moved folder was recorded as."""
    if under is None:
        return None
    for old, now in sorted(moved.items(), key=lambda item: len(item[1]), reverse=True):
        if under == now or under.startswith(now.rstrip("/") + "/"):
            return old + under[len(now) :]
    return under


def _name(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "surrogatepass")


def _within(key: Key, under: str | None) -> bool:
    if under is None:
        return True
    full = _full(key)
    return full == under or full.startswith(under.rstrip("/") + "/")


def _full(key: Key) -> str:
    return os.path.join(key[0], key[1]) if key[1] else key[0]


# -- the index, or every text --------------------------------------------------------------


def _ready_index(store: Store, build: bool) -> RecordDB | None:
    """The store's index in a read transaction when its text index can answer; built first
    (``build``) when the store's lock is free. None: read every text instead."""
    db = _open_ready(store)
    if db is not None or not build:
        return db
    try:
        _build(store)
    except (StoreLocked, StoreUnusable) as exc:
        if _catching_up(store):
            _say(
                "the text index is catching up with the sweep writing the store: every text is read"
            )
        else:
            _say(f"no text index to use ({exc}): every text is read")
        return None
    db = _open_ready(store)
    if db is None:
        _say("the text index could not be made: every text is read")
    return db


def _catching_up(store: Store) -> bool:
    """Whether the store's index has a text index that is behind its records (a sweep or a
    watch holding the store puts the texts in as they are read)."""
    try:
        with RecordDB.open_reader(store.out / DB) as db:
            return has_tables(db.con) and not is_ready(db.con)
    except (IndexUnusable, sqlite3.Error):
        return False


def _open_ready(store: Store) -> RecordDB | None:
    # one snapshot: the texts and the records that name them
    db = open_agreeing(store.out / DB, store.jsonl_path)
    if db is None:
        return None
    try:
        if is_ready(db.con):
            return db
    except sqlite3.Error:
        pass
    db.close()
    return None


def _build(store: Store) -> None:
    """Build (or catch up) the text index as a sweep would, holding the store's lock."""
    from engine.readindex import rebuild_with
    from engine.resume import Ledger

    with store.writer():
        ledger = Ledger(store, lambda notice: _say(notice.message), text=True)
        ledger.progress = _progress_line()
        with ledger:
            in_step = False
            with (
                contextlib.suppress(IndexUnusable, sqlite3.Error),
                RecordDB.open_reader(store.out / DB) as db,
            ):
                in_step = db.source() == identity_of(store.jsonl_path)
            # (a copied store's index is rebuilt from its file a block at a time; the whole
            # file loaded is the way left for one whose lines are not all records)
            if in_step or not rebuild_with(store, ledger.rebuild):
                ledger.attach([] if in_step else store.load().records)
    if sys.stderr.isatty():
        sys.stderr.write("\n")


def _progress_line() -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        sys.stderr.write(f"\rquarry: indexing texts for search: {done:,} of {total:,}")
        sys.stderr.flush()

    return show


def _scan(
    store: Store,
    query: Query,
    under: str | None,
    *,
    first: bool = False,
    warn: Callable[[str], None] | None = None,
) -> Iterator[tuple[Key, str, Match]]:
    """Every match (``first``: the first of each text), reading each text the records name
    from the store (no text index). The records come in key order a batch at a time, as
    ``quarry export`` reads them (:func:`engine.chunks.store_chunks`: a store of ten million
    is never held whole), and each match is said as its record comes; a text's matches are
    remembered for the next :data:`RECENT` texts (one shared by files far apart in key order
    is read again). The store's unreadable lines are said through ``warn`` (on stderr)."""
    recent: OrderedDict[str, list[Match] | None] = OrderedDict()
    missing = 0
    say = warn or _say
    with store_chunks(store, say) as chunks:
        for chunk in chunks:
            for r in chunk.records():
                sha = r.sha256
                if not r.has_text or sha is None or not _within(r.key, under):
                    continue
                if sha in recent:
                    hits = recent[sha]
                else:
                    hits = recent[sha] = _matches_in(store, sha, query, first)
                    if len(recent) > RECENT:
                        recent.popitem(last=False)
                if hits is None:
                    missing += 1
                    continue
                for m in hits:
                    yield r.key, sha, m
    if missing:  # (searched nothing there: said, not taken for "no match")
        say(
            f"warning: the texts of {count(missing, 'record')} are not in the store and were"
            " not searched (the next sweep reads their files again)"
        )


RECENT = 1024
"""Texts whose matches :func:`_scan` remembers (most are one file's: a copy is often near)."""


def _matches_in(store: Store, sha: str, query: Query, first: bool) -> list[Match] | None:
    """The matches in the text ``sha``; None when the store does not hold it."""
    try:
        body = store.read_text(sha)
    except OSError:
        return None  # (the next sweep reads its file again)
    return list(matches(body, query, 1 if first else None))


# -- the store ------------------------------------------------------------------------------


def _store_of(args: argparse.Namespace) -> tuple[Store, str | None]:
    """The store (``--store``, ``DIR``'s or the one above ``DIR``/here) and the folder to
    keep to (``DIR`` when it is inside a swept folder rather than one with a store)."""
    from engine.verbkit import find_store, reading_store, user_path

    if args.dir is not None and args.store is not None:
        raise UsageError("name the store once: DIR or --store, not both")
    if args.store is not None:
        return reading_store(args.store), None
    if args.dir is None:
        return find_store(Path.cwd()), None
    where = user_path(args.dir)
    if not where.exists():
        raise UsageError(f"no such file or folder: {shown(str(args.dir))}")
    try:
        return reading_store(where), None
    except UsageError:
        return find_store(where), str(where)


# -- output ---------------------------------------------------------------------------------


def shown_path(key: Key) -> str:
    """A file's name for a grep line: relative to the current folder when under it."""
    full = _full(key)
    with contextlib.suppress(OSError):
        here = os.getcwd()
        if here != "/" and full.startswith(here + "/"):
            full = full[len(here) + 1 :]
    return shown(full)


class _TextLines:
    """Writes the text form's lines; a match whose line is the one just written (the same
    file, page, line and snippet: another match of a short line) adds none, as grep writes a
    line once whatever it matches."""

    def __init__(self) -> None:
        self._last = ""

    def __call__(self, key: Key, sha: str, m: Match) -> None:
        line = f"{shown_path(key)}:{m.page}:{m.line}: {m.snippet}\n"
        if line != self._last:
            self._last = line
            sys.stdout.write(line)


def _json_line(key: Key, sha: str, m: Match) -> None:
    import orjson

    obj: dict[str, object] = {
        "root": escaped(key[0]), "path": escaped(key[1]), "sha256": sha, "page": m.page,
        "line": m.line, "column": m.column, "match": m.text, "snippet": m.snippet,
    }  # fmt: skip
    for field, name in (("root_b64", key[0]), ("path_b64", key[1])):
        if (b64 := name_b64(name)) is not None:
            obj[field] = b64
    sys.stdout.write(orjson.dumps(obj).decode() + "\n")


def _say(message: str) -> None:
    sys.stderr.write(shown(f"quarry: {message}") + "\n")


def _trouble(message: str) -> int:
    sys.stderr.write(f"quarry: {shown(message)}\n")
    return EXIT_TROUBLE
