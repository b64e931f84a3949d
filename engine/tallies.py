"""What the triage screens group, counted by a store's index: one statement per screen.

The errors, unsupported files, suspect texts and files waiting on a tool of a big store are
not read as records (a million errors read and grouped one by one: 2.3 GB, over a minute).
The index counts them instead: a :class:`Tally` is every record of a :class:`Kind` that
shares every field a screen groups by (:data:`~engine.db.TRIAGE_COLUMNS`) and a root, with
how many there are and the first one's path. A screen merges tallies into its groups (its
own rules: an error's message normalised, a signal named) and asks the first files of the
group it shows (:func:`first_keys`), a seek per tally in :data:`~engine.db.TRIAGE_TREE`.

Without that B-tree (an index below :data:`~engine.db.SORTED_FROM` records, or one whose
trees a mass change dropped) the same statements walk the table: the same answers, slower.
Each call opens a connection of its own (screens ask from worker threads).
"""

from __future__ import annotations

import enum
import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.db import (
    TRIAGE_COLUMNS,
    TRIAGE_TREE,
    TRIAGE_WHERE,
    RecordDB,
    name_of,
    needs_from_text,
)
from engine.records import Key


class Kind(enum.Enum):
    """The records a triage screen groups, as the SQL clause that keeps them."""

    ERRORS = "status = 'error'"
    UNSUPPORTED = "status = 'unsupported'"
    SUSPECT = "quality IN ('suspect', 'garbled')"
    """Suspect and garbled texts (of any status: a verdict is a verdict)."""
    WAITING = "needs IS NOT NULL"
    """Records that name tools that would unlock them."""


@dataclass(frozen=True, slots=True)
class Tally:
    """Records of one kind sharing every grouped field and their root: how many, the first."""

    status: str
    quality: str | None
    reason: str | None
    error: str | None
    signal: str | None
    """The worst quality signal, as the index keeps it (None unless suspect or garbled)."""
    mime: str | None
    needs: tuple[str, ...]
    """The tools these records name as what would unlock them."""
    n: int
    first: Key
    """The key of the first of them, in key order."""
    stored: tuple[object, ...]
    """The grouped fields and the root as the index stores them (to find the records)."""


_COLUMNS = ", ".join(TRIAGE_COLUMNS)


def tallies(index: Path, kind: Kind) -> list[Tally]:
    """Every tally of ``kind`` in the index at ``index``, in the index's order."""
    db = RecordDB.open_reader(index)
    try:
        table, where = _table(db, kind)
        rows = db.con.execute(
            f"SELECT {_COLUMNS}, root, count(*), min(path) FROM {table} WHERE {where}"
            f" GROUP BY {_COLUMNS}, root"
        ).fetchall()
    finally:
        db.close()
    return [_tally(row) for row in rows]


def first_keys(index: Path, kind: Kind, among: Iterable[Tally], limit: int) -> list[Key]:
    """The first ``limit`` keys, in key order, of the records of ``among`` (tallies of
    ``kind``): the first ``limit`` of each tally (a seek into :data:`TRIAGE_TREE`), merged;
    without the tree, one walk of the kind's records in key order, stopping at ``limit``."""
    wanted = {t.stored for t in among}
    if not wanted or limit <= 0:
        return []
    db = RecordDB.open_reader(index)
    try:
        if db.has_triage_tree():
            runs = [_run(db, stored, limit) for stored in wanted]
            merged: Iterator[tuple[bytes, bytes]] = heapq.merge(*runs)
        else:
            merged = _walk(db, kind, wanted)
        return [(name_of(root), name_of(path)) for root, path in itertools.islice(merged, limit)]
    finally:
        db.close()


def first_keys_walked(
    index: Path, kind: Kind, groups: Sequence[Iterable[Tally]], limit: int
) -> list[list[Key]]:
    """:func:`first_keys` of each group of tallies by one walk of ``kind``'s records in key
    order, stopping once every group has ``limit`` (for an index without
    :data:`TRIAGE_TREE`, where each group's would be a walk of its own)."""
    owner = {t.stored: i for i, group in enumerate(groups) for t in group}
    found: list[list[Key]] = [[] for _ in groups]
    short = len(groups) if owner and limit > 0 else 0  # (groups not yet holding limit)
    if not short:
        return found
    db = RecordDB.open_reader(index)
    try:
        for root, path, stored in _walk_all(db, kind):
            i = owner.get(stored)
            if i is None or len(found[i]) >= limit:
                continue
            found[i].append((name_of(root), name_of(path)))
            if len(found[i]) == limit:
                short -= 1
                if not short:
                    break
    finally:
        db.close()
    return found


def _table(db: RecordDB, kind: Kind) -> tuple[str, str]:
    """The table clause and the WHERE of ``kind``'s records: through the triage tree when
    the index has it (its own clause said, so that SQLite may use it)."""
    if db.has_triage_tree():
        return f"records INDEXED BY {TRIAGE_TREE}", f"({TRIAGE_WHERE}) AND {kind.value}"
    return "records", kind.value


def _tally(row: tuple[object, ...]) -> Tally:
    status, quality, reason, error, signal, mime, needs, root, n, first = row
    return Tally(
        status=str(status),
        quality=_text(quality),
        reason=_text(reason),
        error=_text(error),
        signal=_text(signal),
        mime=_text(mime),
        needs=needs_from_text(needs),
        n=int(n),  # type: ignore[call-overload]
        first=(name_of(root), name_of(first)),  # type: ignore[arg-type]
        stored=row[:8],
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


_SEEK = (
    f"SELECT root, path FROM records INDEXED BY {TRIAGE_TREE} WHERE ({TRIAGE_WHERE}) AND "
    + " AND ".join(f"{c} IS ?" for c in TRIAGE_COLUMNS)
    + " AND root = ? ORDER BY path LIMIT ?"
)


def _run(db: RecordDB, stored: tuple[object, ...], limit: int) -> list[tuple[bytes, bytes]]:
    """The first ``limit`` keys of one tally (a seek: its records are one run of the tree)."""
    return db.con.execute(_SEEK, (*stored, limit)).fetchall()


def _walk(
    db: RecordDB, kind: Kind, wanted: set[tuple[object, ...]]
) -> Iterator[tuple[bytes, bytes]]:
    """The keys of ``kind``'s records of the ``wanted`` tallies, in key order."""
    for root, path, stored in _walk_all(db, kind):
        if stored in wanted:
            yield root, path


def _walk_all(db: RecordDB, kind: Kind) -> Iterator[tuple[bytes, bytes, tuple[object, ...]]]:
    """Every record of ``kind`` in key order: its key, and its tally's stored fields."""
    rows = db.con.execute(
        f"SELECT {_COLUMNS}, root, path FROM records WHERE {kind.value} ORDER BY root, path"
    )
    for row in rows:
        yield row[7], row[8], row[:8]


__all__ = ["Kind", "Tally", "first_keys", "first_keys_walked", "tallies"]
