"""Column storage for the records: one list or array per table column, not a tuple per row.

A million records as per-row tuples cost 330 MB and every filter or sort walks them in Python.
Here each column is one object: paths and their lowercase form as lists of str, the status as
a ``bytearray`` of codes, the fields that take few values (reason, MIME, extractor, why, the
quality's worst signal, the error message) as a :class:`Coded` column (an array of small
integer codes and the table of the values they stand for), numbers as ``array('q')``.
Filters and sorts then run as C loops (``map``, ``compress``, ``bytes.translate``) over whole
columns.

The loader makes a :class:`Batch` of each chunk the engine reads (off the UI thread, its
counts already taken); the model appends batches to its own (a :class:`Batch` too) and sets
single rows for live changes.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.quality import VERDICTS
from engine.records import STATUSES, Key, Record, needs_of
from tui.coded import Coded

QUALITY_NAMES: tuple[str | None, ...] = (None, *VERDICTS)
"""Quality code -> verdict: 0 none (not an ok record, or not scored), 1 good, 2 suspect,
3 garbled; sorting by code puts the worst last."""
QUALITY_CODE: dict[str | None, int] = {name: i for i, name in enumerate(QUALITY_NAMES)}
"""Verdict -> code."""

STATUS_NAMES: list[str] = list(STATUSES)
"""Status code -> name; codes of statuses no engine wrote (a foreign store) are added on sight."""


class _Codes(dict[str, int]):
    def __missing__(self, status: str) -> int:
        if len(STATUS_NAMES) > 255:  # a store of nonsense: one shared code for the rest
            return 255
        STATUS_NAMES.append(status)
        self[status] = code = len(STATUS_NAMES) - 1
        return code


STATUS_CODE: dict[str, int] = _Codes((s, i) for i, s in enumerate(STATUSES))
"""Status name -> code."""

_interned: dict[Any, Any] = {}


def intern_all(values: list[Any]) -> list[Any]:
    """``values`` with one shared object per distinct value (MIME, reason... repeat a lot).

    One pass through a dict of this list's own values (a third of the time of a set and then
    the module-wide table: 0.15 -> 0.06 s per million MIME types), then the module-wide
    object when there is one distinct value (a root, an extractor) to share it across lists.
    """
    local: dict[Any, Any] = {}
    out = list(map(local.setdefault, values, values))
    if len(local) == 1:
        value = next(iter(local))
        return [_interned.setdefault(value, value)] * len(values)
    return out


def lower_of(paths: list[str]) -> list[str]:
    """The lowercase paths, sharing the objects when a path has no uppercase (the usual case)."""
    if not paths:
        return []
    joined = "\n".join(paths)
    return paths if joined.lower() == joined else list(map(str.lower, paths))


def quality_of(value: Any) -> tuple[str | None, str | None]:
    """(verdict, worst signal) of a record's quality: a Quality, its stored dict, or None."""
    if value is None:
        return None, None
    if isinstance(value, dict):
        verdict, signals = value.get("verdict"), value.get("signals") or ()
    else:
        verdict, signals = getattr(value, "verdict", None), getattr(value, "signals", ())
    if verdict not in QUALITY_CODE:
        return None, None
    first = signals[0] if signals and isinstance(signals[0], str) else None
    return verdict, first


def _bool(value: Any) -> int:
    return 1 if value else 0


@dataclass(slots=True)
class Batch:
    """Rows as columns (the model's storage, or one loaded chunk of it)."""

    roots: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lower: list[str] = field(default_factory=list)
    """``paths`` lowercased, for case-insensitive filters."""
    status: bytearray = field(default_factory=bytearray)
    """Status codes (:data:`STATUS_NAMES`)."""
    reasons: Coded[str | None] = field(default_factory=Coded)
    mimes: Coded[str] = field(default_factory=Coded)
    extractors: Coded[str | None] = field(default_factory=Coded)
    chars: array[int] = field(default_factory=lambda: array("q"))
    pages: array[int] = field(default_factory=lambda: array("q"))
    """Pages, -1 for none."""
    size: array[int] = field(default_factory=lambda: array("q"))
    ms: array[int] = field(default_factory=lambda: array("q"))
    reused: bytearray = field(default_factory=bytearray)
    quality: bytearray = field(default_factory=bytearray)
    """Quality codes (:data:`QUALITY_NAMES`)."""
    signals: Coded[str | None] = field(default_factory=Coded)
    """The worst quality signal of each row (``common``, ``noise``...), None when good."""
    errors: Coded[str | None] = field(default_factory=Coded)
    """The verdict in words (for ``error:`` queries)."""
    whys: Coded[str | None] = field(default_factory=Coded)
    """Why each file was last read (for ``why:`` queries)."""
    needs: Coded[tuple[str, ...]] = field(default_factory=Coded)
    """The tools that would unlock each row (a ``needs_tool`` or scanned record, or a
    container whose members wait on one); ``()`` for most."""
    in_order: bool = True
    """Whether the keys (root, path) strictly increase within the batch."""
    pairs: Counter[tuple[int, str | None]] | None = None
    """(status code, reason) -> rows, once :meth:`tally` ran."""

    def __len__(self) -> int:
        return len(self.paths)

    @classmethod
    def of(cls, records: Iterable[Record | dict[str, Any]]) -> Batch:
        """The columns of records (or parsed ``extract.jsonl`` objects), one by one."""
        b = cls()
        for r in records:
            b.append(r)
        keys = b.keys()
        b.in_order = all(map(tuple.__lt__, keys, keys[1:]))
        return b

    def keys(self) -> list[Key]:
        """(root, path) of each row."""
        return list(zip(self.roots, self.paths, strict=True))

    def append(self, r: Record | dict[str, Any]) -> None:
        """Add one row at the end."""
        self.roots.append("")
        for name in (
            "paths",
            "lower",
            "reasons",
            "mimes",
            "extractors",
            "signals",
            "errors",
            "whys",
        ):
            getattr(self, name).append(None)
        self.needs.append(())
        for name in ("chars", "pages", "size", "ms"):
            getattr(self, name).append(0)
        self.status.append(0)
        self.reused.append(0)
        self.quality.append(0)
        self.set(len(self.paths) - 1, r)
        self.pairs = None

    def set(self, i: int, r: Record | dict[str, Any]) -> None:
        """Overwrite row ``i`` with a record (a live change)."""
        if isinstance(r, dict):
            get = r.get
        else:

            def get(name: str, default: Any = None) -> Any:
                return getattr(r, name, default)

        intern = _interned.setdefault
        root, path, status = get("root"), get("path"), get("status")
        if not isinstance(root, str) or not isinstance(path, str) or not isinstance(status, str):
            raise KeyError("root, path and status are required")
        self.roots[i] = intern(root, root)
        self.paths[i] = path
        self.lower[i] = path.lower()
        self.status[i] = STATUS_CODE[status]
        reason, mime, extractor = get("reason"), get("mime", "") or "", get("extractor")
        self.reasons[i] = reason
        self.mimes[i] = str(mime)
        self.extractors[i] = extractor
        self.chars[i] = get("chars", 0) or 0
        pages = get("pages")
        self.pages[i] = -1 if pages is None else pages
        self.size[i] = get("size", 0) or 0
        self.ms[i] = get("ms", 0) or 0
        self.reused[i] = _bool(get("reused", False))
        verdict, signal = quality_of(get("quality"))
        self.quality[i] = QUALITY_CODE.get(verdict, 0)
        self.signals[i] = signal
        error, why = get("error"), get("why")
        self.errors[i] = error if isinstance(error, str) else None
        self.whys[i] = why if isinstance(why, str) else None
        self.needs[i] = needs_of(get("needs", ()))

    def extend(self, other: Batch) -> None:
        """Append every row of ``other``."""
        for name in Batch.__slots__:
            if name not in ("in_order", "pairs"):
                getattr(self, name).extend(getattr(other, name))

    def tally(self) -> Counter[tuple[int, str | None]]:
        """Rows per (status code, reason), counted once (the loader does it off the UI thread)."""
        if self.pairs is None:
            by_code = Counter(zip(self.status, self.reasons.codes, strict=True))
            reasons = self.reasons.values
            self.pairs = Counter({(s, reasons[c]): n for (s, c), n in by_code.items()})
        return self.pairs

    def row(self, i: int) -> tuple[Any, ...]:
        """Row ``i`` as the tuple the screens index with ``R_*``."""
        pages = self.pages[i]
        return (
            self.roots[i],
            self.paths[i],
            STATUS_NAMES[self.status[i]],
            QUALITY_NAMES[self.quality[i]],
            self.reasons[i],
            self.mimes[i],
            self.extractors[i],
            self.chars[i],
            None if pages < 0 else pages,
            self.size[i],
            self.ms[i],
            bool(self.reused[i]),
        )
