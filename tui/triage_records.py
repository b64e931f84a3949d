"""The records screen's triage keys: mark, retry, open the text or the source, copy, export.

:class:`RecordActions` is part of :class:`tui.triage_app.TriageMixin`; every action acts on
the records screen's highlighted record, its marks or its current view (tab + filter).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message

from engine.records import Record
from tui import actions
from tui.lines import valid_sha256
from tui.model import Key

if TYPE_CHECKING:
    from tui.triage_app import TriageMixin

    _Base = TriageMixin
else:
    _Base = object


class Exported(Message):
    """An export of the view was written (or failed)."""

    def __init__(self, path: Path, rows: int, error: str) -> None:
        super().__init__()
        self.path = path
        """The file written."""
        self.rows = rows
        """Records written."""
        self.error = error
        """Why it failed, or empty."""


class RecordActions(_Base):
    """Actions on the highlighted, marked or shown records."""

    RECORD_ACTIONS = frozenset(
        {
            "retry_one",
            "retry_many",
            "mark",
            "mark_down",
            "mark_up",
            "edit_text",
            "open_source",
            "copy_path",
            "export_view",
        }
    )
    """Actions that only make sense on the records screen."""

    def _current(self) -> tuple[Key, Record] | None:
        rid = self.records_screen.table.rid
        record = None if rid is None else self.model.record(rid)
        if record is None:
            self.notify("no record highlighted", severity="warning")
            return None
        return record.key, record

    # -- marks -----------------------------------------------------------------------------

    def _mark_and_move(self, delta: int, toggle: bool) -> None:
        table = self.records_screen.table
        rid = table.rid
        if rid is None:
            return
        key = self.model.key(rid)
        if key is not None:
            if toggle and key in self.marks:
                self.marks.discard(key)
            else:
                self.marks.add(key)
        if delta > 0:
            table.action_cursor_down()
        elif delta < 0:
            table.action_cursor_up()
        if not toggle and (rid := table.rid) is not None and (key := self.model.key(rid)):
            self.marks.add(key)  # a shift+arrow range covers both ends
        table.refresh()
        self.records_screen.sub_title = f"{len(self.marks):,} marked" if self.marks else ""

    def action_mark(self) -> None:
        """Mark (or unmark) the highlighted record and move down."""
        self._mark_and_move(1, toggle=True)

    def action_mark_down(self) -> None:
        """Mark this record and the one below (a range, as shift+down)."""
        self._mark_and_move(1, toggle=False)

    def action_mark_up(self) -> None:
        """Mark this record and the one above."""
        self._mark_and_move(-1, toggle=False)

    def clear_marks(self) -> None:
        """Forget every mark."""
        self.marks.clear()
        self.records_screen.sub_title = ""
        self.records_screen.table.refresh()

    # -- retry -----------------------------------------------------------------------------

    def action_retry_one(self) -> None:
        """Read the highlighted record again."""
        current = self._current()
        if current is not None:
            self.retry([current[0]], current[0][1])

    def action_retry_many(self) -> None:
        """Retry the marked records, or else every record of the current view."""
        if self.marks:
            keys = sorted(self.marks)
            label = f"{len(keys):,} marked"
        else:
            model = self.model
            keys = [k for i in range(len(model.view)) if (k := model.key(model.rid_at(i)))]
            label = f"the {model.tab} view" + (
                f" filtered by {model.query.text!r}" if model.query.text else ""
            )
        self.retry(keys, label, unmark=bool(self.marks))

    # -- files -----------------------------------------------------------------------------

    def action_edit_text(self) -> None:
        """Open the stored text in $EDITOR / $PAGER (a private copy; the store stays as is)."""
        current = self._current()
        if current is None:
            return
        record = current[1]
        if not record.has_text:
            self.notify(f"{record.path}: no text stored ({record.status})", severity="warning")
            return
        if valid_sha256(record.sha256) is None:
            self.notify(f"{record.path}: no valid content hash", severity="warning")
            return
        try:
            copy = actions.private_copy(self.store.text_path(record.sha256 or ""), record.path)
        except OSError as exc:
            self.notify(f"cannot copy the text: {exc}", severity="error")
            return
        command = actions.viewer_command(copy)
        status = self.run_outside(command)
        if status == 127:
            self.notify(f"cannot open the text: {command[0]} is not installed", severity="error")
        elif status:
            self.notify(f"the editor exited with status {status}", severity="warning")

    def action_open_source(self) -> None:
        """Open the source file with the system's opener."""
        current = self._current()
        if current is None:
            return
        path = self.source_path(current[0])
        if not path.exists():
            self.notify(f"{path} is no longer on disk", severity="warning")
            return
        command = actions.opener_command(path)
        status = self.run_outside(command)
        if status == 127:
            self.notify(f"cannot open files here: {command[0]} is not installed", severity="error")
        elif status:
            self.notify(f"{command[0]} exited with status {status}", severity="warning")

    def action_copy_path(self) -> None:
        """Copy the source file's path (OSC 52: works over SSH in most terminals)."""
        current = self._current()
        if current is not None:
            path = str(self.source_path(current[0]))
            text = actions.clipboard_text(path)
            self.copy_to_clipboard(text)
            self.notify(text, title="path copied" if text == path else "path copied as bytes")

    # -- export ----------------------------------------------------------------------------

    def action_export_view(self, fmt: str = "csv") -> None:
        """Write the records of the current view (tab + filter, in order) to a file."""
        if self.read_only:
            self.notify("read-only: nothing is written (no export)", severity="warning")
            return
        model = self.model
        rids = [model.rid_at(i) for i in range(len(model.view))]
        label = model.tab + ("-filtered" if model.query.text else "")
        path = actions.export_path(Path.cwd(), fmt, label)
        self._export_worker(rids, path, fmt)

    @work(thread=True, group="export", exit_on_error=False)
    def _export_worker(self, rids: list[int], path: Path, fmt: str) -> None:
        model = self.model
        try:
            if fmt == "jsonl":
                n = actions.write_jsonl(path, (model.record(rid) for rid in rids))
            else:
                rows: Any = (row for rid in rids if (row := model.rows[rid]) is not None)
                n = actions.write_csv(path, rows)
        except (OSError, ValueError, TypeError) as exc:  # a full disk, a name it cannot write
            self.post_message(Exported(path, 0, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(Exported(path, n, ""))

    def on_exported(self, message: Exported) -> None:
        """Name the file written."""
        if message.error:
            self.notify(message.error, title="export failed", severity="error")
        else:
            self.notify(str(message.path), title=f"exported {message.rows:,} records")
