"""The tools screen: every external tool, found or missing, and the files each would unlock.

Modelled on Recoll's "missing helpers": shown by itself once after the first sweep when files
are waiting on a missing tool. "Check again" (``g`` or the button) re-reads PATH through the
engine, which retries whatever a newly found tool unlocks; the rows update as records change.
"""

from __future__ import annotations

import time

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, DataTable, Static

from engine.names import shown
from tui.messages import ToolsChecked
from tui.model import RecordModel
from tui.screens.ports import Dashboard
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState
from tui.triage import PLATFORMS, ToolRow
from tui.widgets.footer import FittingFooter

FILES_SHOWN = 200
"""Files listed under a tool; the rest are counted."""


def tool_detail(row: ToolRow) -> str:
    """Markup for the detail pane: what the tool does, where it is, what it unlocks, install."""
    state = "[$success]found[/]" if row.found else "[$error]missing[/]"
    lines = [f"[b]{escape(row.name)}[/b]  {state}", escape(row.unlocks), ""]
    if row.found:
        lines += [f"[b]version[/b]  {escape(row.version)}", f"[b]path[/b]     {escape(row.path)}"]
        lines.append("")
    if row.workers:
        have = sum(version is not None for _w, version in row.workers)
        lines.append(f"[b]on the Dask workers: {have} of {len(row.workers)}[/b]")
        for worker, version in row.workers:
            state = escape(version) if version is not None else "[$error]missing[/]"
            lines.append(f"  {escape(worker)}  {state}")
        lines.append("")
    lines.append(f"[b]files it would unlock: {len(row.files):,}[/b]")
    lines += [f"  {escape(shown(path))}" for _root, path in row.files[:FILES_SHOWN]]
    if len(row.files) > FILES_SHOWN:
        lines.append(f"  [dim]… and {len(row.files) - FILES_SHOWN:,} more[/dim]")
    if row.install:
        lines += ["", "[b]how to install[/b]"]
        for key, name in PLATFORMS:
            if key in row.install:
                lines.append(f"  {name:<17} [$accent]{escape(row.install[key])}[/]")
    return "\n".join(lines)


class ToolsScreen(TriageScreen):
    """Found and missing tools, files waiting on each, install hints, check again."""

    CSS_PATH = "tools.tcss"
    BINDINGS = [
        Binding("g", "check", "Check again"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self.rows: list[ToolRow] = []
        self.checked_at: float | None = None

    def compose(self) -> ComposeResult:
        """Title, table beside the detail, the check-again bar, footer."""
        yield Static("", id="tools-title")
        with Horizontal(id="tools-body"):
            yield DataTable(id="tool-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="tool-detail"):
                yield Static("", id="tool-info")
        with Horizontal(id="tools-bar"):
            yield Button("Check again (g)", id="check", variant="primary")
            yield Static("", id="tools-status")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Columns, then the rows."""
        table = self.query_one(DataTable)
        table.add_columns("tool", "state", "version", "files", "path")
        self.ready = True
        self.refresh_data()
        table.focus()

    @property
    def selected(self) -> ToolRow | None:
        """The highlighted tool's row."""
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def refresh_data(self) -> None:
        """Rows from the live model and tool set; the cursor stays on the same tool."""
        keep = self.selected.name if self.selected else None
        self.rows = self.dash.tool_rows()
        table = self.query_one(DataTable)
        table.clear()
        for row in self.rows:
            state = "[green]found[/]" if row.found else "[red]missing[/]"
            table.add_row(
                Text(row.name), state, Text(row.version), f"{len(row.files):,}", Text(row.path)
            )
        names = [r.name for r in self.rows]
        if keep in names:
            table.move_cursor(row=names.index(keep))
        found = sum(r.found for r in self.rows)
        waiting = {k for r in self.rows if not r.found for k in r.files}
        self.query_one("#tools-title", Static).update(
            f"[b]External tools[/b]  {found} found · {len(self.rows) - found} missing · "
            f"{len(waiting):,} files waiting on a missing tool"
        )
        self._show_detail()
        self._show_status()

    def _show_detail(self) -> None:
        row = self.selected
        info = self.query_one("#tool-info", Static)
        info.update(tool_detail(row) if row else "[dim]no tool[/dim]")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Checking again retries files: not offered when nothing may be written."""
        return action != "check" or self.triage.writable

    def _show_status(self) -> None:
        if not self.triage.writable:
            self.query_one("#check", Button).display = False
            self.query_one("#tools-status", Static).update(
                "read-only: tools as the store's last sweep found them"
                if self.triage.read_only
                else "this store belongs to another process: run `quarry tools` there"
            )
            return
        busy = self.triage.checking_tools
        self.query_one("#check", Button).disabled = busy
        if busy:
            text = "checking PATH… (a new tool retries the files it unlocks)"
        elif self.checked_at is not None:
            text = f"checked at {time.strftime('%H:%M:%S', time.localtime(self.checked_at))}"
        else:
            text = "install a tool, then check again"
        self.query_one("#tools-status", Static).update(text)

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._show_detail()

    @on(Button.Pressed, "#check")
    def _pressed(self) -> None:
        self.action_check()

    def action_check(self) -> None:
        """Look for the tools again."""
        if self.dash.check_tools():
            self._show_status()

    def on_tools_checked(self, _message: ToolsChecked) -> None:
        """The check finished."""
        self.checked_at = time.time()
        if self.ready:
            self.refresh_data()
