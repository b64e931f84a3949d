"""A DataTable of rows, whose keys move between rows as the records table's do.

Textual's DataTable gives ``home``/``end`` to the leftmost and rightmost column, which on a
table with a row cursor only scrolls it sideways (the first column, a group's name, slides
out of view). The grouped screens and the tools screen list rows: there ``home`` and ``end``
go to the first and last row, and ``j``/``k`` move as on the records screen.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class RowTable(DataTable[object]):
    """A row-cursor DataTable with home/end on the first/last row and j/k as arrows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def action_first_row(self) -> None:
        """The cursor to the first row, the table to its left edge."""
        if self.row_count:
            self.move_cursor(row=0)
        self.scroll_x = 0

    def action_last_row(self) -> None:
        """The cursor to the last row, the table to its left edge."""
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)
        self.scroll_x = 0
