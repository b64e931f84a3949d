"""The app's triage side: marks, retries, tool re-checks, the activity log and notifications.

:class:`TriageMixin` is mixed into :class:`tui.app.QuarryApp`; its keys are in
:data:`TRIAGE_BINDINGS` and act on the records screen (``r R space e o c E``) or open the
triage screens from anywhere (``t x @``). Blocking engine calls (``Session.retry``,
``Session.recheck_tools``) run in thread workers that post :class:`RetryFinished` (and
:class:`~tui.triage_live.ToolsChecked`); the records they change come back as engine events.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import ModalScreen, Screen

from engine.sweep import SweepResult
from tui import actions
from tui.eventlog import ActivityLog
from tui.model import Key
from tui.screens.confirm import ConfirmScreen
from tui.triage_live import LiveTriage
from tui.triage_records import RecordActions

if TYPE_CHECKING:
    from tui.app import QuarryApp

    _Base = QuarryApp
else:
    _Base = object

CONFIRM_ABOVE = 20
"""A retry of more records than this asks first."""

TRIAGE_BINDINGS = [
    Binding("t", "show_tools", "Tools"),
    Binding("x", "show_errors", "Errors"),
    Binding("at", "show_activity", "Activity"),
    Binding("r", "retry_one", "Retry", show=False),
    Binding("R", "retry_many", "Retry marked/view", show=False),
    Binding("space", "mark", "Mark", show=False),
    Binding("shift+down", "mark_down", "Mark down", show=False),
    Binding("shift+up", "mark_up", "Mark up", show=False),
    Binding("e", "edit_text", "Open text in $EDITOR", show=False),
    Binding("o", "open_source", "Open source file", show=False),
    Binding("c", "copy_path", "Copy path", show=False),
    Binding("E", "export_view", "Export view (CSV)", show=False),
]
"""The triage keys, added to the app's BINDINGS."""


class RetryFinished(Message):
    """A retry worker is done (its records arrived, or will, as engine events)."""

    def __init__(self, keys: list[Key], label: str, result: SweepResult | None, error: str) -> None:
        super().__init__()
        self.keys = keys
        """The records retried."""
        self.label = label
        """What was retried, in words."""
        self.result = result
        """What the engine did; None when it failed."""
        self.error = error
        """Why it failed, or empty."""


class TriageMixin(RecordActions, LiveTriage, _Base):
    """Triage state and actions of the dashboard (mixed into the App)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.marks: set[Key] = set()
        """Records marked with space / shift+arrows on the records screen."""
        self.retrying: set[Key] = set()
        """Records whose retry is in flight (shown as such in the table)."""
        self.activity = ActivityLog()
        """The newest engine events, as lines for the activity screen."""
        self.tools_auto_shown = False
        """The tools screen showed by itself once this session (never again)."""
        self._known_groups: set[tuple[str, str]] | None = None
        self._new_groups: dict[tuple[str, str], int] = {}
        self._checked_tools = False
        self._announcing = False
        self.checking_tools = False
        """A tools re-check is running."""
        self._refresh_due = False

    # -- screens ---------------------------------------------------------------------------

    def _show(self, cls: type) -> None:
        from tui.screens.triage_base import TriageScreen

        if isinstance(self.screen, cls):
            return
        if isinstance(self.screen, TriageScreen):
            self.switch_screen(cls())
        else:
            self.push_screen(cls())

    def action_show_tools(self) -> None:
        """Every tool, found or missing, and what it would unlock."""
        from tui.screens.tools import ToolsScreen

        self._show(ToolsScreen)

    def action_show_errors(self) -> None:
        """Error records grouped by reason and message."""
        from tui.screens.errors import ErrorsScreen

        self._show(ErrorsScreen)

    def action_show_activity(self) -> None:
        """The engine's events, live."""
        from tui.screens.activity import ActivityScreen

        self._show(ActivityScreen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Records keys only on the records screen; nothing under a modal."""
        from tui.screens.records import RecordsScreen

        mine = action in self.RECORD_ACTIONS or action.startswith("show_")
        if mine and getattr(self, "quitting", False):
            return False  # quitting: no new screen, no editor, no retry
        if action in self.RECORD_ACTIONS:
            return isinstance(self.screen, RecordsScreen)
        if action.startswith("show_") and isinstance(self.screen, ModalScreen):
            return False
        return super().check_action(action, parameters)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The triage screens and actions in the command palette (after the app's own)."""
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Tools", "t: found and missing tools, what they unlock", self.action_show_tools
        )
        yield SystemCommand("Errors", "x: error records grouped by reason", self.action_show_errors)
        yield SystemCommand("Activity", "@: the engine's events, live", self.action_show_activity)
        yield SystemCommand(
            "Check tools again", "Re-read PATH; a new tool retries files", self.check_tools
        )
        yield SystemCommand("Retry highlighted record", "r", self.action_retry_one)
        yield SystemCommand("Retry marked records or the view", "R", self.action_retry_many)
        yield SystemCommand("Clear marks", "Unmark every record", self.clear_marks)
        yield SystemCommand("Open text in editor", "e: $EDITOR / $PAGER", self.action_edit_text)
        yield SystemCommand("Open source file", "o: the system's opener", self.action_open_source)
        yield SystemCommand("Copy path", "c: to the clipboard (OSC 52)", self.action_copy_path)
        yield SystemCommand("Export view as CSV", "E", self.action_export_view)
        yield SystemCommand(
            "Export view as JSONL", "Full records", lambda: self.action_export_view("jsonl")
        )

    # -- retries ---------------------------------------------------------------------------

    def _may_write(self, what: str) -> bool:
        if self.read_only:
            self.notify(f"read-only: cannot {what}", severity="warning")
            return False
        if self.session is None:
            self.notify(
                f"cannot {what}: this store belongs to another process "
                "(quarry ui --store follows it); use `quarry retry` there",
                severity="warning",
            )
            return False
        return True

    def retry(self, keys: list[Key], label: str, *, unmark: bool = False) -> None:
        """Retry ``keys`` (asking first above :data:`CONFIRM_ABOVE`); ``unmark`` once started."""
        if not keys:
            self.notify("nothing to retry", severity="warning")
            return
        if not self._may_write("retry"):
            return
        if len(keys) <= CONFIRM_ABOVE:
            self._start_retry(keys, label, unmark)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_retry(keys, label, unmark)

        question = f"Retry {len(keys):,} records ({label})? Each is read again."
        self.push_screen(ConfirmScreen(question, "Retry"), answered)

    def _start_retry(self, keys: list[Key], label: str, unmark: bool = False) -> None:
        if unmark:
            self.clear_marks()
        self.retrying.update(keys)
        self._refresh_records()
        self.notify(f"retrying {label}" + ("" if label.endswith("…") else "…"), title="retry")
        self._retry_worker(keys, label)

    @work(thread=True, group="retry", exit_on_error=False)
    def _retry_worker(self, keys: list[Key], label: str) -> None:
        assert self.session is not None
        try:
            result = self.session.retry(keys)
        except Exception as exc:  # the engine failed: say so, keep the dashboard
            self.post_message(RetryFinished(keys, label, None, f"{type(exc).__name__}: {exc}"))
            return
        if self.bridge is not None:
            self.bridge.flush()  # the new verdicts arrive before the answer
        self.post_message(RetryFinished(keys, label, result, ""))

    def on_retry_finished(self, message: RetryFinished) -> None:
        """Clear the in-progress marks and say what came out."""
        self.retrying.difference_update(message.keys)
        self._refresh_records()
        self._refresh_triage()
        if message.result is None:
            self.notify(message.error, title="retry failed", severity="error")
            return
        vanished = set(message.result.vanished)
        verdicts: dict[str, int] = {}
        for key in message.keys:
            if key in vanished:
                continue
            rid = self.model.ids.get(key)
            record = self.model.record(rid) if rid is not None else None
            status = record.status if record is not None else "?"
            verdicts[status] = verdicts.get(status, 0) + 1
        parts = [f"{status} {n:,}" for status, n in sorted(verdicts.items())]
        if vanished:
            names = ", ".join(path for _root, path in sorted(vanished)[:3])
            parts.append(f"{len(vanished):,} vanished (no longer on disk: {names})")
        severity = "warning" if vanished else "information"
        self.notify(" · ".join(parts), title=f"retried {message.label}", severity=severity)

    def _refresh_triage(self) -> None:
        from tui.screens.triage_base import TriageScreen

        if self.screen_stack and isinstance(self.screen, TriageScreen) and self.screen.ready:
            self.screen.refresh_data()

    def _refresh_records(self) -> None:
        """Redraw the records table (marks or retries in flight changed)."""
        with contextlib.suppress(LookupError, AssertionError):  # not up yet, or gone
            self.records_screen.table.refresh()

    # -- files -----------------------------------------------------------------------------

    def run_outside(self, command: list[str]) -> int | None:
        """Run ``command`` with the terminal handed over (the app suspended); None if it can't."""
        if shutil.which(command[0]) is None:
            return 127  # not installed: no need to hand the terminal over
        try:
            with self.suspend():
                return actions.run_foreground(command)
        except SuspendNotSupported:
            self.notify("this terminal cannot hand over to another program", severity="error")
            return None

    def source_path(self, key: Key) -> Path:
        """The file on disk a record came from."""
        return Path(key[0]) / key[1]
