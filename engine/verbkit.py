"""What every verb shares: the exit codes, and finding and opening the store a path names.

Below :mod:`engine.commands` and the verbs that live in modules of their own
(:mod:`engine.export`), which import these from here, not from the commands' table (that
imports them back: a cycle).
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import UsageError
from engine.names import shown
from engine.store import JSONL, STORE_DIRNAME, Store

EXIT_OK, EXIT_USAGE, EXIT_ERRORS, EXIT_MACHINE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
"""0 clean; 1 bad usage; 2 the store has error records; 3 the machine failed; 130 stopped."""


# -- finding and opening a store ------------------------------------------------------------


def user_path(path: Path) -> Path:
    """An absolute path as the user meant it: its folder resolved, its last part kept.

    A symbolic link names itself (its record is ``skipped/link``), not its target.
    """
    p = Path(os.path.abspath(path.expanduser()))
    return Path(os.path.realpath(p.parent)) / p.name if p.name else p


def store_dir(path: Path) -> Path:
    """The store folder meant by ``path``: the folder itself or its ``.quarry``."""
    path = path.expanduser().resolve()
    if (path / STORE_DIRNAME).is_dir() and not (path / JSONL).exists():
        return path / STORE_DIRNAME
    return path


def reading_store(path: Path, hint: Path | None = None) -> Store:
    """The store at ``path`` (or in its ``.quarry``), checked for reading.

    Raises UsageError when there is none and StoreUnusable when it cannot be read.
    ``hint`` names the folder to sweep in the message (default: ``path``).
    """
    p = path.expanduser()
    if not p.exists():
        raise UsageError(f"no store at {shown(str(path))}: no such folder")
    if not p.is_dir():
        raise UsageError(f"no store at {shown(str(path))}: it is a file, not a store folder")
    store = Store(store_dir(p))
    store.check()
    if not store.exists() and not (store.out / "extract.db").is_file():  # (a first sweep killed)
        sweep = shown(str(hint or path))
        raise UsageError(f"no store at {shown(str(path))} (run 'quarry sweep {sweep}' first)")
    return store


def named_store(folder: Path | None, store: Path | None) -> Store:
    """The store a verb's ``DIR`` or ``--store`` names (one of them: either may be a swept
    folder or a store folder), else the one above the current folder."""
    if folder is not None and store is not None:
        raise UsageError("name the store once: DIR or --store, not both")
    given = store if store is not None else folder
    if given is not None:
        return reading_store(given)
    return find_store(Path.cwd())


def find_store(path: Path) -> Store:
    """The store of the nearest folder above ``path`` that has one (``.quarry``)."""
    for folder in [path, *path.parents]:
        candidate = folder / STORE_DIRNAME
        if candidate.is_dir() and Store(candidate).exists():  # a link there is named, not passed
            store = Store(candidate)
            store.check()
            return store
    where = shown(str(path))
    if path.is_dir() and Store(path).exists():  # (``quarry show .quarry``: a store for a file)
        raise UsageError(f"no store found above {where}, which is a store itself: --store {where}")
    raise UsageError(f"no store found above {where} (use --store)")
