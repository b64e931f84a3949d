"""The records, indexed for the dashboard: counts, a filtered and sorted view, live changes.

No Textual in here: the screens drive a :class:`RecordModel` and tests drive it alone.

Rows live in columns (:class:`~tui.columns.Batch`): a million records cost ~150 MB instead of
~330 MB of tuples, and a filter, a status tab or a sort is a few C loops over whole columns.
``rows[rid]`` still gives the classic tuple (``R_*`` indexes). The full record of a row is
asked of the engine's table the rows were loaded from, by key (:meth:`engine.dbread.Table.record`),
or kept as the Record a live event delivered.

Row ids follow the load, in key order; ``order`` lists them by key (root, path) once a live
change adds one out of order (until then it *is* ``range(n)``). The view is an array of row
ids ascending by the sort column (ties in key order); a descending sort only reverses how
positions map onto it.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import compress
from pathlib import PurePosixPath
from typing import Any

from engine.query import Query, TextTerm, and_masks
from engine.records import STATUSES, Key, Record, Summary
from engine.store import BadLine, left_out
from tui.coded import Coded
from tui.columns import QUALITY_CODE, QUALITY_NAMES, STATUS_CODE, STATUS_NAMES, Batch
from tui.indexing import KeyIndex, Ordering

Row = tuple[Any, ...]
"""One table row; see the ``R_*`` indexes."""

R_ROOT, R_PATH, R_STATUS, R_QUALITY, R_REASON, R_MIME, R_EXTRACTOR = 0, 1, 2, 3, 4, 5, 6
R_CHARS, R_PAGES, R_SIZE, R_MS, R_REUSED = 7, 8, 9, 10, 11

TABS: tuple[str, ...] = ("all", *STATUSES)
"""Status tabs in key order (``1``-``6``)."""

COLUMNS: tuple[str, ...] = (
    "path",
    "status",
    "quality",
    "reason",
    "mime",
    "extractor",
    "chars",
    "pages",
    "size",
    "ms",
)
"""Table columns, in display order; each is also a sort key."""

__all__ = ["COLUMNS", "TABS", "Key", "Query", "RecordModel", "Row"]


def _tab_table(code: int) -> bytes:
    """``bytes.translate`` table: 1 for ``code``, 0 for every other status code."""
    return bytes(1 if i == code else 0 for i in range(256))


_NONE_PAGES = {-1: None}


def _if_alive(row: Row, alive: int) -> Row | None:
    return row if alive else None


class Rows(Sequence[Row | None]):
    """``model.rows[rid]``: the row tuple, or None once removed (built on demand)."""

    def __init__(self, model: RecordModel) -> None:
        self._m = model

    def __len__(self) -> int:
        return len(self._m.cols)

    def __getitem__(self, rid: int) -> Row | None:  # type: ignore[override]
        m = self._m
        return m.cols.row(rid) if m.alive[rid] else None

    def __iter__(self) -> Iterator[Row | None]:
        c = self._m.cols
        pages = map(_NONE_PAGES.get, c.pages, c.pages)
        rows = zip(
            c.roots, c.paths, map(STATUS_NAMES.__getitem__, c.status),
            map(QUALITY_NAMES.__getitem__, c.quality), c.reasons, c.mimes,
            c.extractors, c.chars, pages, c.size, c.ms, map(bool, c.reused), strict=True,
        )  # fmt: skip
        if self._m.n_alive == len(c):
            return rows  # every row built in C: a million in a fraction of a second
        return map(_if_alive, rows, self._m.alive)


def folder_labels(roots: Iterable[str]) -> dict[str, str]:
    """Each of several ``roots`` -> the fewest of its last names that tell it from the others
    (``/srv/a/docs`` and ``/home/b/docs``: ``a/docs`` and ``b/docs``), ending in ``/``; none
    for one root or none."""
    roots = sorted(set(roots))
    if len(roots) < 2:
        return {}
    parts = {root: PurePosixPath(root).parts for root in roots}
    taken = dict.fromkeys(roots, 1)
    while True:
        labels = {root: "/".join(parts[root][-taken[root] :]).lstrip("/") for root in roots}
        seen = Counter(labels.values())
        clash = [r for r in roots if seen[labels[r]] > 1 and taken[r] < len(parts[r])]
        if not clash:
            return {root: f"{label}/" if label else "/" for root, label in labels.items()}
        for root in clash:
            taken[root] += 1


class RecordModel(Ordering):
    """Every record of a store, with counts and the one view the records screen shows."""

    paged = False
    """Whether the rows are paged from the store's index (:class:`tui.paged.PagedModel`)."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, Record] = {}
        """Row id -> the Record a live event delivered (wins over :attr:`data`)."""
        self.data: Any = None
        """Where the loaded rows' full records are: the engine's table they were loaded from
        (:class:`engine.dbread.Table`, asked by key), or None."""
        self.ids = KeyIndex(self)
        """(root, path) -> row id of live rows."""
        self.rows = Rows(self)
        """Row id -> row tuple (None once removed)."""
        self.counts: Counter[str] = Counter()
        """Live rows per status."""
        self._pairs: Counter[tuple[int, str | None]] = Counter()
        self.reused = 0
        """Live rows whose verdict was reused."""
        self.chars = 0
        """Characters of text over the live rows."""
        self.root_labels: dict[str, str] = {}
        """Root -> the name its rows' paths are shown under, when the store holds several
        folders (two ``1.txt`` rows were otherwise the same to the eye); empty for one."""
        self._roots: set[str] = set()
        """The folders the store was told to hold (:meth:`take_roots`)."""
        self.tab = "all"
        """The status tab (``all`` or a status)."""
        self.query = Query.parse("")
        """The path filter."""
        self.sort_column = "path"
        """The column the view is sorted by."""
        self.sort_reverse = False
        """Whether the view shows the sort descending."""
        self.view: array[int] = array("q")
        """Row ids passing the filter, ascending by the sort column."""
        self._qmask: tuple[str, int, bytes] | None = None
        self.text_lookup: Callable[[TextTerm], frozenset[Key]] | None = None
        """The records whose extracted text matches a ``text:`` term: set by whoever knows the
        store (the app: :func:`engine.grep.matching_keys` on it, off the drawing thread).
        None: ``text:`` terms keep no record."""
        self._text_keys: dict[TextTerm, frozenset[Key]] = {}
        """What :attr:`text_lookup` answered for the terms of the query shown."""
        self._fresh: set[TextTerm] = set()
        """The terms whose answer was given since the records last changed."""
        self.bad_lines = 0
        """Lines of the store's ``extract.jsonl`` that are not records (torn, garbage)."""
        self.bad_first: list[BadLine] = []
        """The first few of them, to name on screen and in the activity log."""

    # -- loading ------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.n_alive

    def extend(self, rows: Batch | Sequence[Any]) -> None:
        """Append a loaded batch; the view follows without a re-sort when it can."""
        if not isinstance(rows, Batch):
            rows = Batch.of(rows)
        if not len(rows):
            return
        start = len(self.cols)
        dropped = self._append_batch(rows)
        for (code, reason), n in rows.tally().items():
            self.counts[STATUS_NAMES[code]] += n
            self._pairs[(code, reason)] += n
        self.reused += rows.reused.count(1)
        self.chars += sum(rows.chars)
        for rid in dropped:  # a key loaded twice: the later line wins
            self._count(rid, -1)
            self.live.pop(rid, None)
        self._qmask = None
        if self.sort_column == "path" and self.identity:
            end = len(self.cols)
            mask = self._mask(start, end)
            new = range(start, end)
            self.view.extend(new if mask is None else compress(new, mask))
        else:
            self.refilter()

    def note_bad(
        self, bad: Iterable[BadLine], count: int | None = None, *, anew: bool = False
    ) -> None:
        """Count lines of the store that could not be read (keeping the first few);
        ``count``: how many there are in all, when ``bad`` names only the first few;
        ``anew``: they are all there are (the store read again whole)."""
        if anew:
            self.bad_lines, self.bad_first = 0, []
        bad = list(bad)
        self.bad_lines += len(bad) if count is None else max(count, len(bad))
        self.bad_first.extend(bad[: 5 - len(self.bad_first)])

    def bad_text(self) -> str:
        """The unreadable lines in words ("" when there are none)."""
        if not self.bad_lines:
            return ""
        return left_out(self.bad_lines, self.bad_first)  # the words of quarry show

    def clear(self) -> None:
        """Forget every row (filter and sort stay; the ``text:`` answers too, out of date)."""
        tab, query, col, rev = self.tab, self.query, self.sort_column, self.sort_reverse
        lookup, answers = self.text_lookup, self._text_keys
        self.__init__()  # type: ignore[misc]
        self.tab, self.query, self.sort_column, self.sort_reverse = tab, query, col, rev
        self.text_lookup = lookup
        # the rows come again: the text: answers keep filtering them (never asked here, on
        # the drawing thread) until the engine's new ones come (see texts_changed)
        self._text_keys = answers

    # -- reading ------------------------------------------------------------------------

    def record(self, rid: int) -> Record | None:
        """The full record of row ``rid`` (None once removed)."""
        if rid >= len(self.cols) or not self.alive[rid]:
            return None
        if rid in self.live:
            return self.live[rid]
        if self.data is None:
            return None
        found: Record | None = self.data.record(self.key_of(rid))
        return found

    def record_of(self, key: Key) -> Record | None:
        """The full record of ``key`` (None when there is none)."""
        rid = self.ids.get(key)
        return None if rid is None else self.record(rid)

    def records(self, rids: Iterable[int]) -> list[Record]:
        """The full records of the rows ``rids`` that are there, in their order: those not
        delivered by a live event asked of the table together (one statement for hundreds,
        not one each: an errors screen over a million records asks for 100,000)."""
        rids = [rid for rid in rids if rid < len(self.cols) and self.alive[rid]]
        asked = [rid for rid in rids if rid not in self.live]
        found: dict[int, Record | None] = {}
        if asked and self.data is not None:
            found = dict(
                zip(asked, self.data.records([self.key_of(r) for r in asked]), strict=True)
            )
        out = (self.live[rid] if rid in self.live else found.get(rid) for rid in rids)
        return [record for record in out if record is not None]

    def key(self, rid: int) -> Key | None:
        """The (root, path) of row ``rid``."""
        return self.key_of(rid) if self.alive[rid] else None

    def rid_at(self, pos: int) -> int:
        """Row id shown at view position ``pos``."""
        return self.view[-1 - pos] if self.sort_reverse else self.view[pos]

    def position(self, rid: int) -> int | None:
        """View position of row ``rid``, or None when it is filtered out."""
        i = self._find(rid)
        if i is None:
            return None
        return len(self.view) - 1 - i if self.sort_reverse else i

    def tab_counts(self) -> dict[str, int]:
        """Rows per tab (``all`` included), ignoring the path filter."""
        return {"all": self.n_alive, **{s: self.counts[s] for s in STATUSES}}

    @property
    def reasons(self) -> Counter[str]:
        """Live rows per ``status/reason``."""
        return Counter(
            {f"{STATUS_NAMES[c]}/{r}": n for (c, r), n in self._pairs.items() if r and n > 0}
        )

    def groups(self, status: str) -> list[tuple[str, int]]:
        """``(reason, count)`` of one status, largest first."""
        code = STATUS_CODE.get(status)
        found = [(r, n) for (c, r), n in self._pairs.items() if c == code and r and n > 0]
        return sorted(found, key=lambda g: (-g[1], g[0]))

    def rids_with_status(self, status: str, reasons: Iterable[str | None] = ()) -> list[int]:
        """Live row ids of one status (and, when given, one of ``reasons``), in file order
        (masks over the status and reason codes: no row tuples built)."""
        code = STATUS_CODE.get(status)
        if code is None:
            return []
        parts: list[bytes | bytearray] = [self.cols.status.translate(_tab_table(code)), self.alive]
        wanted = set(reasons)
        if wanted:
            table = self.cols.reasons.values
            parts.append(self.cols.reasons.mask([1 if r in wanted else 0 for r in table]))
        return list(compress(range(len(self.cols)), and_masks(parts)))

    def rids_with_quality(self, verdicts: Iterable[str]) -> list[int]:
        """Live row ids of the records whose verdict is one of ``verdicts`` (a C scan of the
        quality column per verdict)."""
        rids: list[int] = []
        data = self.cols.quality
        for verdict in verdicts:
            code = QUALITY_CODE.get(verdict)
            if code is None:
                continue
            i = data.find(code)
            while i != -1:
                if self.alive[i]:
                    rids.append(i)
                i = data.find(code, i + 1)
        return rids

    def error_messages(self) -> Callable[[], set[tuple[str | None, str | None]]]:
        """What gives every distinct (reason, error) of the error rows, to be called off the
        drawing thread: the rows are picked now, their messages read then."""
        rids = self.rids_with_status("error")
        reasons, errors = self.cols.reasons, self.cols.errors

        def messages() -> set[tuple[str | None, str | None]]:
            # pairs of codes, in C: a Python step per error row (100,000s) held the GIL
            codes = map(reasons.codes.__getitem__, rids), map(errors.codes.__getitem__, rids)
            pairs = set(zip(*codes, strict=True))
            return {(reasons.values[r], errors.values[e]) for r, e in pairs}

        return messages

    def view_keys(self) -> list[Key]:
        """The keys of the view, in its order."""
        keys = (self.key(self.rid_at(i)) for i in range(len(self.view)))
        return [k for k in keys if k is not None]

    def view_records(self) -> tuple[int, Iterable[Record | None]]:
        """How many records the view shows, and those records in its order, read as they
        are iterated (by an export's worker: the keys are taken now, on the UI thread)."""
        keys = self.view_keys()
        return len(keys), map(self.record_of, keys)

    def take_summary(self, summary: Summary | None) -> None:
        """The store's summary, as read (a held store counts its own totals): the folders it
        names, and those it says the store holds beside them, get their labels."""
        if summary is not None:
            self.take_roots({*summary.roots, *summary.others})

    def take_roots(self, roots: Iterable[str]) -> None:
        """Folders the store holds (a session's as it begins to sweep them, a summary's):
        the labels of their rows' paths."""
        self._roots.update(roots)
        self.root_labels = folder_labels(self._roots)

    def totals(self) -> tuple[int | None, int | None]:
        """(reused, characters) over the records; None where not known."""
        return self.reused, self.chars

    def waiting(self) -> list[tuple[Key, tuple[str, ...]]]:
        """(key, tools) of every live row that names tools that would unlock it: a
        ``needs_tool`` or scanned record, or an ok container whose members wait on a tool
        (what ``quarry tools DIR`` counts), in file order; a mask over the ``needs`` codes."""
        needs = self.cols.needs
        mask = and_masks([needs.mask([1 if tools else 0 for tools in needs.values]), self.alive])
        return [(self.key_of(rid), needs[rid]) for rid in compress(range(len(needs)), mask)]

    # -- filter and sort ----------------------------------------------------------------

    def set_tab(self, tab: str) -> None:
        """Show one status (or ``all``)."""
        if tab not in TABS:
            raise ValueError(f"unknown tab {tab!r}")
        self.tab = tab
        self.refilter()

    def set_query(self, text: str) -> Query:
        """Filter paths by ``text``; returns the parsed query (its ``error`` if any)."""
        query = Query.parse(text)
        if query.searches and self.text_lookup is None:  # said, never a silent "0 of N"
            unasked = "text: no store to search the texts of here (the term filters nothing)"
            query = replace(
                query, texts=tuple(replace(t, pattern=None, error=unasked) for t in query.texts)
            )
        self.query = query
        self._text_keys = {t: k for t, k in self._text_keys.items() if t in query.searches}
        self._fresh &= set(query.searches)
        self._qmask = None  # (the same text may now have other answers)
        self.refilter()
        return self.query

    def set_sort(self, column: str, reverse: bool | None = None) -> None:
        """Sort by ``column``; ``reverse=None`` flips it when the column is already sorted."""
        if column not in COLUMNS:
            raise ValueError(f"unknown column {column!r}")
        if reverse is None:
            reverse = not self.sort_reverse if column == self.sort_column else False
        resort = column != self.sort_column
        self.sort_column, self.sort_reverse = column, reverse
        if resort:
            self.refilter()

    def refilter(self) -> None:
        """Recompute the view from scratch: a mask of passing rows laid over the sort order."""
        mask = self._mask(0, len(self.cols))
        perm = self.perm(self.sort_column)
        if perm is None:
            rids: Iterable[int] = range(len(self.cols))
            self.view = array("q", rids if mask is None else compress(rids, mask))
        else:
            picked = perm if mask is None else compress(perm, map(mask.__getitem__, perm))
            self.view = array("q", picked)

    def _mask(self, start: int, end: int) -> bytes | None:
        """1 per row in ``[start, end)`` that passes (None: every row does)."""
        parts: list[bytes | bytearray] = []
        if self.n_alive != len(self.cols):
            parts.append(self.alive[start:end])
        if self.tab != "all":
            table = _tab_table(STATUS_CODE.get(self.tab, -1))
            parts.append(self.cols.status[start:end].translate(table))
        if self.query.active:
            parts.append(self._query_mask()[start:end])
        return and_masks(parts) if parts else None

    def _query_mask(self) -> bytes:
        n = len(self.cols)
        if self._qmask is None or self._qmask[:2] != (self.query.text, n):
            mask = self.query.mask(self.column, self.cols.lower, self._text_mask)
            self._qmask = (self.query.text, n, mask)
        return self._qmask[2]

    def texts_changed(self) -> None:
        """The store's records changed (a batch, a sweep, a reload): the answers to the
        ``text:`` terms may be out of date. They keep filtering until new ones come
        (:meth:`unanswered` names the terms to ask again, in a worker: never on the drawing
        thread, whatever the store's size)."""
        self._fresh.clear()

    def prime_texts(self, answers: dict[TextTerm, frozenset[Key]]) -> None:
        """Take answers to ``text:`` terms found elsewhere (the app asks the engine in a
        worker thread, then sets the query on its own thread without waiting on the store)."""
        self._text_keys.update(answers)
        self._fresh.update(answers)

    def unanswered(self, query: Query) -> tuple[TextTerm, ...]:
        """The ``text:`` terms of ``query`` the engine would have to be asked about: never
        answered, or answered before the records last changed (none without a
        :attr:`text_lookup`: those terms say so and filter nothing)."""
        if self.text_lookup is None:
            return ()
        return tuple(t for t in query.searches if t not in self._fresh)

    def uncounted(self, query: Query) -> bool:
        """Whether ``query``'s records would be counted by walking the store's rows (a big
        store's, :class:`tui.paged.PagedModel`): then counted in a worker first. A held
        model counts its rows in memory."""
        return False

    def count_query(
        self, query: Query, answers: dict[TextTerm, frozenset[Key]]
    ) -> dict[str, int] | None:
        """(A worker thread.) The records ``query`` keeps per tab, with these answers to
        its ``text:`` terms, when :meth:`uncounted`; None for a held model."""
        return None

    def prime_counts(self, text: str, counts: dict[str, int]) -> None:
        """Take the counts of the query ``text`` made in a worker (:meth:`count_query`)."""

    def text_keys(self, term: TextTerm) -> frozenset[Key]:
        """The records whose text matches ``term`` (asked once per query and change)."""
        keys = self._text_keys.get(term)
        if keys is None:
            keys = self.text_lookup(term) if self.text_lookup is not None else frozenset()
            self._text_keys[term] = keys
            self._fresh.add(term)
        return keys

    def _text_mask(self, term: TextTerm) -> bytes:
        keys = self.text_keys(term)
        if not keys:
            return bytes(len(self.cols))
        return bytes(map(keys.__contains__, zip(self.cols.roots, self.cols.paths, strict=True)))

    def column(self, field: str) -> Sequence[str | None] | array[int]:
        """The values of a query field over every row (status as names, a number field as
        its integers: ``pages`` -1 for none)."""
        cols = self.cols
        numbers = {"size": cols.size, "chars": cols.chars, "pages": cols.pages, "ms": cols.ms}
        if field in numbers:
            return numbers[field]
        if field == "status":  # the codes as they are, with the names as their table
            return Coded(STATUS_NAMES, array("B", cols.status))
        if field == "quality":
            return Coded(QUALITY_NAMES, array("B", cols.quality))
        by_field: dict[str, Sequence[str | None]] = {
            "path": cols.paths,
            "reason": cols.reasons,
            "mime": cols.mimes,
            "extractor": cols.extractors,
            "error": cols.errors,
            "why": cols.whys,
        }
        return by_field[field]

    def value(self, rid: int, field: str) -> str | int | None:
        """One row's value of a query field (None for a row without pages)."""
        if field == "status":
            return STATUS_NAMES[self.cols.status[rid]]
        if field == "quality":
            return QUALITY_NAMES[self.cols.quality[rid]]
        if field == "pages":
            pages = self.cols.pages[rid]
            return None if pages < 0 else pages
        return self.column(field)[rid]

    def view_counts(self) -> dict[str, int]:
        """Rows per tab that pass the query (the tab counts shown while filtering)."""
        if not self.query.active:
            return self.tab_counts()
        mask = and_masks([self._query_mask(), self.alive])
        by_code = Counter(compress(self.cols.status, mask))
        counts = {s: by_code.get(STATUS_CODE[s], 0) for s in STATUSES}
        return {"all": sum(by_code.values()), **counts}

    def sort_key(self) -> Callable[[int], Any]:
        """Row id -> comparable value of the sort column (missing values first)."""
        return self.key_function(self.sort_column)

    def _passes(self, rid: int) -> bool:
        if not self.alive[rid]:
            return False
        if self.tab != "all" and STATUS_NAMES[self.cols.status[rid]] != self.tab:
            return False
        return self.query.matches_row(
            lambda field: self.value(rid, field),
            lambda term: (self.cols.roots[rid], self.cols.paths[rid]) in self.text_keys(term),
        )

    def _find(self, rid: int) -> int | None:
        """Index of ``rid`` in the (ascending) view."""
        if rid >= len(self.cols) or not self.alive[rid]:
            return None
        return self.find_in(self.view, rid, self.sort_key())

    # -- live changes -------------------------------------------------------------------

    def apply(self, records: Iterable[Record], removed: Iterable[Key] = ()) -> set[int]:
        """Replace, add and remove records by key; return the row ids that changed or appeared."""
        changed: set[int] = set()
        for key in removed:
            rid = self.ids.get(key)
            if rid is not None:
                self._unview(rid)
                self._drop(rid)
        for rec in records:
            rid = self.ids.get(rec.key)
            if rid is None:
                rid = self.add_row(rec)
                stays = False
            else:
                sort_of = self.sort_key()
                before, at = sort_of(rid), self._find(rid)
                self._count(rid, -1)
                self.set_row(rid, rec)
                # A row whose sort value did not change keeps its place among its equals:
                # live updates never reorder rows within a sort.
                stays = at is not None and sort_of(rid) == before and self._passes(rid)
                if at is not None and not stays:
                    del self.view[at]
            self.live[rid] = rec
            self._count(rid, 1)
            self._qmask = None
            if not stays and self._passes(rid):
                self.insort(self.view, rid, self.sort_key())
            changed.add(rid)
        return changed

    def _unview(self, rid: int) -> None:
        i = self._find(rid)
        if i is not None:
            del self.view[i]

    def _drop(self, rid: int) -> None:
        if not self.alive[rid]:
            return
        self._count(rid, -1)
        self.kill(rid)
        self.live.pop(rid, None)

    def _count(self, rid: int, sign: int) -> None:
        cols = self.cols
        code = cols.status[rid]
        self.counts[STATUS_NAMES[code]] += sign
        self._pairs[(code, cols.reasons[rid])] += sign
        self.reused += sign * cols.reused[rid]
        self.chars += sign * cols.chars[rid]
