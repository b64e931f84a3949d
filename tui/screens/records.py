"""The records screen: header, summary, status tabs, filter, the table and the detail pane."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Tab, Tabs

from tui.model import COLUMNS, TABS
from tui.widgets.marked_table import MarkedTable
from tui.widgets.panels import DetailPane, LiveHeader, SummaryBar
from tui.widgets.record_table import RecordTable

if TYPE_CHECKING:
    from tui.app import QuarryApp

LIVE_FILTER_ROWS = 100_000
"""Up to this many records the filter follows each keystroke; above, it waits for a pause."""
LOAD_REFRESH_SECONDS = 0.5
"""While a store loads, counts, tabs and the table are redrawn this often, not per chunk."""


class RecordsScreen(Screen[None]):
    """Browse every record of the store, live."""

    CSS_PATH = "records.tcss"
    BINDINGS = [
        *(Binding(str(n), f"tab('{tab}')", tab, show=False) for n, tab in enumerate(TABS, 1)),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "unfocus_filter", "Back to table", show=False),
        Binding("s", "cycle_sort", "Sort"),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("d", "toggle_detail", "Detail"),
        Binding("enter", "open", "Open text"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._filter_timer: Timer | None = None
        self._ready = False
        self._detail_rid: int | None = None
        self._shown_rid: int | None = -1
        self._load_shown = 0.0

    @property
    def quarry(self) -> QuarryApp:
        """The app, typed."""
        return cast("QuarryApp", self.app)

    def compose(self) -> ComposeResult:
        """Header, summary, tabs, table + detail, filter, footer."""
        yield LiveHeader(id="header")
        yield SummaryBar(id="summary")
        yield Tabs(*(Tab(tab, id=f"tab-{tab}") for tab in TABS), id="tabs")
        with Horizontal(id="body"):
            yield MarkedTable(self.quarry.model, id="table")
            yield DetailPane(id="detail")
        filter_input = Input(placeholder="filter paths: text, regex, !to invert", id="filter")
        filter_input.cursor_blink = False
        yield filter_input
        yield Footer()

    def on_mount(self) -> None:
        """Focus the table and draw the current state."""
        self.query_one(RecordTable).focus()
        self._ready = True
        self.refresh_data()
        self.refresh_header()

    # -- called by the app -----------------------------------------------------------------

    @property
    def table(self) -> RecordTable:
        """The records table."""
        return self.query_one(RecordTable)

    def refresh_data(self, changed: set[int] | None = None, keep: int | None = None) -> None:
        """The model changed: counts, tabs, table (cursor kept on row ``keep``), detail."""
        if not self._ready:
            return
        model = self.quarry.model
        problem = self.quarry.load_error
        if not problem and model.bad_lines:
            problem = f"{model.bad_lines:,} unreadable line{'s' if model.bad_lines != 1 else ''}"
        self.query_one(SummaryBar).show(
            model.tab_counts(), len(model), model.reused, model.chars, problem
        )
        counts = model.tab_counts()
        for tab in TABS:
            self.query_one(f"#tab-{tab}", Tab).label = f"{tab} {counts[tab]:,}"
        self.query_one(Tabs).active = f"tab-{model.tab}"
        if changed:
            self.table.changed(changed, keep)
        else:
            self.table.reload(keep)
        if changed and self.table.rid in changed:
            self._show_detail(self.table.rid)

    def refresh_loading(self, force: bool = False) -> None:
        """Rows are still loading: redraw now and then (the UI thread is the loader's rival)."""
        now = time.monotonic()
        if force or now - self._load_shown >= LOAD_REFRESH_SECONDS:
            self._load_shown = now
            self.refresh_data()
            self.refresh_header()

    def refresh_header(self) -> None:
        """The live state changed."""
        if not self._ready:
            return
        app = self.quarry
        self.query_one(LiveHeader).show(app.folder, app.state_text, app.progress, app.last_event)

    # -- table -----------------------------------------------------------------------------

    @on(RecordTable.Highlighted)
    def _highlighted(self, event: RecordTable.Highlighted) -> None:
        # after the frame that moves the cursor: the pane's re-layout is not on the key's path
        self._detail_rid = event.rid
        self.call_after_refresh(self._show_latest_detail)

    def _show_latest_detail(self) -> None:
        if self._detail_rid != self._shown_rid:
            self._show_detail(self._detail_rid)

    def _show_detail(self, rid: int | None) -> None:
        self._shown_rid = rid
        record = None if rid is None else self.quarry.model.record(rid)
        self.query_one(DetailPane).show(record, self.quarry.tools_missing)

    @on(RecordTable.Opened)
    def _opened(self, event: RecordTable.Opened) -> None:
        self.quarry.open_inspector(event.rid)

    @on(RecordTable.HeaderClicked)
    def _header_clicked(self, event: RecordTable.HeaderClicked) -> None:
        self.action_sort(event.column)

    @on(Tabs.TabActivated)
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        tab = (event.tab.id or "tab-all").removeprefix("tab-")
        if tab != self.quarry.model.tab:
            self.action_tab(tab)

    # -- actions ---------------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        """Show one status (``all`` for every record); the path filter stays."""
        keep = self.table.rid
        self.quarry.model.set_tab(tab)
        self.refresh_data(keep=keep)

    def action_sort(self, column: str, reverse: bool | None = None) -> None:
        """Sort by ``column`` (again: reverse it)."""
        keep = self.table.rid
        self.quarry.model.set_sort(column, reverse)
        self.refresh_data(keep=keep)

    def action_cycle_sort(self) -> None:
        """Sort by the next column."""
        i = COLUMNS.index(self.quarry.model.sort_column)
        self.action_sort(COLUMNS[(i + 1) % len(COLUMNS)], False)

    def action_reverse_sort(self) -> None:
        """Flip the sort direction."""
        model = self.quarry.model
        self.action_sort(model.sort_column, not model.sort_reverse)

    def action_toggle_detail(self) -> None:
        """Show or hide the detail pane."""
        pane = self.query_one(DetailPane)
        pane.display = not pane.display

    def action_open(self) -> None:
        """Open the highlighted record's text."""
        self.table.action_open()

    def action_filter(self) -> None:
        """Edit the path filter."""
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        box.focus()

    def action_unfocus_filter(self) -> None:
        """Leave the filter box (the filter stays; empty it to hide the box)."""
        box = self.query_one("#filter", Input)
        box.set_class(bool(box.value), "-shown")
        self.table.focus()

    def set_filter(self, text: str) -> None:
        """Filter paths by ``text`` now (also for the command palette and tests)."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        keep = self.table.rid
        query = self.quarry.model.set_query(text)
        box = self.query_one("#filter", Input)
        box.set_class(bool(query.error), "-invalid")
        box.tooltip = (
            f"not a regular expression ({query.error}): matched as text" if query.error else None
        )
        self.refresh_data(keep=keep)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if len(self.quarry.model) <= LIVE_FILTER_ROWS:
            self.set_filter(event.value)
            return
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(0.3, lambda: self.set_filter(event.value))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.set_filter(event.value)
        self.action_unfocus_filter()
