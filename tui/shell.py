"""What the dashboard does as a terminal program, whatever it shows: :class:`Shell`.

Every notification is plain text (file names and engine messages in it escaped, never read
as markup or terminal controls); a program runs with the terminal handed over; an unexpected
error is captured (one line to say, its traceback to a file, exit 1: :func:`tui.cli.run_app`
prints the line once the terminal is back); a worker that fails is said, never fatal; a
terminal gone without SIGHUP is noticed (:mod:`tui.hangup`) and left as on ``q``.
:class:`tui.globalkeys.GlobalKeys` is a Shell with the keys of every screen, and
:class:`tui.app.QuarryApp` one of those that routes.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import App, SuspendNotSupported
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.worker import Worker

from engine.names import shown
from tui import actions
from tui.hangup import TerminalGone, driver_class
from tui.messages import LoadFailed
from tui.screens.failures import crash_report, worker_failure


class Shell(App[None]):
    """A Textual app that says things plainly, fails in one line and notices a hang-up."""

    def __init__(self) -> None:
        super().__init__()
        self.crash = ""
        """The one-line reason the app stopped on an unexpected error (empty if it did not)."""
        self.crash_log: Path | None = None
        """Where the full traceback of that error was written."""
        self.terminal_gone = False
        """True once the terminal went away (no SIGHUP): the app left as on q (exit 1)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification as plain text: file names and engine messages in it are shown
        escaped, never read as markup or terminal controls."""
        del markup  # never markup: a file may be called "[b]x"
        super().notify(
            shown(message), title=shown(title), severity=severity, timeout=timeout, markup=False
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of the app failed: say so; the app keeps running (a failed load of the
        store is said as the store's failure: :class:`~tui.messages.LoadFailed`)."""
        what = worker_failure(event)
        if what is None:
            return
        if event.worker.group == "load":
            self.post_message(LoadFailed(f"loading the store failed: {what}"))
            return
        self.notify(what, title=f"{event.worker.name or 'a task'} failed", severity="error")

    def run_outside(self, command: list[str]) -> int | None:
        """Run ``command`` with the terminal handed over (the app suspended); None if it can't."""
        import shutil

        if shutil.which(command[0]) is None:
            return 127  # not installed: no need to hand the terminal over
        try:
            with self.suspend():
                return actions.run_foreground(command)
        except SuspendNotSupported:
            self.notify("this terminal cannot hand over to another program", severity="error")
            return None

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error: its traceback to a file and one line to say; then Textual exits
        with status 1 (:func:`tui.cli.run_app` prints the line once the terminal is back)."""
        if not self.crash:
            self.crash, self.crash_log = crash_report(error)
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        """Print nothing: the traceback is in :attr:`crash_log`, the line is the caller's."""
        self._exit_renderables.clear()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, one that notices its terminal is gone on Linux and macOS."""
        return driver_class(super().get_driver_class())

    @on(TerminalGone)
    async def _terminal_gone(self) -> None:
        """No one can see or stop the dashboard any more: leave as on q, not spin for ever."""
        self.terminal_gone = True
        await self.action_quit()
