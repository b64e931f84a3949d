"""Engine events: what a sweep or the watcher tells its listeners.

Events are frozen dataclasses handed to a callback (``on_event``). The callback is called from
whatever thread does the work; a listener that renders (the dashboard) must hand events over
to its own thread cheaply (Textual: ``post_message``, batched) and never block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.records import Record, Summary


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all engine events."""

    at: float
    """``time.time()`` when the event happened."""


@dataclass(frozen=True, slots=True)
class SweepStarted(Event):
    """A sweep (full, or a watch batch) began."""

    roots: tuple[str, ...]
    """The roots being swept."""
    files: int
    """Files found by the walk (or in the batch)."""
    bytes: int
    """Their total size."""
    full: bool = True
    """False for an incremental watch batch."""


@dataclass(frozen=True, slots=True)
class Progress(Event):
    """Progress through the files of a sweep."""

    done: int
    """Files decided so far."""
    total: int
    """Files in this sweep."""
    bytes_done: int
    """Bytes of the files decided so far."""
    bytes_total: int
    """Bytes in this sweep."""
    current: str
    """Relative path of the file just finished."""


@dataclass(frozen=True, slots=True)
class RecordsChanged(Event):
    """Records were added or replaced (``records``) and removed (``removed`` keys)."""

    records: tuple[Record, ...]
    """New or changed records."""
    removed: tuple[tuple[str, str], ...] = ()
    """(root, path) keys of records that went away."""


@dataclass(frozen=True, slots=True)
class SweepFinished(Event):
    """A sweep finished and the store was written."""

    summary: Summary
    """The summary as written."""
    extracted: int
    """Files read in this sweep."""
    reused: int
    """Files whose verdict was kept."""
    full: bool = True
    """False for an incremental watch batch."""


@dataclass(frozen=True, slots=True)
class ToolsChanged(Event):
    """The set of available external tools changed."""

    found: tuple[str, ...]
    """Tools now available."""
    appeared: tuple[str, ...]
    """Tools that were not there before."""
    vanished: tuple[str, ...]
    """Tools that went away."""


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Something an operator should know that is not a record (watcher fallback, rescan...)."""

    kind: str
    """Short code: ``rescan``, ``polling``, ``watch-error``, ``machine-failure``..."""
    message: str
    """One line for a log or a notification."""
    level: str = "info"
    """``info``, ``warning`` or ``error``."""


Listener = Callable[[Event], None]
"""Receives events; called from the engine's threads."""


def ignore(_event: Event) -> None:
    """A listener that does nothing."""
