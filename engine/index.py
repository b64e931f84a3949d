"""The records of a store in memory, with what every sweep asks of them kept up to date.

A watch batch changes a handful of records in a store of 100,000; recomputing the summary,
the content index and the set of referenced texts from every record for each batch would
cost more than the batch. :class:`RecordIndex` updates them by the records that changed.
"""

from __future__ import annotations

import bisect
import operator
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import compress
from operator import is_not

from engine.detect import name_key
from engine.records import Key, Record, Status, lacked

Content = tuple[str, str]
"""(sha256, :func:`~engine.detect.name_key` of the path): what is read, and how."""
_KEY = operator.attrgetter("root", "path")
BULK_ABOVE = 1000
"""More changes than this (and than a quarter of the records) in one apply: recount all."""


class Tally:
    """Counts for the summary, updated one record at a time."""

    def __init__(self) -> None:
        self.files = 0
        self.counts: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.reused = 0
        self.chars = 0
        self.waiting: Counter[str] = Counter()
        """Tool -> records that name it among the tools that would unlock them."""
        self.quality: Counter[str] = Counter()
        """Quality verdict -> ok records with it."""
        self.without: Counter[str] = Counter()
        """Tool -> records read without it (:attr:`Record.read_with`)."""

    @classmethod
    def of(cls, records: Iterable[Record]) -> Tally:
        """The tally of ``records``, counted field by field (what :meth:`add` does one
        record at a time: a 100,000-record store is counted at once)."""
        recs = records if isinstance(records, list) else list(records)
        t = cls()
        t.files = len(recs)
        t.counts = Counter(map(operator.attrgetter("status"), recs))
        t.reasons = Counter(f"{r.status}/{r.reason}" for r in recs if r.reason)
        t.reused = sum(map(operator.attrgetter("reused"), recs))
        t.chars = sum(map(operator.attrgetter("chars"), recs))
        t.quality = Counter(r.quality.verdict for r in recs if r.quality is not None)
        for r in recs:
            if r.needs:
                t.waiting.update(r.needs)
            if r.read_with is not None:
                t.without.update(lacked(r.read_with))
        return t

    def take(self, other: Tally, sign: int = 1) -> None:
        """Count every record ``other`` counts in (``sign=1``) or out (``sign=-1``)."""
        self.files += sign * other.files
        self.reused += sign * other.reused
        self.chars += sign * other.chars
        for mine, theirs in (
            (self.counts, other.counts),
            (self.reasons, other.reasons),
            (self.waiting, other.waiting),
            (self.quality, other.quality),
            (self.without, other.without),
        ):
            for name, n in theirs.items():
                mine[name] += sign * n

    def add(self, r: Record, sign: int = 1) -> None:
        """Count ``r`` in (``sign=1``) or out (``sign=-1``)."""
        self.files += sign
        self.counts[r.status] += sign
        if r.reason:
            self.reasons[f"{r.status}/{r.reason}"] += sign
        self.reused += sign if r.reused else 0
        self.chars += sign * r.chars
        if r.quality is not None:
            self.quality[r.quality.verdict] += sign
        if r.needs:  # needs_tool, scanned, or a container whose members wait on a tool
            for tool in r.needs:
                self.waiting[tool] += sign
        for tool in lacked(r.read_with):
            self.without[tool] += sign


class RecordIndex:
    """Records by key, one record per content hash and name key, text reference counts, and a
    tally."""

    def __init__(self, records: Iterable[Record] = ()) -> None:
        self.records: dict[Key, Record] = {}
        self.tally = Tally()
        self._by_content: dict[Content, Key] = {}
        self._text_refs: Counter[str] = Counter()
        self._sizes: Counter[int] = Counter()
        """Size -> records with a content hash of that size (reuse needs an equal size)."""
        self._sorted: list[Key] | None = None
        """Every key in order, once a watch batch asked which records lie under a folder
        (:meth:`keys_under`); kept up to date by :meth:`apply` from then on."""
        recs = list(records)
        by_key = dict(zip(map(_KEY, recs), recs, strict=True))
        if len(by_key) == len(recs):
            # Everything at once: loading a 100,000-record store must cost little.
            self.records = by_key
            self._derive(recs)
        else:  # duplicate keys (a hand-edited store): the later record wins, one at a time
            self.apply(by_key, ())

    def _derive(self, recs: list[Record]) -> None:
        """Tally, sizes, text references and content index from ``recs`` (every record)."""
        self.tally = Tally.of(recs)
        self._sorted = None
        self._sizes = Counter(r.size for r in recs if r.sha256 is not None)
        with_text = [r for r in recs if r.status == Status.OK and r.sha256 is not None]
        self._text_refs = Counter(r.sha256 for r in with_text if r.sha256)
        self._by_content = {}
        for r in recs:
            if r.sha256 is not None:
                self._by_content.setdefault(_content(r), (r.root, r.path))
        self._by_content.update({_content(r): (r.root, r.path) for r in with_text if r.sha256})

    def same_content(self, sha256: str, path: str) -> Record | None:
        """An earlier record with this content whose name is read the same way as ``path``'s
        (one with text if any has): a record of these bytes under another suffix may hold
        another reader's verdict."""
        key = self._by_content.get((sha256, name_key(path)))
        return self.records.get(key) if key is not None else None

    def may_hold(self, size: int) -> bool:
        """Whether some record's content could be a file of ``size`` bytes (one with a hash
        has that size). False proves that no content of that size is known: hashing such a
        file before reading it could not find anything to reuse."""
        return self._sizes.get(size, 0) > 0

    def has_text_refs(self, sha256: str) -> bool:
        """Whether any record still names the stored text of ``sha256``."""
        return self._text_refs.get(sha256, 0) > 0

    def referenced_texts(self) -> set[str]:
        """Every content hash whose text some record names."""
        return {sha for sha, n in self._text_refs.items() if n > 0}

    @property
    def errors(self) -> int:
        """Error records."""
        return self.tally.counts.get(Status.ERROR, 0)

    def apply(self, new: Mapping[Key, Record], gone: Iterable[Key]) -> None:
        """Replace or add ``new`` records and drop the ``gone`` keys."""
        gone = tuple(gone)
        records = self.records  # the same dict, always: a run holds it
        # A sweep hands over every record it decided; most are the very objects held.
        changed = list(compress(new.keys(), map(is_not, map(records.get, new), new.values())))
        if len(changed) + len(gone) > max(BULK_ABOVE, len(records) // 4):
            # The first sweep after a cold one marks every record reused: counting 20,000
            # records out and in again one at a time cost 0.12 s, a recount 0.03 s.
            for key in gone:
                records.pop(key, None)
            records.update((key, new[key]) for key in changed)
            self._derive(list(records.values()))
            return
        for key in gone:
            old = records.pop(key, None)
            if old is not None:
                self._forget(old)
                self._unsort(key)
        for key in changed:
            rec = new[key]
            old = records.get(key)
            if old is not None:
                self._forget(old)
            elif self._sorted is not None:
                bisect.insort(self._sorted, key)
            records[key] = rec
            self._learn(rec)

    def keys_under(self, root: str, rels: Iterable[str]) -> list[Key]:
        """The keys of ``root`` whose path is one of ``rels`` or lies under one of them (""
        is the whole root), in key order: a binary search and the keys found, not a pass
        over every record (a watch batch in a store of a million files)."""
        if self._sorted is None:
            # once: the records of a loaded store are in key order already (a linear sort)
            self._sorted = sorted(self.records)
        keys = self._sorted
        found: set[Key] = set()
        for rel in rels:
            if rel and (root, rel) in self.records:
                found.add((root, rel))
            prefix = rel.rstrip("/") + "/" if rel else ""
            i = bisect.bisect_left(keys, (root, prefix))
            while i < len(keys) and keys[i][0] == root and keys[i][1].startswith(prefix):
                found.add(keys[i])
                i += 1
        return sorted(found)

    def _unsort(self, key: Key) -> None:
        if self._sorted is not None:
            i = bisect.bisect_left(self._sorted, key)
            if i < len(self._sorted) and self._sorted[i] == key:
                del self._sorted[i]

    def _learn(self, r: Record) -> None:
        self.tally.add(r)
        if r.sha256 is None:
            return
        self._sizes[r.size] += 1
        if r.has_text:
            self._text_refs[r.sha256] += 1
        content = _content(r)
        held = self._by_content.get(content)
        if held is None or (r.has_text and not self.records[held].has_text):
            self._by_content[content] = r.key

    def _forget(self, r: Record) -> None:
        self.tally.add(r, -1)
        if r.sha256 is None:
            return
        self._sizes[r.size] -= 1
        if self._sizes[r.size] <= 0:
            del self._sizes[r.size]
        if r.has_text:
            self._text_refs[r.sha256] -= 1
            if self._text_refs[r.sha256] <= 0:
                del self._text_refs[r.sha256]
        content = _content(r)
        if self._by_content.get(content) == r.key:
            # Another copy of this content, if any, is not indexed until it is next seen:
            # at worst one file is read again instead of reusing its twin's text.
            del self._by_content[content]


def _content(r: Record) -> Content:
    """``r``'s key in the content index (only records with a hash are indexed)."""
    assert r.sha256 is not None
    return (r.sha256, name_key(r.path))
