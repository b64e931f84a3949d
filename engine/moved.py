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
from collections.abc import Iterable
from dataclasses import replace
from pathlib import PurePosixPath

from engine.errors import StoreCorrupt
from engine.events import Level, Notice, NoticeKind
from engine.names import escaped, shown
from engine.records import BadRecord, Record, Summary
from engine.store import Store
from engine.words import count

PROBES = 64
"""Records of a root whose files are looked for in the folder it would move to: one there
is enough (a folder copied whole holds them all; an unrelated one, likely none)."""


def rehome(store: Store) -> Notice | None:
    """Re-key the records of the folder ``store`` moved with to the folder it is in now;
    the notice that says so, or None when the store is where it was written (or it cannot
    tell: a store written before summaries said where, a foreign one)."""
    was = _written_at(store)
    if was is None:
        return None
    loaded = store.load()
    if loaded.bad:
        return None  # (the sweep repairs the file first; its next one moves the records)
    places = _places(store, {r.root for r in loaded.records})
    moves = {old: new for old, new in places.items() if _holds_one(loaded.records, old, new)}
    if not moves:
        return None
    records, moved = _rekeyed(loaded.records, moves)
    store.write_records(records)
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
    return {new: old for old, new in _places(store, roots).items()}


def _written_at(store: Store) -> str | None:
    """Where the store was when its summary was written, if the summary says, and it is
    elsewhere now."""
    try:
        summary: Summary | None = store.load_summary()
    except (StoreCorrupt, BadRecord):
        return None
    if summary is None or not summary.store.startswith("/"):
        return None
    return None if summary.store == escaped(str(store.out)) else summary.store


def _places(store: Store, roots: Iterable[str]) -> dict[str, str]:
    """Old root -> where it is now, for each of ``roots`` inside the folder that moved with
    the store (its path when written and now, less the names they end in alike)."""
    was = _written_at(store)
    folders = None if was is None else _moved_folder(PurePosixPath(was), PurePosixPath(store.out))
    if folders is None:
        return {}
    old, new = folders
    places: dict[str, str] = {}
    for root in sorted(roots):
        path = PurePosixPath(root)
        if path != old and old not in path.parents:
            continue
        there = str(new / path.relative_to(old))
        if there != root:
            places[root] = there
    return places


def _moved_folder(
    was: PurePosixPath, now: PurePosixPath
) -> tuple[PurePosixPath, PurePosixPath] | None:
    """The folder that moved, where it was and where it is: ``/home/alice/docs/.quarry`` now
    ``/srv/in/docs/.quarry`` is ``/home/alice`` now ``/srv/in``. None when the store's own
    name differs (renamed: nothing says where its folder went; and a summary naming ``/``
    or any folder would otherwise move every record it holds into the store itself)."""
    a, b = was.parts, now.parts
    same = 0
    while same < min(len(a), len(b)) - 1 and a[-1 - same] == b[-1 - same]:
        same += 1
    if not same:
        return None
    return PurePosixPath(*a[: len(a) - same]), PurePosixPath(*b[: len(b) - same])


def _holds_one(records: list[Record], root: str, folder: str) -> bool:
    """Whether ``folder`` holds one of the first :data:`PROBES` files recorded in ``root``."""
    probed = 0
    for record in records:
        if record.root != root or not record.path:
            continue
        if os.path.lexists(os.path.join(folder, record.path)):
            return True
        probed += 1
        if probed == PROBES:
            break
    return False


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
