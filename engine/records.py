"""Records: one per walked file, the unit of ``extract.jsonl``.

A :class:`Record` is immutable; the sweep makes a new one whenever anything about a file
changes. ``to_json`` / ``from_json`` fix the field order so that a store written twice from the
same state is byte-identical.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

import orjson

from engine.quality import Quality


class Status(StrEnum):
    """The five public verdicts of the extract stage."""

    OK = "ok"
    EMPTY = "empty"
    UNSUPPORTED = "unsupported"
    ERROR = "error"
    SKIPPED = "skipped"


class Reason(StrEnum):
    """Machine codes that refine a status, for grouping and retry policy."""

    # error
    CORRUPT = "corrupt"
    ENCRYPTED = "encrypted"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    CRASHED = "crashed"
    TOOL_FAILED = "tool_failed"
    REFUSED = "refused"
    LIMIT = "limit"
    QUARANTINED = "quarantined"
    # empty
    NO_TEXT = "no_text"
    SCANNED = "scanned"
    # unsupported
    NO_READER = "no_reader"
    NEEDS_TOOL = "needs_tool"
    # skipped
    TOO_LARGE = "too_large"
    UNREADABLE = "unreadable"
    LINK = "link"
    SPECIAL = "special"
    CHANGING = "changing"
    """The file changed under every read (or hash) the sweep tried: read again next sweep."""


class Why(StrEnum):
    """Why a record was (re)extracted in the sweep that made it."""

    NEW = "new"
    CHANGED = "changed"
    READER_CHANGED = "reader-changed"
    TOOLS_CHANGED = "tools-changed"
    RETRY_ERROR = "retry-error"
    FORCED = "forced"
    REPAIR = "repair"
    """The stored text was missing, or (verify) did not match what the file's content gives."""


STATUSES: tuple[str, ...] = tuple(s.value for s in Status)


@dataclass(frozen=True, slots=True)
class Member:
    """The verdict on one document inside a container (an archive member, an attachment)."""

    path: str
    """Its path inside the container, as shown (one line, escapes for odd characters)."""
    status: str
    """One of :class:`Status`."""
    reason: str | None = None
    """A :class:`Reason` code refining the status; None for ok."""
    error: str | None = None
    """The verdict in words, for anything not ok (never the member's text)."""
    chars: int = 0
    """Characters of its text in the container's text."""

    @classmethod
    def parse(cls, value: Any) -> tuple[Member, ...]:
        """Members from a stored ``members`` value; anything malformed is dropped."""
        if not isinstance(value, list | tuple):
            return ()
        out: list[Member] = []
        for item in value:
            if isinstance(item, Member):
                out.append(item)
            elif (
                isinstance(item, dict)
                and isinstance(item.get("path"), str)
                and isinstance(item.get("status"), str)
                and isinstance(item.get("reason"), str | None)
                and isinstance(item.get("error"), str | None)
                and type(item.get("chars", 0)) is int
            ):
                keys = ("path", "status", "reason", "error", "chars")
                out.append(cls(**{k: item[k] for k in keys if k in item}))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Record:
    """What the engine knows about one file after a sweep."""

    root: str
    """Absolute path of the root folder the file was found under."""
    path: str
    """Path relative to ``root``, with ``/`` separators."""
    size: int
    """Size in bytes at the time of the sweep."""
    mtime_ns: int
    """Modification time in nanoseconds, as ``os.stat`` gave it."""
    status: str
    """One of :class:`Status`."""
    sha256: str | None = None
    """Hex SHA-256 of the content; None for skipped files."""
    mime: str = ""
    """Detected MIME type (content first, extension second)."""
    reason: str | None = None
    """A :class:`Reason` code refining the status; None for ok."""
    extractor: str | None = None
    """What produced the text: ``text:utf-8``, ``pdftotext``, ``pypdf``, ``tesseract``..."""
    reader: str | None = None
    """The reader family that handled the file (``text``, ``pdf``, ``docx``...)."""
    v: int = 0
    """Version of that reader; a bump redoes only its records."""
    chars: int = 0
    """Characters in the stored text (after normalisation)."""
    pages: int | None = None
    """Pages, slides or sheets, for paged formats."""
    error: str | None = None
    """Human-readable verdict for error, unsupported and skipped records. Never file text."""
    needs: tuple[str, ...] = ()
    """Tools that would unlock an ``unsupported/needs_tool`` record (any one of them)."""
    tools: str | None = None
    """Tool-set fingerprint at the time of an unsupported verdict; retried when it changes."""
    reused: bool = False
    """True when this sweep kept an earlier verdict without reading the file."""
    why: str | None = None
    """A :class:`Why` code: why the file was last read."""
    ms: int = 0
    """Wall time of the last read, in milliseconds."""
    crashes: int = 0
    """Consecutive sweeps in which reading this content crashed a worker."""
    quality: Quality | None = None
    """For ok records: is the text any good (a verdict and the numbers that explain it)."""
    members: tuple[Member, ...] = ()
    """For containers (archives, compressed files, mail with attachments): each inner
    document's verdict, in order, at most 200 (the record's ``error`` counts the unread)."""

    @property
    def key(self) -> tuple[str, str]:
        """Sort key of ``extract.jsonl``: (root, path)."""
        return (self.root, self.path)

    @property
    def has_text(self) -> bool:
        """Whether a text file exists in the store for this record."""
        return self.status == Status.OK and self.sha256 is not None

    def evolve(self, **changes: Any) -> Record:
        """Return a copy with ``changes`` applied."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict in field order, tuples as lists."""
        d = asdict(self)
        d["needs"] = list(self.needs)
        d["quality"] = self.quality.to_dict() if self.quality is not None else None
        return d

    def to_json(self) -> bytes:
        """One ``extract.jsonl`` line, without the newline."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Record:
        """Build a record from a parsed JSON object, ignoring unknown keys."""
        needs = d.get("needs")
        if needs:
            d = {**d, "needs": tuple(needs)}
        elif needs is not None:
            d = {**d, "needs": ()}
        if "quality" in d:
            d = {**d, "quality": Quality.parse(d["quality"])}
        if "members" in d:
            d = {**d, "members": Member.parse(d["members"])}
        try:
            return cls(**d)
        except TypeError:  # unknown keys from a newer writer: keep the ones we know
            return cls(**{k: d[k] for k in _FIELD_NAMES if k in d})

    @classmethod
    def from_json(cls, line: bytes | str) -> Record:
        """Parse one ``extract.jsonl`` line."""
        return cls.from_dict(orjson.loads(line))


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Record))


@dataclass(frozen=True, slots=True)
class Summary:
    """The contents of ``extract.summary.json``."""

    roots: tuple[str, ...]
    """Absolute root folders of the sweep."""
    files: int
    """Records in the store."""
    counts: dict[str, int] = field(default_factory=dict)
    """Records per status."""
    reasons: dict[str, int] = field(default_factory=dict)
    """Records per ``status/reason``."""
    reused: int = 0
    """Records whose verdict was kept without reading."""
    chars: int = 0
    """Total characters of text in the store."""
    tools_found: dict[str, str] = field(default_factory=dict)
    """External tool name -> version string."""
    tools_missing: dict[str, int] = field(default_factory=dict)
    """Missing tool name -> files it would unlock."""
    readers: dict[str, int] = field(default_factory=dict)
    """Reader name -> version."""
    started: str = ""
    """ISO-8601 UTC start of the sweep."""
    finished: str = ""
    """ISO-8601 UTC end of the sweep."""
    seconds: float = 0.0
    """Duration of the sweep."""
    quality: dict[str, int] = field(default_factory=dict)
    """ok records per quality verdict (``good``, ``suspect``, ``garbled``)."""

    def to_json(self) -> bytes:
        """Pretty, key-sorted JSON for the summary file."""
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)

    @classmethod
    def from_json(cls, data: bytes) -> Summary:
        """Parse ``extract.summary.json``."""
        d = orjson.loads(data)
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["roots"] = tuple(kw.get("roots", ()))
        return cls(**kw)
