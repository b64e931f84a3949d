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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.quality import summary_line
from engine.records import Key, Reason, Record, Status
from engine.tools import KNOWN_TOOLS, ToolSet
from tui.model import RecordModel

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
    """(root, path) of every record in the group, in store order."""
    example: str = ""
    """One record's verdict, as the engine wrote it."""
    example_path: str = ""
    """The path of that record."""

    @property
    def count(self) -> int:
        """Records in the group."""
        return len(self.keys)


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
        if self.needs:
            return "install " + " or ".join(name for name, _ in self.needs.most_common())
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
    """Records naming it among the tools that would unlock them."""
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
    waiting: Iterable[Record | tuple[Key, Iterable[str]]],
    workers: Mapping[str, ToolSet] | None = None,
    left_out: Iterable[str] = (),
    read_without: Mapping[str, int] | None = None,
) -> list[ToolRow]:
    """Every known tool (and any other a record names): missing ones waited on most first.

    ``waiting``: the records that name tools that would unlock them, or their (key, tools)
    (:meth:`~tui.model.RecordModel.waiting`, no record read back); an ok container whose
    members wait on a tool is listed under it, as ``quarry tools DIR`` counts it.
    ``workers`` (reads on a Dask cluster) says which worker has which tool; ``left_out`` are
    the tools the run was told not to use (listed after the missing ones, with no install
    hint); ``read_without``: per tool found, the records read without it (the summary's).
    """
    workers = workers or {}
    skipped = set(left_out)
    files: dict[str, list[Key]] = {}
    for item in waiting:
        key, needs = (item.key, item.needs) if isinstance(item, Record) else item
        for name in needs:
            files.setdefault(name, []).append(key)
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
            )
        )
    return sorted(rows, key=lambda r: (r.found, r.left_out, -len(r.files), r.name))


def _version(tools: ToolSet, name: str) -> str | None:
    return next((t.version for t in tools.found if t.name == name), None)


def tools_waited_on(rows: Iterable[ToolRow]) -> list[ToolRow]:
    """Missing tools that files are waiting on (what makes the tools view show by itself);
    not those left out on purpose."""
    return [r for r in rows if not r.found and not r.left_out and r.files]
