"""Two stores compared file by file: what is new, gone, flipped, changed; better or worse.

Both stores are read as ``quarry export`` reads one (:func:`engine.export.store_chunks`: the
index when it is in step with ``extract.jsonl``, else the file through the store's validating
loader, so a store written by the seed's extract stage or an older quarry opens too), and
merged in key order, (root, path): a file is the same file in both when its root and path are.
Nothing is held per file but the changes: two records whose ``extract.jsonl`` lines are equal
byte for byte, or but for the read's ``reused``, ``why`` and ``ms``, are the same and are not
even parsed (a million unchanged records cost a comparison of bytes each); only where the
lines differ otherwise are the records parsed and judged.

Per pair of records (:func:`judge`):

- **flipped**: the status differs (``ok -> error``, ``unsupported -> ok``...);
- **text changed**: both ``ok``, and the record says the text may differ: another content
  hash, extractor, reader version, character count or quality verdict. Only then are the two
  texts read (at most :data:`TEXT_LIMIT` bytes each) and compared: Dice's coefficient over
  their word tokens (:func:`dice`), the characters gained or lost, the words only one side
  has, the common-word share and the quality verdict before and after. Texts equal byte for
  byte are no change;
- **verdict changed**: the status is the same but the reason is not (``error/corrupt ->
  error/timeout``);
- anything else (the read time, ``reused``, ``why``, a touched mtime) is no change.

**Worse or better** (:class:`Direction`), the rule the exit code of ``quarry diff`` follows:

1. a status flip to a lower rank is worse, to a higher rank better: ``ok`` (text) above
   ``empty``, ``unsupported`` and ``skipped`` (no text, not a failure) above ``error``; a flip
   within a rank (``empty -> unsupported``) is neither;
2. both ``ok``: a quality verdict that got worse (good > suspect > garbled) is worse, one that
   got better is better;
3. both ``ok``, the verdict the same (or unknown on a side): a text that lost characters and
   whose similarity is below :data:`LOW_SIMILARITY` is worse; one that gained characters
   below it is better;
4. anything else is neither. New and gone files are their own groups, neither worse nor
   better (a file that left the folder is not a failure of the reader).
"""

from __future__ import annotations

import heapq
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.export import store_chunks
from engine.quality import QUALITY_VERSION, Quality, rank, score
from engine.records import Record, Status
from engine.store import Store, read_jsonl

LOW_SIMILARITY = 0.5
"""Below this Dice similarity a text that lost (gained) characters got worse (better)."""
TEXT_LIMIT = 8 << 20
"""Bytes of each text compared: a text longer than this is compared on its first 8 MiB."""
TOP_WORDS = 10
"""Words only one side has, kept per file (the most frequent first)."""
LOWEST = 10
"""Lowest-similarity files kept for the whole diff; :data:`LOWEST_PER_GROUP` per MIME type or
reader."""
LOWEST_PER_GROUP = 3

# The quality scorer's notion of a word: letters, with inner apostrophes; no digits.
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_RANKS: dict[str, int] = {"ok": 0, "empty": 1, "unsupported": 1, "skipped": 1, "error": 2}
_UNKNOWN_RANK = 1
"""A status this quarry does not know (a newer writer's) ranks with the ones without text."""


class Kind(StrEnum):
    """What changed about one file."""

    NEW = "new"
    """Only the second store has it."""
    GONE = "gone"
    """Only the first store has it."""
    FLIPPED = "flipped"
    """Its status differs."""
    TEXT = "text"
    """Both ``ok``, and the texts differ."""
    REASON = "reason"
    """The same status, another reason."""


class Direction(StrEnum):
    """Whether a change is for the worse or the better (the rule in the module's docstring)."""

    WORSE = "worse"
    BETTER = "better"
    NEITHER = "neither"


class Group(StrEnum):
    """How changes are grouped for people: by direction first, then by kind."""

    WORSE = "worse"
    BETTER = "better"
    TEXT = "text"
    VERDICT = "verdict"
    NEW = "new"
    GONE = "gone"


GROUP_TITLES: dict[Group, str] = {
    Group.WORSE: "got worse",
    Group.BETTER: "got better",
    Group.TEXT: "text changed",
    Group.VERDICT: "verdict changed",
    Group.NEW: "new",
    Group.GONE: "gone",
}


@dataclass(frozen=True, slots=True)
class Side:
    """One file as one store has it: what a diff shows of a record."""

    status: str
    """The record's status."""
    reason: str | None
    """Its reason (None for ok)."""
    mime: str
    """The detected MIME type."""
    reader: str | None
    """The reader family (None in stores that do not say, as the seed's)."""
    extractor: str | None
    """What produced the text."""
    chars: int
    """Characters of stored text."""
    verdict: str | None
    """The quality verdict (ok records; None when unknown)."""
    common: float | None
    """Share of the text's words among its language's common words, 0..1 (None: not judged)."""
    sha256: str | None = None
    """The content hash its text is filed under (what the compare screen reads)."""

    @classmethod
    def of(cls, rec: Record, quality: Quality | None) -> Side:
        """``rec`` as shown, with ``quality`` (the record's own, or one scored here)."""
        return cls(
            rec.status, rec.reason, rec.mime, rec.reader, rec.extractor, rec.chars,
            quality.verdict if quality is not None else None,
            quality.common if quality is not None else None, rec.sha256,
        )  # fmt: skip

    @property
    def verdict_line(self) -> str:
        """``ok``, ``error/corrupt``."""
        return self.status + (f"/{self.reason}" if self.reason else "")


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file that differs between the two stores."""

    root: str
    """The root folder it was found under."""
    path: str
    """Its path under the root."""
    kind: Kind
    """What changed."""
    direction: Direction
    """Worse, better or neither."""
    before: Side | None
    """The first store's record (None: new)."""
    after: Side | None
    """The second store's record (None: gone)."""
    similarity: float | None = None
    """Dice over word tokens, 0..1, rounded to 4 places (None: no two texts compared)."""
    only_before: tuple[tuple[str, int], ...] = ()
    """Words (with their counts) only the first text has, the most frequent first."""
    only_after: tuple[tuple[str, int], ...] = ()
    """Words only the second text has."""
    note: str | None = None
    """What could not be compared and why (a text missing from its store)."""

    @property
    def group(self) -> Group:
        """The group people see it in."""
        if self.direction is Direction.WORSE:
            return Group.WORSE
        if self.direction is Direction.BETTER:
            return Group.BETTER
        return {
            Kind.NEW: Group.NEW,
            Kind.GONE: Group.GONE,
            Kind.TEXT: Group.TEXT,
        }.get(self.kind, Group.VERDICT)

    @property
    def chars_delta(self) -> int:
        """Characters gained (positive) or lost (negative)."""
        return (self.after.chars if self.after else 0) - (self.before.chars if self.before else 0)

    @property
    def mime(self) -> str:
        """The MIME type it is summed under: the second store's, else the first's."""
        side = self.after or self.before
        return side.mime if side is not None else ""

    @property
    def reader(self) -> str:
        """The reader it is summed under (the reader family, else the extractor)."""
        side = self.after if self.after is not None and self.after.status == Status.OK else None
        side = side or self.before or self.after
        if side is None:
            return ""
        return side.reader or side.extractor or "(none)"


@dataclass(frozen=True, slots=True)
class Breakdown:
    """The changes of one MIME type or one reader."""

    name: str
    """The MIME type or reader."""
    changed: int
    """Files that changed in any way (new and gone included)."""
    worse: int
    """Files that got worse."""
    better: int
    """Files that got better."""
    flips: int
    """Status flips."""
    median_similarity: float | None
    """The median Dice similarity of its changed texts (None: no text compared)."""
    lowest: tuple[tuple[float, str], ...]
    """Its lowest-similarity files: (similarity, path), lowest first."""


@dataclass(frozen=True, slots=True)
class DiffSummary:
    """What the whole comparison found."""

    files_before: int
    """Records in the first store."""
    files_after: int
    """Records in the second store."""
    unchanged: int
    """Files in both that did not change."""
    groups: dict[Group, int]
    """Files per group (every group, 0 included)."""
    by_mime: tuple[Breakdown, ...]
    """Per MIME type with a change, the most changed first."""
    by_reader: tuple[Breakdown, ...]
    """Per reader with a change, the most changed first."""
    lowest: tuple[tuple[float, str, str], ...]
    """The lowest-similarity files overall: (similarity, root, path), lowest first."""
    bad_lines: int = 0
    """Lines of either store's index that were not records (left out)."""

    @property
    def worse(self) -> bool:
        """Whether anything got worse."""
        return self.groups[Group.WORSE] > 0

    @property
    def paired(self) -> int:
        """Files present in both stores (new and gone files are never worse or better)."""
        return self.files_before - self.groups[Group.GONE]


# -- the similarity -------------------------------------------------------------------------


def words(text: str) -> Counter[str]:
    """The word tokens of ``text``, case-folded, with their counts."""
    return Counter(w.casefold() for w in _WORD.findall(text))


def dice(a: Counter[str], b: Counter[str]) -> float:
    """Dice's coefficient of two bags of words: twice the words they share (each counted as
    often as the side that has fewer of it), over all the words of both. 1.0 for two equal
    bags (two empty ones too), 0.0 for two with no word in common; symmetric."""
    total = a.total() + b.total()
    if not total:
        return 1.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    shared = sum(min(n, large[w]) for w, n in small.items() if w in large)
    return 2 * shared / total


def only_in(a: Counter[str], b: Counter[str], top: int = TOP_WORDS) -> tuple[tuple[str, int], ...]:
    """The ``top`` words ``a`` has and ``b`` has not, the most frequent first (ties by word)."""
    only = ((n, w) for w, n in a.items() if w not in b)
    return tuple((w, n) for n, w in heapq.nsmallest(top, only, key=lambda t: (-t[0], t[1])))


# -- judging one pair -----------------------------------------------------------------------


def status_rank(status: str) -> int:
    """0 for text, 1 for no text without a failure (or a status not known here), 2 for error."""
    return _RANKS.get(status, _UNKNOWN_RANK)


def _fingerprint(rec: Record) -> tuple[object, ...]:
    """What says whether an ok record's text may differ from another's."""
    verdict = rec.quality.verdict if rec.quality is not None else None
    return (rec.sha256, rec.extractor, rec.reader, rec.v, rec.chars, verdict)


def _quality(rec: Record, text: str | None) -> Quality | None:
    """The record's quality when it was given by the current rules, else the text's scored
    now (a foreign or older store), else whatever the record holds."""
    q = rec.quality
    if (q is None or q.v != QUALITY_VERSION) and text is not None:
        return score(text, rec.mime, chars=rec.chars, pages=rec.pages)
    return q


def _text(store: Store, rec: Record) -> tuple[str | None, str | None]:
    """(the record's text, None) or (None, why it could not be read)."""
    if rec.sha256 is None:
        return None, "no content hash"
    try:
        data = store.text_bytes(rec.sha256, TEXT_LIMIT)
    except OSError as exc:
        return None, f"text not in the store {store.out} ({exc.strerror or exc})"
    return data.decode("utf-8", errors="replace"), None


def judge(a: Record, b: Record, store_a: Store, store_b: Store) -> FileChange | None:
    """The change from ``a`` (first store) to ``b`` (second) of one file; None for none."""
    if a.status != b.status:
        ra, rb = status_rank(a.status), status_rank(b.status)
        way = Direction.WORSE if rb > ra else Direction.BETTER if rb < ra else Direction.NEITHER
        return _change(a, b, Kind.FLIPPED, way)
    if a.status == Status.OK and _fingerprint(a) != _fingerprint(b):
        return _text_change(a, b, store_a, store_b)
    if a.reason != b.reason:
        return _change(a, b, Kind.REASON, Direction.NEITHER)
    return None


def _change(a: Record, b: Record, kind: Kind, way: Direction) -> FileChange:
    return FileChange(b.root, b.path, kind, way, Side.of(a, a.quality), Side.of(b, b.quality))


def _text_change(a: Record, b: Record, store_a: Store, store_b: Store) -> FileChange | None:
    text_a, why_a = _text(store_a, a)
    text_b, why_b = _text(store_b, b)
    qa, qb = _quality(a, text_a), _quality(b, text_b)
    before, after = Side.of(a, qa), Side.of(b, qb)
    if text_a is None or text_b is None:
        way = _text_direction(before, after, None)
        note = "; ".join(n for n in (why_a, why_b) if n)
        return FileChange(b.root, b.path, Kind.TEXT, way, before, after, note=note)
    if text_a == text_b and before.verdict == after.verdict:
        return None  # another extractor's name, the same text: no change
    wa, wb = words(text_a), words(text_b)
    similarity = round(dice(wa, wb), 4)
    way = _text_direction(before, after, similarity)
    return FileChange(
        b.root, b.path, Kind.TEXT, way, before, after,
        similarity, only_in(wa, wb), only_in(wb, wa),
    )  # fmt: skip


def _text_direction(before: Side, after: Side, similarity: float | None) -> Direction:
    """Rules 2 and 3 of the module's docstring."""
    if before.verdict is not None and after.verdict is not None:
        va, vb = _verdict_rank(before.verdict), _verdict_rank(after.verdict)
        if vb != va:
            return Direction.WORSE if vb > va else Direction.BETTER
    if similarity is not None and similarity < LOW_SIMILARITY:
        if after.chars < before.chars:
            return Direction.WORSE
        if after.chars > before.chars:
            return Direction.BETTER
    return Direction.NEITHER


def _verdict_rank(verdict: str) -> int:
    return rank(Quality(verdict))


# -- the merge ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """One record of a store in the merge: its line, parsed only when needed."""

    line: bytes
    record: Record | None = None

    def parsed(self) -> Record | None:
        """The record (None: the line is not one)."""
        if self.record is None:
            got = read_jsonl(self.line).records
            self.record = got[0] if got else None
        return self.record


_VOLATILE = re.compile(rb',"reused":(?:true|false),"why":(?:null|"[a-z-]*"),"ms":\d+,')
"""What a sweep changes in a record it did not read again, or read again to the same verdict
(``reused``, ``why``, ``ms``), as this quarry writes them: the same bytes inside a JSON string
would have their quotes escaped, so only the record's own fields match."""


def _same_lines(a: bytes, b: bytes) -> bool:
    """Whether two lines are one record but for :data:`_VOLATILE` (two fresh sweeps of one
    folder differ in every ``ms``: a million parses saved). Lines of another writer's shape
    are never the same here; they are parsed and compared."""
    return a == b or _VOLATILE.sub(b",", a, count=1) == _VOLATILE.sub(b",", b, count=1)


def _entries(store: Store, warn: Callable[[str], None]) -> Iterator[_Entry]:
    """The store's records in key order, as lines (from the index) or records (the file)."""
    with store_chunks(store, warn) as chunks:
        for chunk in chunks:
            known = chunk.known_records()
            if known is not None:
                yield from (_Entry(b"", r) for r in known)
            else:
                yield from map(_Entry, chunk.lines())


@dataclass(slots=True)
class _Tally:
    """A breakdown being counted."""

    changed: int = 0
    worse: int = 0
    better: int = 0
    flips: int = 0
    similarities: list[float] = field(default_factory=list)
    lowest: list[tuple[float, str]] = field(default_factory=list)

    def add(self, change: FileChange) -> None:
        self.changed += 1
        self.worse += change.direction is Direction.WORSE
        self.better += change.direction is Direction.BETTER
        self.flips += change.kind is Kind.FLIPPED
        if change.similarity is not None:
            self.similarities.append(change.similarity)
            _keep_lowest(self.lowest, (change.similarity, change.path), LOWEST_PER_GROUP)

    def frozen(self, name: str) -> Breakdown:
        median = statistics.median(self.similarities) if self.similarities else None
        lowest = tuple(sorted(self.lowest)[:LOWEST_PER_GROUP])
        return Breakdown(name, self.changed, self.worse, self.better, self.flips, median, lowest)


def _keep_lowest(items: list[Any], item: Any, n: int) -> None:
    """Add ``item``, keeping at least the ``n`` lowest of all added (pruned now and then,
    so a diff of a million changed texts holds a few items, not a million)."""
    items.append(item)
    if len(items) >= 4 * n:
        items.sort()
        del items[n:]


class Comparison:
    """Two stores compared: :meth:`changes` yields each changed file in key order; once it
    is exhausted, :meth:`summary` holds the counts and breakdowns."""

    def __init__(self, a: Store, b: Store, warn: Callable[[str], None]) -> None:
        self.a, self.b = a, b
        self._warn = warn
        self._files = [0, 0]
        self._bad = [0, 0]
        self._unchanged = 0
        self._groups = dict.fromkeys(Group, 0)
        self._mimes: dict[str, _Tally] = {}
        self._readers: dict[str, _Tally] = {}
        self._lowest: list[tuple[float, str, str]] = []
        self._done = False

    def changes(self) -> Iterator[FileChange]:
        """Every file that differs, in (root, path) order."""
        for change in self._merge():
            self._count(change)
            yield change
        self._done = True

    def _merge(self) -> Iterator[FileChange]:
        left, right = _entries(self.a, self._warn), _entries(self.b, self._warn)
        ea, eb = self._next(left, 0), self._next(right, 1)
        while ea is not None or eb is not None:
            if ea is not None and eb is not None and ea.line and _same_lines(ea.line, eb.line):
                self._unchanged += 1  # the same record, never parsed
                ea, eb = self._next(left, 0), self._next(right, 1)
                continue
            ra = ea.parsed() if ea is not None else None
            rb = eb.parsed() if eb is not None else None
            if ea is not None and ra is None:  # a line of the index that is no record
                self._bad[0] += 1
                ea = self._next(left, 0)
            elif eb is not None and rb is None:
                self._bad[1] += 1
                eb = self._next(right, 1)
            elif rb is None or (ra is not None and ra.key < rb.key):
                assert ra is not None
                yield _alone(ra, Kind.GONE)
                ea = self._next(left, 0)
            elif ra is None or rb.key < ra.key:
                yield _alone(rb, Kind.NEW)
                eb = self._next(right, 1)
            else:
                change = judge(ra, rb, self.a, self.b) if ra != rb else None
                if change is None:
                    self._unchanged += 1
                else:
                    yield change
                ea, eb = self._next(left, 0), self._next(right, 1)

    def _next(self, entries: Iterator[_Entry], side: int) -> _Entry | None:
        entry = next(entries, None)
        self._files[side] += entry is not None
        return entry

    def _count(self, change: FileChange) -> None:
        self._groups[change.group] += 1
        self._mimes.setdefault(change.mime, _Tally()).add(change)
        self._readers.setdefault(change.reader, _Tally()).add(change)
        if change.similarity is not None:
            _keep_lowest(self._lowest, (change.similarity, change.root, change.path), LOWEST)

    def summary(self) -> DiffSummary:
        """The counts and breakdowns (the stream of :meth:`changes` must be exhausted)."""
        if not self._done:
            raise RuntimeError("the changes were not all read")
        return DiffSummary(
            files_before=self._files[0] - self._bad[0],
            files_after=self._files[1] - self._bad[1],
            unchanged=self._unchanged,
            groups=dict(self._groups),
            by_mime=_breakdowns(self._mimes),
            by_reader=_breakdowns(self._readers),
            lowest=tuple(sorted(self._lowest)[:LOWEST]),
            bad_lines=sum(self._bad),
        )


def _alone(rec: Record, kind: Kind) -> FileChange:
    side = Side.of(rec, rec.quality)
    if kind is Kind.NEW:
        return FileChange(rec.root, rec.path, kind, Direction.NEITHER, None, side)
    return FileChange(rec.root, rec.path, kind, Direction.NEITHER, side, None)


def _breakdowns(tallies: dict[str, _Tally]) -> tuple[Breakdown, ...]:
    frozen = [t.frozen(name) for name, t in tallies.items()]
    return tuple(sorted(frozen, key=lambda b: (-b.changed, b.name)))
