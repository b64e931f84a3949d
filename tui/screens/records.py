"""The records screen: header, summary, status tabs, filter, the table and the detail pane.

It owns every key that acts on records (tabs, filter, sort, detail, open, mark, retry, the
editor, the opener, copy, export): a binding lives on the class that handles it, so the help
and the footer list them here and nowhere else. Built with the model, the triage state and
the :class:`~tui.screens.ports.Dashboard` it asks for retries and the terminal.

Past STYLE's 500 lines on purpose: every key that acts on records lives here (the rule
above), and the bindings, their actions and the help they feed are one list to read.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Static, Tab, Tabs
from textual.worker import get_current_worker

from engine.errors import QuarryError
from engine.names import shown
from engine.query import Query, TextTerm
from engine.records import Key, Record
from engine.textsearch import PatternTooSlow
from engine.textsearch import Query as TextPattern
from tui import actions
from tui.messages import ModelChanged
from tui.model import COLUMNS, TABS, RecordModel
from tui.screens.full import FullScreen
from tui.screens.ports import Dashboard
from tui.state import TriageState, encrypted_keys, is_encrypted
from tui.textdoc import InContext, display_line
from tui.widgets.footer import FittingFooter
from tui.widgets.marked_table import MarkedTable
from tui.widgets.panels import Body, CountTabs, DetailPane, LiveHeader, SummaryBar
from tui.widgets.record_table import RecordTable
from tui.widgets.typed_input import TypedInput
from tui.words import count

QUERY_HINT = "text (path), field:value (status reason mime extractor error why), ! to invert"
"""The filter box's placeholder: the query line's grammar in one line."""
NARROW = 120
"""Below this many columns the detail pane starts hidden (the table needs the room)."""
PREVIEW_BYTES = 2000
"""Bytes of a stored text read for the detail pane's first lines."""
LIVE_FILTER_ROWS = 100_000
"""Up to this many records the filter follows each keystroke; above, it waits for a pause."""
LOAD_REFRESH_SECONDS = 0.5
"""While a store loads, counts, tabs and the table are redrawn this often, not per chunk."""
SEARCHING = "searching the texts…"
"""The filter box's title while the engine looks for a query's ``text:`` terms."""
ENGINE_ACTIONS = frozenset({"retry_one", "retry_many", "retry_with_password"})
"""Actions not offered when the engine is not ours (read-only, another process's store)."""


class RecordsScreen(FullScreen):
    """Browse every record of the store, live."""

    CSS_PATH = "records.tcss"
    BINDINGS = [
        *(Binding(str(n), f"tab('{tab}')", tab, show=False) for n, tab in enumerate(TABS, 1)),
        Binding("enter", "open", "Open"),
        # priority: run by the app as it reads the key, so that the keys typed after it (in
        # the same write: a fast typist, a paste) already go to the box, not to the table
        Binding("slash", "filter", "Filter", priority=True),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("s", "cycle_sort", "Sort"),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("d", "toggle_detail", "Detail"),
        Binding("r", "retry_one", "Retry"),
        Binding("R", "retry_many", "Retry all"),
        Binding("P", "retry_with_password", "Password"),
        Binding("space", "mark", "Mark", show=False),
        Binding("shift+down", "mark_down", "Mark down", show=False),
        Binding("shift+up", "mark_up", "Mark up", show=False),
        Binding("e", "edit_text", "Edit text", show=False),
        Binding("o", "open_source", "Open file", show=False),
        Binding("c", "copy_path", "Copy path", show=False),
        Binding("E", "export_view", "Export", show=False),
        Binding("h", "hide_column", "Hide the sort column", show=False),
        Binding("H", "show_columns", "Show every column", show=False),
        Binding("plus", "widen(2)", "Widen the sort column", show=False),
        Binding("minus", "widen(-2)", "Narrow the sort column", show=False),
    ]

    def __init__(
        self, model: RecordModel, triage: TriageState, dash: Dashboard, *, query: str = ""
    ) -> None:
        super().__init__()
        self.model = model
        self._query = query
        """The query line to filter by once mounted (a screen made in place of one that had
        it: :meth:`tui.desk.Desk.rehome`)."""
        self.triage = triage
        self.dash = dash
        self._filter_timer: Timer | None = None
        self._ready = False
        self._detail_rid: int | None = None
        self._shown_rid: int | None = -1
        self._password_applies = False
        """Whether ``P`` applies here: an encrypted record is highlighted or marked."""
        self._marked_encrypted = False
        self._load_shown = 0.0
        self._searching: str | None = None
        """The query line whose ``text:`` terms a worker is asking the engine about."""
        self._ask_again = False
        """The records changed while a ``text:`` question was out: ask once more after it."""
        self._match_for: tuple[int, str] | None = None
        """(row, query) whose match the line under the table shows or is being found."""

    def compose(self) -> ComposeResult:
        """Header, summary, tabs, table + detail, filter, footer."""
        yield LiveHeader(id="header")
        yield SummaryBar(id="summary")
        # (the model's tab active from the start: a screen made over a model on another tab
        # would otherwise activate the first, and its message set the model's tab to it)
        tabs = (Tab(tab, id=f"tab-{tab}") for tab in TABS)
        yield CountTabs(*tabs, active=f"tab-{self.model.tab}", id="tabs")
        with Body(id="body"):
            yield MarkedTable(self.model, self.triage, id="table")
            yield DetailPane(id="detail")
        yield Static("", id="match", markup=False)
        filter_input = TypedInput(placeholder=QUERY_HINT, id="filter")
        filter_input.cursor_blink = False
        yield filter_input
        yield FittingFooter()

    def on_mount(self) -> None:
        """Focus the table and draw the current state (narrow: the table alone, d shows
        the detail)."""
        self.query_one(RecordTable).focus()
        if self.app.size.width < NARROW:
            self.query_one(DetailPane).display = False
        self._ready = True
        self.refresh_data()
        self.refresh_header()
        self.take_query(self._query)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Write actions are neither offered nor shown when nothing may be written."""
        if action in ENGINE_ACTIONS and not self.triage.writable:
            return False
        if action == "filter" and isinstance(self.focused, Input):
            return False  # a "/" typed in the filter box (or another) is text
        if action == "retry_with_password":  # offered (and in the footer) where it applies
            return self._password_applies
        # --read-only writes nothing at all, not even an export
        return not (action == "export_view" and self.triage.read_only)

    # -- called by the app -----------------------------------------------------------------

    @property
    def table(self) -> RecordTable:
        """The records table."""
        return self.query_one(RecordTable)

    @property
    def kept_rid(self) -> int | None:
        """The row a live change keeps the cursor on (:attr:`RecordTable.kept_rid`); None
        while there is no table to ask (before the screen is mounted, or once the app is
        leaving and its widgets are gone while engine events still come in)."""
        if not self._ready:
            return None
        table = next(iter(self.query(RecordTable)), None)
        return table.kept_rid if table is not None else None

    def refresh_data(self, changed: set[int] | None = None, keep: int | None = None) -> None:
        """The model changed: counts, tabs, table (cursor kept on row ``keep``), detail."""
        if not self._ready:
            return
        model = self.model
        problem = self.dash.header().problem
        # while the records load, the tabs count what the store holds (its index says)
        indexed = self.dash.store_counts()
        whole = indexed or model.tab_counts()
        bar = self.query_one(SummaryBar)
        if indexed is None:
            bar.show(whole, whole["all"], *model.totals(), problem)
        else:  # the index counts the statuses only: the other totals wait for the records
            bar.show(whole, whole["all"], None, None, problem)
        counts = model.view_counts() if model.query.active else whole  # per tab, as queried
        for tab in TABS:
            label = f"{tab} {counts[tab]:,}"
            widget = self.query_one(f"#tab-{tab}", Tab)
            if widget.label.plain != label:  # each relabel re-lays out the tabs
                widget.label = label
        self.query_one(Tabs).active = f"tab-{model.tab}"
        # how many the query leaves, kept true as live changes and reloads come in
        box = self.query_one("#filter", Input)
        n = len(model.view)
        # what the query could not apply is said where the eyes are (a tooltip was never seen)
        error = model.query.error
        left = f"{n:,} of {count(len(model), 'record')}" if model.query.active or error else ""
        box.border_title = SEARCHING if self._searching is not None else error or left
        box.border_subtitle = left if error and self._searching is None else ""
        if changed:
            self.table.changed(changed, keep)
        else:
            self.table.reload(keep)
        if changed and self.table.rid in changed:
            self._show_detail(self.table.rid)
            self._offer_password()

    def refresh_loading(self, force: bool = False) -> None:
        """Rows are still loading: redraw now and then (the UI thread is the loader's rival)."""
        now = time.monotonic()
        if force or now - self._load_shown >= LOAD_REFRESH_SECONDS:
            self._load_shown = now
            self.refresh_data()
            self.refresh_header()

    def refresh_header(self) -> None:
        """The live state changed (nothing once the app is leaving and the header is gone:
        a store that cannot be read is still said to fail at each poll until then)."""
        live = next(iter(self.query(LiveHeader)), None) if self._ready else None
        if live is None:
            return
        header = self.dash.header()
        live.show(header.folder, header.state, header.progress, header.last_event)

    def marks_changed(self) -> None:
        """Marks or retries in flight changed: repaint the rows and say how many are marked."""
        if not self._ready:
            return
        self.table.refresh()
        n = len(self.triage.marks)
        self.sub_title = f"{n:,} marked" if n else ""
        self._marked_encrypted = bool(encrypted_keys(self.model, self.triage.marks))
        self._offer_password()

    def on_model_changed(self, message: ModelChanged) -> None:
        """The app's one message for every change: redraw what it concerns (rows as they
        load now and then; changed rows, cursor kept; marks; the header always)."""
        change = message.change
        if change.loading:
            self.refresh_loading(force=change.first)
            return
        if change.rows is not None:
            self.refresh_data(set(change.rows), change.keep)
        if change.texts:
            self._ask_texts_again()
        if change.marks:
            self.marks_changed()
        self.refresh_header()

    # Nothing to redraw when back from another screen: the app tells this screen of every
    # change at once, on top or not (Desk.tell). Redrawn anyway, the table,
    # summary and header reached the screen after its own repaint as it resumed: each
    # escape drew it twice, 23 KB then 18 KB, and the next key waited behind (issue 25).

    # -- table -----------------------------------------------------------------------------

    @on(RecordTable.Highlighted)
    def _highlighted(self, event: RecordTable.Highlighted) -> None:
        # after the frame that moves the cursor: the pane's re-layout is not on the key's path
        self._detail_rid = event.rid
        self.call_after_refresh(self._show_latest_detail)

    def _show_latest_detail(self) -> None:
        try:
            if self._detail_rid != self._shown_rid:
                self._show_detail(self._detail_rid)
            self._offer_password()
            self._show_match()
        except NoMatches:
            # a cursor moved just before the app left: its widgets go, last first, before this
            # callback queued behind a frame runs (seen once in CI as a traceback at exit)
            return

    # -- the match in context --------------------------------------------------------------

    def found_pattern(self) -> TextPattern | None:
        """The pattern of the query's first ``text:`` term that keeps what it matches (None:
        no such term, so no match to show or to open the inspector at)."""
        term = self.found_term()
        return None if term is None else term.pattern

    def found_term(self) -> TextTerm | None:
        """The query's first ``text:`` term that keeps what it matches."""
        return next((t for t in self.model.query.searches if not t.invert), None)

    def _show_match(self) -> None:
        """Under the table, the match in the row under the cursor (found in a worker: the
        whole text is read)."""
        line = self.query_one("#match", Static)
        pattern = self.found_pattern()
        rid = self.table.rid
        record = None if rid is None or pattern is None else self.model.record(rid)
        line.set_class(pattern is not None, "-shown")
        if rid is None or record is None or pattern is None:
            self._match_for = None
            line.update("")
            return
        if self._match_for == (rid, self.model.query.text):
            return
        self._match_for = (rid, self.model.query.text)
        self._find_match(rid, self.model.query.text, record, pattern)

    @work(thread=True, exclusive=True, group="match", exit_on_error=False)
    def _find_match(self, rid: int, query: str, record: Record, pattern: TextPattern) -> None:
        try:
            data = self.dash.stored_text(record)
        except OSError as exc:
            self.post_message(self.MatchFound(rid, query, None, f"cannot read the text: {exc}"))
            return
        text = (data or b"").decode("utf-8", "replace")
        try:
            found = InContext.of(text, pattern)
        except PatternTooSlow as exc:
            self.post_message(self.MatchFound(rid, query, None, str(exc)))
            return
        self.post_message(
            self.MatchFound(rid, query, found, "" if found else "no match in its text")
        )

    class MatchFound(Message):
        """The match of the query in one record's text, in context (found in a worker)."""

        def __init__(self, rid: int, query: str, found: InContext | None, why: str) -> None:
            super().__init__()
            self.rid, self.query, self.found, self.why = rid, query, found, why

    @on(MatchFound)
    def _match_found(self, message: MatchFound) -> None:
        if self._match_for != (message.rid, message.query):
            return  # the cursor or the query moved on
        line = self.query_one("#match", Static)
        if message.found is None:
            line.update(Text(message.why, style="dim"))
            return
        # A line shown a moment ago may not be laid out yet (no width): it spans the screen
        # but for its padding (fitted to 1 cell, only the match was left, seen in a terminal)
        width = line.content_size.width or self.size.width - 2
        where, before, match, after = message.found.fitted(max(1, width))
        line.update(Text.assemble((where, "dim"), before, (match, "reverse bold"), after))

    def _offer_password(self) -> None:
        """``P`` applies to an encrypted record highlighted, or marked."""
        rid = self._detail_rid
        record = self.model.record(rid) if rid is not None else None
        applies = self._marked_encrypted or is_encrypted(record)
        if applies != self._password_applies:
            self._password_applies = applies
            self.refresh_bindings()

    def _show_detail(self, rid: int | None) -> None:
        self._shown_rid = rid
        record = None if rid is None else self.model.record(rid)
        pane = self.query_one(DetailPane)
        if pane.display:
            pane.show(record, self.dash.tools_missing(), self._preview(record))

    def _preview(self, record: Record | None) -> list[str]:
        """The first lines of the record's stored text (a small read)."""
        try:
            data = None if record is None else self.dash.stored_text(record, PREVIEW_BYTES)
        except OSError:
            return []
        if data is None:
            return []
        head = data.decode("utf-8", "replace")
        return [display_line(line) for line in head.replace("\f", "\n").split("\n")[:6]]

    @on(RecordTable.Opened)
    def _opened(self, event: RecordTable.Opened) -> None:
        self.dash.open_record(event.rid, find=self.found_term())

    @on(RecordTable.HeaderClicked)
    def _header_clicked(self, event: RecordTable.HeaderClicked) -> None:
        self.action_sort(event.column)

    @on(Tabs.TabActivated)
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        tab = (event.tab.id or "tab-all").removeprefix("tab-")
        if tab != self.model.tab:
            self.action_tab(tab)

    # -- view actions ----------------------------------------------------------------------

    def action_tab(self, tab: str) -> None:
        """Show one status (``all`` for every record); the path filter stays."""
        keep = self.table.rid
        self.model.set_tab(tab)
        self.refresh_data(keep=keep)

    def action_sort(self, column: str, reverse: bool | None = None) -> None:
        """Sort by ``column`` (again: reverse it)."""
        keep = self.table.rid
        self.model.set_sort(column, reverse)
        self.refresh_data(keep=keep)

    def action_cycle_sort(self) -> None:
        """Sort by the next column."""
        i = COLUMNS.index(self.model.sort_column)
        self.action_sort(COLUMNS[(i + 1) % len(COLUMNS)], False)

    def action_reverse_sort(self) -> None:
        """Flip the sort direction."""
        self.action_sort(self.model.sort_column, not self.model.sort_reverse)

    def action_toggle_detail(self) -> None:
        """Show or hide the detail pane."""
        pane = self.query_one(DetailPane)
        pane.display = not pane.display
        if pane.display:
            self._show_detail(self.table.rid)

    def action_hide_column(self) -> None:
        """Hide the column the view is sorted by (path and status always stay)."""
        column = self.model.sort_column
        if column in ("path", "status"):
            self.notify("the path and status columns always show", severity="warning")
            return
        self.table.hidden_columns.add(column)
        self.table.on_resize()
        self.table.refresh()

    def action_show_columns(self) -> None:
        """Show every column again, at its own width."""
        self.table.hidden_columns.clear()
        self.table.extra_widths.clear()
        self.table.on_resize()
        self.table.refresh()

    def action_widen(self, cells: int) -> None:
        """Widen (or narrow) the column the view is sorted by."""
        extra = self.table.extra_widths
        column = self.model.sort_column
        extra[column] = max(-4, extra.get(column, 0) + cells)
        self.table.on_resize()
        self.table.refresh()

    def action_open(self) -> None:
        """Open the highlighted record's text."""
        self.table.action_open()

    def action_filter(self) -> None:
        """Edit the path filter."""
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        # At once, not as box.focus() does (a callback queued behind the keys already read):
        # "/hostile" typed or pasted in one go sent "hostile" to the table, whose "s" sorted.
        self.set_focus(box)

    def action_unfocus_filter(self) -> None:
        """Leave the filter box (the filter stays; empty it to hide the box)."""
        box = self.query_one("#filter", Input)
        box.set_class(bool(box.value), "-shown")
        self.set_focus(self.table)  # at once (see action_clear_filter)

    def action_clear_filter(self) -> None:
        """Esc: clear the query and go back to the table."""
        box = self.query_one("#filter", Input)
        if box.value or self.model.query.text:
            # the box's own "changed" would filter again, a message later: the table, the
            # summary and the tabs redrawn in a second frame behind the escape (issue 25)
            with box.prevent(Input.Changed):
                box.value = ""
            self.set_filter("")
        box.remove_class("-shown")
        # at once, not as focus() does (a callback later): the table's focused look is then
        # drawn with the frame that hides the box, not in a second frame of the whole table
        self.set_focus(self.table)

    def take_query(self, text: str) -> None:
        """Show ``text`` in the filter box and filter by it (a records screen made anew in
        place of one that had it: the store paged from its index from now on)."""
        if not text:
            return
        box = self.query_one("#filter", Input)
        with box.prevent(Input.Changed):
            box.value = text
        box.add_class("-shown")
        self.set_filter(text)

    def set_filter(self, text: str) -> None:
        """Filter paths by ``text`` now (also for the command palette and tests); ``text:``
        terms the engine has not answered yet are asked in a worker first (a frequent word
        on a big store takes seconds, and the keys must keep working meanwhile), and so are
        the counts of a query over a store paged from its index (a walk of every row)."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        query = Query.parse(text)
        asking = self.model.unanswered(query)
        counting = self.model.uncounted(query)
        self._searching = text if asking or counting else None
        if asking or counting:
            box = self.query_one("#filter", Input)
            box.border_title, box.border_subtitle = SEARCHING, ""
            self._find_texts(text, asking, counting=counting)
            return
        self._apply_filter(text)

    def _ask_texts_again(self) -> None:
        """The records changed: the query's ``text:`` terms are asked again in the worker
        (their old answers filter meanwhile). One question at a time: a change while one is
        asked asks once more when it is answered."""
        self.model.texts_changed()
        asking = self.model.unanswered(self.model.query)
        counting = self.model.uncounted(self.model.query)
        if not (asking or counting) or not self._ready:
            return
        if self._searching is not None:
            self._ask_again = True
            return
        self._searching = self.model.query.text
        self._find_texts(self._searching, asking, counting=counting)

    @work(thread=True, exclusive=True, group="texts", exit_on_error=False)
    def _find_texts(
        self, text: str, terms: tuple[TextTerm, ...], *, counting: bool = False
    ) -> None:
        """Ask the engine which records' texts match ``terms``, and count what the query
        keeps per tab when ``counting`` (a newer query supersedes this one: its answer is
        then dropped)."""
        lookup = self.model.text_lookup
        worker = get_current_worker()
        answers: dict[TextTerm, frozenset[Key]] = {}
        trouble = ""
        for term in terms:
            if worker.is_cancelled or lookup is None:
                return
            try:
                answers[term] = lookup(term)
            except (OSError, QuarryError, sqlite3.Error) as exc:  # the store went away, say
                trouble = f"cannot search the texts: {exc}"
                answers[term] = frozenset()
        counts = None
        if counting and not worker.is_cancelled:
            try:
                counts = self.model.count_query(Query.parse(text), answers)
            except sqlite3.Error as exc:  # the index went away: counted on screen instead
                trouble = trouble or f"cannot count the records: {exc}"
        self.post_message(self.TextsFound(text, answers, trouble, counts))

    class TextsFound(Message):
        """The engine's answers to the ``text:`` terms of a query (found in a worker)."""

        def __init__(
            self,
            text: str,
            answers: dict[TextTerm, frozenset[Key]],
            trouble: str,
            counts: dict[str, int] | None = None,
        ):
            super().__init__()
            self.text = text
            """The query line they were asked for."""
            self.answers = answers
            self.trouble = trouble
            """Why they could not all be found ("" when they were)."""
            self.counts = counts
            """The records the query keeps per tab, when they were counted there."""

    @on(TextsFound)
    def _texts_found(self, message: TextsFound) -> None:
        if message.text != self._searching:
            return  # a newer query asked since (or the box was cleared)
        self.model.prime_texts(message.answers)
        if message.counts is not None:
            self.model.prime_counts(message.text, message.counts)
        if message.trouble:
            self.notify(message.trouble, severity="error")
        self._apply_filter(message.text)
        if self._ask_again:
            self._ask_again = False
            self._ask_texts_again()

    def _apply_filter(self, text: str) -> None:
        self._searching = None
        keep = self.table.rid
        query = self.model.set_query(text)
        if self.model.paged and query.active:
            # from the top: a place deep in a paged query's rows is read by walking every
            # row before it (seconds at ten million); the record under the cursor is on no
            # page of the new view's yet, so its position is not known either
            self.table.cursor = 0
        box = self.query_one("#filter", Input)
        box.set_class(bool(query.error), "-invalid")
        box.tooltip = query.error
        self.refresh_data(keep=keep)
        self._show_match()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        # a text: term waits for a pause too: each word typed on the way would be a search
        asks = bool(self.model.unanswered(Query.parse(event.value)))
        if len(self.model) <= LIVE_FILTER_ROWS and not asks:
            self.set_filter(event.value)
            return
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(0.3, lambda: self.set_filter(event.value))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.set_filter(event.value)
        if Query.parse(event.value).error:
            # The box keeps the keys: what is typed next mends the query. On the table they
            # were commands (a letter marks, sorts or retries; enter opened a record).
            self.app.bell()
            return
        self.action_unfocus_filter()

    # -- record actions --------------------------------------------------------------------

    def _current(self) -> tuple[Key, Record] | None:
        rid = self.table.rid
        record = None if rid is None else self.model.record(rid)
        if record is None:
            self.notify("no record highlighted", severity="warning")
            return None
        return record.key, record

    def _mark_and_move(self, delta: int, toggle: bool) -> None:
        table = self.table
        rid = table.rid
        if rid is None:
            return
        key = self.model.key(rid)
        if key is not None:
            if toggle:
                self.triage.toggle_mark(key)
            else:
                self.triage.marks.add(key)
        if delta > 0:
            table.action_cursor_down()
        elif delta < 0:
            table.action_cursor_up()
        if not toggle and (rid := table.rid) is not None and (key := self.model.key(rid)):
            self.triage.marks.add(key)  # a shift+arrow range covers both ends
        self.marks_changed()

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
        self.triage.marks.clear()
        self.marks_changed()

    def action_retry_one(self) -> None:
        """Read the highlighted record again."""
        current = self._current()
        if current is not None:
            self.dash.retry([current[0]], current[0][1])

    def action_retry_many(self) -> None:
        """Retry the marked records, or else every record of the current view."""
        if self.triage.marks:
            keys = sorted(self.triage.marks)
            label = f"{len(keys):,} marked"
        else:
            model = self.model
            keys = model.view_keys()
            label = f"the {model.tab} view" + (
                f" filtered by {model.query.text!r}" if model.query.text else ""
            )
        self.dash.retry(keys, label, unmark=bool(self.triage.marks))

    def action_retry_with_password(self) -> None:
        """Give a password for the marked encrypted records, or the highlighted one."""
        if self.triage.marks:
            keys = encrypted_keys(self.model, sorted(self.triage.marks))
            self.dash.unlock(keys, f"{len(keys):,} marked", unmark=bool(keys))
        elif (current := self._current()) is not None:
            self.dash.unlock(encrypted_keys(self.model, [current[0]]), current[0][1])

    def action_edit_text(self) -> None:
        """Open the stored text in $EDITOR / $PAGER (a private copy; the store stays as is)."""
        current = self._current()
        if current is None:
            return
        record = current[1]
        try:
            text = self.dash.stored_text(record)
            if text is None:
                self.notify(f"{record.path}: no text stored ({record.status})", severity="warning")
                return
            copy = actions.private_copy(text, record.path)
        except OSError as exc:
            self.notify(f"cannot copy the text: {exc}", severity="error")
            return
        command = actions.viewer_command(copy)
        self._hand_over(command, "cannot open the text", "the editor")

    def action_open_source(self) -> None:
        """Open the source file with the system's opener."""
        current = self._current()
        if current is None:
            return
        path = self.dash.source_path(current[0])
        if not path.exists():
            self.notify(f"{path} is no longer on disk", severity="warning")
            return
        command = actions.opener_command(path)
        self._hand_over(command, "cannot open files here", command[0])

    def _hand_over(self, command: list[str], cannot: str, who: str) -> None:
        """Run ``command`` with the terminal; say so if it is missing or fails."""
        status = self.dash.run_outside(command)
        if status == 127:
            self.notify(f"{cannot}: {command[0]} is not installed", severity="error")
        elif status:
            self.notify(f"{who} exited with status {status}", severity="warning")

    def action_copy_path(self) -> None:
        """Copy the source file's path (OSC 52: works over SSH in most terminals)."""
        current = self._current()
        if current is not None:
            path = str(self.dash.source_path(current[0]))
            text = actions.clipboard_text(path)
            self.app.copy_to_clipboard(text)
            self.notify(text, title="path copied" if text == path else "path copied as bytes")

    def action_export_view(self, fmt: str = "csv") -> None:
        """Ask where, then write the records of the current view (tab + filter, in order)
        there, every field, as the extension says (``fmt`` only chooses the default)."""
        model = self.model
        n, records = model.view_records()
        label = model.tab + ("-filtered" if model.query.text else "")
        cwd = Path.cwd()
        default = actions.export_path(cwd, fmt, label)

        def chosen(path: Path | None) -> None:
            if path is not None:
                self._export_worker(records, path)

        from tui.screens.export import ExportScreen  # imported when asked for

        self.app.push_screen(ExportScreen(default, n, cwd), chosen)

    @work(thread=True, group="export", exit_on_error=False)
    def _export_worker(self, records: Iterable[Record | None], path: Path) -> None:
        try:
            n = actions.write_export(path, records)
        except (OSError, ValueError, TypeError) as exc:  # a full disk, a name it cannot write
            self.app.call_from_thread(
                self.notify, f"{type(exc).__name__}: {exc}", title="export failed", severity="error"
            )
            return
        self.app.call_from_thread(
            self.notify, shown(str(path)), title=f"exported {count(n, 'record')}"
        )

    def commands(self) -> Iterator[SystemCommand]:
        """This screen's actions for the command palette."""
        for tab in TABS:
            yield SystemCommand(
                f"Show {tab}", f"Status tab: {tab}", lambda t=tab: self.action_tab(t)
            )
        for column in COLUMNS:
            yield SystemCommand(
                f"Sort by {column}", "Again to reverse", lambda c=column: self.action_sort(c)
            )
        yield SystemCommand("Filter paths", "Text, regex, ! to invert", self.action_filter)
        yield SystemCommand("Clear filter", "Show every path", lambda: self.set_filter(""))
        yield SystemCommand("Open text", "Inspect the highlighted record", self.action_open)
        yield SystemCommand(
            "Toggle detail", "Show or hide the detail pane", self.action_toggle_detail
        )
        yield SystemCommand("Clear marks", "Unmark every record", self.clear_marks)
        yield SystemCommand("Open text in editor", "e: $EDITOR / $PAGER", self.action_edit_text)
        yield SystemCommand("Open source file", "o: the system's opener", self.action_open_source)
        yield SystemCommand("Copy path", "c: to the clipboard (OSC 52)", self.action_copy_path)
        if self.triage.writable:
            yield SystemCommand("Retry highlighted record", "r", self.action_retry_one)
            yield SystemCommand("Retry marked records or the view", "R", self.action_retry_many)
        if not self.triage.read_only:  # as E: another's store (ui --store) exports too
            yield SystemCommand("Export view as CSV", "E: asks where", self.action_export_view)
            yield SystemCommand(
                "Export view as JSONL",
                "Every field, the store's format",
                lambda: self.action_export_view("jsonl"),
            )
