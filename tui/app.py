"""QuarryApp: the dashboard over one store, either following a live Session or polling files.

``QuarryApp(store_out, session)`` sweeps then watches through ``session`` in a thread worker;
``QuarryApp(store_out)`` (``quarry ui --store PATH``) reads the store and re-reads it when
another process rewrites ``extract.jsonl``. Either way the store is parsed in a thread worker
and the first screen shows at once, filling as chunks arrive.
"""

from __future__ import annotations

import os
import time
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker

from engine.events import (
    Event,
    Notice,
    Progress,
    RecordsChanged,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.names import shown
from engine.records import Summary
from engine.store import Store
from tui.bridge import EventBridge
from tui.lines import valid_sha256
from tui.loader import Chunk, JsonlSource, jsonl_stamp, load_rows, read_jsonl, read_summary
from tui.messages import (
    EngineEvents,
    LoadFailed,
    RowsLoaded,
    SessionStage,
    StoreChanged,
    StoreLoaded,
)
from tui.model import COLUMNS, TABS, RecordModel
from tui.poll import diff_store
from tui.screens.failures import worker_failure
from tui.screens.help import HelpScreen
from tui.screens.inspector import InspectorScreen
from tui.screens.records import RecordsScreen
from tui.triage_app import TRIAGE_BINDINGS, TriageMixin

if TYPE_CHECKING:
    from engine.session import Session

POLL_SECONDS = 1.0
"""How often a store opened without a session is checked for changes."""


class QuarryApp(TriageMixin, App[None]):
    """The textquarry dashboard."""

    TITLE = "textquarry"
    CSS_PATH = "app.tcss"
    MODES = {"records": RecordsScreen}
    DEFAULT_MODE = "records"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("p", "pause", "Pause live"),
        *TRIAGE_BINDINGS,
    ]

    state: reactive[str] = reactive("loading", init=False)
    """What the engine side is doing: loading, sweeping, watching, following, idle, failed."""
    paused: reactive[bool] = reactive(False, init=False)
    """Whether live changes are held back (they queue and apply on resume)."""

    def __init__(
        self, store_out: Path, session: Session | None = None, *, read_only: bool = False
    ) -> None:
        super().__init__()
        self.store = session.store if session is not None else Store(Path(store_out))
        self.session = session
        self.read_only = read_only
        self.model = RecordModel()
        self.summary: Summary | None = None
        self.progress: tuple[int, int] | None = (0, 1)
        self.last_event: float | None = None
        self.pending: list[Event] = []
        self._stamp: tuple[int, int] | None = None
        self._polling = False
        self.quitting = False
        """True once q was pressed: the engine is stopping and the app will exit.

        (Not `_closing`: that is Textual's own flag, and setting it makes the app drop
        every message, ExitApp included.)"""
        self._watching = False
        self._store_trouble = ""
        """Why the watcher's changes are not in the store (the header says it); empty if none."""
        self.load_error = ""
        """Why the store could not be read at all, or empty."""
        self.crash: str = ""
        """The one-line reason the app stopped on an unexpected error (empty if it did not)."""
        self.crash_log: Path | None = None
        """Where the full traceback of that error was written."""
        self.bridge: EventBridge | None = None
        if session is not None:
            self.bridge = EventBridge(lambda batch: self.post_message(EngineEvents(batch)))
            session.on_event = self.bridge

    # -- state shown in the header ---------------------------------------------------------

    @property
    def folder(self) -> str:
        """The folder(s) swept, or the store's own folder."""
        if self.session is not None:
            return ", ".join(map(str, self.session.roots))
        if self.summary is not None and self.summary.roots:
            return ", ".join(self.summary.roots)
        return str(self.store.out)

    @property
    def state_text(self) -> str:
        """The live state in words."""
        if self.paused:
            return f"paused · {len(self.pending)} pending"
        if self.state == "sweeping" and self.progress:
            return f"sweeping {self.progress[0]:,}/{self.progress[1]:,}"
        return self.state

    @property
    def tools_missing(self) -> set[str]:
        """Tools the last summary reported missing."""
        return set(self.summary.tools_missing) if self.summary else set()

    @property
    def records_screen(self) -> RecordsScreen:
        """The home screen, wherever the user is."""
        stack = self.get_screen_stack("records")
        screen = stack[0] if stack else None
        if not isinstance(screen, RecordsScreen):
            raise LookupError("the records screen is not up yet")
        return screen

    def watch_state(self) -> None:
        """Redraw the header."""
        self._header()

    def watch_paused(self) -> None:
        """Redraw the header."""
        self._header()

    def _header(self) -> None:
        if self.get_screen_stack("records"):
            self.records_screen.refresh_header()

    # -- start-up --------------------------------------------------------------------------

    def on_mount(self) -> None:
        """Load the store; then sweep and watch, or poll."""
        self._load()
        if self.session is None:
            self.set_interval(POLL_SECONDS, self._poll)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        """Parse ``extract.jsonl`` in chunks (thread) and then start the session, if any."""
        stamp = jsonl_stamp(self.store)
        first = True
        data = JsonlSource(data=b"")
        try:
            data = read_jsonl(self.store)
            for chunk in load_rows(data):
                self.post_message(RowsLoaded(chunk, data, first))
                first = False
        except OSError as exc:  # a folder in its place, no permission, a failing disk
            what = exc.strerror or str(exc)
            self.post_message(
                LoadFailed(f"cannot read {shown(str(self.store.jsonl_path))}: {what}")
            )
        if first:  # an empty, missing or unreadable store: still start afresh
            self.post_message(RowsLoaded(Chunk([], array("q"), 0, 0), data, True))
        summary, problem = read_summary(self.store)
        self.post_message(StoreLoaded(summary, stamp, problem))
        if self.session is not None:
            self._run_session()

    def _run_session(self) -> None:
        assert self.session is not None
        try:
            # Observers start before the sweep: what changes during it is applied after it.
            self.session.sweep_then_watch()
            if not self.quitting:
                self.post_message(SessionStage("watching"))
        except Exception as exc:  # the engine failed: say so on screen, keep browsing
            self.post_message(SessionStage("failed", f"{type(exc).__name__}: {exc}"))

    @on(RowsLoaded)
    def _rows_loaded(self, message: RowsLoaded) -> None:
        if message.first:
            self.model.clear()
            self.model.data = message.data
        self.model.extend(message.chunk.rows, message.chunk.starts)
        self.model.note_bad(message.chunk.bad)
        self.progress = (message.chunk.done, message.chunk.total)
        self.records_screen.refresh_loading(force=message.first)

    @on(StoreLoaded)
    def _store_loaded(self, message: StoreLoaded) -> None:
        self.summary = message.summary
        self._stamp = message.stamp
        self.progress = None
        if self.state != "failed":
            self.state = "sweeping" if self.session is not None else "following"
        for problem in (message.problem, self.model.bad_text()):
            if problem:
                self.notify(problem, title="store", severity="warning", timeout=15)
        if self.summary is not None and self.session is None:
            self.last_event = _parse_iso(self.summary.finished)
        self.records_screen.refresh_data(keep=self.records_screen.table.rid)
        self._header()

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.reason
        self.state = "failed"
        self.notify(message.reason, title="store", severity="error", timeout=30)

    @on(SessionStage)
    def _session_stage(self, message: SessionStage) -> None:
        self._watching = message.stage == "watching"
        self.state = message.stage
        if message.detail:
            self.notify(message.detail, title="engine failed", severity="error", timeout=30)

    # -- polling another process's store ---------------------------------------------------

    def _poll(self) -> None:
        if self._polling or self.state == "loading":
            return
        if jsonl_stamp(self.store) != self._stamp:
            self._polling = True
            self._reread()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _reread(self) -> None:
        """Read the rewritten store and work out which records changed."""
        try:
            self.post_message(diff_store(self.store, self.model))
        except OSError as exc:
            what = exc.strerror or str(exc)
            self.post_message(
                LoadFailed(f"cannot read {shown(str(self.store.jsonl_path))}: {what}")
            )
        finally:
            self._polling = False

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self._stamp = message.stamp
        self.summary = message.summary or self.summary
        if self.summary is not None:
            self.last_event = _parse_iso(self.summary.finished) or time.time()
        screen = self.records_screen
        keep = self.model.key(screen.table.rid) if screen.table.rid is not None else None
        self.model.clear()
        self.model.data = message.data
        self.model.extend(message.chunk.rows, message.chunk.starts)
        self.model.note_bad(message.chunk.bad)
        changed = {self.model.ids[k] for k in message.changed if k in self.model.ids}
        screen.refresh_data(changed, self.model.ids.get(keep) if keep else None)
        self._header()

    # -- live engine events ----------------------------------------------------------------

    @on(EngineEvents)
    def _engine_events(self, message: EngineEvents) -> None:
        self.last_event = message.events[-1].at
        if self.paused:
            self.pending.extend(message.events)
            self._header()
            return
        self.apply_events(message.events)

    def apply_events(self, events: Iterable[Event]) -> None:
        """Apply a batch of engine events to the model and the screens."""
        records: dict[tuple[str, str], object] = {}
        removed: list[tuple[str, str]] = []
        for event in events:
            if isinstance(event, RecordsChanged):
                for key in event.removed:
                    records.pop(key, None)
                    removed.append(key)
                records.update((r.key, r) for r in event.records)
            elif isinstance(event, SweepStarted):
                self.state = "sweeping" if event.full else "updating"
                self.progress = (0, event.files)
            elif isinstance(event, Progress):
                self.progress = (event.done, event.total)
            elif isinstance(event, SweepFinished):
                self.summary, self.progress = event.summary, None
                self.state = self._settled_state()
            elif isinstance(event, ToolsChanged) and event.appeared:
                self.notify(f"tools found: {', '.join(event.appeared)}", title="tools")
            elif isinstance(event, Notice):
                self._notice(event)
        if records or removed:
            screen = self.records_screen
            keep = screen.table.rid
            changed = self.model.apply(records.values(), removed)  # type: ignore[arg-type]
            screen.refresh_data(changed, keep)
        self._header()

    def _settled_state(self) -> str:
        """The header's word once no sweep runs: never "watching" while the store lags."""
        if self._store_trouble:
            return self._store_trouble
        return "watching" if self._watching else "idle"

    def _notice(self, event: Notice) -> None:
        """The watcher's store states go to the header; warnings and errors also pop up."""
        if event.kind == "store-lost":
            self._watching = False
            self._store_trouble = "stopped: store lost"
            self.state = self._store_trouble
        elif event.kind == "store-trouble":
            self._store_trouble = "not stored: retrying"
            self.state = self._store_trouble
        elif event.kind == "store-ok":
            self._store_trouble = ""
            self.state = self._settled_state()
        if event.level != "info":
            self.notify(event.message, title=event.kind, severity=event.level)  # type: ignore[arg-type]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification as plain text on one line per part: file names and engine
        messages in it are shown escaped, never read as markup or terminal controls."""
        del markup  # never markup: a file may be called "[b]x"
        super().notify(
            shown(message), title=shown(title), severity=severity, timeout=timeout, markup=False
        )

    # -- failures --------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of the app failed: say so; the app keeps running."""
        what = worker_failure(event)
        if what is None:
            return
        if event.worker.group == "load":
            self.post_message(LoadFailed(f"loading the store failed: {what}"))
            return
        self.notify(shown(what), title=f"{event.worker.name or 'a task'} failed", severity="error")

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error: its traceback to a file and one line to say; then Textual exits
        with status 1 (:func:`tui.cli.run_app` prints the line once the terminal is back)."""
        import tempfile
        import traceback

        if not self.crash:
            self.crash = shown(f"{type(error).__name__}: {error}")
            try:
                fd, name = tempfile.mkstemp(prefix="quarry-crash-", suffix=".txt")
                with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
                    f.write("".join(traceback.format_exception(error)))
                self.crash_log = Path(name)
            except OSError:
                self.crash_log = None
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        """Print nothing: the traceback is in :attr:`crash_log`, the line is the caller's."""
        self._exit_renderables.clear()

    # -- actions ---------------------------------------------------------------------------

    def action_pause(self) -> None:
        """Hold live changes back, or apply what queued meanwhile."""
        self.paused = not self.paused
        if not self.paused and self.pending:
            events, self.pending = self.pending, []
            self.apply_events(events)
        self.notify("live updates paused" if self.paused else "live updates resumed")

    def action_help(self) -> None:
        """Show every key."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def open_inspector(self, rid: int) -> None:
        """Open the stored text of row ``rid``."""
        record = self.model.record(rid)
        if record is None:
            return
        if not record.has_text:
            what = f"{shown(record.path)}: no text stored ({shown(record.status)})"
            self.notify(what, severity="warning")
            return
        sha = valid_sha256(record.sha256)
        if sha is None:
            self.notify(f"{shown(record.path)}: no valid content hash", severity="warning")
            return
        self.push_screen(InspectorScreen(record, self.store.text_path(sha)))

    async def action_quit(self) -> None:
        """Stop the engine cleanly, then leave."""
        if self.session is None:
            self.exit()
            return
        if not self.quitting:
            self.quitting = True
            self.notify("stopping the engine…")
            self._close_session()

    @work(thread=True, group="close", exit_on_error=False)
    def _close_session(self) -> None:
        assert self.session is not None
        try:
            self.session.close()
        finally:
            if self.bridge is not None:
                self.bridge.close()
            self.call_from_thread(self.exit)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Screens and actions in the command palette (ctrl+p)."""
        yield from super().get_system_commands(screen)
        records = self.records_screen
        for tab in TABS:
            yield SystemCommand(
                f"Show {tab}", f"Status tab: {tab}", lambda t=tab: records.action_tab(t)
            )
        for column in COLUMNS:
            yield SystemCommand(
                f"Sort by {column}", "Again to reverse", lambda c=column: records.action_sort(c)
            )
        yield SystemCommand("Filter paths", "Text, regex, ! to invert", records.action_filter)
        yield SystemCommand("Clear filter", "Show every path", lambda: records.set_filter(""))
        yield SystemCommand("Open text", "Inspect the highlighted record", records.action_open)
        yield SystemCommand(
            "Toggle detail", "Show or hide the detail pane", records.action_toggle_detail
        )
        yield SystemCommand("Pause / resume live updates", "p", self.action_pause)
        yield SystemCommand("Help", "Every key", self.action_help)


def _parse_iso(text: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text).timestamp() if text else None
    except ValueError:
        return None
