"""The warm sweep of a store its index serves: the walk merged with the index in key order.

A judge over data, as :mod:`engine.quick` is. A full sweep (``quarry sweep``, a watching
session's first) on a store whose index agrees with ``extract.jsonl`` need not load every
record to find what changed since its last sweep: each root's walk, sorted by name, is merged
with the index's rows of that root (read in the same order, a batch at a time, each line
decoded and let go). A file the walk finds as its record says (size, mtime, a verdict a full
sweep keeps, its text in the store) is kept without a run; every other one (new, changed, gone,
an ``error`` that every full sweep reads again, anything the plan must look at) goes to a run
with only those files in view, which the index answers for. What stays in memory is the walk's
columns, the names of the store's texts and the files that differ, never a record per file.

A record the sweep would keep but for its ``reused`` flag (every record of the sweep after a
cold one: read by that sweep, reused by this one) is not a file to look at: it is handed to
``mark`` as the run would write it, flag set, and the sweeper writes it back to the index a
batch at a time, so the first sweep after a cold one holds no record either.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable
from dataclasses import dataclass

from engine.index import Tally
from engine.mimes import SQLITE
from engine.plan import logged_database
from engine.records import Record
from engine.statindex import Kept
from engine.walk import Listing

Judge = Callable[[Record], Kept | None]
"""Which records a full sweep keeps as they are (:class:`engine.plan.Keeper`)."""
Row = tuple[str, int, int, Record, bool]
"""One of the index's rows: (path, size, mtime_ns, the record, whether it is a decision of
the sweep being resumed: a killed one's, judged by ``resumed`` in :func:`merge`)."""
Rows = Callable[[str], Iterable[Row]]
"""Root -> the index's rows of it, in key order."""
Mark = Callable[[Record], None]
"""Takes a record kept but for its ``reused`` flag, the flag set (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class Merged:
    """What the merge of the walk with the index found."""

    only: dict[str, list[str]]
    """Root -> the paths a run looks at (the walk's or the index's, in key order)."""
    tally: Tally
    """The counts of every record the index held, before the run."""
    looked: Tally
    """Of those, the counts of the records of the files the run looks at (a run that holds
    none of its records counts what it decides: the two make the store's counts after it)."""
    kept: int
    """Files with a byte or more kept as their records say, without a run (what a run counts
    as reused; an empty file's or a link's record is kept too, not counted)."""
    marked: int
    """Of those, the records handed to ``mark`` with their ``reused`` flag set."""
    files: int
    """Files the walk found."""


_PLAIN = ("file", "")
"""How the walk finds a regular file (:attr:`engine.walk.Listing.odd` lists the others)."""


class OutOfOrder(Exception):
    """The index's rows did not come in the walk's key order (nothing is judged then)."""


class MostDiffer(Exception):
    """Most of the first rows differ from the walk (the first sweep after a cold one marks
    every record reused): loading the records is cheaper than a merge and a run of nearly
    everything, which would decode every line twice."""


SAMPLE = 2000
"""Rows looked at before :class:`MostDiffer` may be raised: when over half of them differ."""

READ_ALL_ABOVE = 0.1
"""A run of more than this share of the records reads them all in one pass first (a query a
file costs more), and the sweep ends as a loading one does: the stat index from the records,
every text listed for the garbage collection."""

HOLD_AT_MOST = 50_000
"""Records a sweep may hold to spare itself a query a file (about 3 KB each: 150 MB). Past
this many, a merge where most files differ goes on (no :class:`MostDiffer`) and its run holds
none of its records (:attr:`engine.run.Run.lean`): each is asked of the index and committed to
it as it is decided. A share copied without its times, or rewritten whole, must not cost a
record a file in memory (30 GB at ten million files)."""


def merge(
    listings: Iterable[Listing],
    rows: Rows,
    keeper: Judge,
    texts: Container[str],
    *,
    held: Collection[str] = (),
    others: Iterable[str] = (),
    mark: Mark | None = None,
    resumed: Judge | None = None,
    give_up: bool = True,
) -> Merged:
    """Merge each root's walk with the index's rows of that root. ``keeper`` judges which
    records a full sweep keeps as they are; ``texts`` are the names of the store's texts.
    The records of the ``held`` roots (found gone or empty: kept) and of ``others`` (roots
    of the store this sweep does not walk) are counted, never looked at. Raises
    :class:`OutOfOrder` when the rows are not in key order, :class:`MostDiffer` when most
    of the first :data:`SAMPLE` rows of a root differ. ``mark``, when given, takes the
    records kept but for their ``reused`` flag (counted as kept, in the tally as marked);
    without it they are files to look at. ``resumed`` judges the rows of a killed sweep this
    one goes on with (its own decisions: trusted from its start, its errors kept).
    ``give_up`` False: never :class:`MostDiffer` (a run that holds none of its records
    follows)."""
    tally, looked = Tally(), Tally()
    only: dict[str, list[str]] = {}
    kept = files = 0
    marks = _Marks(mark)
    for listing in listings:
        files += len(listing)
        if listing.root in held:
            _count(rows(listing.root), tally)
            continue
        judges = (keeper, resumed or keeper)
        counts = (tally, looked)
        look, n = _merge_root(listing, rows(listing.root), judges, texts, counts, marks, give_up)
        kept += n
        if look:
            only[listing.root] = look
    for root in others:
        _count(rows(root), tally)
    return Merged(only, tally, looked, kept, marks.count, files)


class _Marks:
    """Where the records kept but for their ``reused`` flag go, and how many went."""

    def __init__(self, mark: Mark | None) -> None:
        self.mark = mark
        self.count = 0

    def take(
        self, record: Record, found: tuple[str, str], keeper: Judge, texts: Container[str]
    ) -> Record | None:
        """``record`` flagged reused and handed on, when that is all the sweep would change."""
        if self.mark is None or record.reused:
            return None
        marked = record.evolve(reused=True)
        if not _keeps(marked, found, keeper, texts):
            return None
        self.mark(marked)
        self.count += 1
        return marked


def _count(rows: Iterable[Row], tally: Tally) -> None:
    for row in rows:
        tally.add(row[3])


def _merge_root(
    listing: Listing,
    rows: Iterable[Row],
    judges: tuple[Judge, Judge],
    texts: Container[str],
    counts: tuple[Tally, Tally],
    marks: _Marks,
    give_up: bool,
) -> tuple[list[str], int]:
    """One root: the paths a run looks at, and how many files are kept without one."""
    paths, sizes, mtimes, odd = listing.paths, listing.sizes, listing.mtimes, listing.odd
    order = sorted(range(len(paths)), key=paths.__getitem__)
    look: list[str] = []
    tally, looked = counts
    kept = 0
    databases: dict[str, tuple[Record, int]] = {}  # kept, with whether counted as kept
    w = 0  # the next of ``order``
    last = None
    for n, (path, size, mtime_ns, record, resumed) in enumerate(rows):
        if last is not None and path <= last:
            raise OutOfOrder(f"{last!r} then {path!r}")
        if give_up and n == SAMPLE and len(look) > SAMPLE // 2:
            raise MostDiffer(f"{len(look)} of the first {SAMPLE} rows differ")
        last = path
        while w < len(order) and paths[order[w]] < path:
            look.append(paths[order[w]])  # a file the index has no record of
            w += 1
        if w < len(order) and paths[order[w]] == path:
            i = order[w]
            w += 1
            found = odd.get(i, _PLAIN)
            keeper = judges[resumed]
            if sizes[i] == size and mtimes[i] == mtime_ns:
                if _keeps(record, found, keeper, texts):
                    tally.add(record)
                    # (as a run counts reuse: files it reads)
                    counted = size > 0 and found == _PLAIN
                    kept += counted
                    if record.mime == SQLITE:
                        databases[path] = (record, counted)
                    continue
                marked = marks.take(record, found, keeper, texts)
                if marked is not None:
                    tally.add(marked)
                    kept += size > 0  # (an empty file's record is flagged too, not counted)
                    if marked.mime == SQLITE:
                        databases[path] = (marked, size > 0)
                    continue
        tally.add(record)
        looked.add(record)
        look.append(path)  # changed, gone, or for the plan to judge
    look.extend(paths[i] for i in order[w:])
    if databases:
        kept -= _relogged(look, databases, looked)
    return look, kept


def _relogged(look: list[str], databases: dict[str, tuple[Record, int]], looked: Tally) -> int:
    """Look at the SQLite databases kept whose write-ahead log is looked at (new, or
    changed: the run reads such a database again, its newest rows in the log); ``look``
    stays in key order. How many of them had counted as kept."""
    wanted = {db for path in look if (db := logged_database(path)) in databases}
    uncounted = 0
    for db in wanted:
        record, counted = databases[db]
        looked.add(record)
        look.append(db)
        uncounted += counted
    if wanted:
        look.sort()
    return uncounted


def _keeps(record: Record, found: tuple[str, str], keeper: Judge, texts: Container[str]) -> bool:
    """Whether a full sweep keeps ``record`` as it is for a file of its size and mtime that
    the walk ``found`` as this (kind, detail): a regular file, or the link, the file over the
    size cap... that a ``skipped`` record must still be."""
    judged = keeper(record)
    if judged is None or judged[2]:  # (an ``error`` a full sweep reads again)
        return False
    if (judged[0], judged[1]) != found:
        return False
    return not record.has_text or record.sha256 in texts
