"""The records table with the triage layer on top: marked rows and rows being retried.

A thin subclass of :class:`~tui.widgets.record_table.RecordTable`: it draws each row as the
table does, then tints the rows the user marked (space, shift+arrows) and writes
``retrying…`` over the status of the records whose retry is in flight. The marks and the
in-flight set live in the :class:`~tui.state.TriageState` the table is given, keyed by
(root, path), so they survive live updates and reloads.
"""

from __future__ import annotations

from collections.abc import Collection

from rich.segment import Segment
from textual.strip import Strip

from engine.records import Key
from tui.model import RecordModel
from tui.state import TriageState
from tui.widgets.record_table import RecordTable

RETRYING = "retrying…"
"""What the status column says while a record is being read again."""


class MarkedTable(RecordTable):
    """A :class:`RecordTable` that shows marks and retries in flight."""

    COMPONENT_CLASSES = RecordTable.COMPONENT_CLASSES | {
        "record-table--marked",
        "record-table--retrying",
    }
    DEFAULT_CSS = """
    MarkedTable > .record-table--marked { background: $accent 35%; text-style: bold; }
    MarkedTable > .record-table--retrying { color: $text-accent; text-style: italic; }
    """

    def __init__(self, model: RecordModel, triage: TriageState, *, id: str | None = None) -> None:
        super().__init__(model, id=id)
        self.triage = triage

    def _sets(self) -> tuple[Collection[Key], Collection[Key]]:
        return self.triage.marks, self.triage.retrying

    def _row(self, pos: int) -> Strip:
        strip = super()._row(pos)
        marks, retrying = self._sets()
        if not marks and not retrying:
            return strip
        key = self.model.key(self.model.rid_at(pos))
        if key in retrying:
            strip = self._overlay_status(strip)
        if key in marks and pos != self.cursor:
            mark = self.get_component_rich_style("record-table--marked")
            strip = Strip([Segment(s.text, (s.style + mark) if s.style else mark) for s in strip])
        return strip

    def _overlay_status(self, strip: Strip) -> Strip:
        x = 0
        for column, width in self._layout():
            if column == "status":
                style = self.rich_style + self.get_component_rich_style("record-table--retrying")
                cell = Strip([Segment(RETRYING.ljust(width)[:width] + " ", style)])
                return Strip.join([strip.crop(0, x), cell, strip.crop(x + width + 1)])
            x += width + 1
        return strip
