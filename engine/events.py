"""Engine events: what a sweep or the watcher tells its listeners.

Events are frozen dataclasses handed to a callback (``on_event``). The callback is called from
whatever thread does the work; a listener that renders (the dashboard) must hand events over
to its own thread cheaply (Textual: ``post_message``, batched) and never block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from engine.records import Key, Record, Summary


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all engine events."""

    at: float
    """``time.time()`` when the event happened."""


class RunKind(StrEnum):
    """Why a sweep runs: what its start and end say (the activity log's words)."""

    SWEEP = "sweep"
    """A full sweep: every root walked, every record decided."""
    RESCAN = "rescan"
    """The watcher's walk of every root (what events were missed), the stat cache trusted."""
    CHANGES = "changes"
    """The files the watcher saw change."""
    RETRY = "retry"
    """The files an operator asked to be read again."""
    TOOLS = "tools"
    """The files a tool that appeared unlocks."""


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
    kind: RunKind = RunKind.SWEEP
    """Why it runs (a run that is not full is a rescan, changes, a retry or a tool's)."""


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
    removed: tuple[Key, ...] = ()
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
    kind: RunKind = RunKind.SWEEP
    """Why it runs (a run that is not full is a rescan, changes, a retry or a tool's)."""
    removed: int = 0
    """Records that went away in this run (their files deleted or moved out)."""


@dataclass(frozen=True, slots=True)
class ToolsChanged(Event):
    """The set of available external tools changed."""

    found: tuple[str, ...]
    """Tools now available."""
    appeared: tuple[str, ...]
    """Tools that were not there before."""
    vanished: tuple[str, ...]
    """Tools that went away."""


class NoticeKind(StrEnum):
    """What a notice is about: its word in logs and on screen is the value, as before the enum."""

    WATCHING = "watching"
    """The watcher started, and how (native or polling)."""
    POLLING = "polling"
    """Native watching failed for a root: polled instead."""
    WATCH_ERROR = "watch-error"
    """An observer failed, stopped or could not start."""
    STILL_CHANGING = "still-changing"
    """A file still being written was read anyway; read again when it settles."""
    RESTING = "resting"
    """A file whose read was costly keeps changing: it is read less often."""
    RESCAN = "rescan"
    """The watcher rescans the roots."""
    STORE_INDEX = "store-index"
    """The store's index was rebuilt or could not be used."""
    STORE_REPAIR = "store-repair"
    """The store's lines were repaired or rewritten."""
    STORE_MOVED = "store-moved"
    """The store is in another folder than it was written in: its records were re-keyed."""
    STAT_INDEX = "stat-index"
    """The stat index could not be used: the quick sweep fell back."""
    MACHINE_FAILURE = "machine-failure"
    """The machine kept a run from reading or storing files."""
    WORKERS = "workers"
    """Fewer read workers run than were asked for: the machine's limits allow no more."""
    VANISHED = "vanished"
    """Files went away during a sweep."""
    REPAIRED = "repaired"
    """A sweep repaired what an earlier one left."""
    INTERRUPTED = "interrupted"
    """An earlier sweep was interrupted."""
    ROOT_MISSING = "root-missing"
    """A root to sweep is not there."""
    ROOT_GONE = "root-gone"
    """A watched root went (deleted, moved away, unmounted): its records are kept."""
    ROOT_BACK = "root-back"
    """A watched root that was gone is there again: watched anew and rescanned."""
    STOPPING = "stopping"
    """The session is stopping after the batch in flight."""
    STOPPED = "stopped"
    """The session stopped."""
    DASK = "dask"
    """The Dask cluster said something."""
    DASK_WORKER = "dask-worker"
    """A Dask worker joined, with its tools."""
    DASK_REFUSED = "dask-refused"
    """A Dask worker was refused."""
    DASK_TOOLS = "dask-tools"
    """Dask workers' tools differ."""


class Level(StrEnum):
    """How much a notice matters: its value is the word logs show, as before the enum."""

    INFO = "info"
    """News; a quiet console leaves it out."""
    WARNING = "warning"
    """Shown even to a quiet console, and kept in the activity log."""
    ERROR = "error"
    """As a warning; the dashboard's pop-up says it as an error."""


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """Something an operator should know that is not a record (watcher fallback, rescan...)."""

    kind: NoticeKind
    """What the notice is about; its value is the short code logs show."""
    message: str
    """One line for a log or a notification."""
    level: Level = Level.INFO
    """How much it matters."""


class StoreState(StrEnum):
    """Whether the store takes the watcher's changes; the value is the word logs show."""

    TROUBLE = "store-trouble"
    """Changes could not be stored; retried until the store takes them."""
    OK = "store-ok"
    """The store takes changes again: the trouble is over."""
    LOST = "store-lost"
    """Watching stopped for good: the store is not up to date."""


@dataclass(frozen=True, slots=True)
class StoreHealth(Event):
    """The store's health as the watcher (or the session's writes) meets it: the dashboard's
    header follows it, the console and the activity log print it as a notice."""

    state: StoreState
    """Trouble, over, or lost."""
    message: str
    """One line for a log or a notification."""

    @property
    def level(self) -> Level:
        """A store that does not take changes is an error; its return is news."""
        return Level.INFO if self.state is StoreState.OK else Level.ERROR


Listener = Callable[[Event], None]
"""Receives events; called from the engine's threads."""


def ignore(_event: Event) -> None:
    """A listener that does nothing."""
