"""Each read worker's private temporary folder, owned and removed by the process that started it.

A worker's reads put bytes in temporary files: archive members copied before they are read
(up to ``zip_member_bytes`` each), OCR page images, unlocked copies of encrypted files, and
whatever the tools they run write to ``$TMPDIR``. A read killed at its time limit cannot clean
up after itself, and errors are read again at every sweep, so anything it leaves in the
system's temporary folder would pile up, sweep after sweep.

So the pool makes a folder for each worker it starts (``quarry-worker-<pool pid>-*`` in the
pool's temporary folder), the worker makes it its own temporary folder (Python's ``tempfile``
and its tools' ``$TMPDIR``), and the pool removes it once the worker is gone, however it went.
A pool that is itself killed cannot: the next pool to start removes the folders of pools that
are no longer running.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "quarry-worker-"
_OWNED = re.compile(rf"^{re.escape(PREFIX)}(\d+)-")


def make() -> str:
    """A new private folder for one worker, named after this (the pool's) process."""
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def remove(folder: str) -> None:
    """Remove a worker's folder and all it holds (the worker is gone)."""
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def adopt(folder: str) -> None:
    """Make ``folder`` this process's temporary folder, and its children's (the worker's side)."""
    tempfile.tempdir = folder
    os.environ["TMPDIR"] = folder


def remove_orphans() -> int:
    """Remove the worker folders of pools no longer running; how many were removed."""
    removed = 0
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return 0
    for entry in entries:
        match = _OWNED.match(entry.name)
        if match is None or _running(int(match.group(1))):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(Path(entry.path))
                removed += 1
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running, and not ours to judge
        return True
    return True
