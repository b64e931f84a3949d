"""What changed about one file between two stores, and whether it got worse or better.

The types of a comparison (:class:`FileChange`, its :class:`Side` before and after, the
:class:`DiffSummary`), the similarity of two texts (:func:`dice` over :func:`words`) and the
rule that judges one pair of records (:func:`judge`); :mod:`engine.comparison` merges two
whole stores with it.

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
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from engine.quality import QUALITY_VERSION, Quality, rank, score
from engine.records import Record, Status
from engine.store import Store

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
    """A text changed, neither worse nor better."""
    VERDICT = "verdict"
    """A flip within a rank, or another reason: neither worse nor better."""
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
    if text_a == text_b and a.chars != b.chars and _one_file(a, b, store_a, store_b):
        # one text file for two lengths: the one before was replaced in place (a database
        # read again for its write-ahead log keeps no copy aside)
        way = _text_direction(before, after, None)
        note = "the text before was not kept (replaced in place)"
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


def _one_file(a: Record, b: Record, store_a: Store, store_b: Store) -> bool:
    """Whether both sides' texts are read from one file (a store against itself as it was,
    one content hash): what the side before said of its text is not what the file holds."""
    return a.sha256 == b.sha256 and store_a.out == store_b.out


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
