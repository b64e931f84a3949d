"""Per file: reuse the earlier verdict, or read it again, and why. Pure: no I/O.

The rules of the extract stage, per reader: unchanged content with the same reader version is
never read again; ``unsupported`` is retried when the tool set changes (or a reader for its
type appears), and any verdict read without a tool that is found now when that tool comes (not
when a tool's version changes); ``error`` is retried on every full sweep; a reader's version
bump redoes just that reader's records; an operator's retry forces a read. A content whose
reads lost their worker (crashed it, or were killed with it) three sweeps running is
quarantined: left alone, even by full sweeps, until its content or its reader changes, or an
operator retries it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING

from engine.quality import Verdict
from engine.records import STATUSES, Reason, Record, Status, Why, lacks_found
from engine.tools import ToolSet, read_with
from engine.walk import Entry

if TYPE_CHECKING:
    from engine.statindex import Kept

RACY_NS = 1_000_000_000
"""A file modified this close before the previous sweep started is re-hashed (git's racy rule)."""
CRASH_QUARANTINE = 3
"""Sweeps in a row a content may lose its worker before it is left alone."""
KEEP_RULES = f"{RACY_NS}:{CRASH_QUARANTINE}"
"""The rules above as the stat index records them (it is void when they change)."""
EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
"""The sha256 of no bytes (a test holds it to hashlib's)."""
WAL_SUFFIX = "-wal"
"""What a SQLite database's write-ahead log adds to its name. An application that holds a
database open in WAL mode (a browser's history, a chat client's messages) writes its newest
rows there: the database file's size and mtime stay as they were until a checkpoint, so a
changed log is what says the database changed (its reader applies the log)."""


def logged_database(path: str) -> str | None:
    """The database whose write-ahead log ``path`` would be (``a/app.db`` for
    ``a/app.db-wal``), or None when ``path`` is no such name."""
    if not path.endswith(WAL_SUFFIX):
        return None
    name = path[: -len(WAL_SUFFIX)]
    return name if name and not name.endswith("/") else None


_SKIP_REASON = {
    "link": Reason.LINK, "special": Reason.SPECIAL, "unreadable": Reason.UNREADABLE,
    "too_large": Reason.TOO_LARGE,
}  # fmt: skip
SKIP_KINDS: dict[str, str] = {reason: kind for kind, reason in _SKIP_REASON.items()}
"""A skipped record's reason -> the kind of walk entry that gives it."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one file whose content hash is known."""

    read: bool
    """True to read the file; False to keep ``base``'s verdict."""
    why: str | None = None
    """A :class:`Why` code when ``read``."""
    base: Record | None = None
    """The earlier record whose verdict is kept (or that the read replaces)."""


def needs_hash(
    prior: Record | None, size: int, mtime_ns: int, prev_started_ns: int, rehash: bool
) -> bool:
    """Whether a file must be hashed, or its earlier record's hash can be trusted."""
    if rehash or prior is None or prior.sha256 is None:
        return True
    if prior.size != size or prior.mtime_ns != mtime_ns:
        return True
    # The earlier hash was taken after this mtime; a write within the clock's granularity of
    # that moment could have left the mtime unchanged, so such a file is not trusted.
    return mtime_ns >= prev_started_ns - RACY_NS


def still_current(
    prior: Record,
    reader_versions: Mapping[str, int],
    reader_for_mime: Mapping[str, str | None],
    tool_names: AbstractSet[str],
    unknown_again: bool = False,
) -> bool:
    """A cheap yes for the warm sweep's common case: an ok or no-text verdict whose reader is
    unchanged, read with every tool of ``tool_names`` (the tools found now) it uses, for
    unchanged content, is kept by :func:`decide` too (a test holds them to it). False means
    "ask decide()", not "read" (``unknown_again`` as :func:`decide` takes it)."""
    if unknown_again and prior.reader == TEXT_READER and _garbled(prior):
        return False
    if (
        (prior.status == Status.OK and not prior.needs)
        or (prior.status == Status.EMPTY and prior.reason == Reason.NO_TEXT)
    ) and not lacks_found(prior.read_with, tool_names):
        reader = prior.reader
        return (
            reader is not None
            and reader_versions.get(reader) == prior.v
            and reader_for_mime.get(prior.mime) == reader
        )
    return False


def keeps(
    prior: Record,
    reader_versions: Mapping[str, int],
    reader_for_mime: Mapping[str, str | None],
    tools_fingerprint: str,
    tool_names: AbstractSet[str] | None = None,
    full: bool = True,
    unknown_again: bool = False,
) -> bool:
    """Whether a full sweep that trusts ``prior``'s hash (same size and mtime) keeps its
    verdict without reading the file: :func:`decide` with the content unchanged (``full``
    False: for the sweep that decided it, which reads no ``error`` again)."""
    stale = _stale(
        prior, reader_versions, reader_for_mime, tools_fingerprint, full, tool_names, unknown_again
    )
    return stale is None


def decide(
    sha256: str,
    prior: Record | None,
    same_content: Record | None,
    *,
    reader_versions: Mapping[str, int],
    reader_for_mime: Mapping[str, str | None],
    tools_fingerprint: str,
    full: bool,
    forced: bool,
    tool_names: AbstractSet[str] | None = None,
    unknown_again: bool = False,
) -> Decision:
    """Reuse or read a file with content ``sha256``.

    ``prior`` is the file's own earlier record (same path); ``same_content`` any earlier record
    with the same hash (a move or a copy). ``reader_for_mime`` maps MIME -> current reader name.
    ``tool_names``: the tools found now (those of ``tools_fingerprint``), when known: a verdict
    read without one of them is read again. ``unknown_again``: readers came, or kinds are told
    apart anew, since the store's last sweep; a file no reader took is read again (its kind
    may be a reader's now).
    """
    if forced:
        return Decision(True, Why.FORCED, prior)
    if prior is not None and prior.sha256 == sha256:
        base = prior
    elif same_content is not None:
        base = same_content
    else:
        why = Why.CHANGED if prior is not None and prior.sha256 is not None else Why.NEW
        return Decision(True, why, prior)
    stale = _stale(
        base, reader_versions, reader_for_mime, tools_fingerprint, full, tool_names, unknown_again
    )
    if stale is not None:
        return Decision(True, stale, base)
    return Decision(False, None, base)


TEXT_READER = "text"
"""The reader of the files no other kind claims: one whose text came out garbled may be a kind
a newer detection tells apart (a FITS file, a Foxmail mailbox, a Safari web archive, all read
as text before), so such records are read again with the files no reader took."""


def _garbled(record: Record) -> bool:
    return record.quality is not None and record.quality.verdict == Verdict.GARBLED


def _stale(
    base: Record,
    reader_versions: Mapping[str, int],
    reader_for_mime: Mapping[str, str | None],
    tools_fingerprint: str,
    full: bool,
    tool_names: AbstractSet[str] | None = None,
    unknown_again: bool = False,
) -> str | None:
    """Why ``base``'s verdict can no longer be kept, or None when it can (``unknown_again``:
    readers came, or kinds are told apart anew, since the store's last sweep, and a file no
    reader took, or one the text reader read to a garbled text, may be a reader's now: its
    kind is detected again)."""
    current = reader_for_mime.get(base.mime)
    if base.status not in STATUSES:
        return Why.CHANGED  # from a newer writer, or damaged: this engine cannot keep it
    if base.status == Status.SKIPPED:
        return Why.CHANGED
    if base.reason == Reason.NO_READER:
        return Why.READER_CHANGED if current is not None or unknown_again else None
    if base.reader is not None and (
        current != base.reader or reader_versions.get(base.reader) != base.v
    ):
        return Why.READER_CHANGED
    if unknown_again and base.reader == TEXT_READER and _garbled(base):
        return Why.READER_CHANGED  # its bytes may be a kind told apart since (a FITS file)
    if base.status == Status.UNSUPPORTED:
        return Why.TOOLS_CHANGED if base.tools != tools_fingerprint else None
    # Read without a tool found now: the read may give another text. Only a tool that came
    # counts: one's new version, or one gone, reads nothing again.
    poorer = tool_names is not None and lacks_found(base.read_with, tool_names)
    if base.status == Status.ERROR:
        if quarantined(base):
            return None
        if poorer:
            return Why.TOOLS_CHANGED
        return Why.RETRY_ERROR if full else None
    if poorer:
        return Why.TOOLS_CHANGED
    if (base.status == Status.EMPTY and base.reason == Reason.SCANNED) or base.needs:
        # scanned pages, or a container's members, waiting on a tool: read again when the
        # tools differ from those it was read with
        return Why.TOOLS_CHANGED if base.tools not in (None, tools_fingerprint) else None
    return None


def quarantined(record: Record) -> bool:
    """Whether ``record``'s content lost its worker too often to be read again as it is."""
    return record.reason == Reason.QUARANTINED or record.crashes >= CRASH_QUARANTINE


def skipped_record(e: Entry) -> Record:
    """The record of an entry the walk found as other than a regular file to read."""
    return Record(
        root=e.root,
        path=e.path,
        size=e.size,
        mtime_ns=e.mtime_ns,
        status=Status.SKIPPED,
        reason=_SKIP_REASON[e.kind],
        error=e.detail,
    )


def empty_record(e: Entry, prior: Record | None) -> Record:
    """The record of an empty file (``prior``: its record before)."""
    return Record(
        root=e.root,
        path=e.path,
        size=0,
        mtime_ns=e.mtime_ns,
        status=Status.EMPTY,
        sha256=EMPTY_SHA,
        mime="application/x-empty",
        reason=Reason.NO_TEXT,
        error="the file is empty",
        why="new" if prior is None else (prior.why or "changed"),
        reused=prior is not None and prior.sha256 == EMPTY_SHA,
    )


_FILE: Kept = ("file", "", False)
_RETRY: Kept = ("file", "(read again)", True)
_VERDICT = attrgetter(
    "status", "reason", "reader", "v", "mime", "tools", "needs", "crashes", "read_with"
)
"""The fields :func:`keeps` reads: records alike in them (and in whether their text is
garbled, :func:`_garbled`) are judged once."""


class Keeper:
    """How the walk finds a record's file when a full sweep keeps that very record for it
    (:data:`engine.statindex.Kept`: the entry's kind and detail, and whether the file is read
    again, as an ``error``'s is); None when such a sweep would hash, read or rewrite it. The
    stat index is written with one (:func:`engine.statindex.write`)."""

    def __init__(
        self,
        versions: Mapping[str, int],
        readers: Mapping[str, str | None],
        fingerprint: str,
        trusted_before: int,
        *,
        tool_names: Iterable[str],
        its_own: bool = False,
        unknown_again: bool = False,
    ) -> None:
        from engine.quality import QUALITY_VERSION
        from engine.quality import enabled as scoring

        self.versions, self.readers, self.fingerprint = versions, readers, fingerprint
        self.tool_names = frozenset(tool_names)
        """The tools found now (those of ``fingerprint``): a record read without one is read
        again."""
        self.trusted_before = trusted_before
        self.its_own = its_own
        """The records are the decisions of the sweep this one goes on with (a killed one,
        begun after ``trusted_before`` plus the racy margin): an ``error`` it read is kept."""
        self.unknown_again = unknown_again
        """Readers came, or kinds are told apart anew, since the store's last sweep: a record
        no reader took is not kept."""
        self.quality_version = QUALITY_VERSION
        self.scoring = scoring()
        """Texts are scored (else a text's old score stands: the environment says which)."""
        self._kept: dict[tuple[object, ...], bool] = {}
        """What :func:`keeps` said, by the fields it reads (see :data:`_VERDICT`)."""

    def __call__(self, r: Record) -> Kept | None:
        if r.status == Status.SKIPPED:
            return self._skipped(r)
        if r.size == 0:
            return self._empty(r)
        if r.sha256 is None or r.mtime_ns >= self.trusted_before:
            return None  # its size and mtime prove nothing yet: hashed again
        if r.status == Status.ERROR and not quarantined(r) and not self.its_own:
            return _RETRY  # read again by every full sweep, and by the quick one
        if not r.reused:
            return None  # rewritten as reused
        if (
            self.scoring
            and r.status == Status.OK
            and (r.quality is None or r.quality.v != self.quality_version)
        ):
            return None  # its text is scored again
        verdict = (*_VERDICT(r), _garbled(r))
        kept = self._kept.get(verdict)
        if kept is None:
            kept = self._kept[verdict] = keeps(
                r, self.versions, self.readers, self.fingerprint, self.tool_names,
                full=not self.its_own, unknown_again=self.unknown_again,
            )  # fmt: skip
        return _FILE if kept else None

    def _skipped(self, r: Record) -> Kept | None:
        kind = SKIP_KINDS.get(r.reason or "")
        if kind is None:
            return None  # a file that kept changing is hashed again
        found = Entry(r.root, r.path, r.size, r.mtime_ns, kind, r.error or "")
        return (kind, found.detail, False) if skipped_record(found) == r else None

    def _empty(self, r: Record) -> Kept | None:
        found = Entry(r.root, r.path, 0, r.mtime_ns, "file")
        return _FILE if empty_record(found, r) == r else None


class ReadWith:
    """The ``read_with`` of each outcome of a run (:attr:`Record.read_with`): per reader and
    the reading machine's tools (a Dask worker's, or ``tools``, the run's own), made once."""

    def __init__(self, tools: ToolSet) -> None:
        self._named = tools.named
        self._made: dict[tuple[str, str], str | None] = {}

    def __call__(self, reader: str | None, named: str | None) -> str | None:
        """``read_with`` of a read by ``reader`` on a machine with the tools ``named``
        (:attr:`ToolSet.named`; None: the run's own); None for no reader, or one that uses
        no tool."""
        if reader is None:
            return None
        key = (reader, self._named if named is None else named)
        if key not in self._made:
            from engine.readers.registry import reader_named  # every reader: not at import

            found = reader_named(reader)
            uses = found.tools if found is not None else ()
            self._made[key] = read_with(uses, key[1]) if uses else None
        return self._made[key]


class LazyReaders(Mapping[str, str | None]):
    """MIME -> reader name, looked up on demand (most sweeps touch few MIME types).

    It holds the run's table, not the run: a run that referred to itself through this
    would be a cycle that only the cyclic collector frees, one per watch batch.
    """

    def __init__(self, table: dict[str, str | None]) -> None:
        self.table = table

    def __getitem__(self, mime: str) -> str | None:
        if mime not in self.table:
            from engine.readers.registry import reader_for  # (every reader: not at import)

            reader = reader_for(mime)
            self.table[mime] = reader.name if reader else None
        return self.table[mime]

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)
