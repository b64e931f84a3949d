"""The stat index: which files the next full sweep would find kept as they are.

A full ``quarry sweep`` of a folder where nothing changed reads nothing, hashes nothing and
writes no record, yet it used to decode and index every record of the store to learn that.
``extract.stat`` (beside ``extract.jsonl``) lets it learn it from the walk alone: per root, the
path, size and mtime of every record that such a sweep keeps as the very same record (an ``ok``
verdict of a current reader with its text in the store, an unsupported one for the same tools,
a skipped link...), the lines of the ``error`` records (every full sweep reads those files
again), and the store's tally for the summary. When the walk finds exactly those paths with
exactly those sizes and mtimes, the sweep's outcome is known but for the errors: it reads
just them again (:meth:`engine.sweep.Sweeper.run`), and when each keeps its verdict the records
stand and only the summary is written.

The index is derived and never trusted beyond what it was written for:

- the ``extract.jsonl`` beside it: every write of it by this quarry removes the index first
  (:meth:`engine.store.Store.write_records`), and its size, mtime, ctime and inode are
  compared, for writers that do not (another version, a hand);
- the text folders as they were (``extract/00`` .. ``extract/ff``'s mtimes and ctimes: a text
  removed or added since is seen);
- the readers, their versions and MIME types (:func:`readers_table`: a quick sweep does not
  import every reader to learn them while :func:`sources` says nothing they are made from
  changed), the tools' names and versions and the quality rules in force (:func:`environment`);
- mtimes older than the start of the sweep that wrote it by git's racy margin, and a summary
  that says no earlier sweep started since (a sweep trusts a size and mtime only then);
- its own checksum and version.

Anything else, or any doubt, and the sweep goes the usual way, which writes a new index.
Deleting the file costs one ordinary sweep.
"""

from __future__ import annotations

import os
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

import msgspec

from engine.jsonl import line_of
from engine.records import Key, Record, Status
from engine.store import STAT_INDEX, Store, atomic_write, read_file
from engine.textnames import TextNames
from engine.walk import Listing

if TYPE_CHECKING:
    from engine.index import Tally
    from engine.tools import ToolSet

NAME = STAT_INDEX
"""The index's file in the store folder."""
VERSION = 4
"""Bumped whenever what the index holds, or the rules it stands for, change."""
_MAGIC = b"quarry-stat\n"

Kept: TypeAlias = tuple[str, str, bool]
"""How the walk finds the file of a record a full sweep keeps as it is: the entry's kind
(``file``, ``link``...), its detail, and whether its file is read again (an ``error``)."""
Keeper: TypeAlias = "Callable[[Record], Kept | None]"
"""Judges a record for the index (the pipeline's :class:`engine.plan.Keeper`): None when a
full sweep would hash, read or rewrite it. The index is told, never decides, what is kept."""


class RootFiles(msgspec.Struct, frozen=True, array_like=True):
    """One root's files as the index knows them. Names are :func:`encoded`: a name the file
    system gave as bytes that are not UTF-8 is held exactly."""

    root: bytes
    """The root folder."""
    paths: bytes
    """Relative paths in the walk's order, NUL-joined (a path never holds a NUL)."""
    sizes: bytes
    """Each path's size, 8 bytes little-endian (:func:`packed`)."""
    mtimes: bytes
    """Each path's mtime in nanoseconds, as ``sizes``."""
    odd: list[tuple[bytes, str, bytes]]
    """(path, kind, detail) of what the walk finds as other than a regular file (a link, a
    special file, an unreadable folder, a file over ``--max-bytes``), in the walk's order."""
    retry: list[bytes]
    """The ``extract.jsonl`` lines of the ``error`` records a full sweep reads again (every
    one not quarantined): with them a sweep of an unchanged folder reads just those files."""


class Counts(msgspec.Struct, frozen=True, array_like=True):
    """The store's tally, for the summary a quick sweep writes."""

    files: int
    counts: dict[str, int]
    reasons: dict[str, int]
    reused: int
    chars: int
    waiting: dict[str, int]
    quality: dict[str, int]
    without: dict[str, int] = {}
    """Tool -> records read without it (an index written before it was kept: none)."""


class StatIndex(msgspec.Struct, frozen=True):
    """The contents of ``extract.stat``."""

    v: int
    jsonl: tuple[int, int, int, int]
    """``extract.jsonl``'s size, mtime_ns, ctime_ns and inode when the index was written."""
    texts: list[int]
    """The text folders' mtime_ns and ctime_ns, in name order (-1 for one that is missing)."""
    env: str
    """:func:`environment` when it was written."""
    readers: str
    """:func:`readers_table` when it was written."""
    sources: str
    """:func:`sources` when it was written."""
    started_ns: int
    """The start of the sweep that wrote it, as the summary it wrote says: every listed mtime
    is older than this by the racy margin."""
    roots: list[RootFiles]
    """The roots whose every record is kept as it is."""
    counts: Counts
    """The tally of every record in the store."""

    def describes(
        self, store: Store, tools: ToolSet, rules: str, started_ns: int, now: str
    ) -> bool:
        """Whether this index still describes ``store``: its ``extract.jsonl``, its texts, the
        environment with ``tools`` and the keeper's ``rules``, a summary that started at
        ``started_ns``, and the readers (trusted as listed while their :func:`sources` are
        ``now``)."""
        return (
            self.v == VERSION
            and started_ns >= self.started_ns
            and self.jsonl == store.jsonl_identity()
            and self.texts == store.text_folder_times()
            and self.env == environment(tools, rules)
            and ((self.sources != "" and self.sources == now) or self.readers == readers_table())
        )

    def unchanged(self, found: Listing) -> bool:
        """Whether a walk of a root found exactly what the index lists of it."""
        files = self.files_of(found.root)
        if files is None or len(found.paths) * 8 != len(files.sizes):
            return False
        # Listed in the walk's order: comparisons in C, no per-path lookups.
        return (
            packed(found.sizes) == files.sizes
            and packed(found.mtimes) == files.mtimes
            and encoded("\0".join(found.paths)) == files.paths
            and _odd(found) == files.odd
        )

    def files_of(self, root: str) -> RootFiles | None:
        """What the index lists of ``root``; None when it is not one of its roots."""
        want = encoded(root)
        return next((files for files in self.roots if files.root == want), None)

    def retries(self, root: str) -> list[Record]:
        """The records of ``root`` whose files a full sweep reads again (its errors)."""
        files = self.files_of(root)
        return [Record.from_json(line) for line in files.retry] if files is not None else []

    def reader_versions(self) -> dict[str, int] | None:
        """Reader name -> version, as :attr:`readers` lists them (for the summary); None when
        a line does not read as one (then the registry is asked)."""
        lines = self.readers.splitlines()
        try:
            return {n: int(v.partition(":")[0]) for n, _, v in (x.partition("=") for x in lines)}
        except ValueError:
            return None

    def tally(self) -> Tally:
        """The store's tally as it was counted when the index was written."""
        from engine.index import Tally

        c = self.counts
        t = Tally()
        t.files, t.reused, t.chars = c.files, c.reused, c.chars
        t.counts, t.reasons = Counter(c.counts), Counter(c.reasons)
        t.waiting, t.quality = Counter(c.waiting), Counter(c.quality)
        t.without = Counter(c.without)
        return t


def environment(tools: ToolSet, rules: str) -> str:
    """Everything besides a file's record and stat and the readers that decides whether a
    sweep keeps the record: the tools' names and versions, the quality rules (and whether texts
    are scored), the engine's own and the keeper's ``rules`` (:data:`engine.plan.KEEP_RULES`),
    and how kinds are told apart (:data:`engine.mimes.DETECTION`)."""
    from engine import __version__
    from engine.mimes import DETECTION
    from engine.quality import QUALITY_VERSION
    from engine.quality import enabled as scoring

    env = f"{VERSION}:{__version__}:{QUALITY_VERSION}:{scoring()}:{rules}:{DETECTION}"
    return f"{env}\n{tools.named}"  # (what the fingerprint digests: no hashlib to import)


def readers_table() -> str:
    """Every reader's name, version and MIME types, in lookup order (importing every reader
    module: 15 ms, most of a quick sweep's time that is not the walk)."""
    from engine.readers.registry import all_readers

    return "\n".join(f"{r.name}={r.version}:{','.join(sorted(r.mimes))}" for r in all_readers())


def sources() -> str:
    """What :func:`readers_table` is made from, judged as Python judges its own caches: the
    engine's source files by path, size and mtime (as a ``.pyc`` is), every folder on the
    import path by its mtime (as importlib's path finder is: installing or removing a library
    changes it; a reader drops out when its library is missing) and the interpreter. Empty
    when extra readers are in use (:func:`engine.readers.registry.use_extra`): then the table
    itself is compared."""
    # Extra readers are put in use through the registry only: one not imported has none (and
    # importing it for that imported the readers' common modules, ~8 ms of a quick sweep).
    registry = sys.modules.get("engine.readers.registry")
    if registry is not None and registry.extra():
        return ""
    parts = [sys.version]
    engine_dir = os.path.dirname(os.path.abspath(__file__))
    for folder in (engine_dir, os.path.join(engine_dir, "readers")):
        try:
            with os.scandir(folder) as it:
                for e in sorted(it, key=_name):
                    if e.name.endswith(".py"):
                        st = e.stat()
                        parts.append(f"{e.path}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            return ""  # (imported from a zip, say): the table is compared
    for folder in sys.path:
        try:
            parts.append(f"{folder}:{os.stat(folder or '.').st_mtime_ns}")
        except OSError:
            parts.append(f"{folder}:-")
    return "\n".join(parts)


_name = attrgetter("name")


def renew_sources(store: Store, index: StatIndex, now: str) -> None:
    """Write ``index`` again with the :func:`sources` it was found to describe the store with
    (``now``) when they changed but the readers' table did not (an upgrade that touched no
    reader): else every quick sweep after it would import every reader to learn what it
    learnt once."""
    if now and now != index.sources:
        _write(store, msgspec.structs.replace(index, sources=now))


def load(out: Path) -> StatIndex | None:
    """The index in the store folder ``out``; None when there is none or it cannot be used."""
    try:
        data = read_file(out / NAME)
    except OSError:
        return None
    head = len(_MAGIC)
    if not data.startswith(_MAGIC) or len(data) < head + 4:
        return None
    payload = data[head + 4 :]
    if int.from_bytes(data[head : head + 4], "big") != zlib.crc32(payload):
        return None
    try:
        index = _DECODER.decode(payload)
    except (msgspec.DecodeError, ValueError):
        return None
    return index if index.v == VERSION else None


@dataclass(frozen=True, slots=True)
class Swept:
    """What a full sweep wrote, as the stat index is made from it."""

    records: Mapping[Key, Record]
    """Every record the sweep wrote."""
    roots: tuple[str, ...]
    """The roots it swept (listed even with no records: an empty folder is quick too)."""
    tally: Tally
    """Its counts, as the summary has them."""
    started_ns: int
    """When it started (a file changed after that is read again by the next sweep)."""
    texts_seen: tuple[list[int], TextNames] | None = None
    """The text folders' times and the texts listed after them, when the sweep listed them."""


def write(store: Store, swept: Swept, judge: Keeper, env: str) -> bool:
    """Write the index of ``store`` (holding its lock) after the full sweep ``swept``;
    ``judge`` tells which records it keeps as they are, under the :func:`environment`
    ``env``. False when no root qualifies (the file is then removed)."""
    # The folders' times are taken before the texts are listed: a text removed after the
    # listing changes a time the next sweep compares.
    seen = swept.texts_seen
    texts, present = seen if seen is not None else (store.text_folder_times(), None)
    # Judged as they come (the records may be read from the index a batch at a time), first
    # holding none: a root with one record a full sweep would not keep as it is (a cold
    # sweep's first, a resumed sweep's reads, which may come after a million kept) is out.
    found_in, dead = _not_kept(swept.records, judge)
    others = sorted(found_in.difference(swept.roots))
    by_root: dict[str, list[_Found]] = {r: [] for r in (*swept.roots, *others) if r not in dead}
    alive = by_root.keys()
    lacking: set[str] = set()  # roots with a record whose text the store does not hold
    if any(root in found_in for root in alive):
        for (root, _path), r in swept.records.items():
            kept_as = judge(r) if root in alive else None
            if kept_as is None or root in lacking:
                continue
            if r.status == Status.OK and r.sha256:
                present = store.text_names() if present is None else present
                if r.sha256 not in present:
                    lacking.add(root)
                    continue
            # what the index needs of the record, not the record (a million of them: GBs)
            kind, detail, again = kept_as
            by_root[root].append(
                (r.path, r.size, r.mtime_ns, kind, detail, line_of(r) if again else None)
            )
    kept: list[RootFiles] = []
    for root, found in by_root.items():
        if root in lacking:
            continue
        found.sort(key=_walk_order)
        kept.append(
            RootFiles(
                encoded(root),
                encoded("\0".join([f[0] for f in found])),
                packed(array("q", [f[1] for f in found])),
                packed(array("q", [f[2] for f in found])),
                [(encoded(f[0]), f[3], encoded(f[4])) for f in found if f[3] != "file"],
                [f[5] for f in found if f[5] is not None],
            )
        )
    if not kept:
        store.drop_stat_index()
        return False
    _write(store, _index_of(store, texts, env, swept.started_ns, kept, swept.tally))
    return True


def write_walked(
    store: Store,
    walked: list[tuple[Listing, list[bytes]]],
    tally: Tally,
    began: int,
    env: str,
    texts: list[int],
) -> None:
    """Write the index of ``store`` after a full sweep that found each walked root's every
    file kept as its record says (the caller judged each, :func:`engine.quick.leave_merged`):
    a root's files are then its walk's listing, and its ``error`` records' lines (read again
    by the next sweep) are given with it. ``texts``: the text folders' times, taken before
    the store's texts were listed for that judgement."""
    roots = [
        RootFiles(
            encoded(listing.root),
            encoded("\0".join(listing.paths)),
            packed(listing.sizes),
            packed(listing.mtimes),
            _odd(listing),
            retry,
        )
        for listing, retry in walked
    ]
    _write(store, _index_of(store, texts, env, began, roots, tally))


def _index_of(
    store: Store, texts: list[int], env: str, began: int, roots: list[RootFiles], tally: Tally
) -> StatIndex:
    """The index of ``roots`` for ``store`` as it is now (its ``extract.jsonl``, the readers)."""
    return StatIndex(
        VERSION,
        store.jsonl_identity(),
        texts,
        env,
        readers_table(),
        sources(),
        began,
        roots,
        _counts(tally),
    )


def _write(store: Store, index: StatIndex) -> None:
    payload = msgspec.msgpack.encode(index)
    atomic_write(store.out / NAME, _MAGIC + zlib.crc32(payload).to_bytes(4, "big") + payload)


def packed(numbers: array[int]) -> bytes:
    """``numbers`` (64-bit) as bytes, little-endian on any machine: a store read where
    another machine wrote it compares its own walk with what it finds, never a byte order."""
    if sys.byteorder == "little":
        return numbers.tobytes()
    swapped = array("q", numbers)
    swapped.byteswap()
    return swapped.tobytes()


def encoded(name: str) -> bytes:
    """``name`` as bytes, exactly: a lone surrogate (a name that was not UTF-8 on disk) too."""
    return name.encode("utf-8", "surrogatepass")


def _odd(found: Listing) -> list[tuple[bytes, str, bytes]]:
    paths = found.paths
    return [(encoded(paths[i]), kind, encoded(why)) for i, (kind, why) in found.odd.items()]


@runtime_checkable
class ByRoot(Protocol):
    """Records that can be gone through a root at a time (the index's,
    :class:`engine.dbindex.ServedRecords`)."""

    def roots(self) -> list[str]:
        """The roots that have records."""

    def under(self, root: str) -> Iterator[Record]:
        """The records of ``root``, decoded as they are read."""


def _not_kept(records: Mapping[Key, Record], judge: Keeper) -> tuple[set[str], set[str]]:
    """The roots of ``records``, and those of them with a record ``judge`` does not keep as
    it is.

    Records served by the index are judged a root at a time, each root until its first
    record not kept: after a cold sweep (no record kept: each was just read) that is one
    record a root, where a pass over all of them decoded every record to drop the index
    (20,000 records: ~50 ms of the sweep's serial end; a million: seconds)."""
    if isinstance(records, ByRoot):
        roots = set(records.roots())
        return roots, {r for r in roots if any(judge(x) is None for x in records.under(r))}
    seen: set[str] = set()
    dead: set[str] = set()
    for (root, _path), r in records.items():
        if root not in dead:
            seen.add(root)
            if judge(r) is None:
                dead.add(root)
    return seen, dead


_Found: TypeAlias = tuple[str, int, int, str, str, bytes | None]
"""What the index keeps of a record: path, size, mtime_ns, how the walk finds it (kind,
detail) and, for an ``error`` read again, its line."""


def _walk_order(found: _Found) -> list[str]:
    """The walk's order: depth first, each folder's names sorted, is the order of the paths'
    lists of parts (a folder's files come right after its name would)."""
    return found[0].split("/")


def _counts(t: Tally) -> Counts:
    return Counts(
        t.files,
        dict(t.counts),
        dict(t.reasons),
        t.reused,
        t.chars,
        dict(t.waiting),
        dict(t.quality),
        dict(t.without),
    )


_DECODER = msgspec.msgpack.Decoder(StatIndex)
