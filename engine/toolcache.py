"""The versions external tools printed, remembered per executable between runs.

Every sweep, watch and dashboard start asks each tool on PATH for its version (seven tools
here: seven processes, 20-25 ms of a warm sweep on a quiet machine and 60-150 ms on a busy
one). A tool's version changes only when its executable does, so the answer is kept in the
user's cache folder, keyed by the executable's path and what ``stat`` says of the file it
resolves to (device, inode, size, mtime and ctime: a package upgrade, a rebuild, a repointed
symlink or an edited script each change one). Only the version is cached, never whether the
tool is there: PATH is searched every time. The cache is a convenience: a file that is
missing, torn, foreign or unwritable means the tools are asked, as without it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from engine.store import atomic_write

FORMAT = 1
CACHE_ENV = "QUARRY_CACHE_DIR"
"""A folder for the cache instead of ``$XDG_CACHE_HOME/textquarry`` (tests use their own)."""
UNKNOWN = "unknown"

NAME = "tool-versions.json"
MAX_BYTES = 1 << 20
"""Largest cache file read (whatever is larger was not written by this module)."""

Probe = tuple[str, tuple[str, ...]]
ProbeFn = Callable[[Sequence[Probe]], list[str]]
_Entry = dict[str, object]


def cache_path() -> Path | None:
    """Where the versions are kept, or None when this machine gives no cache folder."""
    folder = os.environ.get(CACHE_ENV)
    if folder:
        return Path(folder) / NAME
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home == "~":  # no HOME and no passwd entry: nowhere to keep it
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "textquarry" / NAME


def identity(exe: str) -> list[int | str] | None:
    """What must stay the same for a cached version to hold: None when ``exe`` cannot be
    looked at (it is then probed, and its answer not kept)."""
    try:
        st = os.stat(exe)
        real = os.path.realpath(exe)
    except (OSError, ValueError):
        return None
    return [real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def load(path: Path | None) -> dict[str, _Entry]:
    """The cached entries by executable path; empty for anything but a file of ours."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:  # not ours (a few hundred bytes a tool): asked, rewritten
            return {}
        data = orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    tools = data.get("tools")
    return tools if isinstance(tools, dict) else {}


def cached_version(
    entries: dict[str, _Entry], probe: Probe, ident: list[int | str] | None
) -> str | None:
    """The version kept for ``probe`` if its executable is still the one that printed it."""
    exe, args = probe
    entry = entries.get(exe)
    if ident is None or not isinstance(entry, dict):
        return None
    version = entry.get("version")
    if entry.get("id") != ident or entry.get("args") != list(args) or not isinstance(version, str):
        return None
    return version


def save(path: Path | None, entries: dict[str, _Entry]) -> None:
    """Replace the cache file atomically; a cache that cannot be written is skipped."""
    if path is None:
        return
    with contextlib.suppress(OSError):
        # its folder as it really is: the cache may live behind a link of the user's own
        atomic_write(
            path.parent.resolve() / path.name, orjson.dumps({"format": FORMAT, "tools": entries})
        )


def versions(probes: Sequence[Probe], probe: ProbeFn) -> list[str]:
    """The version of each ``(exe, args)``: from the cache where its executable is unchanged,
    else from ``probe`` (which runs the tools side by side), remembered for the next run."""
    path = cache_path()
    entries = load(path)
    idents = [identity(exe) for exe, _args in probes]
    versions = [cached_version(entries, p, i) for p, i in zip(probes, idents, strict=True)]
    asked = [n for n, v in enumerate(versions) if v is None]
    changed = False
    answers = probe([probes[n] for n in asked]) if asked else []
    for n, version in zip(asked, answers, strict=True):
        versions[n] = version
        ident = idents[n]
        if ident is not None and version != UNKNOWN:
            # "unknown" (a timeout, a tool that printed no number) is asked again next time
            exe, args = probes[n]
            entries[exe] = {"id": ident, "args": list(args), "version": version}
            changed = True
    if changed:
        # Tools that are gone (another PATH, an uninstalled package) leave with this write.
        save(path, {exe: e for exe, e in entries.items() if os.path.exists(exe)})
    return [v if v is not None else UNKNOWN for v in versions]
