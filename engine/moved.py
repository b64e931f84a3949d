"""A store found in another folder than the one it was written in: moved or copied with it.

``cp -r docs docs2`` copies ``docs/.quarry`` too, and ``mv docs archive/docs`` moves it; a
folder received from another machine brings its owner's. Its records are keyed by the folder
they were swept from (``/home/alice/docs``), so the first sweep of the folder as it is now
found every file new beside the records of a folder it is not: "40 files" for 20, the old
root's records kept for good (a root gone is held, never dropped on its own).

Every summary says where its store was (:attr:`engine.records.Summary.store`). A writer that
finds its store elsewhere re-keys the records of each root inside the folder that moved
(``docs``'s own, or one above it holding ``--out``'s store beside the roots) to where that
folder is now, before anything reads them: the files are then found as they were (a size and
mtime kept by the copy reuses the record; the text is in the store either way). Roots outside
it (a share another store's ``--out`` took in) stay as they are; and a root moves only when
its new folder holds one of its files, so a store copied away on its own (a backup of
``.quarry``) is left as it is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import PurePosixPath

import orjson

from engine.errors import StoreCorrupt
from engine.events import Level, Notice, NoticeKind
from engine.jsonl import line_of, line_start
from engine.names import escaped, is_utf8, shown
from engine.records import BadRecord, Record, Summary
from engine.store import Store
from engine.words import count

BLOCK = 1 << 22
"""Bytes of ``extract.jsonl`` read at a time while it is scanned and rewritten."""
PROBES = 64
"""Records of a root whose files are looked for in the folder it would move to: one there
is enough (a folder copied whole holds them all; an unrelated one, likely none)."""


def rehome(store: Store, summary: Summary | None) -> Notice | None:
    """Re-key the records of the folder ``store`` moved with to the folder it is in now
    (``summary``: its summary as :func:`last_summary` reads it); the notice that says so, or
    None when the store is where it was written (or it cannot tell: a store written before
    summaries said where, a foreign one)."""
    was = _where_written(store, summary)
    if was is None:
        return None
    firsts = _scan(store)
    if firsts is None:
        return None  # (the sweep repairs the file first; its next one moves the records)
    places = _places(store, was, firsts)
    moves = {old: new for old, new in places.items() if _holds_one(firsts[old], new)}
    if not moves:
        return None
    try:
        if _keeps_order(firsts, moves):
            moved = _rewrite(store, moves)
        else:  # (roots that change places among others, or meet one: sorted and merged whole)
            records, moved = _rekeyed(store.load().records, moves)
            store.write_records(records)
    except (OSError, BadRecord, orjson.JSONDecodeError):
        return None  # (the file is as it was: replaced whole or not at all)
    olds = ", ".join(map(shown, sorted(moves)))
    news = ", ".join(shown(moves[old]) for old in sorted(moves))
    return Notice(
        time.time(),
        NoticeKind.STORE_MOVED,
        f"the store was copied or moved here from {shown(was)}: its {count(moved, 'record')} "
        f"of {olds} are now those of {news}",
        Level.INFO,
    )


def aliases(store: Store, roots: Iterable[str]) -> dict[str, str]:
    """Where each of ``roots`` would be now -> the root, for a store found where it was not
    written and not yet swept there: how ``quarry show`` finds a file of the copied folder
    under the record of the folder it was copied from (no file probed: nothing is moved)."""
    was = _where_written(store, last_summary(store))
    return {} if was is None else {new: old for old, new in _places(store, was, roots).items()}


def moved_roots(store: Store) -> dict[str, str]:
    """Each root the summary names (swept last or not) -> where it is now, for a store found
    where it was not written and not yet swept there (else empty; no file probed): how
    ``quarry grep`` names the files of a copied folder, and keeps to a folder of it."""
    summary = last_summary(store)
    was = _where_written(store, summary)
    if summary is None or was is None:
        return {}
    return _places(store, was, {*summary.roots, *summary.others})


def last_summary(store: Store) -> Summary | None:
    """The store's summary as its last sweep wrote it; None when there is none, or none that
    can be read (a summary only informs)."""
    try:
        return store.load_summary()
    except (StoreCorrupt, BadRecord):
        return None


def _where_written(store: Store, summary: Summary | None) -> str | None:
    """Where the store was when ``summary`` was written, if it says, and it is elsewhere now."""
    if summary is None or not summary.store.startswith("/"):
        return None
    return None if summary.store == escaped(str(store.out)) else summary.store


def _places(store: Store, was: str, roots: Iterable[str]) -> dict[str, str]:
    """Old root -> where it is now, for each of ``roots`` inside the folder that moved with
    the store (``was``: its path when written, and now, less the names they end in alike)."""
    now = PurePosixPath(store.out)
    # (compared as the summary writes names, escaped: a name that is not UTF-8 too)
    folders = _moved_folder(was, escaped(str(now)))
    if folders is None:
        return {}
    old, kept = folders
    places: dict[str, str] = {}
    for root in sorted(roots):
        if PurePosixPath(escaped(root)).parts[: len(old)] != old:
            continue
        inside = PurePosixPath(root).parts[len(old) :]
        there = str(PurePosixPath(*now.parts[:kept], *inside))
        if there != root:
            places[root] = there
    return places


def _moved_folder(was: str, now: str) -> tuple[tuple[str, ...], int] | None:
    """The folder that moved, as the parts of where it was and how many of ``now``'s first
    parts it is now: ``/home/alice/docs/.quarry`` now ``/srv/in/docs/.quarry`` is
    ``/home/alice`` now ``/srv/in``. None when the store's own name differs (renamed: nothing
    says where its folder went; and a summary naming ``/`` or any folder would otherwise move
    every record it holds into the store itself)."""
    a, b = PurePosixPath(was).parts, PurePosixPath(now).parts
    same = 0
    while same < min(len(a), len(b)) - 1 and a[-1 - same] == b[-1 - same]:
        same += 1
    if not same:
        return None
    return a[: len(a) - same], len(b) - same


def _holds_one(paths: list[str], folder: str) -> bool:
    """Whether ``folder`` holds one of ``paths`` (a root's first recorded files)."""
    return any(path and os.path.lexists(os.path.join(folder, path)) for path in paths)


def _lines(store: Store) -> Iterator[bytes]:
    """The lines of ``extract.jsonl``, each with its newline, a block of the file at a time
    (ten million records are gigabytes of lines: never held at once)."""
    fd = store.open_jsonl()
    try:
        rest = b""
        for block in iter(partial(os.read, fd, BLOCK), b""):
            *whole, rest = (rest + block).split(b"\n")
            yield from (line + b"\n" for line in whole)
        if rest:
            yield rest + b"\n"
    finally:
        os.close(fd)


def _root_of(line: bytes) -> str:
    """The root of a record's line: read from its start when this quarry wrote it (the root
    first, UTF-8), else from the whole record (BadRecord: no record)."""
    if line.startswith(b'{"root":"') and b"root_b64" not in line:
        end = line.find(b'","path":', 8)
        if end > 0:
            root = orjson.loads(line[8 : end + 1])
            if isinstance(root, str):
                return root
    return Record.from_json(line).root


def _scan(store: Store) -> dict[str, list[str]] | None:
    """Each root of ``extract.jsonl`` -> the paths of its first :data:`PROBES` records (the
    file is sorted: a root's lines come together); None when the file cannot be read or a
    line is no record (the sweep repairs the file first)."""
    firsts: dict[str, list[str]] = {}
    try:
        for line in _lines(store):
            if not line.strip():
                continue
            paths = firsts.setdefault(_root_of(line), [])
            if len(paths) < PROBES:
                paths.append(Record.from_json(line).path)
    except (OSError, BadRecord, orjson.JSONDecodeError):
        return None
    return firsts


def _keeps_order(roots: Iterable[str], moves: dict[str, str]) -> bool:
    """Whether the roots re-keyed by ``moves`` keep their order among the others and meet
    none of them (then the file is rewritten a line at a time, as it is)."""
    mapped = [moves.get(root, root) for root in sorted(roots)]
    return len(set(mapped)) == len(mapped) and mapped == sorted(mapped)


def _rewrite(store: Store, moves: dict[str, str]) -> int:
    """Rewrite ``extract.jsonl`` with the roots of ``moves`` re-keyed, a line at a time;
    how many records were. A line as this quarry writes it has its start replaced; any
    other is written again from its record."""
    starts = {
        line_start(old): line_start(new)
        for old, new in moves.items()
        if is_utf8(old) and is_utf8(new)  # (else the exact bytes follow, in root_b64)
    }
    moved = 0

    def lines() -> Iterator[bytes]:
        nonlocal moved
        for line in _lines(store):
            cut = line.find(b',"path":') if line.startswith(b'{"root":') else -1
            start = line[: cut + 8] if cut > 0 else b""  # (a quote in the root is escaped)
            if start in starts:
                moved += 1
                yield starts[start] + line[len(start) :]
            elif line.strip() and (root := _root_of(line)) in moves:
                moved += 1
                yield line_of(replace(Record.from_json(line), root=moves[root]))
            else:
                yield line

    store.write_lines(lines())
    return moved


def _rekeyed(records: list[Record], moves: dict[str, str]) -> tuple[list[Record], int]:
    """``records`` with the moved roots' re-keyed, and how many were; a record the new root
    already has (swept here before the copy came) is kept, the moved one dropped."""
    kept = {r.key for r in records if r.root in moves.values()}
    out: list[Record] = []
    moved = 0
    for record in records:
        new = moves.get(record.root)
        if new is None:
            out.append(record)
        elif (new, record.path) not in kept:
            out.append(replace(record, root=new))
            moved += 1
    return out, moved
