"""Messages that carry work done off the UI thread (store loads, engine events) to the app."""

from __future__ import annotations

from textual.message import Message

from engine.events import Event
from engine.records import Summary
from tui.loader import Chunk


class RowsLoaded(Message):
    """A chunk of the store's records was parsed."""

    def __init__(self, chunk: Chunk, data: bytes, first: bool) -> None:
        super().__init__()
        self.chunk = chunk
        """The rows."""
        self.data = data
        """The ``extract.jsonl`` bytes the rows point into."""
        self.first = first
        """True for the first chunk of a (re)load: the model starts afresh."""


class StoreLoaded(Message):
    """Every record of the store was parsed."""

    def __init__(
        self, summary: Summary | None, stamp: tuple[int, int] | None, problem: str = ""
    ) -> None:
        super().__init__()
        self.summary = summary
        """The store's summary, if it has one (and could be read)."""
        self.problem = problem
        """Why the summary could not be read, or empty."""
        self.stamp = stamp
        """(mtime_ns, size) of the ``extract.jsonl`` loaded."""


class StoreChanged(Message):
    """Another process rewrote the store (polling mode): every row again, and what changed."""

    def __init__(
        self,
        chunk: Chunk,
        data: bytes,
        changed: set[tuple[str, str]],
        summary: Summary | None,
        stamp: tuple[int, int] | None,
    ) -> None:
        super().__init__()
        self.chunk = chunk
        """All rows of the new file."""
        self.data = data
        """The new file's bytes."""
        self.changed = changed
        """Keys added or changed since the previous load (to highlight)."""
        self.summary = summary
        """The new summary."""
        self.stamp = stamp
        """(mtime_ns, size) of the file read."""


class EngineEvents(Message):
    """A batch of engine events, in the order they happened."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events
        """The events."""


class SessionStage(Message):
    """The session worker moved on: ``watching`` after the first sweep, ``failed``."""

    def __init__(self, stage: str, detail: str = "") -> None:
        super().__init__()
        self.stage = stage
        """``watching``, ``idle`` or ``failed``."""
        self.detail = detail
        """What went wrong, for ``failed``."""


class LoadFailed(Message):
    """The store could not be read at all (``extract.jsonl`` a folder, unreadable...)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
        """What went wrong, in one line."""
