"""The process's standard streams made whole before anything else opens a file.

A command started with a standard stream closed (``quarry sweep DIR >&-`` or ``2>&-``; some
daemons and cron set-ups start programs so) found ``sys.stdout`` or ``sys.stderr`` None: the
first ``print`` or flush ended in a traceback, or nothing was said at all and the sweep never
ran. Worse, the next file the process opened took the closed descriptor's number, so whatever
wrote to "standard output" or "standard error" afterwards (a warning, a tool a worker runs)
wrote into that file: the walk ahead's buffer, the store's lock, its index. Each closed one is
opened on the null device first, as daemons do.

Standard output in an encoding that cannot hold every character (a terminal set to Latin-1 or
ASCII, ``PYTHONIOENCODING=ascii``) took ``quarry show`` and ``quarry grep`` down with a
``UnicodeEncodeError`` at the first character it lacks; such a character is written as its
escape (``\u201c``) instead, as Python writes standard error.
"""

from __future__ import annotations

import codecs
import io
import os
import sys

_STREAMS: tuple[tuple[int, int, str, str], ...] = (
    (0, os.O_RDONLY, "stdin", "r"),
    (1, os.O_WRONLY, "stdout", "w"),
    (2, os.O_WRONLY, "stderr", "w"),
)
"""Each standard descriptor: how it is opened on the null device, its name in ``sys``."""


def mend() -> None:
    """Open each of descriptors 0, 1 and 2 that is closed on the null device, and give
    ``sys`` a stream for each it has none for. Nothing happens where all three are open."""
    for fd, flags, name, mode in _STREAMS:
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, flags)
            if null != fd:  # (it is fd itself, the lowest free once those below are mended)
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            stream = open(fd, mode, closefd=False, encoding="utf-8", errors="replace")  # noqa: SIM115
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
    out = sys.stdout
    if not _holds_all(getattr(out, "encoding", None)) and isinstance(out, io.TextIOWrapper):
        out.reconfigure(errors="backslashreplace")


def _holds_all(encoding: str | None) -> bool:
    """Whether ``encoding`` can write every character (one of the UTF family)."""
    if encoding is None:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False


__all__ = ["mend"]
