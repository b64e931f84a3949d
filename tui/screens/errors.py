"""The errors screen: error records grouped by reason and normalised message, largest first,
then the ok records whose text is suspect or garbled, grouped by their worst quality signal.

Enter drills from a group into its files; ``R`` retries the highlighted group, ``r`` the
highlighted file. Groups and files update live as retried records come back.
"""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from engine.names import shown
from engine.quality import summary_line
from engine.records import Record
from tui.model import Key, RecordModel
from tui.screens.ports import Dashboard
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState, is_encrypted
from tui.triage import ErrorGroup, error_records, group_errors, group_quality, quality_records
from tui.widgets.footer import FittingFooter
from tui.widgets.marked_table import RETRYING

MESSAGE_WIDTH = 52
"""Characters of a group's message shown in the table (the detail shows all of it)."""
MIME_WIDTH = 34
"""Characters of the MIME types and of the example path in the table."""


def _verdict(record: Record | None) -> str:
    """An error's message, or a suspect text's quality in words."""
    if record is None:
        return ""
    if record.error or record.quality is None:
        return record.error or ""
    return summary_line(record.quality)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _cell(text: str, width: int | None = None) -> Text:
    """A table cell: shown escaped, never read as markup."""
    text = shown(text)
    return Text(text if width is None else _cut(text, width))


class ErrorsScreen(TriageScreen):
    """Error groups above, the highlighted group's files below."""

    CSS_PATH = "errors.tcss"
    BINDINGS = [
        Binding("R", "retry_group", "Retry group"),
        Binding("r", "retry_file", "Retry file"),
        Binding("P", "retry_with_password", "Password"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self.groups: list[ErrorGroup] = []
        self.records: dict[Key, Record] = {}
        self._shown: tuple[str, str] | None = None

    def compose(self) -> ComposeResult:
        """Title, groups, the group's example, its files, footer."""
        yield Static("", id="errors-title")
        yield DataTable(id="groups", cursor_type="row", zebra_stripes=True)
        yield Static("", id="group-detail")
        yield DataTable(id="group-files", cursor_type="row")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Columns, then the groups."""
        self.query_one("#groups", DataTable).add_columns(
            "files", "reason", "message", "MIME types", "example"
        )
        self.query_one("#group-files", DataTable).add_columns("path", "MIME", "verdict")
        self.ready = True
        self.refresh_data()
        self.query_one("#groups", DataTable).focus()

    @property
    def group(self) -> ErrorGroup | None:
        """The highlighted group."""
        table = self.query_one("#groups", DataTable)
        if not self.groups or table.cursor_row >= len(self.groups):
            return None
        return self.groups[table.cursor_row]

    @property
    def file_key(self) -> Key | None:
        """The highlighted file of the group."""
        group, table = self.group, self.query_one("#group-files", DataTable)
        if group is None or table.cursor_row >= group.count:
            return None
        return group.keys[table.cursor_row]

    def refresh_data(self) -> None:
        """Groups from the live model; the cursor stays on the same group."""
        keep = self.group.ident if self.group else None
        records = error_records(self.model)
        suspects = quality_records(self.model)
        self.records = {r.key: r for r in (*records, *suspects)}
        by_error = group_errors(records)
        self.groups = by_error + group_quality(suspects)
        table = self.query_one("#groups", DataTable)
        table.clear()
        for g in self.groups:
            table.add_row(
                f"{g.count:,}", _cell(g.reason), _cell(g.example or g.message, MESSAGE_WIDTH),
                _cell(g.mime_text(2), MIME_WIDTH), _cell(g.example_path, MIME_WIDTH),
            )  # fmt: skip
        idents = [g.ident for g in self.groups]
        if keep in idents:
            table.move_cursor(row=idents.index(keep))
        self.query_one("#errors-title", Static).update(
            self._title(len(records), len(by_error), len(suspects))
        )
        self._shown = None
        self._show_group()

    def _title(self, errors: int, groups: int, suspects: int) -> str:
        """Counts first (they must fit 80 columns), then the keys (the footer has them too)."""
        title = f"[b]Errors[/b] {errors:,} in {groups:,} group{'s' if groups != 1 else ''}"
        if suspects:
            title += f" · [b]suspect texts[/b] {suspects:,}"
        title += " · enter: the group's files, then a file"
        if self.triage.writable:
            title += " · R: retry the group · r: a file"
        return title

    def _show_group(self) -> None:
        group = self.group
        ident = group.ident if group else None
        files = self.query_one("#group-files", DataTable)
        detail = self.query_one("#group-detail", Static)
        if group is None:
            files.clear()
            detail.update("[dim]no error records[/dim]")
            self._shown = None
            return
        many = f"{group.count:,} file" + ("s" if group.count != 1 else "")
        detail.update(
            f"[b]{escape(group.reason)}[/b] · {many} · "
            f"{escape(shown(group.mime_text(6)))}\n"
            f"[b]e.g.[/b] {escape(shown(group.example_path))}: {escape(shown(group.example))}"
        )
        if ident == self._shown:
            return
        self._shown = ident
        keep = files.cursor_row
        files.clear()
        retrying = self.triage.retrying
        for key in group.keys:
            record = self.records.get(key)
            verdict = RETRYING if key in retrying else _verdict(record)
            files.add_row(_cell(key[1]), _cell(record.mime if record else ""), _cell(verdict))
        files.move_cursor(row=min(keep, max(0, group.count - 1)))

    @on(DataTable.RowHighlighted, "#groups")
    def _group_highlighted(self) -> None:
        self._show_group()

    @on(DataTable.RowSelected, "#groups")
    def _group_selected(self) -> None:
        """Enter on a group: into its files."""
        self.query_one("#group-files", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Retries are not offered when nothing may be written."""
        return not action.startswith("retry_") or self.triage.writable

    @on(DataTable.RowSelected, "#group-files")
    def _file_selected(self) -> None:
        """Enter on a file: the record in full (its text when it has one); escape returns."""
        key = self.file_key
        rid = None if key is None else self.model.ids.get(key)
        if rid is not None:
            self.dash.open_record(rid, detail=True)

    def action_back(self) -> None:
        """From the files back to the groups; from the groups back to the records."""
        files = self.query_one("#group-files", DataTable)
        if files.has_focus:
            self.query_one("#groups", DataTable).focus()
        else:
            super().action_back()

    def action_retry_group(self) -> None:
        """Retry every file of the highlighted group."""
        group = self.group
        if group is None:
            self.notify("no error group to retry", severity="warning")
            return
        label = f"group {group.reason}: {_cut(shown(group.message), 40)}"
        self.dash.retry(list(group.keys), label)
        self._shown = None
        self._show_group()

    def action_retry_file(self) -> None:
        """Retry the highlighted file (the first of the group while the groups have focus)."""
        key = self.file_key
        if key is None:
            self.notify("no file to retry", severity="warning")
            return
        self.dash.retry([key], key[1])
        self._shown = None
        self._show_group()

    def action_retry_with_password(self) -> None:
        """Give a password for the encrypted files of the highlighted group (or, with the
        files focused, the highlighted file), then retry them with it."""
        group, key = self.group, self.file_key
        if self.query_one("#group-files", DataTable).has_focus and key is not None:
            keys, label = [key], key[1]
        else:
            keys = list(group.keys) if group is not None else []
            label = f"group {group.reason}" if group is not None else ""
        self.dash.unlock([k for k in keys if is_encrypted(self.records.get(k))], label)
