"""Each read worker's private temporary folder, owned and removed by the process that started it.

A worker's reads put bytes in temporary files: archive members copied before they are read
(up to ``zip_member_bytes`` each), OCR page images, unlocked copies of encrypted files, and
whatever the tools they run write to ``$TMPDIR``. A read killed at its time limit cannot clean
up after itself, and errors are read again at every sweep, so anything it leaves in the
system's temporary folder would pile up, sweep after sweep.

So the pool makes a folder for each worker it starts (``quarry-worker-<pool pid>-*`` in the
pool's temporary folder), the worker makes it its own temporary folder (Python's ``tempfile``
and its tools' ``$TMPDIR``), and the pool removes it once the worker is gone, however it went.
A pool that is itself killed cannot: the pool holds an ``flock`` on a file in each of its
folders, which the kernel lets go when the pool dies, so the next pool to start removes the
folders nobody holds (a pid would not do: it is reused, and means nothing in another pid
namespace that shares the folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time

PREFIX = "quarry-worker-"
OWNER = ".owner"
"""The file in each folder that its pool holds an flock on."""
UNOWNED_AGE_S = 60.0
"""A folder without an owner file is taken for orphaned only past this age (a pool makes the
file a moment after the folder)."""


class WorkerFolder:
    """One worker's temporary folder, held (flocked) by the pool that made it."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
        """The folder."""
        self._fd: int | None = None
        # The owner file gets its name only once it is held: under that name from the start,
        # another pool starting at the same moment (two Dask workers do) could take its
        # free lock between our create and our flock, and remove the folder of a live pool.
        made = os.path.join(self.path, f"{OWNER}.new")
        try:
            self._fd = os.open(
                made, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(made, os.path.join(self.path, OWNER))
        except OSError:
            self.remove()
            raise

    def remove(self) -> None:
        """Remove the folder and all it holds (its worker is gone), then let go of it."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def remove_all(folders: set[WorkerFolder]) -> None:
    """Remove every folder of ``folders`` (a pool that goes away without being closed)."""
    for folder in list(folders):
        folder.remove()
    folders.clear()


def adopt(folder: str) -> None:
    """Make ``folder`` this process's temporary folder, and its children's (the worker's side)."""
    tempfile.tempdir = folder
    os.environ["TMPDIR"] = folder


def remove_orphans() -> int:
    """Remove the worker folders no running pool holds; how many were removed."""
    removed = 0
    try:
        entries = [e for e in os.scandir(tempfile.gettempdir()) if e.name.startswith(PREFIX)]
    except OSError:
        return 0
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False) and _orphaned(entry.path):
                shutil.rmtree(entry.path)
                removed += 1
    return removed


def _orphaned(folder: str) -> bool:
    """Whether no pool holds ``folder`` (its owner file's flock is free)."""
    try:
        fd = os.open(os.path.join(folder, OWNER), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return time.time() - os.lstat(folder).st_mtime > UNOWNED_AGE_S
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # a pool holds it
    finally:
        os.close(fd)  # the lock, if taken, goes with it: the folder is removed next
    return True
