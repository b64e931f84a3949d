"""QuarryApp: the dashboard over one store, either following a live Session or polling files.

``QuarryApp(store_out, session)`` sweeps then watches through ``session`` in a thread worker;
``QuarryApp(store_out)`` (``quarry ui --store PATH``) reads the store and re-reads it when
another process rewrites ``extract.jsonl``. Either way the store is parsed in a thread worker
and the first screen shows at once, filling as chunks arrive.

The app routes. Its workers (:mod:`tui.feed`) post what they find; each message goes to
:class:`tui.link.Link` (no Textual: the records model, the activity log, the live state) and
the link's :class:`~tui.link.Applied` back out: pop-ups, error groups to announce, and one
:class:`~tui.messages.ModelChanged` for the screens. The screens are given a
:class:`tui.desk.Desk` (the :class:`~tui.screens.ports.Dashboard`): what they read of the
dashboard, and what they ask of it that outlives them (retries, tools re-checks, prompts).
Screens own their keys; the app's are the ones that work on every screen.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen

from engine.events import Event
from engine.store import Store
from tui.desk import Desk
from tui.feed import Feed
from tui.link import Applied, Change, Link, Live
from tui.messages import (
    EngineEvents,
    LoadFailed,
    ModelChanged,
    RetryFinished,
    RowsLoaded,
    SessionStage,
    StoreChanged,
    StoreFollowed,
    StoreLoaded,
    ToolsChecked,
)
from tui.model import RecordModel

# Only the records screen is imported here; every other screen (and what it imports) is
# imported by the action that shows it, after the first frame.
from tui.screens.records import RecordsScreen
from tui.screens.triage_base import TriageScreen
from tui.shell import Shell
from tui.state import TriageState

if TYPE_CHECKING:
    from engine.session import Session


class QuarryApp(Shell):
    """The textquarry dashboard."""

    TITLE = "textquarry"
    CSS_PATH = "app.tcss"
    MODES = {"records": "records"}  # the records screen, installed by name in __init__
    DEFAULT_MODE = "records"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("t", "show_tools", "Tools"),
        Binding("x", "show_errors", "Errors"),
        Binding("u", "show_unsupported", "Unsupported"),
        Binding("at", "show_activity", "Activity"),
        Binding("p", "pause", "Pause", show=False),
        Binding("D", "what_changed", "What changed", show=False),
    ]

    paused: reactive[bool] = reactive(False, init=False)
    """Whether live changes are held back (they queue and apply on resume)."""

    def __init__(
        self,
        store_out: Path,
        session: Session | None = None,
        *,
        read_only: bool = False,
        compare: Store | None = None,
        since: float | None = None,
    ) -> None:
        super().__init__()
        self.compare_with, self.compare_since = compare, since
        """A store to compare this one with on mount; or a time to compare it with itself."""
        self.store = session.store if session is not None else Store(Path(store_out))
        self.session = session
        self.read_only = read_only
        self.model = RecordModel()
        self.triage = TriageState(engine=None if read_only else session, read_only=read_only)
        self.link = Link(self.model, self.triage, sweeping=session is not None)
        """The engine side's doings to the model, the log and the live state."""
        self.desk = desk = Desk(
            self, self._tell_screens, self.store, session, self.link, self.triage
        )
        """The dashboard as the screens see it (what they read, what they ask)."""
        self.model.text_lookup = desk.texts_matching
        self.pending = desk.pending  # (the same list: the header counts it)
        # what scripts and tests ask the app, answered by the desk
        self.retry, self.open_record = desk.retry, desk.open_record
        self.stored_text, self.tool_rows = desk.stored_text, desk.tool_rows
        self.quitting = False
        """True once q was pressed: the engine is stopping and the app will exit (not
        Textual's own ``_closing``: set, the app drops every message, ExitApp included)."""
        self.feed = Feed(self, self.store, session, self.link, self._route)
        """The workers that load the store, run the session, follow another's writes."""
        self.records_screen = RecordsScreen(self.model, self.triage, desk)
        """The home screen, at the bottom of the stack."""
        self.install_screen(self.records_screen, name="records")
        if session is not None:
            session.on_event = self.engine_listener

    def engine_listener(self, event: Event) -> None:
        """The session's listener, called on engine threads: one message per event, in order
        (the run already batches records; this is the only batching layer's consumer)."""
        self.post_message(EngineEvents([event]))

    @property
    def state(self) -> Live:
        """What the engine side is doing (loading, sweeping, watching, following...)."""
        return self.link.state

    @property
    def state_text(self) -> str:
        """The live state in words."""
        return self.desk.state_text

    @property
    def load_error(self) -> str:
        """Why the store could not be read at all, or empty."""
        return self.link.failure

    def watch_paused(self, paused: bool) -> None:
        """Redraw the header."""
        self.desk.paused = paused
        self._tell_screens(Change())

    # -- loading, following, the session: messages in, routed out --------------------------

    def on_load(self) -> None:
        """Open the store and show its first block before the first frame."""
        self.desk.counts = self.feed.open().counts

    def on_mount(self) -> None:
        """Load the rest of the store; then sweep and watch, or poll; compare if asked."""
        self._load()
        self.feed.follow()
        self.desk.compare(self.compare_with, self.compare_since)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        self.feed.load(lambda: self.quitting)

    @on(RowsLoaded)
    def _rows_loaded(self, message: RowsLoaded) -> None:
        self._route(self.link.rows_loaded(message.chunk, message.data, message.first))

    @on(StoreLoaded)
    def _store_loaded(self, message: StoreLoaded) -> None:
        where = (message.stamp, message.point)
        self._route(self.link.loaded(message.summary, where, message.problem, self._kept_row()))
        self.desk.loaded()
        self.call_after_refresh(self.feed.collector.resume)  # collect after the frame

    def on_unmount(self) -> None:
        """Leaving (a quit during the load too): the collector runs again, on everything."""
        self.feed.collector.release()

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        self.feed.collector.resume()
        self._route(self.link.failed(message.reason))

    @on(SessionStage)
    def _session_stage(self, message: SessionStage) -> None:
        self._route(self.link.stage(message.stage, message.detail, self._kept_row()))

    @on(StoreFollowed)
    def _store_followed(self, message: StoreFollowed) -> None:
        self.feed.caught()
        if self.is_running:  # (else leaving: the screens are going)
            self._route(self.link.followed(message.followed, self._kept_row()))

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self.feed.caught()
        if self.is_running:  # (else leaving: the screens are going)
            self._route(self.link.diffed(message.diff, self._kept_row()))

    @on(EngineEvents)
    def _engine_events(self, message: EngineEvents) -> None:
        # (not when leaving: the screens are going, a retry may still report)
        if self.is_running and not self.desk.held(message.events):
            self.apply_events(message.events)

    def apply_events(self, events: Iterable[Event]) -> None:
        """Apply engine events to the model and the triage state, then tell the screens."""
        self._route(self.link.apply(list(events), self._kept_row()))

    def _kept_row(self) -> int | None:
        """The row the records table keeps its cursor on, read before a change."""
        return self.records_screen.kept_rid

    def _route(self, applied: Applied) -> None:
        """Do the app's part of what the link did, and tell the screens."""
        for say in applied.say:
            self.desk.say(say)
        if applied.seen:
            self.desk.see_records(applied.seen)
        if applied.full_sweep:
            self.call_later(lambda: self.desk.offer_tools(quitting=self.quitting))
        self._tell_screens(applied.change)

    def _tell_screens(self, change: Change) -> None:
        """Every screen is told by one message: the records screen at once (the row its
        cursor keeps is read before the next change), the screen on top when it is another."""
        self.records_screen.on_model_changed(ModelChanged(change))
        top = self.desk.top()
        if top is not None and top is not self.records_screen:
            top.post_message(ModelChanged(change))

    @on(RetryFinished)
    def _retry_finished(self, message: RetryFinished) -> None:
        self.desk.retry_finished(message.done)

    @on(ToolsChecked)
    def _tools_checked(self, message: ToolsChecked) -> None:
        self.desk.tools_checked(message)

    # -- the keys of every screen ----------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No new screen while quitting or under a question."""
        blocked = self.quitting or isinstance(self.desk.top(), ModalScreen)
        return not (action.startswith("show_") and blocked)

    def show_kept(self, kind: type[TriageScreen]) -> None:
        """Show the one screen of ``kind`` over the one on top, or go back to it
        (:meth:`tui.screens.kept.KeptScreens.show`)."""
        self.desk.kept.show(kind)

    def action_show_tools(self) -> None:
        """Every tool, found or missing, and what it would unlock."""
        from tui.screens.tools import ToolsScreen

        self.show_kept(ToolsScreen)

    def action_show_errors(self) -> None:
        """Error records grouped by reason and message."""
        from tui.screens.errors import ErrorsScreen

        self.show_kept(ErrorsScreen)

    def action_show_unsupported(self) -> None:
        """Unsupported files grouped by reason and MIME type."""
        from tui.screens.unsupported import UnsupportedScreen

        self.show_kept(UnsupportedScreen)

    def action_show_activity(self) -> None:
        """The engine's events, live."""
        from tui.screens.activity import ActivityScreen

        self.show_kept(ActivityScreen)

    def action_pause(self) -> None:
        """Hold live changes back, or apply what queued meanwhile."""
        self.paused = not self.paused
        if not self.paused and (events := self.desk.release()):
            self.apply_events(events)
        self.notify("live updates paused" if self.paused else "live updates resumed")

    def action_what_changed(self) -> None:
        """What changed since the dashboard opened or the last retry began."""
        self.desk.what_changed()

    def action_help(self) -> None:
        """Show every key."""
        keys = [b for b in self.BINDINGS if isinstance(b, Binding)]
        self.desk.kept.help(keys, read_only=not self.triage.writable)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's and the records screen's actions in the command palette (ctrl+p)."""
        yield from super().get_system_commands(screen)
        yield from self.records_screen.commands()
        yield SystemCommand("Tools", "t: found and missing tools", self.action_show_tools)
        yield SystemCommand("Errors", "x: error records grouped", self.action_show_errors)
        yield SystemCommand("Activity", "@: the engine's events", self.action_show_activity)
        if self.triage.writable:
            check = self.desk.check_tools
            yield SystemCommand(
                "Check tools again", "Re-read PATH; a new tool retries files", check
            )
        yield SystemCommand("Pause / resume live updates", "p", self.action_pause)
        yield SystemCommand("Help", "Every key", self.action_help)

    # -- leaving ---------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """Stop the engine cleanly, then leave."""
        if self.session is None:
            self.exit()
            return
        if not self.quitting:
            self.quitting = True
            self.notify("stopping the engine…")
            self.feed.close()
