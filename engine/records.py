"""Records: one per walked file, the unit of ``extract.jsonl``.

A :class:`Record` is immutable; the sweep makes a new one whenever anything about a file
changes. ``to_json`` / ``from_json`` fix the field order so that a store written twice from the
same state is byte-identical.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Annotated, Any, get_args, get_type_hints

import msgspec
import orjson

from engine.names import escaped, from_b64, name_b64
from engine.quality import Quality

Key = tuple[str, str]
"""A record's key: (root, path), the root absolute, the path relative to it with ``/``."""


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


INT64_MAX = 2**63 - 1
"""The largest number a record holds: every count, size and time fits a signed 64-bit integer
(what ``os.stat`` gives, and what the dashboard's columns store)."""
Count = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]
"""A count or size: never negative, never past 64 bits. msgspec (the store's bulk decoder, the
typing of :meth:`Record.from_json`) refuses any other, so the line is judged by
:meth:`Record.from_dict`, which takes the default instead."""
Nanoseconds = Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]
"""A time in nanoseconds (before 1970 it is negative), within 64 bits likewise."""


@dataclass(frozen=True, slots=True)
class Record:
    """What the engine knows about one file after a sweep."""

    root: str
    """Absolute path of the root folder the file was found under."""
    path: str
    """Path relative to ``root``, with ``/`` separators."""
    size: Count
    """Size in bytes at the time of the sweep."""
    mtime_ns: Nanoseconds
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
    v: Count = 0
    """Version of that reader; a bump redoes only its records."""
    chars: Count = 0
    """Characters in the stored text (after normalisation)."""
    pages: Count | None = None
    """Pages, slides or sheets, for paged formats."""
    error: str | None = None
    """Human-readable verdict for error, unsupported and skipped records. Never file text."""
    needs: tuple[str, ...] = ()
    """Tools that would unlock an ``unsupported/needs_tool`` or ``empty/scanned`` record, or
    the members a container could not read (any one of them)."""
    tools: str | None = None
    """Tool-set fingerprint at the time of an unsupported verdict; retried when it changes."""
    read_with: str | None = None
    """The tools its reader uses, as the machine that read the file had them: ``name=version``
    by name, joined by ``;``, a tool it lacked with no version (``pdftotext=``); read again
    once a tool it lacked is found (:func:`engine.tools.lacked`). None: not said (a reader
    that uses no tool, or a record of an older quarry or of the extract stage)."""
    reused: bool = False
    """True when this sweep kept an earlier verdict without reading the file."""
    why: str | None = None
    """A :class:`Why` code: why the file was last read."""
    ms: Count = 0
    """Wall time of the last read, in milliseconds."""
    crashes: Count = 0
    """Consecutive sweeps in which reading this content crashed a worker."""
    quality: Quality | None = None
    """For ok records: is the text any good (a verdict and the numbers that explain it)."""
    members: tuple[Member, ...] = ()
    """For containers (archives, compressed files, mail with attachments): each inner
    document's verdict, in order, at most 200 (the record's ``error`` counts the unread)."""

    @property
    def key(self) -> Key:
        """Sort key of ``extract.jsonl``: (root, path)."""
        return (self.root, self.path)

    @property
    def has_text(self) -> bool:
        """Whether a text file exists in the store for this record."""
        return self.status == Status.OK and self.sha256 is not None

    def evolve(self, **changes: Any) -> Record:
        """Return a copy with ``changes`` applied (TypeError for a name that is no field).

        ``dataclasses.replace`` costs tens of microseconds a call; a warm sweep evolves every
        record once (its ``reused`` flag), so this builds the copy from one tuple instead.
        """
        values = list(_RECORD_STATE(self))
        try:
            for name, value in changes.items():
                values[_RECORD_INDEX[name]] = value
        except KeyError:
            raise TypeError(
                f"not Record fields: {sorted(changes.keys() - _RECORD_NAMES)}"
            ) from None
        return Record(*values)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``extract.jsonl`` holds it: fields in order, tuples as lists.

        Every string is valid UTF-8: a ``root`` or ``path`` that is not gets its undecodable
        bytes written as ``\\xNN`` and the exact bytes in ``root_b64``/``path_b64`` (added
        after the other fields, only then); see :mod:`engine.names`.
        """
        d = asdict(self)
        d["needs"] = list(self.needs)
        d["quality"] = self.quality.to_dict() if self.quality is not None else None
        for name in ("root", "path"):
            b64 = name_b64(d[name])
            if b64 is not None:
                d[name] = escaped(d[name])
                d[f"{name}_b64"] = b64
        for name in _TEXT_FIELDS:
            if isinstance(d[name], str):
                d[name] = escaped(d[name])
        d["needs"] = [escaped(t) for t in d["needs"]]
        return d

    def to_json(self) -> bytes:
        """One ``extract.jsonl`` line, without the newline."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: Any) -> Record:
        """Build a record from a parsed JSON object, validating every field before use.

        Written by anyone (the extract stage, an older or newer quarry, a hand edit): unknown
        keys are ignored; a missing or mistyped field that only tunes reuse gets its default
        (the file is then read again when that matters); ``root``, ``path``, ``status`` and
        ``sha256`` must be right, else :class:`BadRecord` says which and why.
        """
        if not isinstance(d, dict):
            raise BadRecord(f"not a JSON object ({_json_kind(d)})")
        kw: dict[str, Any] = {}
        for name in ("root", "path"):
            kw[name] = _name_field(d, name)
        kw["status"] = _status_field(d.get("status"))
        kw["sha256"] = _sha_field(d.get("sha256"))
        for name, check in _LENIENT.items():
            if name in d:
                value = check(d[name])
                if value is not _DEFAULT:
                    kw[name] = value
        if "quality" in d:
            kw["quality"] = Quality.parse(d["quality"])
        if "members" in d:
            kw["members"] = Member.parse(d["members"])
        kw.setdefault("size", 0)
        kw.setdefault("mtime_ns", 0)
        return cls(**kw)

    @classmethod
    def from_json(cls, line: bytes | str) -> Record:
        """Parse one ``extract.jsonl`` line (raises BadRecord for anything but a record; "cut
        short" for a line that ends before its object does, as a write cut off leaves one).

        The same record as :meth:`from_dict` of the parsed line, in a quarter of its time (10
        us against 40 for a typical line): a line this quarry wrote is typed by msgspec, its
        names and hash checked by the validators of :meth:`from_dict`; any other goes through
        :meth:`from_dict` (see :func:`_typed`).
        """
        data, skipped = _parsed_or_skipped(line)
        if skipped is not None:
            return skipped
        record = _typed(data)
        return cls.from_dict(data) if record is None else record


_RECORD_ORDER = tuple(f.name for f in fields(Record))
_RECORD_NAMES = frozenset(_RECORD_ORDER)
_RECORD_INDEX = {name: i for i, name in enumerate(_RECORD_ORDER)}
_RECORD_STATE = operator.attrgetter(*_RECORD_ORDER)


class BadRecord(ValueError):
    """Raised for a store line that is not a usable record; the message says why, briefly."""


SHA256_RE = re.compile(r"[0-9a-f]{64}")
"""A content hash as the store names texts by: 64 lowercase hex digits, nothing else."""
_DEFAULT = object()
_TEXT_FIELDS = (
    "status",
    "sha256",
    "mime",
    "reason",
    "extractor",
    "reader",
    "error",
    "tools",
    "read_with",
    "why",
)


def is_sha256(value: object) -> bool:
    """Whether ``value`` is a content hash the store may turn into a file name."""
    return isinstance(value, str) and SHA256_RE.fullmatch(value) is not None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def check_name(value: object, name: str) -> str:
    """``value`` if it is a usable ``root`` (absolute) or ``path`` (relative, no ``..``)."""
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{name} is not a non-empty string")
    if "\0" in value:
        raise BadRecord(f"{name} holds a NUL character")
    if name == "root":
        if not value.startswith("/"):
            raise BadRecord("root is not an absolute path")
        return value
    if value.startswith("/") or not _NOT_PLAIN.isdisjoint(value.split("/")):
        raise BadRecord("path is not a plain relative path (absolute, empty part, . or ..)")
    return value


_NOT_PLAIN = frozenset(("", ".", ".."))
"""The parts of a path no record's may have (empty: a leading, trailing or doubled ``/``)."""


def _name_field(d: dict[str, Any], name: str) -> str:
    return restore_name(d.get(name), d.get(f"{name}_b64"), name)


def restore_name(text: object, b64: object, name: str) -> str:
    """The exact ``name`` (``"root"`` or ``"path"``) of a stored record: from ``b64`` (the
    ``*_b64`` field: standard base64 of its bytes, written when it is not UTF-8) when there
    is one, else ``text``; raises BadRecord for a name no record may have (the store's one
    restorer: the dashboard's fast loader calls it too)."""
    if b64 is None:
        return check_name(text, name)
    if not isinstance(b64, str):
        raise BadRecord(f"{name}_b64 is not a string")
    try:
        value = from_b64(b64)
    except ValueError as exc:
        raise BadRecord(f"{name}_b64 is {exc}") from exc
    return check_name(value, name)


def _status_field(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise BadRecord("status is not a non-empty string")
    return value


def _sha_field(value: object) -> str | None:
    if value is None or is_sha256(value):
        return value  # type: ignore[return-value]
    raise BadRecord("sha256 is not 64 lowercase hex digits")


def _parsed(line: bytes | str) -> Any:
    """One line as orjson parses it; BadRecord when it is not JSON ("cut short" for a line
    that ends before its object does, as a write cut off leaves one)."""
    try:
        return orjson.loads(line)  # nested past orjson's depth limit: a JSONDecodeError
    except orjson.JSONDecodeError as exc:
        raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
        if raw.lstrip().startswith(b"{") and not raw.rstrip().endswith(b"}"):
            raise BadRecord("cut short") from exc
        raise BadRecord(f"not JSON ({exc.msg})") from exc


def _typed(data: object) -> Record | None:
    """The record of ``data`` (a parsed line) typed by msgspec, when that is the record
    :meth:`Record.from_dict` gives (7 us with the checks, against 27); else None.

    Its strict conversion takes a value only of its field's own type and range: the values
    ``from_dict`` keeps as they are; what it refuses, ``from_dict`` defaults or drops. The
    parsing stays orjson's, so that exactly the same lines are JSON: msgspec's own decoder
    would take a line that orjson refuses (bytes that are not UTF-8, or a number past a
    double, in a field it skips) and read integers past 64 bits as integers, where orjson
    gives floats that ``from_dict`` drops. What it would take and read otherwise goes to
    ``from_dict``: a name kept as bytes (``*_b64``, a field it ignores), a quality's number
    written as an integer (made a float; ``from_dict`` keeps the integer), and a name, status
    or hash no record may have (judged by ``from_dict``'s own checks, which then say why).
    """
    if type(data) is not dict or "root_b64" in data or "path_b64" in data:
        return None
    try:
        record = msgspec.convert(data, Record)
    except msgspec.ValidationError:
        return None
    if not _usable(record):
        return None
    quality = data.get("quality")
    if quality is not None and any(type(quality.get(n)) is int for n in _QUALITY_FLOATS):
        return None
    return record


_LINE_DECODER = msgspec.json.Decoder(Record)


def _skipping(line: bytes | str) -> Record | None:
    """A line orjson refuses read as a store's bulk read takes it (msgspec, typed, skipping a
    field no record has without looking into it): a record whose own fields are usable,
    whatever a field no record has holds (bytes that are not UTF-8, a number past a
    double). So a line reads the same alone (a record's detail, a block with a bad line) as
    in one call over the whole file (:func:`engine.store.read_jsonl`), which took such a
    line where this refused it. None for any other: a name kept as bytes (``*_b64``, a
    field msgspec skips) included."""
    raw = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    if b'_b64"' in raw:
        return None
    try:
        record = _LINE_DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    return record if _usable(record) else None


def _usable(record: Record) -> bool:
    """Whether a record msgspec typed has a name, status and hash :meth:`Record.from_dict`
    would keep (its own checks)."""
    try:
        check_name(record.root, "root")
        check_name(record.path, "path")
        _status_field(record.status)
        _sha_field(record.sha256)
    except BadRecord:
        return False
    return True


def _from_json_slow(line: bytes | str) -> Record:
    """:meth:`Record.from_json` by :meth:`Record.from_dict` alone, as it read every line
    before :func:`_typed` (and a line orjson refuses as :func:`_skipping` reads it): the
    reference the tests hold it equal to."""
    data, skipped = _parsed_or_skipped(line)
    return Record.from_dict(data) if skipped is None else skipped


def _parsed_or_skipped(line: bytes | str) -> tuple[Any, Record | None]:
    """(the line as orjson parses it, None); or, for a line orjson refuses, (None, its
    record as :func:`_skipping` reads it); BadRecord (orjson's reason) when neither."""
    try:
        return _parsed(line), None
    except BadRecord:
        record = _skipping(line)
        if record is None:
            raise
        return None, record


_QUALITY_FLOATS = tuple(
    name for name, hint in get_type_hints(Quality).items() if float in (hint, *get_args(hint))
)
"""The fields of a quality verdict that msgspec makes floats of (an integer too)."""


def _int(low: int | None) -> Callable[[object], object]:
    floor = -INT64_MAX - 1 if low is None else low

    def check(value: object) -> object:
        ok = isinstance(value, int) and not isinstance(value, bool) and value <= INT64_MAX
        return value if ok and value >= floor else _DEFAULT  # type: ignore[operator]

    return check


def _opt_int(value: object) -> object:
    if value is None:
        return None
    return _int(0)(value)


def _opt_str(value: object) -> object:
    return value if value is None or isinstance(value, str) else _DEFAULT


def _str(value: object) -> object:
    return value if isinstance(value, str) else _DEFAULT


def _bool(value: object) -> object:
    return value if isinstance(value, bool) else _DEFAULT


def needs_of(value: object) -> tuple[str, ...]:
    """A stored ``needs`` as tool names, read the same by the engine and the dashboard: a
    list's (or tuple's) strings, one tool named by a plain string (a hand edit), else none."""
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list | tuple):
        return tuple(t for t in value if isinstance(t, str))
    return ()


def lacked(read_with: str | None) -> tuple[str, ...]:
    """The tools a record's read lacked: those its ``read_with`` names with no version."""
    if not read_with or not ("=;" in read_with or read_with.endswith("=")):
        return ()  # the common case, read with every tool: no split
    return tuple(name for name, _, v in (p.partition("=") for p in read_with.split(";")) if not v)


def read_with_words(read_with: str | None) -> str:
    """A record's ``read_with`` for people: ``pdftoppm 24.02, tesseract 5.3.4; without
    pdftotext`` ("" for none)."""
    if not read_with:
        return ""
    parts = [p.partition("=") for p in read_with.split(";") if p]
    had = ", ".join(f"{name} {version}" for name, _, version in parts if version)
    lacked = ", ".join(name for name, _, version in parts if not version)
    return "; ".join(filter(None, (had, lacked and f"without {lacked}")))


def lacks_found(read_with: str | None, found: AbstractSet[str]) -> bool:
    """Whether a read lacked a tool of ``found`` (the tools found now): it is read again."""
    if not read_with or ("=;" not in read_with and not read_with.endswith("=")):
        return False  # asked of every record a warm sweep keeps: no call, no generator
    return not found.isdisjoint(lacked(read_with))


def _tools(value: object) -> object:
    """A fingerprint string; the extract stage writes the list of tools present instead."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return "tools:" + ",".join(sorted(value))  # never equal to a fingerprint: retried
    return _DEFAULT


_LENIENT: dict[str, Callable[[object], object]] = {
    "size": _int(0),
    "mtime_ns": _int(None),
    "mime": _str,
    "reason": _opt_str,
    "extractor": _opt_str,
    "reader": _opt_str,
    "v": _int(0),
    "chars": _int(0),
    "pages": _opt_int,
    "error": _opt_str,
    "needs": needs_of,
    "tools": _tools,
    "read_with": _opt_str,
    "reused": _bool,
    "why": _opt_str,
    "ms": _int(0),
    "crashes": _int(0),
}


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
    read_without: dict[str, int] = field(default_factory=dict)
    """Tool -> records whose read lacked it (on a machine, or with options, that lacked it),
    whether the sweep found it or not: those of a tool found when it is said (by the sweep, by
    ``quarry tools``, the dashboard) are read again by the next sweep; none once they are."""
    readers: dict[str, int] = field(default_factory=dict)
    """Reader name -> version."""
    detection: int = 0
    """How files' kinds were told apart (:data:`engine.mimes.DETECTION`; 0: not said)."""
    started: str = ""
    """ISO-8601 UTC start of the sweep."""
    finished: str = ""
    """ISO-8601 UTC end of the sweep."""
    seconds: float = 0.0
    """Duration of the sweep."""
    quality: dict[str, int] = field(default_factory=dict)
    """ok records per quality verdict (``good``, ``suspect``, ``garbled``)."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Default exclusion (``*.tmp``, ``.git/``: a folder's ends in ``/``) -> the files, or
    folders, it left out of the sweep's walk: they have no record (``--no-default-excludes``
    gives them one)."""
    jsonl_current: bool = True
    """Whether ``extract.jsonl`` holds every record of the store's index: false while a
    watcher's batches wait for the changes to settle before the file is written again."""
    jsonl_written: str = ""
    """ISO-8601 UTC time ``extract.jsonl`` was last written ("" before the index existed)."""
    cluster_workers: int = 0
    """Dask workers that took the last sweep's reads (0: the reads ran on this machine)."""
    cluster_tools: dict[str, int] = field(default_factory=dict)
    """When those workers' tools differ: tool name -> how many of them have it (every tool
    that at least one has, or that the engine knows); empty when they all have the same."""
    cluster_routed: dict[str, int] = field(default_factory=dict)
    """Kind of file (its reader's name) -> files of it sent only to some of the workers (those
    with its tools), in the last sweep."""
    others: dict[str, int] = field(default_factory=dict)
    """Records of folders the store holds that this sweep did not walk (another sweep's
    ``--out`` into the same store took them in), per folder (``escaped``)."""
    store: str = ""
    """The store's folder when this summary was written (``escaped``): one found elsewhere
    since was moved or copied with its folder (:mod:`engine.moved`)."""

    def to_json(self) -> bytes:
        """Pretty, key-sorted JSON for the summary file (roots as ``escaped`` names)."""
        d = asdict(self)
        d["roots"] = [escaped(r) for r in self.roots]
        d["store"] = escaped(self.store)
        d["others"] = {escaped(root): n for root, n in self.others.items()}
        return orjson.dumps(d, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)

    @classmethod
    def from_json(cls, data: bytes) -> Summary:
        """Parse ``extract.summary.json``; unknown fields are ignored, missing ones default.

        Raises BadRecord when it is not a JSON object or a field has the wrong type (a
        summary only informs: its reader goes without it, a sweep writes it again).
        """
        try:
            d = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise BadRecord(f"not JSON ({exc.msg})") from exc
        if not isinstance(d, dict):
            raise BadRecord(f"not a JSON object ({_json_kind(d)})")
        kw: dict[str, Any] = {}
        wrong: list[str] = []
        roots = d.get("roots", [])
        if isinstance(roots, list) and all(isinstance(r, str) for r in roots):
            kw["roots"] = tuple(roots)
        else:
            wrong.append("roots")
        for f in fields(cls):
            if f.name == "roots" or f.name not in d:
                continue
            if _summary_field_ok(f.name, d[f.name]):
                kw[f.name] = d[f.name]
            else:
                wrong.append(f.name)
        if wrong:
            raise BadRecord(f"fields of the wrong type: {', '.join(wrong)}")
        kw.setdefault("files", 0)
        return cls(**kw)


def _summary_field_ok(name: str, value: object) -> bool:
    """Whether ``value`` has the type of the summary's field ``name`` (judged by its default:
    a dict of counts, of version strings for ``tools_found``, a number, a string)."""
    default = getattr(_EMPTY_SUMMARY, name)
    if isinstance(default, dict):
        want: type | tuple[type, ...] = str if name == "tools_found" else int
        return isinstance(value, dict) and all(
            isinstance(v, want) and not isinstance(v, bool) for v in value.values()
        )
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, type(default))


_EMPTY_SUMMARY = Summary(roots=(), files=0)
