"""One record in full, for a record that has no text to inspect (an error, a skipped file).

Opened with enter from the errors screen's file list (and from anywhere a record without text
is opened); escape goes back to exactly where it was opened from.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from engine.records import Record
from tui.widgets.footer import FittingFooter
from tui.widgets.panels import describe


class DetailScreen(Screen[None]):
    """Every field of one record, its verdict in full and the tools it needs."""

    DEFAULT_CSS = """
    DetailScreen #detail-full { padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q", "back", "Back")]

    def __init__(self, record: Record, tools_missing: set[str]) -> None:
        super().__init__()
        self.record = record
        self.tools_missing = tools_missing

    def compose(self) -> ComposeResult:
        """The record's fields, scrollable, and the footer."""
        with VerticalScroll(id="detail-full"):
            yield Static(describe(self.record, self.tools_missing), id="detail-full-body")
        yield FittingFooter()

    def action_back(self) -> None:
        """Back to where the record was opened from."""
        self.dismiss()
