"""The real ``quarry``, run as a user runs it, for the tests that end "as a user meets it".

``python -m engine`` is the command ``quarry`` installs (the same entry point), run in a process
of its own with no terminal: each call returns what it printed and its exit status.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson


def quarry(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """Run ``quarry ARGS`` (standard input closed) and return it, finished."""
    return subprocess.run(
        [sys.executable, "-m", "engine", *map(str, args)],
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def sweep(root: Path, store: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    """``quarry sweep -q --workers 1 FLAGS ROOT --out STORE``."""
    return quarry("sweep", "-q", "--workers", "1", *flags, root, "--out", store)


def shown(path: Path, store: Path) -> dict[str, Any]:
    """The record ``quarry show PATH --store STORE --json`` prints (it must print one)."""
    proc = quarry("show", path, "--store", store, "--json")
    assert proc.returncode == 0, proc.stderr
    record: dict[str, Any] = orjson.loads(proc.stdout)
    return record


def text_shown(path: Path, store: Path) -> str:
    """What ``quarry show PATH --store STORE`` prints: the record, then the text."""
    return quarry("show", path, "--store", store).stdout.decode("utf-8", "replace")
