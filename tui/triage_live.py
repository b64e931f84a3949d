"""The app's live triage: engine events into the activity log and notifications, tool checks.

:class:`LiveTriage` is part of :class:`tui.triage_app.TriageMixin`. After the app applies a batch
of engine events, :meth:`LiveTriage.on_engine_events` sees it too (Textual calls every class's
handler along the MRO): it feeds the activity log, notices error groups never seen before
(one notification per second at most, never one per file), the watcher's fall-back to polling
and the end of the first sweep (when the tools screen may show by itself).
``Session.recheck_tools`` runs in a thread worker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.screen import ModalScreen

from engine.events import Notice, RecordsChanged, SweepFinished
from engine.records import Record, Status
from tui.eventlog import store_lines
from tui.messages import EngineEvents, StoreChanged, StoreLoaded
from tui.triage import (
    error_records,
    found_from_summary,
    found_from_toolset,
    group_key,
    tool_rows,
    tools_waited_on,
    waiting_records,
)

REFRESH_SECONDS = 0.3
"""Live events redraw the tools or errors screen at most this often (a sweep sends many)."""

if TYPE_CHECKING:
    from tui.triage_app import TriageMixin

    _Base = TriageMixin
else:
    _Base = object


class ToolsChecked(Message):
    """A tools re-check is done."""

    def __init__(self, appeared: list[str], error: str) -> None:
        super().__init__()
        self.appeared = appeared
        """Tools found that were not there before."""
        self.error = error
        """Why the check failed, or empty."""


class LiveTriage(_Base):
    """Engine events and tool checks, for the triage screens."""

    # -- tools -----------------------------------------------------------------------------

    def found_tools(self) -> dict[str, tuple[str, str]]:
        """Tool name -> (version, path) as the engine sees them now."""
        if self.session is not None:
            return found_from_toolset(self.session.tools)
        return found_from_summary(self.summary.tools_found if self.summary else {})

    def tool_rows(self) -> list[Any]:
        """The tools view's rows, from the live model."""
        workers = self.session.worker_tools() if self.session is not None else {}
        return tool_rows(self.found_tools(), waiting_records(self.model), workers)

    def check_tools(self) -> bool:
        """Look up the tools again (a new one retries what it unlocks); False if refused."""
        if not self._may_write("check the tools again (it retries files)"):
            return False
        self.checking_tools = True
        self._check_tools_worker()
        return True

    @work(thread=True, exclusive=True, group="tools", exit_on_error=False)
    def _check_tools_worker(self) -> None:
        assert self.session is not None
        before = set(self.session.tools.names)
        try:
            after = set(self.session.recheck_tools().names)
        except Exception as exc:  # the engine failed: say so, keep the dashboard
            self.post_message(ToolsChecked([], f"{type(exc).__name__}: {exc}"))
            return
        if self.bridge is not None:
            self.bridge.flush()  # the records it retried arrive before the answer
        self.post_message(ToolsChecked(sorted(after - before), ""))

    def on_tools_checked(self, message: ToolsChecked) -> None:
        """Say what the check found and redraw the triage screen."""
        from tui.screens.tools import ToolsScreen

        self.checking_tools = False
        if self.screen_stack and isinstance(self.screen, ToolsScreen) and self.screen.ready:
            self.screen.checked()
        if message.error:
            self.notify(message.error, title="tools check failed", severity="error")
        elif not message.appeared:
            self.notify("no new tool on PATH", title="tools")
        self._refresh_triage()

    # -- engine events ---------------------------------------------------------------------

    def on_engine_events(self, message: EngineEvents) -> None:
        """After the app applied a batch of engine events: log, notify, redraw triage."""
        events = message.events
        lines = self.activity.add(events)
        for event in events:
            if isinstance(event, RecordsChanged):
                self.retrying.difference_update(r.key for r in event.records)
                self._watch_groups(event.records)
            elif isinstance(event, Notice) and event.kind == "polling" and event.level == "info":
                self.notify(event.message, title="watching by polling", severity="warning")
            elif isinstance(event, SweepFinished) and event.full and not self._checked_tools:
                self._checked_tools = True
                self.call_later(self._maybe_show_tools)
        from tui.screens.activity import ActivityScreen

        if self.screen_stack and isinstance(self.screen, ActivityScreen):
            self.screen.add_lines(lines)
        self._refresh_triage_soon()

    def _refresh_triage_soon(self) -> None:
        """Redraw the triage screen at most every :data:`REFRESH_SECONDS` during a sweep."""
        if not self._refresh_due:
            self._refresh_due = True
            self.set_timer(REFRESH_SECONDS, self._refresh_triage_due)

    def _refresh_triage_due(self) -> None:
        self._refresh_due = False
        self._refresh_triage()

    def on_store_loaded(self, message: StoreLoaded) -> None:
        """The store is loaded: its error groups are known (only later ones are news)."""
        problems = (message.problem, self.model.bad_text(), getattr(self, "load_error", ""))
        self.activity.extend(store_lines(message.summary, None, len(self.model), problems))
        self._learn_groups(self.model.rids_with_status(Status.ERROR.value))

    @work(thread=True, exclusive=True, group="known-groups", exit_on_error=False)
    def _learn_groups(self, rids: list[int]) -> None:
        """Group the loaded errors off the UI thread: at a million records it takes seconds."""
        keys = set()
        for rid in rids:
            with contextlib.suppress(KeyError):  # a row removed live meanwhile
                record = self.model.record(rid)
                if record is not None:
                    keys.add(group_key(record))
        self.call_from_thread(self._set_known_groups, keys)

    def _set_known_groups(self, keys: set[tuple[str, str]]) -> None:
        self._known_groups = keys

    def on_store_changed(self, message: StoreChanged) -> None:
        """Another process rewrote the store: log it, announce the error groups it brought."""
        problems = (self.model.bad_text(),)
        self.activity.extend(
            store_lines(message.summary, len(message.changed), len(self.model), problems)
        )
        self._watch_groups(error_records(self.model))
        self._refresh_triage()

    def _watch_groups(self, records: Iterable[Record]) -> None:
        """Collect error groups never seen before; one notification per second at most."""
        if self._known_groups is None:
            return
        for record in records:
            if record.status == "error":
                key = group_key(record)
                if key not in self._known_groups:
                    self._new_groups[key] = self._new_groups.get(key, 0) + 1
        if self._new_groups and not self._announcing:
            self._announcing = True
            self.set_timer(1.0, self._announce_groups)

    def _announce_groups(self) -> None:
        self._announcing = False
        if not self._new_groups or self._known_groups is None:
            return
        new, self._new_groups = self._new_groups, {}
        self._known_groups.update(new)
        first = ", ".join(f"{reason}: {msg}" for reason, msg in list(new)[:2])
        more = f" (+{len(new) - 2} more)" if len(new) > 2 else ""
        title = "new error group" if len(new) == 1 else f"{len(new)} new error groups"
        self.notify(f"{first}{more} — press x", title=title, severity="warning", timeout=8)

    def _maybe_show_tools(self) -> None:
        """After the first sweep: the tools screen, once, if files wait on a missing tool."""
        from tui.screens.tools import ToolsScreen

        if self.tools_auto_shown or not self.screen_stack or getattr(self, "quitting", False):
            return
        if not tools_waited_on(self.tool_rows()):
            return
        self.tools_auto_shown = True
        if not isinstance(self.screen, ModalScreen | ToolsScreen):
            self.push_screen(ToolsScreen())
