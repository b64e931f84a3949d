"""The records, indexed for the dashboard: counts, a filtered and sorted view, live changes.

No Textual in here: the screens drive a :class:`RecordModel` and tests drive it alone.

Rows are compact tuples (the table's columns, low-cardinality strings interned) rather than
:class:`~engine.records.Record` objects: building a million Records costs seconds and a
gigabyte, a million tuples a fraction of that. The full record of a row is rebuilt on demand
from the raw ``extract.jsonl`` line it came from (an offset into the file) or kept as the Record a
live event delivered. The view is a list of row ids sorted ascending by the sort column; a
descending sort only reverses how positions map onto it.
"""

from __future__ import annotations

import bisect
import operator
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from engine.records import STATUSES, Record

Key = tuple[str, str]
"""(root, path): a record's identity."""
Row = tuple[Any, ...]
"""One table row; see the ``R_*`` indexes."""

R_ROOT, R_PATH, R_STATUS, R_REASON, R_MIME, R_EXTRACTOR = 0, 1, 2, 3, 4, 5
R_CHARS, R_PAGES, R_SIZE, R_MS, R_REUSED = 6, 7, 8, 9, 10

TABS: tuple[str, ...] = ("all", *STATUSES)
"""Status tabs in key order (``1``-``6``)."""

COLUMNS: tuple[str, ...] = (
    "path",
    "status",
    "reason",
    "mime",
    "extractor",
    "chars",
    "pages",
    "size",
    "ms",
)
"""Table columns, in display order; each is also a sort key."""

_COLUMN_INDEX = {
    "status": R_STATUS,
    "reason": R_REASON,
    "mime": R_MIME,
    "extractor": R_EXTRACTOR,
    "chars": R_CHARS,
    "pages": R_PAGES,
    "size": R_SIZE,
    "ms": R_MS,
}
_NUMERIC = {"chars", "pages", "size", "ms"}
_REGEX_CHARS = set(".*+?[](){}|^$\\")

_interned: dict[str | None, str | None] = {}


def interned() -> dict[str | None, str | None]:
    """The table of shared low-cardinality strings (status, MIME, root...)."""
    return _interned


def _intern(s: str | None) -> str | None:
    """One shared string object per distinct low-cardinality value."""
    return _interned.setdefault(s, s)


def row_of(d: dict[str, Any] | Record) -> Row:
    """The table row of a parsed ``extract.jsonl`` object or a Record."""
    if isinstance(d, Record):
        d = {
            "root": d.root,
            "path": d.path,
            "status": d.status,
            "reason": d.reason,
            "mime": d.mime,
            "extractor": d.extractor,
            "chars": d.chars,
            "pages": d.pages,
            "size": d.size,
            "ms": d.ms,
            "reused": d.reused,
        }
    get = d.get
    return (
        _intern(d["root"]),
        d["path"],
        _intern(d["status"]),
        _intern(get("reason")),
        _intern(get("mime", "")),
        _intern(get("extractor")),
        get("chars", 0),
        get("pages"),
        get("size", 0),
        get("ms", 0),
        bool(get("reused", False)),
    )


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed path filter: plain text (case-insensitive), a regex, ``!`` to invert."""

    text: str
    """What the user typed."""
    invert: bool
    """True when the text started with ``!``."""
    pattern: re.Pattern[str] | None
    """Compiled matcher; None for an empty filter."""
    error: str | None = None
    """Why the regex did not compile (then the text is matched literally)."""

    @classmethod
    def parse(cls, text: str) -> Query:
        """Plain text unless it contains regex characters; smart case (lower = ignore case)."""
        body, invert = (text[1:], True) if text.startswith("!") else (text, False)
        if not body:
            return cls(text, invert, None)
        flags = 0 if any(c.isupper() for c in body) else re.IGNORECASE
        if _REGEX_CHARS & set(body):
            try:
                return cls(text, invert, re.compile(body, flags))
            except re.error as exc:
                return cls(text, invert, re.compile(re.escape(body), flags), str(exc))
        return cls(text, invert, re.compile(re.escape(body), flags))

    def matches(self, path: str) -> bool:
        """Whether ``path`` passes this filter."""
        if self.pattern is None:
            return True
        return (self.pattern.search(path) is None) is self.invert


class RecordModel:
    """Every record of a store, with counts and the one view the records screen shows."""

    def __init__(self) -> None:
        self.rows: list[Row | None] = []
        """Row id -> row; None once removed (ids are never reused)."""
        self.starts: array[int] = array("q")
        """Row id -> offset of its line in :attr:`data`; -1 when not loaded from there."""
        self.live: dict[int, Record] = {}
        """Row id -> the Record a live event delivered (wins over :attr:`starts`)."""
        self.data = b""
        """The ``extract.jsonl`` bytes the loaded rows point into."""
        self.ids: dict[Key, int] = {}
        """(root, path) -> row id of live rows."""
        self.counts: Counter[str] = Counter()
        """Live rows per status."""
        self.reasons: Counter[str] = Counter()
        """Live rows per ``status/reason``."""
        self.reused = 0
        """Live rows whose verdict was reused."""
        self.chars = 0
        """Characters of text over the live rows."""
        self.tab = "all"
        """The status tab (``all`` or a status)."""
        self.query = Query.parse("")
        """The path filter."""
        self.sort_column = "path"
        """The column the view is sorted by."""
        self.sort_reverse = False
        """Whether the view shows the sort descending."""
        self.view: list[int] = []
        """Row ids passing the filter, ascending by the sort column."""
        self._in_key_order = True

    # -- loading ------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.ids)

    def extend(self, rows: Sequence[Row], starts: Iterable[int]) -> None:
        """Append rows as they load; the view follows without a re-sort when it can."""
        start = len(self.rows)
        keys = [(r[R_ROOT], r[R_PATH]) for r in rows]
        last = self._last_key()
        if self._in_key_order and keys:
            seq = keys if last is None else [last, *keys]
            self._in_key_order = all(map(operator.lt, seq, islice(seq, 1, None)))
        if not self.ids.keys().isdisjoint(keys):
            for key in keys:  # a key loaded twice: the later line wins
                if (old := self.ids.get(key)) is not None:
                    self._unview(old)
                    self._drop(old)
        self.ids.update(zip(keys, range(start, start + len(keys)), strict=True))
        self.rows.extend(rows)
        self.starts.extend(starts)
        self.counts.update(r[R_STATUS] for r in rows)
        self.reasons.update(f"{r[R_STATUS]}/{r[R_REASON]}" for r in rows if r[R_REASON])
        self.reused += sum(1 for r in rows if r[R_REUSED])
        self.chars += sum(r[R_CHARS] or 0 for r in rows)
        new = range(start, len(self.rows))
        if self.sort_column == "path" and self._in_key_order:
            self.view.extend(i for i in new if self._passes(i))
        else:
            self.refilter()

    def _last_key(self) -> Key | None:
        for row in reversed(self.rows):
            if row is not None:
                return (row[R_ROOT], row[R_PATH])
        return None

    def clear(self) -> None:
        """Forget every row (filter and sort stay)."""
        tab, query, col, rev = self.tab, self.query, self.sort_column, self.sort_reverse
        self.__init__()  # type: ignore[misc]
        self.tab, self.query, self.sort_column, self.sort_reverse = tab, query, col, rev

    # -- reading ------------------------------------------------------------------------

    def record(self, rid: int) -> Record | None:
        """The full record of row ``rid`` (None once removed)."""
        if rid >= len(self.rows) or self.rows[rid] is None:
            return None
        if rid in self.live:
            return self.live[rid]
        src = self.starts[rid]
        end = self.data.find(b"\n", src)
        return Record.from_json(self.data[src : end if end >= 0 else len(self.data)])

    def key(self, rid: int) -> Key | None:
        """The (root, path) of row ``rid``."""
        row = self.rows[rid]
        return None if row is None else (row[R_ROOT], row[R_PATH])

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
        return {"all": len(self.ids), **{s: self.counts[s] for s in STATUSES}}

    # -- filter and sort ----------------------------------------------------------------

    def set_tab(self, tab: str) -> None:
        """Show one status (or ``all``)."""
        if tab not in TABS:
            raise ValueError(f"unknown tab {tab!r}")
        self.tab = tab
        self.refilter()

    def set_query(self, text: str) -> Query:
        """Filter paths by ``text``; returns the parsed query (its ``error`` if any)."""
        self.query = Query.parse(text)
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
            self._sort()

    def refilter(self) -> None:
        """Recompute the view from scratch (filter, then sort)."""
        rows, tab, query = self.rows, self.tab, self.query
        ids: Iterable[int] = range(len(rows))
        if tab != "all":
            ids = [i for i in ids if (r := rows[i]) is not None and r[R_STATUS] == tab]
        else:
            ids = [i for i in ids if rows[i] is not None]
        if query.pattern is not None:
            search, inv = query.pattern.search, query.invert
            ids = [i for i in ids if (search(rows[i][R_PATH]) is None) is inv]  # type: ignore[index]
        self.view = ids
        self._sort()

    def _sort(self) -> None:
        if self.sort_column == "path" and self._in_key_order:
            self.view.sort()
        else:
            self.view.sort(key=self.sort_key())

    def sort_key(self) -> Callable[[int], Any]:
        """Row id -> comparable value of the sort column (missing values first)."""
        rows = self.rows
        if self.sort_column == "path":
            if self._in_key_order:
                return lambda i: i
            return lambda i: (rows[i][R_ROOT], rows[i][R_PATH])  # type: ignore[index]
        col = _COLUMN_INDEX[self.sort_column]
        if self.sort_column in _NUMERIC:
            return lambda i: rows[i][col] or 0  # type: ignore[index]
        return lambda i: rows[i][col] or ""  # type: ignore[index]

    def _passes(self, rid: int) -> bool:
        row = self.rows[rid]
        if row is None:
            return False
        if self.tab != "all" and row[R_STATUS] != self.tab:
            return False
        return self.query.matches(row[R_PATH])

    def _find(self, rid: int) -> int | None:
        """Index of ``rid`` in the (ascending) view."""
        if self.rows[rid] is None:
            return None
        key = self.sort_key()
        i = bisect.bisect_left(self.view, key(rid), key=key)
        while i < len(self.view) and key(self.view[i]) == key(rid):
            if self.view[i] == rid:
                return i
            i += 1
        try:  # ties resolved out of order by an earlier incremental insert
            return self.view.index(rid)
        except ValueError:
            return None

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
            row = row_of(rec)
            if rid is None:
                last = self._last_key()
                if self._in_key_order and last is not None and rec.key < last:
                    self._in_key_order = False
                    self._sort()  # the view was in id order; from now on, in key order
                rid = len(self.rows)
                self.ids[rec.key] = rid
                self.rows.append(row)
                self.starts.append(-1)
            else:
                self._unview(rid)
                self._count(self.rows[rid], -1)  # type: ignore[arg-type]
                self.rows[rid] = row
            self.live[rid] = rec
            self._count(row, 1)
            if self._passes(rid):
                bisect.insort_right(self.view, rid, key=self.sort_key())
            changed.add(rid)
        return changed

    def _unview(self, rid: int) -> None:
        i = self._find(rid)
        if i is not None:
            del self.view[i]

    def _drop(self, rid: int) -> None:
        row = self.rows[rid]
        if row is None:
            return
        self._count(row, -1)
        del self.ids[(row[R_ROOT], row[R_PATH])]
        self.rows[rid] = None
        self.live.pop(rid, None)

    def _count(self, row: Row, sign: int) -> None:
        status = row[R_STATUS]
        self.counts[status] += sign
        if row[R_REASON]:
            self.reasons[f"{status}/{row[R_REASON]}"] += sign
        self.reused += sign * row[R_REUSED]
        self.chars += sign * (row[R_CHARS] or 0)

    def groups(self, status: str) -> list[tuple[str, int]]:
        """``(reason, count)`` of one status, largest first."""
        prefix = status + "/"
        found = [(k[len(prefix) :], n) for k, n in self.reasons.items() if k.startswith(prefix)]
        return sorted((g for g in found if g[1] > 0), key=lambda g: (-g[1], g[0]))
