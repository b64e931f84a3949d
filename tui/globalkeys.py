"""The keys that work on every screen, the command palette and leaving: :class:`GlobalKeys`.

Screens own their keys; these are the app's, looked up after the screen's: the triage
screens (``t x u @``, each shown by the desk's :class:`~tui.screens.kept.KeptScreens`),
pause (``p``), what changed (``D``), the help (``?``), suspend to the shell (``ctrl+z``) and
quit (``q``, which stops the engine cleanly first). The command palette (``ctrl+p``) lists
them with the records screen's own. :class:`tui.app.QuarryApp` is GlobalKeys that makes the
dashboard's parts and routes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen

from tui.link import Change
from tui.screens.triage_base import TriageScreen
from tui.shell import Shell

if TYPE_CHECKING:
    from tui.desk import Desk
    from tui.router import Router


class GlobalKeys(Shell):
    """The app's keys, its palette and its way out (see the module docstring)."""

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("t", "show_tools", "Tools"),
        Binding("x", "show_errors", "Errors"),
        Binding("u", "show_unsupported", "Unsupported"),
        Binding("at", "show_activity", "Activity"),
        Binding("p", "pause", "Pause", show=False),
        Binding("D", "what_changed", "What changed", show=False),
        # (as less and vim do: the shell's job control, fg brings the dashboard back)
        Binding("ctrl+z", "suspend_process", "Suspend to the shell", show=False),
    ]

    paused: reactive[bool] = reactive(False, init=False)
    """Whether live changes are held back (they queue and apply on resume)."""
    desk: Desk
    """The dashboard the screens are given (the app makes it)."""
    router: Router
    """Where the workers' messages go, with the feed that posts them (the app makes it)."""

    def __init__(self) -> None:
        super().__init__()
        self.quitting = False
        """True once q was pressed: the engine is stopping and the app will exit (not
        Textual's own ``_closing``: set, the app drops every message, ExitApp included)."""

    def watch_paused(self, paused: bool) -> None:
        """Redraw the header."""
        self.desk.paused = paused
        self.desk.tell(Change())

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
            self.router.apply_events(events)
        self.notify("live updates paused" if self.paused else "live updates resumed")

    def on_driver_signal_resume(self) -> None:
        """Back from ctrl+z (``fg``): the terminal's screen is the shell's, drawn over by
        nothing until a change came (Textual redraws only after its own ``suspend``)."""
        self.refresh(layout=True)

    def action_what_changed(self) -> None:
        """What changed since the dashboard opened or the last retry began."""
        self.desk.what_changed()

    def action_help(self) -> None:
        """Show every key."""
        keys = [b for b in self.BINDINGS if isinstance(b, Binding)]
        self.desk.kept.help(keys, read_only=not self.desk.triage.writable)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's and the records screen's actions in the command palette (ctrl+p)."""
        yield from super().get_system_commands(screen)
        yield from self.desk.home.commands()
        yield SystemCommand("Tools", "t: found and missing tools", self.action_show_tools)
        yield SystemCommand("Errors", "x: error records grouped", self.action_show_errors)
        yield SystemCommand("Activity", "@: the engine's events", self.action_show_activity)
        if self.desk.triage.writable:
            check = self.desk.check_tools
            yield SystemCommand(
                "Check tools again", "Re-read PATH; a new tool retries files", check
            )
        yield SystemCommand("Pause / resume live updates", "p", self.action_pause)
        yield SystemCommand("Help", "Every key", self.action_help)

    async def action_quit(self) -> None:
        """Stop the engine cleanly, then leave."""
        self.router.feed.stop_loading()
        if self.desk.session is None:
            self.exit()
            return
        if not self.quitting:
            self.quitting = True
            self.notify("stopping the engine…")
            self.router.feed.close()
