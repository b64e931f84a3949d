"""The text inspector: a record's stored text with pages, search and wrap."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.names import shown
from engine.query import TextTerm
from engine.records import Record
from engine.textsearch import PatternTooSlow, matches
from tui.screens.full import FullScreen
from tui.textdoc import LINE_CAP, MAX_MATCHES, TextDoc, doc_spans
from tui.widgets.footer import FittingFooter
from tui.widgets.text_view import TextView
from tui.widgets.typed_input import TypedInput
from tui.words import count


class InspectorScreen(FullScreen):
    """Read one stored text; ``escape`` (or ``q``: never a quit from here) goes back."""

    CSS_PATH = "inspector.tcss"
    BINDINGS = [
        Binding("escape,q", "back", "Back"),
        Binding("left_square_bracket", "page(-1)", "Prev page"),
        Binding("right_square_bracket", "page(1)", "Next page"),
        Binding("l", "toggle_pages", "Page list", priority=True),
        Binding("slash", "search", "Search"),
        Binding("n", "match(1)", "Next match"),
        Binding("N", "match(-1)", "Prev match"),
        Binding("w", "toggle_wrap", "Wrap"),
    ]

    class TextLoaded(Message):
        """The text was read and split (off the UI thread)."""

        def __init__(
            self,
            doc: TextDoc | None,
            error: str = "",
            found: list[tuple[int, int, int]] | None = None,
            note: str = "",
        ) -> None:
            super().__init__()
            self.note = note
            """Why the query line's matches are not marked ("" when they are)."""
            self.found = found or []
            """Where the query line's ``text:`` term matches, in the doc's lines."""
            self.doc = doc
            """The prepared text, or None when it could not be read."""
            self.error = error
            """Why it could not be read."""

    def __init__(
        self, record: Record, read: Callable[[], bytes], *, find: TextTerm | None = None
    ) -> None:
        super().__init__()
        self.find = find
        """The query line's ``text:`` term: the text opens at its first match."""
        self.record = record
        self.read = read
        """Reads the stored text (the store's, never a path opened here)."""
        self.query_text = ""
        self.page = 0
        """Index of the page, slide or sheet being read."""

    def compose(self) -> ComposeResult:
        """Title, page list + text, search box, status line, footer."""
        yield Static("", id="title", markup=False)
        with Horizontal(id="main"):
            yield OptionList(id="pages")
            yield TextView(id="text")
        box = TypedInput(placeholder="search the text", id="search")
        box.cursor_blink = False
        yield box
        yield Static("loading…", id="status", markup=False)
        yield FittingFooter()

    def on_mount(self) -> None:
        """Read the text in a thread."""
        self.query_one("#title", Static).update(
            f"{shown(self.record.path)}  ({shown(self.record.root)})"
        )
        view = self.query_one(TextView)
        view.focus()
        self.watch(view, "scroll_y", self._scrolled, init=False)
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _read(self) -> None:
        try:
            text = self.read().decode("utf-8", errors="replace")
        except OSError as exc:
            why = f"cannot read the stored text of {shown(self.record.path)}: {exc}"
            self.post_message(self.TextLoaded(None, why))
            return
        found: list[tuple[int, int, int]] = []
        slow = ""
        if self.find is not None and self.find.pattern is not None:
            try:
                hits = list(matches(text, self.find.pattern, limit=MAX_MATCHES))
            except PatternTooSlow as exc:  # the text all the same, its matches not marked
                hits, slow = [], str(exc)
            found = doc_spans(text, ((m.start, m.end) for m in hits))
        self.post_message(self.TextLoaded(TextDoc.parse(text), found=found, note=slow))

    @on(TextLoaded)
    def _loaded(self, message: TextLoaded) -> None:
        view = self.query_one(TextView)
        if message.doc is None:
            self.query_one("#status", Static).update(message.error)
            return
        view.set_doc(message.doc)
        if message.note:
            self.notify(message.note, severity="warning")
        pages = self.query_one("#pages", OptionList)
        pages.set_options(Option(label, id=str(first)) for first, label in message.doc.pages)
        pages.display = bool(message.doc.pages)
        if message.found and self.find is not None:  # n / N go through them, as after "/"
            self.query_text = self.find.value
            view.set_matches(message.found, 0)
            self.call_after_refresh(self._show_match, 0)
        self.update_status()

    def _scrolled(self, _y: float) -> None:
        if self.view.doc.pages:
            self.page = self.view.doc.page_of(self.view.top_line)
        self.update_status()

    @property
    def view(self) -> TextView:
        """The text."""
        return self.query_one(TextView)

    def update_status(self) -> None:
        """Page, matches, wrap, capped lines."""
        view = self.view
        doc = view.doc
        parts = [count(len(doc.lines), "line")]
        if doc.pages:
            parts.append(f"{doc.pages[self.page][1]} ({self.page + 1}/{len(doc.pages)})")
        if self.query_text:
            n = len(view.matches)
            at = f" ({view.current + 1}/{n})" if view.current >= 0 else ""
            parts.append(f"“{self.query_text}”: {count(n, 'match', 'matches')}{at}")
        parts.append("wrap on" if view.wrap else "wrap off")
        if doc.capped:
            # which cut: with wrap off, many lines end at the screen's edge uncut
            parts.append(f"{count(doc.capped, 'line')} cut at {LINE_CAP:,} characters")
        self.query_one("#status", Static).update(" · ".join(parts))

    # -- actions ---------------------------------------------------------------------------

    def action_back(self) -> None:
        """Leave the search box, or go back to the records."""
        box = self.query_one("#search", Input)
        if box.has_focus:
            self.view.focus()
            box.set_class(bool(box.value), "-shown")
            return
        self.dismiss()

    def action_page(self, delta: int) -> None:
        """Go to the previous or next page, slide or sheet."""
        doc = self.view.doc
        if not doc.pages:
            return
        target = max(0, min(len(doc.pages) - 1, self.page + delta))
        self.go_to_page(target)

    def go_to_page(self, index: int) -> None:
        """Show page ``index`` from its first line."""
        self.view.go_to_line(self.view.doc.pages[index][0])
        self.page = index
        self.query_one("#pages", OptionList).highlighted = index
        self.update_status()

    @on(OptionList.OptionSelected, "#pages")
    def _page_chosen(self, event: OptionList.OptionSelected) -> None:
        self.go_to_page(event.option_index)
        self.view.focus()

    def action_toggle_pages(self) -> None:
        """Go to the page list; from the list, hide it."""
        pages = self.query_one("#pages", OptionList)
        if pages.has_focus:
            pages.display = False
            self.view.focus()
        elif self.view.doc.pages:
            pages.display = True
            pages.focus()

    def action_search(self) -> None:
        """Type a search."""
        box = self.query_one("#search", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Submitted, "#search")
    def _searched(self, event: Input.Submitted) -> None:
        self.search(event.value)
        self.view.focus()

    def search(self, text: str) -> None:
        """Highlight every match of ``text`` and go to the first one."""
        self.query_text = text
        matches = self.view.doc.search(text)
        self.view.set_matches(matches, 0 if matches else -1)
        if matches:
            self.call_after_refresh(self._show_match, 0)
        self.update_status()

    def action_match(self, delta: int) -> None:
        """Go to the next (or previous) match."""
        view = self.view
        if not view.matches:
            return
        current = (view.current + delta) % len(view.matches)
        view.set_matches(view.matches, current)
        self._show_match(current)

    def _show_match(self, index: int) -> None:
        try:
            line = self.view.matches[index][0]
            self.view.go_to_line(line, center=True)
            if self.view.doc.pages:
                self.page = self.view.doc.page_of(line)
            self.update_status()
        except NoMatches:
            # queued behind a frame: by then a leaving app may have removed this screen's
            # widgets, last composed first (as the records screen's detail, seen in CI)
            return

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or not."""
        self.view.wrap = not self.view.wrap
        self.update_status()
