"""The tools screen: every external tool, found or missing, and the files each would unlock.

Modelled on Recoll's "missing helpers": shown by itself once after the first sweep when files
are waiting on a missing tool. "Check again" (``g`` or the button) re-reads PATH through the
engine, which retries whatever a newly found tool unlocks; the rows update as records change.
The highlighted tool's files are listed below the tools: enter on a tool goes into them, enter
on a file opens its record (as on the errors screen) and escape comes back to the same place.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus, Resize
from textual.widgets import Button, DataTable, Static

from engine.names import shown
from engine.records import Key
from tui.messages import ToolsChecked
from tui.model import RecordModel
from tui.screens.groups import WIDE, Column, fit_title, set_columns, widths
from tui.screens.ports import Dashboard
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState
from tui.triage import NOT_COUNTED, PLATFORMS, ToolRow, Waiting
from tui.widgets.footer import FittingFooter
from tui.widgets.line import Line
from tui.widgets.record_table import cut, fit_path
from tui.widgets.row_table import RowTable
from tui.words import count, escape


def tool_detail(row: ToolRow, in_files: bool = False) -> str:
    """Markup for the detail pane: what the tool does, where it is, what it unlocks, install."""
    state = {"found": "[$success]found[/]", "left out": "[$warning]left out[/]"}.get(
        row.state, "[$error]missing[/]"
    )
    lines = [f"[b]{escape(row.name)}  [/b]{state}", escape(row.unlocks), ""]
    if row.left_out:
        lines += ["left out on purpose (--without or --no-external): files that need it wait", ""]
    if row.found:
        lines.append(f"[b]version  [/b]{escape(row.version)}")
        if row.path != "-":  # (a store's summary records versions, not where tools were)
            lines.append(f"[b]path      [/b]{escape(row.path)}")
        lines.append("")
    if row.workers:
        have = sum(version is not None for _w, version in row.workers)
        lines.append(f"[b]on the Dask workers: {have} of {len(row.workers)}[/b]")
        for worker, version in row.workers:
            state = escape(version) if version is not None else "[$error]missing[/]"
            lines.append(f"  {escape(worker)}  {state}")
        lines.append("")
    if row.read_without:
        lines.append(f"[b][$warning]read without it: {count(row.read_without, 'file')}[/][/b]")
        lines += ["  [dim]read again, with it, by the next sweep of their folder[/dim]", ""]
    listed = f", the first {len(row.files):,} listed" if row.count > len(row.files) else ""
    lines.append(f"[b]files it would unlock: {row.count:,}[/b]{listed}")
    if in_files:
        lines.append("  [dim]enter: open the file · escape: back to the tools[/dim]")
    elif row.files:
        lines.append("  [dim]listed on the left: enter goes into them[/dim]")
    if row.install:
        lines += ["", "[b]how to install[/b]"]
        for key, name in PLATFORMS:
            if key in row.install:  # the command on its own line: it never wraps mid-name
                lines += [f"  {name}", f"    [$accent]{escape(row.install[key])}[/]"]
    return "\n".join(lines)


FILE_SHARES: list[Column] = [("files it would unlock", 0.7), ("MIME", 0.3)]
"""The tool's files: each column whole when it fits its share, the path taking the rest."""
TOOL_COLUMNS = ("tool", "state", "files", "version", "path")
"""The tools table's columns, left out from the end as the terminal narrows."""
STATES = {"found": "[green]found[/]", "left out": "[yellow]left out[/]"}
"""A tool's state in the table (markup); any other state is missing."""


def tool_cells(row: ToolRow) -> list[str]:
    """A tool's row, one cell a column of :data:`TOOL_COLUMNS` (the state as markup; a tool
    found that records were read without says how many)."""
    state = STATES.get(row.state, "[red]missing[/]")
    if row.read_without:
        state += f" [yellow]({row.read_without:,} read without)[/]"
    return [row.name, state, f"{row.count:,}", row.version, row.path]


class ToolsScreen(TriageScreen):
    """Found and missing tools, files waiting on each, install hints, check again."""

    CSS_PATH = "tools.tcss"
    BINDINGS = [
        Binding("g", "check", "Check again"),
        Binding("escape,q", "back", "Back"),
    ]

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self.rows: list[ToolRow] = []
        self.checked_at: float | None = None
        self._width = 0
        self._drawn: tuple[tuple[str, ...], list[list[str]]] | None = None
        """The tools table's columns and cells (as markup) as last drawn."""
        self._files_drawn: tuple[tuple[str, ...], list[tuple[str, ...]]] | None = None
        """The files table's columns and cells as last drawn."""
        self._waiting_shown = NOT_COUNTED
        """The records waiting on a tool, as shown."""
        self._detail_for: str | None = None
        """The tool whose detail and files are shown."""

    def compose(self) -> ComposeResult:
        """Title, table beside the detail, the check-again bar, footer."""
        yield Line("", id="tools-title")
        yield Static("", id="tools-readers")
        with Horizontal(id="tools-body"):
            with Vertical(id="tools-left"):
                yield RowTable(
                    id="tool-table", cursor_type="row", zebra_stripes=True, into="tool-files"
                )
                yield RowTable(id="tool-files", cursor_type="row")
            with VerticalScroll(id="tool-detail"):
                yield Line("", id="tool-info")
        with Horizontal(id="tools-bar"):
            yield Button("Check again (g)", id="check", variant="primary")
            yield Line("", id="tools-status")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Columns, then the rows."""
        table = self.query_one("#tool-table", DataTable)
        self.ready = True
        self.refresh_data()
        table.focus()

    @property
    def selected(self) -> ToolRow | None:
        """The highlighted tool's row."""
        return self.query_one("#tool-table", RowTable).at_cursor(self.rows)

    @property
    def file_key(self) -> Key | None:
        """The highlighted file of the highlighted tool."""
        row = self.selected
        return None if row is None else self.query_one("#tool-files", RowTable).at_cursor(row.files)

    def refresh_data(self) -> None:
        """Rows from the live model and tool set; the cursor stays on the same tool. The
        tables are rebuilt only when what they show changed (a rebuilt table repaints whole,
        and its cursor's move redraws the detail and the files again, a frame later)."""
        keep = self.selected.name if self.selected else None
        if self.dash.waiting_known():
            waiting = self.dash.waiting()
        else:  # (a paged store: counted by its index, in a worker; the last counts meanwhile)
            self.count_in_worker(self.dash.waiting, self._waiting_counted)
            waiting = self._waiting_shown
        self._waiting_shown = waiting
        self.rows = self.dash.tool_rows(waiting)
        self._width = width = self.app.size.width
        shown = 5 if any(r.found and r.path != "-" for r in self.rows) else 4  # (a store's: none)
        columns = TOOL_COLUMNS[: min(shown, 5 if width >= WIDE else 4 if width >= 80 else 3)]
        table = self.query_one("#tool-table", DataTable)
        cells = [tool_cells(row)[: len(columns)] for row in self.rows]
        if (columns, cells) != self._drawn:
            self._drawn = (columns, cells)
            set_columns(table, columns)
            for row_cells in cells:
                table.add_row(Text(row_cells[0]), *row_cells[1:3], *map(Text, row_cells[3:]))
        names = [r.name for r in self.rows]
        table.move_cursor(row=names.index(keep) if keep in names else 0)
        found = sum(r.found for r in self.rows)
        out = sum(r.left_out for r in self.rows)
        counts = f"{found} found · {len(self.rows) - found - out} missing"
        counts += f" · {out} left out" if out else ""
        self.query_one("#tools-title", Line).show(
            fit_title([f"[b]External tools [/b]{counts}", *self._waiting()], width - 2)
        )
        self._show_detail()
        self._show_status()
        self._show_unloaded()

    def _waiting_counted(self, waiting: Waiting) -> None:
        """The records waiting on a tool, counted: shown (the same answer, the model's
        memo, unless the records changed meanwhile: counted again then)."""
        self.refresh_data()

    def _waiting(self) -> list[str]:
        """How many files wait on a missing tool, and on a tool left out on purpose (a
        file waiting on a tool left out did not wait on a missing one: issue 25)."""
        waiting = self._waiting_shown
        if waiting is NOT_COUNTED:
            return ["counting the files waiting…"]
        absent = [r.name for r in self.rows if not r.found and not r.left_out]
        missing = waiting.count(absent)
        left = waiting.count((r.name for r in self.rows if r.left_out), but=absent)
        parts = []
        if missing or not left:
            parts.append(f"{count(missing, 'file')} waiting on a missing tool")
        if left:
            parts.append(f"{count(left, 'file')} waiting on a tool left out")
        poorer = [f"{r.read_without:,} without {r.name}" for r in self.rows if r.read_without]
        if poorer:  # a store mixed by an earlier sweep (or Dask worker) says so until read again
            parts.append("read with fewer tools than found now: " + ", ".join(poorer))
        return parts

    def _show_unloaded(self) -> None:
        """The readers that could not load, and why (shown only when there are some)."""
        from engine.readers.registry import unloaded

        failed = unloaded()
        line = self.query_one("#tools-readers", Static)
        line.display = bool(failed)
        if failed:
            why = " · ".join(u.line for u in failed)
            line.update(Text(f"readers not loaded (their files are unsupported): {why}"))

    def on_resize(self, event: Resize) -> None:
        """Another width: the columns that fit it."""
        if self.ready and event.size.width != self._width:
            self.refresh_data()

    def start_over(self) -> None:
        """The first tool highlighted, the keys on the tools (at once: this runs before the
        screen is shown, and ``focus()`` would repaint the table and move the keys later)."""
        self.rows = []  # none highlighted: refresh_data keeps none
        self.refresh_data()
        self.set_focus(self.query_one("#tool-table", DataTable))

    def _show_detail(self) -> None:
        self._show_info()
        self._show_files(self.selected)

    def _show_info(self) -> None:
        row = self.selected
        self._detail_for = None if row is None else row.name
        in_files = self.query_one("#tool-files", DataTable).has_focus
        info = self.query_one("#tool-info", Line)
        info.show(tool_detail(row, in_files) if row else "[dim]no tool[/dim]")

    def on_descendant_focus(self, _event: DescendantFocus) -> None:
        """The keys moved between the tables: the detail says what enter does now."""
        if self.ready:
            self._show_info()

    def _show_files(self, row: ToolRow | None) -> None:
        """The tool's files, the cursor kept on the same file when it is still there (the
        table kept as it is when it would show the same)."""
        files = self.query_one("#tool-files", DataTable)
        keep = self.file_key if files.row_count else None
        wide = self._width >= WIDE
        columns = tuple(title for title, _share in FILE_SHARES[: 2 if wide else 1])
        cells = [self._file_cells(key, wide) for key in (row.files if row else ())]
        cells = self._fitted(cells)
        if (columns, cells) != self._files_drawn:
            self._files_drawn = (columns, cells)
            set_columns(files, columns)
            for row_cells in cells:
                files.add_row(*map(Text, row_cells))
        if row is not None and keep in row.files:
            files.move_cursor(row=row.files.index(keep))

    def _fitted(self, cells: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """The paths cut in their folders to the table's width (the file's name kept), the
        MIME types at their ends, as the groups screens share theirs (:func:`widths`); the
        table has what the detail pane beside it leaves: at most 60 columns, half the
        screen (tools.tcss)."""
        room = self._width - min(60, self._width // 2)
        shares = FILE_SHARES[: len(cells[0]) if cells else 1]
        cuts = widths(shares, [list(c) for c in cells], room)
        return [(fit_path(c[0], cuts[0]), *map(cut, c[1:], cuts[1:])) for c in cells]

    def _file_cells(self, key: Key, wide: bool) -> tuple[str, ...]:
        if not wide:
            return (shown(key[1]),)
        rid = self.model.ids.get(key)
        record = None if rid is None else self.model.record(rid)
        return (shown(key[1]), record.mime if record else "")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Checking again retries files: not offered when nothing may be written."""
        return action != "check" or self.triage.writable

    def _show_status(self) -> None:
        if not self.triage.writable:
            self.query_one("#check", Button).display = False
            self.query_one("#tools-status", Line).show(
                "read-only: tools as the store's last sweep found them"
                if self.triage.read_only
                else "tools as the last sweep found them (`quarry tools` looks again)"
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
        self.query_one("#tools-status", Line).show(text)

    @on(DataTable.RowHighlighted, "#tool-table")
    def _highlighted(self) -> None:
        """Another tool highlighted: its detail and files (the same one again, as a rebuilt
        or started-over table says: shown already)."""
        row = self.selected
        if (None if row is None else row.name) != self._detail_for:
            self._show_detail()

    @on(DataTable.RowSelected, "#tool-table")
    def _tool_selected(self) -> None:
        """Enter on a tool: into the files it would unlock."""
        row = self.selected
        if row is not None and row.files:
            self.query_one("#tool-files", DataTable).focus()
        elif row is not None:
            self.notify(f"no file waits on {row.name}")

    @on(DataTable.RowSelected, "#tool-files")
    def _file_selected(self) -> None:
        """Enter on a file: its record in full; escape comes back here."""
        key = self.file_key
        rid = None if key is None else self.model.ids.get(key)
        if rid is not None:
            self.dash.open_record(rid, detail=True)

    def action_back(self) -> None:
        """From the files back to the tools; from the tools back to the records."""
        if self.query_one("#tool-files", DataTable).has_focus:
            self.query_one("#tool-table", DataTable).focus()
        else:
            super().action_back()

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
