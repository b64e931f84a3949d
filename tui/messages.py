"""Messages that carry work done off the UI thread (store loads, engine events) to the app.

Every one a worker posts is a :class:`Fed`: the app hands each to its
:class:`~tui.router.Router`. :class:`ModelChanged` goes the other way, to the screens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from engine.db import Point
from engine.events import Event
from engine.records import Summary
from tui.link import Change, Live
from tui.loader import Chunk, Rows
from tui.poll import Followed, StoreDiff

if TYPE_CHECKING:  # a retry's answer; the sweep itself is not imported before the first frame
    from tui.retries import RetryDone


class Fed(Message):
    """What a worker (or the session's listener) posts for the app to route."""


class RowsLoaded(Fed):
    """A chunk of the store's records was parsed."""

    def __init__(self, chunk: Chunk, data: Rows | None, first: bool) -> None:
        super().__init__()
        self.chunk = chunk
        """The rows."""
        self.data = data
        """The store's records the rows come from (a full record is asked of them)."""
        self.first = first
        """True for the first chunk of a (re)load: the model starts afresh."""


class StoreLoaded(Fed):
    """Every record of the store was parsed."""

    def __init__(
        self,
        summary: Summary | None,
        stamp: tuple[int, int, int] | None,
        problem: str = "",
        point: Point | None = None,
    ) -> None:
        super().__init__()
        self.point = point
        """Where in the store index's history the records loaded are (None: no index to
        follow; see :func:`tui.poll.follow_store`)."""
        self.summary = summary
        """The store's summary, if it has one (and could be read)."""
        self.problem = problem
        """Why the summary could not be read, or empty."""
        self.stamp = stamp
        """(mtime_ns, size) of the ``extract.jsonl`` loaded."""


class Indexing(Fed):
    """How far the index of a big store opened without one is built."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done, self.total = done, total
        """Bytes of the store's file read, of its size (all: its sort trees are made)."""


class StoreChanged(Fed):
    """Another process rewrote the store (polling mode): every row again, and what changed."""

    def __init__(self, diff: StoreDiff) -> None:
        super().__init__()
        self.diff = diff
        """The new rows, what changed, the new summary."""


class StoreFollowed(Fed):
    """Another process changed the store (polling mode): what its index says changed."""

    def __init__(self, followed: Followed) -> None:
        super().__init__()
        self.followed = followed
        """The records written and keys removed since the counter the dashboard saw."""


class EngineEvents(Fed):
    """Engine events, in the order they happened (one per message from a live session: the
    run batches them already; a replay may bring many)."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__()
        self.events = events
        """The events."""


class SessionStage(Fed):
    """The session worker moved on: ``watching`` after the first sweep, ``failed``."""

    def __init__(self, stage: Live, detail: str = "") -> None:
        super().__init__()
        self.stage = stage
        """``watching`` or ``failed``."""
        self.detail = detail
        """What went wrong, for ``failed``."""


class LoadFailed(Fed):
    """The store could not be read at all (``extract.jsonl`` a folder, unreadable...)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
        """What went wrong, in one line."""


class ModelChanged(Message):
    """The records, the triage state or the live state changed (a load, live events, a
    retry): every screen is told so by this one message and redraws what it shows."""

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change
        """What changed (:class:`tui.link.Change`)."""


class RetryFinished(Fed):
    """A retry is done (its records arrived before this, as engine events)."""

    def __init__(self, done: RetryDone) -> None:
        super().__init__()
        self.done = done
        """The engine's answer (:class:`tui.retries.RetryDone`)."""


class ToolsChecked(Fed, bubble=False):
    """A tools re-check is done.

    It does not bubble: the app hands it on to the screen on top, and from there it bubbled
    back up to the app, which handled it again, and again (saying "no new tool on PATH" each
    time: 242 times in one test)."""

    def __init__(self, appeared: list[str], error: str) -> None:
        super().__init__()
        self.appeared = appeared
        """Tools found that were not there before."""
        self.error = error
        """Why the check failed, or empty."""
