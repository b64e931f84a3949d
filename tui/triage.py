"""Triage data for the dashboard: error groups, unsupported files by type, the tools view's
rows. No Textual here.

Errors are grouped by their reason and a *normalised* message: quoted names, paths, hex
offsets and numbers are taken out, so "Bad CRC-32 for file 'word/document.xml'" and the same
complaint about ``'word/styles.xml'`` land in one group. Unsupported files are grouped by
reason and MIME type, with the tools their records name as what would unlock them. Tools
rows join what :mod:`engine.tools` knows (every tool a reader can use, with install hints)
with what this machine has and with the records waiting on each tool.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.quality import summary_line
from engine.records import Key, Reason, Record, Status
from engine.tallies import Kind, Tally
from engine.tools import KNOWN_TOOLS, ToolSet
from tui.model import RecordModel
from tui.paged import PagedModel

FILES_READ = 1_000
"""The files of a paged store's group read and listed (the first in key order): a group of
a big store may hold millions."""

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|‘[^’]*’|“[^”]*”")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-fA-F]{8,}\b")
_PATH = re.compile(r"(?:[A-Za-z]:)?[\w.~-]*(?:[/\\][\w.~-]+)+[/\\]?")
_NUMBER = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")


def normalise(message: str | None) -> str:
    """``message`` with the parts that differ between siblings replaced by placeholders."""
    if not message:
        return "(no message)"
    text = _QUOTED.sub("'…'", message)
    text = _HEX.sub("<hex>", text)
    text = _PATH.sub("<path>", text)
    text = _NUMBER.sub("#", text)
    return _SPACE.sub(" ", text).strip()


class GroupKey(NamedTuple):
    """What makes a group of records itself, stable across refreshes (what a screen keeps
    its cursor on, what the triage state knows of error groups)."""

    reason: str
    """The records' :class:`~engine.records.Reason` code (or a quality verdict)."""
    detail: str
    """What else they share: an error group's normalised message, an unsupported group's
    MIME type, a quality group's worst signal."""


@dataclass(slots=True, kw_only=True)
class _Group:
    """What every grouped view's group holds: its records' keys and one example."""

    keys: list[Key] = field(default_factory=list)
    """(root, path) of every record in the group, in store order (of a paged store's group:
    the first :data:`FILES_READ`, read as the group is shown)."""
    example: str = ""
    """One record's verdict, as the engine wrote it."""
    example_path: str = ""
    """The path of that record."""
    tallied: tuple[Kind, list[Tally]] | None = None
    """A paged store's group: the index's tallies it was merged from (None: held)."""
    total: int = 0
    """A paged store's group: its records (the sum of its tallies')."""

    @property
    def count(self) -> int:
        """Records in the group."""
        return len(self.keys) if self.tallied is None else self.total

    def tally(self, kind: Kind, tally: Tally) -> None:
        """Count ``tally`` in this (paged) group."""
        if self.tallied is None:
            self.tallied = (kind, [])
        self.tallied[1].append(tally)
        self.total += tally.n


@dataclass(slots=True)
class ErrorGroup(_Group):
    """Error records that failed for the same reason with the same (normalised) message."""

    reason: str
    """The records' :class:`~engine.records.Reason` code."""
    message: str
    """The normalised message shared by the group."""
    mimes: Counter[str] = field(default_factory=Counter)
    """MIME type -> records of that type."""

    @property
    def ident(self) -> GroupKey:
        """What makes the group itself (stable across refreshes)."""
        return GroupKey(self.reason, self.message)

    def mime_text(self, limit: int = 3) -> str:
        """The most common MIME types, most frequent first."""
        names = [m or "?" for m, _ in self.mimes.most_common(limit)]
        more = len(self.mimes) - len(names)
        return ", ".join(names) + (f" +{more}" if more > 0 else "")


def group_key(record: Record) -> GroupKey:
    """The group an error record belongs to."""
    return GroupKey(record.reason or "error", normalise(record.error))


def group_keys(messages: Iterable[tuple[str | None, str | None]]) -> set[GroupKey]:
    """The groups of error records of these (reason, error) pairs
    (:meth:`~tui.model.RecordModel.error_messages`: no record is read back from the store;
    each distinct message is normalised once)."""
    return {GroupKey(reason or "error", normalise(error)) for reason, error in messages}


def group_errors(records: Iterable[Record]) -> list[ErrorGroup]:
    """Error records grouped by reason and normalised message, largest group first."""
    groups: dict[GroupKey, ErrorGroup] = {}
    for record in records:
        if record.status != Status.ERROR:
            continue
        key = group_key(record)
        group = groups.get(key)
        if group is None:
            group = groups[key] = ErrorGroup(*key, example=record.error or "")
            group.example_path = record.path
        group.keys.append(record.key)
        group.mimes[record.mime] += 1
    return sorted(groups.values(), key=lambda g: (-g.count, g.reason, g.message))


def tally_errors(tallies: Iterable[Tally]) -> list[ErrorGroup]:
    """:func:`group_errors` of a paged store, from the index's tallies of its errors."""
    groups: dict[GroupKey, ErrorGroup] = {}
    for tally in sorted(tallies, key=lambda t: t.first):  # (the first record's example)
        key = GroupKey(tally.reason or "error", normalise(tally.error))
        group = groups.get(key)
        if group is None:
            group = groups[key] = ErrorGroup(*key, example=tally.error or "")
            group.example_path = tally.first[1]
        group.tally(Kind.ERRORS, tally)
        group.mimes[tally.mime or ""] += tally.n
    return sorted(groups.values(), key=lambda g: (-g.count, g.reason, g.message))


QUALITY_SIGNALS: dict[str, str] = {
    "common": "few common words of any language",
    "noise": "words that look like OCR or decoding noise",
    "scrambled": "common words with their inner letters shuffled",
    "replacement": "replacement characters (U+FFFD)",
    "control": "control or private-use characters",
    "mojibake": "mojibake: text decoded with the wrong charset",
    "sparse": "almost no text per page",
    "run": "long runs without a space",
}
"""Each quality signal as a suspect group's message."""


def quality_records(model: RecordModel) -> list[Record]:
    """ok records whose text is ``garbled`` or ``suspect`` (the model's quality codes, or
    the index's)."""
    return model.records(model.rids_with_quality(("garbled", "suspect")))


def group_quality(records: Iterable[Record]) -> list[ErrorGroup]:
    """Suspect and garbled texts grouped by verdict and their worst signal, garbled first."""
    groups: dict[GroupKey, ErrorGroup] = {}
    for record in records:
        q = record.quality
        if q is None or q.verdict not in ("suspect", "garbled"):
            continue
        signal = q.signals[0] if q.signals else "?"
        key = GroupKey(q.verdict, QUALITY_SIGNALS.get(signal, signal))
        group = groups.get(key)
        if group is None:
            group = groups[key] = ErrorGroup(*key, example=summary_line(q))
            group.example_path = record.path
        group.keys.append(record.key)
        group.mimes[record.mime] += 1
    return sorted(groups.values(), key=lambda g: (g.reason != "garbled", -g.count, g.message))


def tally_quality(tallies: Iterable[Tally]) -> list[ErrorGroup]:
    """:func:`group_quality` of a paged store, from the index's tallies of its suspect and
    garbled texts; each group's example (its first record's quality in words) is read by
    :func:`tally_examples`."""
    groups: dict[GroupKey, ErrorGroup] = {}
    for tally in sorted(tallies, key=lambda t: t.first):
        if tally.quality not in ("suspect", "garbled"):
            continue
        signal = tally.signal or "?"
        key = GroupKey(tally.quality, QUALITY_SIGNALS.get(signal, signal))
        group = groups.get(key)
        if group is None:
            group = groups[key] = ErrorGroup(*key)
            group.example_path = tally.first[1]
        group.tally(Kind.SUSPECT, tally)
        group.mimes[tally.mime or ""] += tally.n
    return sorted(groups.values(), key=lambda g: (g.reason != "garbled", -g.count, g.message))


def tally_examples(model: PagedModel, groups: Iterable[ErrorGroup]) -> None:
    """The example of each suspect-text group of :func:`tally_quality`: its first record's
    quality in words (one record read a group, from the store's table: on the thread that
    opened it)."""
    for group in groups:
        if group.tallied is None or group.tallied[0] is not Kind.SUSPECT or group.example:
            continue
        first = model.record_of(min(t.first for t in group.tallied[1]))
        if first is not None and first.quality is not None:
            group.example = summary_line(first.quality)


@dataclass(slots=True)
class UnsupportedGroup(_Group):
    """Unsupported records of one reason and MIME type, and what would unlock them."""

    reason: str
    """The records' :class:`~engine.records.Reason` code (``needs_tool``, ``no_reader``)."""
    mime: str
    """The MIME type the records share ("" when none was detected)."""
    needs: Counter[str] = field(default_factory=Counter)
    """Tool -> records naming it among the tools that would unlock them."""

    @property
    def ident(self) -> GroupKey:
        """What makes the group itself (stable across refreshes)."""
        return GroupKey(self.reason, self.mime)

    @property
    def unlock(self) -> str:
        """What would unlock the group, in a few words."""
        return self.unlock_with(())

    def unlock_with(self, left_out: Collection[str]) -> str:
        """What would unlock the group, a tool ``left_out`` on purpose (``--without``) said
        so: it may well be installed, and installing it would unlock nothing."""
        if self.needs:
            names = [name for name, _ in self.needs.most_common()]
            if all(name in left_out for name in names):
                return f"{' or '.join(names)}, left out"
            said = (f"{name} (left out)" if name in left_out else name for name in names)
            return "install " + " or ".join(said)
        if self.reason == Reason.NO_READER.value:
            return "nothing: no reader for it yet"
        return self.example or "(no verdict)"


def group_unsupported(records: Iterable[Record]) -> list[UnsupportedGroup]:
    """Unsupported records grouped by reason and MIME type, largest group first."""
    groups: dict[GroupKey, UnsupportedGroup] = {}
    for record in records:
        if record.status != Status.UNSUPPORTED:
            continue
        key = GroupKey(record.reason or "unsupported", record.mime)
        group = groups.get(key)
        if group is None:
            group = groups[key] = UnsupportedGroup(*key, example=record.error or "")
            group.example_path = record.path
        group.keys.append(record.key)
        group.needs.update(record.needs)
    return sorted(groups.values(), key=lambda g: (-g.count, g.reason, g.mime))


def tally_unsupported(tallies: Iterable[Tally]) -> list[UnsupportedGroup]:
    """:func:`group_unsupported` of a paged store, from the index's tallies."""
    groups: dict[GroupKey, UnsupportedGroup] = {}
    for tally in sorted(tallies, key=lambda t: t.first):
        key = GroupKey(tally.reason or "unsupported", tally.mime or "")
        group = groups.get(key)
        if group is None:
            group = groups[key] = UnsupportedGroup(*key, example=tally.error or "")
            group.example_path = tally.first[1]
        group.tally(Kind.UNSUPPORTED, tally)
        for name in tally.needs:
            group.needs[name] += tally.n
    return sorted(groups.values(), key=lambda g: (-g.count, g.reason, g.mime))


def records_where(model: RecordModel, status: str, reasons: Iterable[str] = ()) -> list[Record]:
    """Full records of ``status`` (and, when given, one of ``reasons``), in store order (masks
    over the model's status and reason codes, in C)."""
    return model.records(model.rids_with_status(status, reasons))


def error_records(model: RecordModel) -> list[Record]:
    """Every error record of the model."""
    return records_where(model, Status.ERROR.value)


def unsupported_records(model: RecordModel) -> list[Record]:
    """Every unsupported record of the model."""
    return records_where(model, Status.UNSUPPORTED.value)


def waiting_records(model: RecordModel) -> list[Record]:
    """Records a tool would unlock: ``unsupported/needs_tool``, ``empty/scanned``, and ok
    containers whose members wait on a tool (every record whose ``needs`` names one)."""
    return model.records(model.ids[key] for key, _tools in model.waiting())


# -- tools -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Waiting:
    """The records that name tools that would unlock them: how many name each set of tools,
    and the files listed under each tool (all of a held store's; a paged store's first
    :data:`FILES_READ`, read from the index's tallies)."""

    sets: Mapping[frozenset[str], int]
    """Each set of tools records name -> how many name exactly that set."""
    files: Mapping[str, tuple[Key, ...]]
    """Tool -> the files listed under it, in key order."""

    def count(self, tools: Iterable[str], but: Iterable[str] = ()) -> int:
        """Records naming one of ``tools`` and none of ``but``."""
        wanted, unwanted = frozenset(tools), frozenset(but)
        return sum(n for s, n in self.sets.items() if s & wanted and not s & unwanted)


NOT_COUNTED = Waiting({}, {})
"""No record counted yet (a paged store's, while its index counts them)."""


def waiting_of(items: Iterable[Record | tuple[Key, Iterable[str]]]) -> Waiting:
    """:class:`Waiting` of every record waiting (records, or their (key, tools))."""
    sets: Counter[frozenset[str]] = Counter()
    files: dict[str, list[Key]] = {}
    for item in items:
        key, needs = (item.key, item.needs) if isinstance(item, Record) else item
        names = frozenset(needs)
        if names:
            sets[names] += 1
        for name in names:
            files.setdefault(name, []).append(key)
    return Waiting(sets, {name: tuple(keys) for name, keys in files.items()})


def waiting_tallied(model: PagedModel) -> Waiting:
    """:class:`Waiting` of a paged store: counted by the index, the first files listed."""
    tallies = model.tallies(Kind.WAITING)
    sets: Counter[frozenset[str]] = Counter()
    for tally in tallies:
        if tally.needs:
            sets[frozenset(tally.needs)] += tally.n
    names = {name for t in tallies for name in t.needs}
    files = {
        name: tuple(model.first_keys(Kind.WAITING, [t for t in tallies if name in t.needs],
                                     FILES_READ))
        for name in sorted(names)
    }  # fmt: skip
    return Waiting(sets, files)


@dataclass(frozen=True, slots=True)
class ToolRow:
    """One line of the tools view."""

    name: str
    """Executable name."""
    found: bool
    """Whether this machine has it (as the engine sees it)."""
    version: str
    """Its version, or ``-`` when missing."""
    path: str
    """Where it was found, or ``-``."""
    unlocks: str
    """What it gives the user, in a few words."""
    files: tuple[Key, ...]
    """Records naming it among the tools that would unlock them (a paged store's: the first
    :data:`FILES_READ` of them)."""
    install: Mapping[str, str]
    """Platform -> install command."""
    workers: tuple[tuple[str, str | None], ...] = ()
    """Reads on a Dask cluster: (worker, its version or None where it is missing)."""
    left_out: bool = False
    """Left out on purpose (``--without``, ``--no-external``): not missing, no hint to
    install it (it may well be installed)."""
    read_without: int = 0
    """Records read without it, that it is found now (a sweep that left it out, a Dask worker
    that lacked it): the next sweep reads them again (the store's summary counts them)."""
    waiting: int = -1
    """Records naming it (-1: as many as :attr:`files`)."""

    @property
    def count(self) -> int:
        """Records naming it among the tools that would unlock them."""
        return len(self.files) if self.waiting < 0 else self.waiting

    @property
    def state(self) -> str:
        """``found``, ``left out`` or ``missing``."""
        return "found" if self.found else "left out" if self.left_out else "missing"


PLATFORMS: tuple[tuple[str, str], ...] = (
    ("debian", "Debian/Ubuntu"),
    ("fedora", "Fedora"),
    ("macos", "macOS (Homebrew)"),
    ("windows", "Windows"),
)
"""Install-hint keys of :data:`engine.tools.KNOWN_TOOLS`, with the name shown."""


def this_platform() -> str | None:
    """The install-hint key of this machine (:data:`PLATFORMS`), None when none fits."""
    import shutil
    import sys

    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith(("win", "cygwin")):
        return "windows"
    for key, manager in (("debian", "apt"), ("fedora", "dnf")):
        if shutil.which(manager):
            return key
    return None


def install_hint(tools: Iterable[str], platform: str | None) -> str:
    """The command that installs ``tools`` here ("" when unknown): one per package."""
    if platform is None:
        return ""
    commands: list[str] = []
    for name in tools:
        spec = KNOWN_TOOLS.get(name)
        command = spec.install.get(platform) if spec else None
        if command and command not in commands:
            commands.append(command)
    return "; ".join(commands)


def found_from_toolset(tools: ToolSet) -> dict[str, tuple[str, str]]:
    """Name -> (version, path) of a live session's tools."""
    return {t.name: (t.version, t.path) for t in tools.found}


def found_from_summary(tools_found: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Name -> (version, path) from a store's summary (which records no paths)."""
    return {name: (version, "-") for name, version in tools_found.items()}


def tool_rows(
    found: Mapping[str, tuple[str, str]],
    waiting: Waiting | Iterable[Record | tuple[Key, Iterable[str]]],
    workers: Mapping[str, ToolSet] | None = None,
    left_out: Iterable[str] = (),
    read_without: Mapping[str, int] | None = None,
) -> list[ToolRow]:
    """Every known tool (and any other a record names): missing ones waited on most first.

    ``waiting``: the records that name tools that would unlock them (a :class:`Waiting`, or
    the records or their (key, tools): :meth:`~tui.model.RecordModel.waiting`, no record read
    back); an ok container whose
    members wait on a tool is listed under it, as ``quarry tools DIR`` counts it.
    ``workers`` (reads on a Dask cluster) says which worker has which tool; ``left_out`` are
    the tools the run was told not to use (listed after the missing ones, with no install
    hint); ``read_without``: per tool found, the records read without it (the summary's).
    """
    workers = workers or {}
    skipped = set(left_out)
    known = waiting if isinstance(waiting, Waiting) else waiting_of(waiting)
    files = known.files
    rows = []
    for name in sorted(set(KNOWN_TOOLS) | set(files)):
        spec = KNOWN_TOOLS.get(name)
        version, path = found.get(name, ("-", "-"))
        out = name in skipped and name not in found
        rows.append(
            ToolRow(
                name,
                name in found,
                version,
                path,
                spec.unlocks if spec else "named by a reader",
                tuple(files.get(name, ())),
                spec.install if spec and not out else {},
                tuple((w, _version(t, name)) for w, t in sorted(workers.items())),
                out,
                (read_without or {}).get(name, 0),
                known.count((name,)),
            )
        )
    return sorted(rows, key=lambda r: (r.found, r.left_out, -r.count, r.name))


def _version(tools: ToolSet, name: str) -> str | None:
    return next((t.version for t in tools.found if t.name == name), None)


def tools_waited_on(rows: Iterable[ToolRow]) -> list[ToolRow]:
    """Missing tools that files are waiting on (what makes the tools view show by itself);
    not those left out on purpose."""
    return [r for r in rows if not r.found and not r.left_out and r.count]
