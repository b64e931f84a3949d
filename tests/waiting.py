"""Bounded waits and process checks shared by the tests that run real processes.

Every wait polls the condition it awaits, with a bound: no test assumes how fast a loaded
machine is.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def until(cond: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Poll ``cond`` every 50 ms; AssertionError naming ``what`` after ``limit`` seconds."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False
