"""A DataTable of rows, whose keys move between rows as the records table's do.

Textual's DataTable gives ``home``/``end`` to the leftmost and rightmost column, which on a
table with a row cursor only scrolls it sideways (the first column, a group's name, slides
out of view). The grouped screens and the tools screen list rows: there ``home`` and ``end``
go to the first and last row, and ``j``/``k`` and ``G`` move as on the records screen (not
``g``: on the tools screen it checks the tools again).

A table whose enter drills into another (a group into its files, a tool into the files it
would unlock) is given that table's id as ``into``: the keys move there as the enter is
handled, not a posted message later. Two enters typed or pasted together both reached the
first table before, and the second, meant for the first file, was lost; an enter that
still reaches this table once the keys have moved on is now the other table's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable

T = TypeVar("T")


class RowTable(DataTable[object]):
    """A row-cursor DataTable with home/end on the first/last row and j/k as arrows."""

    DEFAULT_CSS = """
    RowTable:focus > .datatable--header { background: $accent 40%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home", "first_row", "First row", show=False),
        Binding("end,G", "last_row", "Last row", show=False),
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def __init__(self, *, into: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.into = into
        """The id of the table that enter moves the keys to (None: enter only selects)."""

    def at_cursor(self, items: Sequence[T]) -> T | None:
        """The item of ``items`` (one a row, in row order) under the cursor; None past them."""
        row = self.cursor_row
        return items[row] if 0 <= row < len(items) else None

    def action_select_cursor(self) -> None:
        """Select the row; with ``into``, move the keys to that table at once."""
        if self.into is None:
            super().action_select_cursor()
            return
        target = self.screen.query_one(f"#{self.into}", DataTable)
        if self.screen.focused is target:  # a late enter: the keys have moved on already
            target.action_select_cursor()
            return
        super().action_select_cursor()
        if target.row_count:
            self.screen.set_focus(target)

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
