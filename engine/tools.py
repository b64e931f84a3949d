"""External tools: found on PATH at run time, with versions, never required.

:data:`KNOWN_TOOLS` lists every tool a reader can use, how to ask its version and how to
install it. :func:`discover` looks them up and returns a :class:`ToolSet`, whose
``fingerprint`` is recorded on unsupported records so they are retried when it changes.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine import toolcache

if TYPE_CHECKING:
    import subprocess


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool a reader can use."""

    name: str
    """Executable name looked up on PATH."""
    version_args: tuple[str, ...]
    """Arguments that make it print its version."""
    unlocks: str
    """What it gives the user, in a few words."""
    install: dict[str, str] = field(default_factory=dict)
    """Platform -> install command (debian, fedora, macos, windows)."""


def _hints(debian: str, fedora: str, brew: str, windows: str) -> dict[str, str]:
    return {
        "debian": f"sudo apt install {debian}",
        "fedora": f"sudo dnf install {fedora}",
        "macos": f"brew install {brew}",
        "windows": windows,
    }


def _dlp(package: str) -> dict[str, str]:
    """A Document Liberation Project library's tools: packaged under one name by Debian and
    Fedora, built from source elsewhere."""
    hints = _hints(package, package, package, "not packaged; use WSL")
    hints["macos"] = f"not in Homebrew; build {package.removesuffix('-tools')} from source"
    return hints


_POPPLER = _hints("poppler-utils", "poppler-utils", "poppler", "choco install poppler")
_MDB = _hints("mdbtools", "mdbtools", "mdbtools", "not packaged; use WSL")
_DJVU = _hints(
    "djvulibre-bin", "djvulibre", "djvulibre", "DjVuLibre's installer (djvu.sourceforge.net)"
)
_CHM = {
    "debian": "sudo apt install libchm-bin",
    "fedora": "not packaged; build chmlib with ./configure --enable-examples",
    "macos": "brew install chmlib",
    "windows": "not packaged; use WSL",
}
"""chmlib's example programs: Debian packages them apart, Homebrew builds them."""
_TESS = _hints("tesseract-ocr", "tesseract", "tesseract", "choco install tesseract")

KNOWN_TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec("pdftotext", ("-v",), "PDF text with layout (poppler)", _POPPLER),
        ToolSpec("pdftoppm", ("-v",), "OCR of scanned PDFs, with tesseract", _POPPLER),
        ToolSpec("tesseract", ("--version",), "text from images and scans (OCR)", _TESS),
        ToolSpec(
            "antiword",
            ("-h",),
            "legacy Word .doc",
            _hints("antiword", "antiword", "antiword", "not packaged; use catdoc via WSL"),
        ),
        ToolSpec(
            "catdoc",
            ("-V",),
            "legacy Word .doc (fallback)",
            _hints("catdoc", "catdoc", "catdoc", "not packaged; use WSL"),
        ),
        ToolSpec(
            "wpd2text",
            ("--version",),
            "WordPerfect .wpd",
            _hints("libwpd-tools", "libwpd-tools", "libwpd", "not packaged; use WSL"),
        ),
        ToolSpec(
            "bsdtar",
            ("--version",),
            "RAR, ISO, cabinet and LHA archives",
            _hints("libarchive-tools", "bsdtar", "libarchive", "not packaged; use WSL"),
        ),
        ToolSpec(
            "mdb-tables",
            ("--version",),
            "Access databases: their tables",
            _MDB,
        ),
        ToolSpec(
            "mdb-export",
            ("--version",),
            "Access databases (.mdb, .accdb)",
            _MDB,
        ),
        ToolSpec(
            "heif-convert",
            ("-h",),
            "HEIC/HEIF and AVIF photos (phones' scans), with tesseract",
            _hints("libheif-examples", "libheif-tools", "libheif", "not packaged; use WSL"),
        ),
        ToolSpec(
            "opj_decompress",
            ("-h",),
            "JPEG 2000 images (.jp2, .j2k), with tesseract",
            _hints("libopenjp2-tools", "openjpeg2-tools", "openjpeg", "not packaged; use WSL"),
        ),
        ToolSpec("wps2text", ("-v",), "Microsoft Works documents (.wps)", _dlp("libwps-tools")),
        ToolSpec("wks2text", ("-v",), "Quattro Pro notebooks (.wb3, .qpw)", _dlp("libwps-tools")),
        ToolSpec(
            "sd2text",
            ("-v",),
            "StarOffice 3-5 documents (.sdw, .sdc, .sda, .sdd, .vor)",
            _dlp("libstaroffice-tools"),
        ),
        ToolSpec(
            "vsd2text", ("--version",), "Visio 2003-2010 drawings (.vsd)", _dlp("libvisio-tools")
        ),
        ToolSpec("mwaw2text", ("-v",), "PowerPoint 4 presentations", _dlp("libmwaw-tools")),
        ToolSpec("pub2xhtml", ("--version",), "Microsoft Publisher (.pub)", _dlp("libmspub-tools")),
        ToolSpec("pages2text", ("--version",), "Apple Pages documents", _dlp("libetonyek-tools")),
        ToolSpec(
            "numbers2text", ("--version",), "Apple Numbers spreadsheets", _dlp("libetonyek-tools")
        ),
        ToolSpec(
            "key2text", ("--version",), "Apple Keynote presentations", _dlp("libetonyek-tools")
        ),
        ToolSpec(
            "readpst",
            ("-V",),
            "Outlook mailboxes (.pst, .ost)",
            _hints("pst-utils", "libpst", "libpst", "not packaged; use WSL"),
        ),
        ToolSpec("djvused", (), "DjVu documents (.djvu): their text layer", _DJVU),
        ToolSpec("ddjvu", ("--help",), "DjVu scans without a text layer, with tesseract", _DJVU),
        ToolSpec("enum_chmLib", (), "Compiled HTML Help (.chm): its pages", _CHM),
        ToolSpec("test_chmLib", (), "Compiled HTML Help (.chm): their text", _CHM),
        ToolSpec(
            "xls2csv",
            ("-V",),
            "legacy Excel .xls that xlrd cannot parse",
            _hints("catdoc", "catdoc", "catdoc", "not packaged; use WSL"),
        ),
    )
}

_VERSION_RE = re.compile(r"(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool found on this machine."""

    name: str
    """Executable name."""
    path: str
    """Absolute path it was found at."""
    version: str
    """Version as the tool printed it, or ``unknown``."""


@dataclass(frozen=True, slots=True)
class ToolSet:
    """The tools a sweep may use: found on PATH, minus --without / --no-external."""

    found: tuple[Tool, ...] = ()
    """Tools available, sorted by name."""

    @classmethod
    def empty(cls) -> ToolSet:
        """No external tools (``--no-external``)."""
        return cls(())

    def path(self, name: str) -> str | None:
        """Executable path of ``name``, or None when it is not available."""
        for tool in self.found:
            if tool.name == name:
                return tool.path
        return None

    def has(self, name: str) -> bool:
        """Whether ``name`` is available."""
        return self.path(name) is not None

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the available tools."""
        return tuple(t.name for t in self.found)

    @property
    def missing(self) -> tuple[str, ...]:
        """Known tools that are not available."""
        have = set(self.names)
        return tuple(n for n in KNOWN_TOOLS if n not in have)

    @property
    def named(self) -> str:
        """Every tool's name and version: what :attr:`fingerprint` digests."""
        return ";".join(f"{t.name}={t.version}" for t in self.found)

    @property
    def fingerprint(self) -> str:
        """Short stable digest of names and versions; changes when a tool comes or goes."""
        import hashlib  # not needed by every importer (the dashboard starting up)

        return hashlib.sha256(self.named.encode()).hexdigest()[:12]

    def without(self, names: Iterable[str]) -> ToolSet:
        """This set minus ``names``."""
        drop = set(names)
        return ToolSet(tuple(t for t in self.found if t.name not in drop))


def probe_versions(
    probes: Sequence[tuple[str, tuple[str, ...]]], timeout: float = 10.0
) -> list[str]:
    """The version of each ``(exe, args)``, the tools run side by side (every start of a sweep
    or a dashboard asks all of them; one after another they cost 60-250 ms)."""
    import subprocess  # only when a version is not remembered: a warm start asks none

    procs: list[subprocess.Popen[bytes] | None] = []
    for exe, args in probes:
        try:
            procs.append(
                subprocess.Popen(
                    [exe, *args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                )
            )
        except OSError:
            procs.append(None)
    deadline = time.monotonic() + timeout
    return [_version_of(proc, deadline) for proc in procs]


def _version_of(proc: subprocess.Popen[bytes] | None, deadline: float) -> str:
    import subprocess

    if proc is None:
        return toolcache.UNKNOWN
    try:
        out, _ = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return toolcache.UNKNOWN
    except OSError:
        return toolcache.UNKNOWN
    match = _VERSION_RE.search(out.decode("utf-8", "replace"))
    return match.group(1) if match else toolcache.UNKNOWN


def discover(
    *, no_external: bool = False, without: Iterable[str] = (), path: str | None = None
) -> ToolSet:
    """Look up every known tool on PATH (or ``path``) and its version (asked of the tool, or
    remembered from a run that asked the very same executable: :mod:`engine.toolcache`)."""
    if no_external:
        return ToolSet.empty()
    skip = set(without)
    search = path if path is not None else os.environ.get("PATH", "")
    found: list[tuple[str, str]] = []
    for name in sorted(KNOWN_TOOLS):
        if name in skip:
            continue
        exe = shutil.which(name, path=search)
        if exe is not None:
            found.append((name, exe))
    probes = [(exe, KNOWN_TOOLS[name].version_args) for name, exe in found]
    versions = toolcache.versions(probes, probe_versions)
    return ToolSet(
        tuple(Tool(name, exe, v) for (name, exe), v in zip(found, versions, strict=True))
    )


def read_with(uses: Iterable[str], named: str) -> str:
    """What a record says of the tools a read had (:attr:`engine.records.Record.read_with`):
    each tool of ``uses`` (its reader's) as ``name=version`` from ``named`` (a
    :attr:`ToolSet.named`: the tools the reading machine had), with no version where it had
    none of that name."""
    have = dict(part.partition("=")[::2] for part in named.split(";") if part)
    # A tool found whose version is not known still says so: only a lacked one has none.
    versions = {name: have[name] or toolcache.UNKNOWN for name in have}
    return ";".join(f"{name}={versions.get(name, '')}" for name in sorted(set(uses)))
