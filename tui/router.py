"""What becomes of each message the app's workers post: :class:`Router`.

The feed's workers (:mod:`tui.feed`: the store loaded, the session run, another process's
writes followed), the session's listener and the desk's workers (retries, tools re-checks)
post :class:`~tui.messages.Fed` messages to the app, which hands each here. The router gives
it to the :class:`~tui.link.Link` (no Textual), which says what it did
(:class:`~tui.link.Applied`); the desk shows the link's pop-ups, announces new error groups,
offers the tools screen after a full sweep, and tells every screen of the change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual.app import App

from engine.events import Event
from tui.desk import Desk
from tui.feed import Feed
from tui.link import Applied, Link, Live
from tui.messages import (
    EngineEvents,
    Fed,
    Indexing,
    LoadFailed,
    RetryFinished,
    RowsLoaded,
    SessionStage,
    StoreChanged,
    StoreFollowed,
    StoreLoaded,
    ToolsChecked,
)


class Router:
    """Each message posted to the app, handed to the link or the desk (see the module
    docstring). It makes the app's :class:`~tui.feed.Feed`, whose messages it takes."""

    def __init__(
        self,
        app: App[None],
        link: Link,
        desk: Desk,
        quitting: Callable[[], bool],
        outgrown: Callable[[], None],
    ) -> None:
        self.app, self.link, self.desk = app, link, desk
        self.quitting = quitting
        """Whether q was pressed (no tools screen is offered then)."""
        self.outgrown = outgrown
        """Asked after each batch of engine events: a held store grown too big is paged."""
        self.feed = Feed(
            app, desk.store, desk.session, link, self.route, lambda: desk.paused, self._kept
        )
        """The workers that load the store, run the session, follow another's writes."""

    def take(self, message: Fed) -> None:
        """Do what ``message`` says, on the UI thread, in the order the messages came."""
        link = self.link
        match message:
            case RowsLoaded():
                self.route(link.rows_loaded(message.chunk, message.data, message.first))
            case StoreLoaded():
                where = (message.stamp, message.point)
                self.route(link.loaded(message.summary, where, message.problem, self._kept()))
                self.desk.loaded()
                self.app.call_after_refresh(self.feed.collector.resume)  # after the frame
            case LoadFailed():
                self.feed.collector.resume()
                self.route(link.failed(message.reason))
            case Indexing():
                self.route(link.indexed(message.done, message.total))
            case SessionStage():
                self.route(link.stage(message.stage, message.detail, self._kept()))
                if message.stage is Live.FAILED:
                    self.feed.reread()
            case StoreFollowed() | StoreChanged():
                self._caught(message)
            case EngineEvents():
                # (not when leaving: the screens are going, a retry may still report)
                if self.app.is_running and not self.desk.held(message.events):
                    self.apply_events(message.events)
            case RetryFinished():
                self.desk.retry_finished(message.done)
            case ToolsChecked():
                self.desk.tools_checked(message)

    def _caught(self, message: StoreFollowed | StoreChanged) -> None:
        """A catch-up with another process's writes arrived: the next poll may start."""
        self.feed.caught()
        if not self.app.is_running:  # leaving: the screens are going
            return
        if isinstance(message, StoreFollowed):
            self.route(self.link.followed(message.followed, self._kept()))
        else:
            self.route(self.link.diffed(message.diff, self._kept()))
        self.outgrown()

    def apply_events(self, events: Iterable[Event]) -> None:
        """Apply engine events to the model and the triage state, then tell the screens."""
        self.route(self.link.apply(list(events), self._kept()))
        self.outgrown()

    def _kept(self) -> int | None:
        """The row the records table keeps its cursor on, read before a change."""
        return self.desk.home.kept_rid

    def route(self, applied: Applied) -> None:
        """Do the app's part of what the link did, and tell the screens."""
        for say in applied.say:
            self.desk.say(say)
        if applied.seen:
            self.desk.see_records(applied.seen)
        if applied.full_sweep:
            self.app.call_later(lambda: self.desk.offer_tools(quitting=self.quitting()))
        self.desk.tell(applied.change)
