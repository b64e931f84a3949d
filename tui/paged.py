"""The records of a store too big to hold, paged from its index: :class:`PagedModel`.

:class:`~tui.model.RecordModel` holds every row (~290 MB a million). A store of at least
:data:`engine.browse.BROWSE_FROM` records that another process writes (``quarry ui --store``)
is shown through a :class:`PagedModel` instead: the same questions answered from the index
(:class:`engine.browse.Browse`), the rows on screen read a page at a time by a
:class:`engine.window.Window` (keyset in the sort column's B-tree), the tab counts and
groups from the index's ``counts`` table, the query compiled to SQL
(:func:`engine.sqlquery.compile_where`). Nothing here reads the store's files.

Row ids are handed out as rows are read (a key keeps its id for the model's life), so the
screens keep their cursor, marks and flashes by id as with a held store. A change of the
index (:meth:`PagedModel.apply`, when its counter moved) reads it anew: new counts, a new
window, the pages read again as they are drawn.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from engine.browse import Browse, reads_of
from engine.db import IndexUnusable, Point
from engine.query import Query, TextTerm
from engine.readindex import drop_index_file
from engine.records import STATUSES, Key, Record, Summary
from engine.sqlquery import Where, compile_where
from engine.tallies import Kind, Tally, first_keys, first_keys_walked, tallies
from engine.window import Window
from tui.columns import QUALITY_CODE, STATUS_CODE
from tui.model import RecordModel, Row

T = TypeVar("T")

PAGE = 128
"""Rows read at a time (a screen is ~20-50)."""
PAGES_KEPT = 64
"""Pages of rows kept (the rows around the cursor; a page is read again once let go)."""
TRIAGE_READ = 20_000
"""Records of one kind (a status, the suspect verdicts) :meth:`PagedModel.rids_with_status`
and :meth:`PagedModel.rids_with_quality` give, the first in key order: a million error
records of ten million took minutes and gigabytes to read whole. (The triage screens count a
paged store's groups instead: :mod:`engine.tallies`.)"""


class _Ids(Mapping[Key, int]):
    """``model.ids``: the id of a key the index holds (one indexed read for a new key)."""

    def __init__(self, model: PagedModel) -> None:
        self._m = model

    def get(self, key: Key, default: Any = None) -> Any:
        m = self._m
        rid = m.rid_of.get(key)
        if rid is not None and m.present(key):
            return rid
        if rid is None and m.browse is not None and m.browse.has(key):
            return m.give_id(key)
        return default

    def __getitem__(self, key: Key) -> int:
        rid = self.get(key)
        if rid is None:
            raise KeyError(key)
        return int(rid)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self.get(key) is not None

    def __len__(self) -> int:
        return len(self._m)

    def __iter__(self) -> Iterator[Key]:  # (every key, from the index: a long read)
        m = self._m
        return iter(m.browse.keys(Where("1", ())) if m.browse is not None else ())


class _Rows(Sequence[Row | None]):
    """``model.rows[rid]``: the row of an id on a page read (None otherwise)."""

    def __init__(self, model: PagedModel) -> None:
        self._m = model

    def __len__(self) -> int:
        return len(self._m.keys)

    def __getitem__(self, rid: int) -> Row | None:  # type: ignore[override]
        return self._m.row_of.get(rid)


class _View(Sequence[int]):
    """``model.view``: as long as the view; its items are the ids at each position."""

    def __init__(self, model: PagedModel) -> None:
        self._m = model

    def __len__(self) -> int:
        return self._m.view_size()

    def __getitem__(self, pos: int) -> int:  # type: ignore[override]
        return self._m.rid_at(pos)


class PagedModel(RecordModel):
    """The records of a big store, asked of its index page by page (module docstring)."""

    paged = True

    def __init__(self, index: Path | None = None, *, head: Path | None = None) -> None:
        super().__init__()
        self.index = index
        """The index to browse (:meth:`attach`)."""
        self.head = head
        """An index of the store's first lines, browsed while its index is built (a big
        store opened without one: :func:`engine.dbread.head_index`); removed once another is
        attached, or the dashboard leaves (:meth:`drop_head`)."""
        self._lock = threading.Lock()
        self.browse: Browse | None = None
        """The store's index, read a snapshot at a time (None before :meth:`attach`)."""
        self.rid_of: dict[Key, int] = {}
        self.keys: list[Key] = []
        """Row id -> key, ids handed out as rows are read."""
        self.row_of: dict[int, Row] = {}
        """Row id -> its row, for the rows of the pages kept."""
        self._pages: OrderedDict[int, list[int]] = OrderedDict()
        self._window: Window | None = None
        self._gone: set[Key] = set()
        """Keys removed since their id was handed out."""
        self._generation = 0
        """Counts how often the records or the texts' answers changed."""
        self._queried: dict[str, tuple[int, dict[str, int]]] = {}
        """Query -> (the generation counted in, the records it keeps per tab)."""
        self._memos: dict[str, tuple[int, Any]] = {}
        """What :meth:`memo` made: name -> (the generation made in, what it made)."""
        self.ids = _Ids(self)  # type: ignore[assignment]
        self.rows = _Rows(self)  # type: ignore[assignment]
        self.view = _View(self)  # type: ignore[assignment]
        self.reused = 0
        self.chars = 0
        self._summed = False

    # -- the index --------------------------------------------------------------------------

    def attach(self, path: Path | None) -> None:
        """Browse the index at ``path`` from now on (None, or one that cannot be read: no
        records to show)."""
        self.close()
        if path != self.head:
            self.drop_head()
        self.index = path
        if path is not None:
            with contextlib.suppress(IndexUnusable, sqlite3.Error):
                self.browse = Browse(path)
        self._recount()

    @property
    def point(self) -> Point | None:
        """Where in its index's history the snapshot browsed is (None: no index open)."""
        return self.browse.point if self.browse is not None else None

    def drop_head(self) -> None:
        """Remove the index of the store's first lines, if one was browsed."""
        if self.head is not None:
            if self.index == self.head:
                self.close()
            drop_index_file(self.head)
            self.head = None

    def close(self) -> None:
        """Let the index go."""
        if self.browse is not None:
            self.browse.close()
            self.browse = None
        self._window = None

    def clear(self) -> None:
        """(A held store's reload: nothing is held here.)"""

    def extend(self, rows: object) -> None:
        """(A held store's load: nothing is held here.)"""

    def take_summary(self, summary: Summary | None) -> None:
        """The store's totals the summary bar shows (the index keeps no sum of them)."""
        super().take_summary(summary)
        if summary is not None:
            self.reused, self.chars = summary.reused, summary.chars
            self._summed = True

    def totals(self) -> tuple[int | None, int | None]:
        """The summary's totals; None without a summary (a walk of every record)."""
        return (self.reused, self.chars) if self._summed else (None, None)

    def _recount(self) -> None:
        counted = self.browse.counted if self.browse is not None else {}
        self.counts = Counter()
        self._pairs = Counter()
        for (status, reason, _quality), n in counted.items():
            self.counts[status] += n
            self._pairs[(STATUS_CODE[status], reason or None)] += n
        self._changed()

    def _changed(self) -> None:
        self._generation += 1
        self._forget_pages()

    def _forget_pages(self) -> None:
        self._window = None
        self._pages.clear()
        self.row_of.clear()

    def __len__(self) -> int:
        return sum(self.counts.values())

    # -- ids --------------------------------------------------------------------------------

    def give_id(self, key: Key) -> int:
        """The id of ``key`` (a new one the first time it is seen; worker threads ask too)."""
        rid = self.rid_of.get(key)
        if rid is None:
            with self._lock:
                rid = self.rid_of.get(key)
                if rid is None:
                    rid = len(self.keys)
                    self.keys.append(key)
                    self.rid_of[key] = rid
        if key in self._gone:
            self._gone.discard(key)
        return rid

    def present(self, key: Key) -> bool:
        """Whether ``key``'s record is in the index (as last read)."""
        return key not in self._gone

    def key_of(self, rid: int) -> Key:
        return self.keys[rid]

    def key(self, rid: int) -> Key | None:
        if not 0 <= rid < len(self.keys):
            return None
        key = self.keys[rid]
        return key if self.present(key) else None

    # -- the view ---------------------------------------------------------------------------

    def _where(self) -> Where:
        """The tab and the query as one clause over the index's records."""
        assert self.browse is not None
        query = self.query
        if query.active:
            answers = {t: self.text_keys(t) for t in query.searches}
            values = self.browse.values()
            where = self.browse.drive(compile_where(query, answers, values), query)
        else:
            where = Where("1", ())
        if self.tab == "all":
            return where
        sql = f"status = ? AND ({where.sql})" if where.sql != "1" else "status = ?"
        return Where(sql, (self.tab, *where.params), where.terms, where.texts, where.driven)

    def window(self) -> Window | None:
        """The view's window (made when first asked after a change)."""
        if self._window is None and self.browse is not None:
            self._window = self.browse.window(
                self._where(), self.sort_column, reverse=self.sort_reverse
            )
            known = self._queried.get(self.query.text) if self.query.active else None
            if not self.query.active and self.tab != "all":  # (the counts table has it)
                self._window.counted(self.counts[self.tab])
            elif known is not None:
                # the tab's count is one of the query's counts per tab, as last counted: after
                # a change, a worker counts again (a first page shorter than they say makes
                # the view count again here, :meth:`_page`)
                self._window.counted(known[1][self.tab])
        return self._window

    def view_size(self) -> int:
        """Records the view shows."""
        window = self.window()
        return window.count() if window is not None else 0

    def refilter(self) -> None:
        """The tab, query or sort changed: the view is read anew."""
        self._forget_pages()

    def set_sort(self, column: str, reverse: bool | None = None) -> None:
        before = (self.sort_column, self.sort_reverse)
        super().set_sort(column, reverse)
        if (self.sort_column, self.sort_reverse) != before:
            self._forget_pages()

    def _page(self, page: int) -> list[int]:
        rids = self._pages.get(page)
        if rids is not None:
            self._pages.move_to_end(page)
            return rids
        window = self.window()
        rows = window.rows(page * PAGE, PAGE) if window is not None else []
        if window is not None and len(rows) < min(PAGE, window.count() - page * PAGE):
            # counted in a worker from a later state of the index than this snapshot's:
            # the view is counted again here, on the rows it shows
            self._queried.pop(self.query.text, None)
            self._forget_pages()
            window = self.window()
            rows = window.rows(page * PAGE, PAGE) if window is not None else []
        rids = []
        for row in rows:
            if row[3] not in QUALITY_CODE:  # a newer writer's verdict: none, as when held
                row = (*row[:3], None, *row[4:])
            if row[5] is None:  # no MIME type: empty, as when held
                row = (*row[:5], "", *row[6:])
            rid = self.give_id((row[0], row[1]))
            self.row_of[rid] = row
            rids.append(rid)
        self._pages[page] = rids
        while len(self._pages) > PAGES_KEPT:
            _, dropped = self._pages.popitem(last=False)
            for rid in dropped:
                self.row_of.pop(rid, None)
        return rids

    def rid_at(self, pos: int) -> int:
        """The id at ``pos`` (-1 past the rows the index has: no row)."""
        page, i = divmod(pos, PAGE)
        rids = self._page(page)
        return rids[i] if i < len(rids) else -1

    def position(self, rid: int) -> int | None:
        """Where ``rid`` is in the view: on a page read, or asked of the index (by the
        order's B-tree) when no query filters; None with a query, off the pages read."""
        key = self.key(rid)
        window = self.window()
        if key is None or window is None:
            return None
        for page, rids in self._pages.items():  # on a page read: no statement
            if rid in rids:
                return page * PAGE + rids.index(rid)
        if self.query.active:
            # the rows before it counted by a walk of every row again (seconds at ten
            # million, on the drawing thread): the cursor keeps its place in the view instead
            return None
        return window.position(key)

    def view_keys(self) -> list[Key]:
        """The keys of the view, in its order."""
        window = self.window()
        if window is None:
            return []
        out: list[Key] = []
        for start in range(0, window.count(), 10_000):
            out.extend((row[0], row[1]) for row in window.rows(start, 10_000))
        return out

    def view_records(self) -> tuple[int, Iterable[Record | None]]:
        """How many records the view shows, and those records in its order, read from the
        index as they are iterated (on a connection of the worker's own, a batch at a time):
        an export of ten million records never holds their keys, nor reads them one by one."""
        if self.browse is None:
            return 0, ()
        where = self._where()
        column, reverse = self.sort_column, self.sort_reverse
        return self.view_size(), self.browse.records_in_order(where, column, reverse=reverse)

    # -- counts -----------------------------------------------------------------------------

    def tab_counts(self) -> dict[str, int]:
        return {"all": len(self), **{s: self.counts[s] for s in STATUSES}}

    def view_counts(self) -> dict[str, int]:
        """Per tab, the records the query keeps: as last counted (a worker counts them
        again after a change: :meth:`uncounted`), else counted now."""
        if not self.query.active or self.browse is None:
            return self.tab_counts()
        known = self._queried.get(self.query.text)
        if known is None:
            self.prime_counts(self.query.text, self._count_now())
            known = self._queried[self.query.text]
        return known[1]

    def _count_now(self) -> dict[str, int]:
        assert self.browse is not None
        tab, self.tab = self.tab, "all"
        try:
            where = self._where()  # (one walk, every tab)
            return _per_tab(self.browse.by_status(where, reads_of(self.query)))
        finally:
            self.tab = tab

    def uncounted(self, query: Query) -> bool:
        known = self._queried.get(query.text)
        return query.active and (known is None or known[0] != self._generation)

    def count_query(
        self, query: Query, answers: dict[TextTerm, frozenset[Key]]
    ) -> dict[str, int] | None:
        browse = self.browse
        if browse is None or not query.active:
            return None
        keys = {t: answers.get(t, self._text_keys.get(t, frozenset())) for t in query.searches}
        where = browse.drive(compile_where(query, keys, browse.values()), query)
        return _per_tab(browse.by_status_now(where, reads_of(query)))

    def prime_counts(self, text: str, counts: dict[str, int]) -> None:
        self._queried[text] = (self._generation, counts)
        while len(self._queried) > 16:
            del self._queried[next(iter(self._queried))]
        if text == self.query.text:
            self._forget_pages()  # (the window takes its count from them)

    # -- records ----------------------------------------------------------------------------

    def record(self, rid: int) -> Record | None:
        key = self.key(rid)
        return None if key is None else self.record_of(key)

    def record_of(self, key: Key) -> Record | None:
        found: Record | None = self.data.record(key) if self.data is not None else None
        return found

    def records(self, rids: Iterable[int]) -> list[Record]:
        return self.records_of([k for rid in rids if (k := self.key(rid)) is not None])

    def records_of(self, keys: list[Key]) -> list[Record]:
        """The records of ``keys`` the store has, in that order."""
        if self.data is None or not keys:
            return []
        return [r for r in self.data.records(keys) if r is not None]

    # -- the triage screens' groups -----------------------------------------------------------

    def tallies(self, kind: Kind) -> list[Tally]:
        """The index's tallies of ``kind`` (:mod:`engine.tallies`; the index as it is now)."""
        if self.browse is None:
            return []
        with contextlib.suppress(sqlite3.Error):
            return tallies(self.browse.path, kind)
        return []

    def files_ahead(
        self, kind: Kind, groups: list[list[Tally]], limit: int
    ) -> list[list[Key]] | None:
        """Each group's first ``limit`` keys, read by one walk when the index has no triage
        B-tree (a group's own read would then be a walk too, on the UI thread as it is
        shown: up to a walk of every record); None when it has one (each group's, a seek,
        read as it is shown)."""
        browse = self.browse
        if browse is None or browse.triage_tree:
            return None
        with contextlib.suppress(sqlite3.Error):
            return first_keys_walked(browse.path, kind, groups, limit)
        return None

    def first_keys(self, kind: Kind, among: list[Tally], limit: int) -> list[Key]:
        """The first ``limit`` keys of the records of ``among``, in key order."""
        if self.browse is None:
            return []
        with contextlib.suppress(sqlite3.Error):
            return first_keys(self.browse.path, kind, among, limit)
        return []

    def rids_with_status(self, status: str, reasons: Iterable[str | None] = ()) -> list[int]:
        """The first :data:`TRIAGE_READ` records of ``status`` in key order."""
        if self.browse is None:
            return []
        return [self.give_id(k) for k in self.browse.keys_of(status, reasons, TRIAGE_READ)]

    def rids_with_quality(self, verdicts: Iterable[str]) -> list[int]:
        """The first :data:`TRIAGE_READ` records of these verdicts in key order."""
        if self.browse is None:
            return []
        keys = self.browse.keys_of_quality(verdicts, TRIAGE_READ)
        return [self.give_id(k) for k in keys]

    def waiting(self) -> list[tuple[Key, tuple[str, ...]]]:
        """The files waiting on a tool: read once until the records change (a walk of
        every row: no index holds ``needs``)."""
        browse = self.browse
        return [] if browse is None else self.memo("waiting keys", browse.waiting)

    def has_memo(self, name: str) -> bool:
        """Whether :meth:`memo` holds ``name`` made since the records last changed."""
        held = self._memos.get(name)
        return held is not None and held[0] == self._generation

    def memo(self, name: str, make: Callable[[], T]) -> T:
        """What ``make()`` makes, made once until the records change."""
        held = self._memos.get(name)
        if held is None or held[0] != self._generation:
            held = self._memos[name] = (self._generation, make())
        made: T = held[1]
        return made

    def error_messages(self) -> Callable[[], set[tuple[str | None, str | None]]]:
        browse = self.browse
        return browse.error_messages if browse is not None else set

    # -- live changes ---------------------------------------------------------------------

    def apply(self, records: Iterable[Record], removed: Iterable[Key] = ()) -> set[int]:
        """The index changed: read it anew; the ids of the records written."""
        for key in removed:
            if key in self.rid_of:
                self._gone.add(key)
        changed = {self.give_id(r.key) for r in records}
        if self.browse is not None:
            self.browse.renew()
        self._recount()
        return changed

    def prime_texts(self, answers: dict[TextTerm, frozenset[Key]]) -> None:
        super().prime_texts(answers)
        if answers:
            self._changed()  # (the same query may keep other records now)

    def texts_changed(self) -> None:
        super().texts_changed()
        self._changed()


def _per_tab(found: dict[str, int]) -> dict[str, int]:
    return {"all": sum(found.values()), **{s: found.get(s, 0) for s in STATUSES}}


__all__ = ["PAGE", "PAGES_KEPT", "TRIAGE_READ", "PagedModel"]
