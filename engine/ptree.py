"""The process tree, read from ``/proc``: who started whom, to kill a tool with its children.

Kept apart from :mod:`engine.procs` (which starts workers) so that a reader's tool run, far
below it, can stop a tool together with what the tool started (:func:`kill_with_children`).
This kernel may lack ``/proc/<pid>/task/<tid>/children``, so every ``stat`` is read.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

_PROC = Path("/proc")


def parents() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every process this user can see."""
    out: dict[int, tuple[int, int]] = {}
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:  # it exited while we looked
            continue
        # The name in parentheses may hold spaces or ')': the fields follow its last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        with contextlib.suppress(IndexError, ValueError):
            out[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return out


def descendants(pid: int) -> list[tuple[int, int]]:
    """(pid, process group) of every living descendant of ``pid``."""
    table = parents()
    children: dict[int, list[int]] = {}
    for child, (ppid, _pgid) in table.items():
        children.setdefault(ppid, []).append(child)
    found: list[tuple[int, int]] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append((child, table[child][1]))
        todo.extend(children.get(child, ()))
    return found


def kill_with_children(pid: int) -> None:
    """SIGKILL ``pid`` and every process it started, however deep.

    The process is stopped first, so it starts nothing more while its tree is read; its
    children go before it, while they can still be told from another's (once it is dead,
    they are the init process's). For a tool whose time ran out: a shell script's ``sleep``,
    a wrapper's real program, would otherwise hold the tool's output open, and the read
    waiting for it, until they ended of their own accord.
    """
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGSTOP)
    for child, _group in descendants(pid):
        with contextlib.suppress(OSError):
            os.kill(child, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
