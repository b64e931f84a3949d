"""The activity screen (``@``): the engine's events with their times, following live.

Lines come from the app's :class:`~tui.eventlog.ActivityLog` ring buffer; ``/`` filters them
(text, regular expression, ``!`` to invert, as the records filter); ``f`` stops or resumes
following the newest line. Following, the log is anchored to its end (Textual's
``Widget.anchor``): it stays there through new lines and resizes alike (a resize of the terminal
left it short of its end, and no line after it was shown while the title said "following"),
scrolling up pauses it and scrolling back to the end resumes it. A line wider than the screen
wraps under its text, the time and kind standing alone to its left (at 80 columns a tools or
sweep line lost its end past the edge).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Log, Static

from engine.query import Query
from tui.eventlog import LogLine
from tui.messages import ModelChanged
from tui.model import RecordModel
from tui.screens.ports import Dashboard
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState
from tui.widgets.footer import FittingFooter
from tui.widgets.typed_input import TypedInput
from tui.words import count, escape

INDENT = " " * len(LogLine(0.0, "", "").render())
"""What a wrapped line's later rows start with: the width of its time and kind."""


def wrapped(line: str, width: int, console: Console) -> list[str]:
    """``line`` as rows of at most ``width`` cells, each after the first indented by
    :data:`INDENT` (one row when it fits, or when the screen is too narrow to indent)."""
    room = width - len(INDENT)
    if cell_len(line) <= width or room < 20:
        return [line]
    head, rest = line[: len(INDENT)], Text(line[len(INDENT) :])
    rows = [row.plain.rstrip() for row in rest.wrap(console, room, overflow="fold")]
    return [head + rows[0], *(INDENT + row for row in rows[1:])]


class ActivityScreen(TriageScreen):
    """Every logged engine event, newest at the bottom."""

    CSS_PATH = "activity.tcss"
    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("f", "follow", "Follow"),
        Binding("escape,q", "back", "Back"),
    ]

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self.query_text = Query.parse("")
        self.following = True
        self.shown = 0
        self._compactions = 0
        """The log's compactions when it was last written out whole."""
        self._written = 0
        """The log's :attr:`~tui.eventlog.ActivityLog.total` when its lines were last written."""
        self._width = 0
        """The width the log's lines were wrapped at."""
        self.paused = False
        """Following, but scrolled up from the end: new lines do not move the view."""

    def compose(self) -> ComposeResult:
        """Title, the log, the (hidden) filter box, footer."""
        yield Static("", id="activity-title")
        # unbounded here: the activity log bounds itself, and never lets an error go (a Log
        # of LIMIT lines would); when it lets routine lines go, the screen redraws
        yield Log(highlight=False, id="activity-log")
        box = TypedInput(placeholder="filter events: text, regex, !to invert", id="activity-filter")
        box.cursor_blink = False
        yield box
        yield FittingFooter()

    def on_mount(self) -> None:
        """Show what the log holds."""
        self.ready = True
        log = self.log_widget
        log.anchor(self.following)
        self.watch(log, "scroll_y", self._scrolled, init=False)
        self._rewrite()
        log.focus()

    def start_over(self) -> None:
        """No filter, following the newest line, the keys on the log."""
        box = self.query_one("#activity-filter", Input)
        with box.prevent(Input.Changed):
            box.value = ""
        box.remove_class("-shown")
        self.query_text = Query.parse("")
        self.following = True
        self.log_widget.anchor()
        self._rewrite()
        self.log_widget.focus()

    @property
    def log_widget(self) -> Log:
        """The log."""
        return self.query_one("#activity-log", Log)

    def _rewrite(self) -> None:
        self._compactions = self.triage.activity.compactions
        self._written = self.triage.activity.total
        log = self.log_widget
        log.clear()
        self.shown = 0
        self._write(self.triage.activity.lines)

    def _write(self, lines: Iterable[LogLine]) -> None:
        texts = [t for line in lines if self.query_text.matches(t := line.render())]
        if texts:
            width = self._width = self._room()
            console = self.app.console
            rows = [row for t in texts for row in wrapped(t, width, console)]
            self.log_widget.write_lines(rows, scroll_end=self.following and not self.paused)
            self.shown += len(texts)
        self._title()

    def _room(self) -> int:
        """The cells a row of the log has (its vertical scroll bar's kept aside)."""
        log = self.log_widget
        return max(0, log.size.width - log.styles.scrollbar_size_vertical)

    def on_resize(self, event: events.Resize) -> None:
        """Wrap the lines again at the new width."""
        del event
        if self.ready and self._room() != self._width:
            self._rewrite()

    def _title(self) -> None:
        activity = self.triage.activity
        parts = [f"[b]Activity  [/b]{count(len(activity.lines), 'event')}"]
        if activity.dropped:
            parts.append(f"{count(activity.dropped, 'older routine line')} let go")
        if self.query_text.text:
            parts.append(f"{self.shown:,} match {escape(self.query_text.text)!s}")
        if not self.following:
            parts.append("[$warning]not following (f)[/]")
        else:
            parts.append(
                "[$warning]paused: scrolled up (End follows)[/]" if self.paused else "following"
            )
        self.query_one("#activity-title", Static).update(" · ".join(parts))

    def _scrolled(self) -> None:
        """The log moved: by its anchor, or by the user away from its end or back."""
        log = self.log_widget
        paused = self.following and log.scroll_y < log.max_scroll_y
        if paused != self.paused:
            self.paused = paused
            self._title()

    def on_model_changed(self, message: ModelChanged) -> None:
        """New events arrived: show the lines added since the last write at once (the log
        follows live); all of it again when the log let old routine lines go meanwhile.

        The lines are taken from the log, not the message: messages queue behind each other,
        and the log may hold a later message's lines (written by a redraw) already."""
        del message
        if not self.ready:
            return
        activity = self.triage.activity
        new = activity.total - self._written
        if activity.compactions != self._compactions or new > len(activity.lines):
            self._rewrite()
        elif new > 0:
            self._written = activity.total
            self._write(activity.lines[-new:])

    def action_filter(self) -> None:
        """Edit the filter."""
        box = self.query_one("#activity-filter", Input)
        box.add_class("-shown")
        box.focus()

    def set_filter(self, text: str) -> None:
        """Show only the lines matching ``text``."""
        self.query_text = Query.parse(text)
        self._rewrite()

    @on(Input.Changed, "#activity-filter")
    def _changed(self, event: Input.Changed) -> None:
        self.set_filter(event.value)

    @on(Input.Submitted, "#activity-filter")
    def _submitted(self) -> None:
        self.log_widget.focus()

    def action_follow(self) -> None:
        """Stop or resume following the newest event."""
        self.following = not self.following
        self.paused = False
        self.log_widget.anchor(self.following)  # (anchoring scrolls to the end)
        self._title()

    def action_back(self) -> None:
        """Leave the filter box, or go back to the records."""
        box = self.query_one("#activity-filter", Input)
        if box.has_focus:
            box.set_class(bool(box.value), "-shown")
            self.log_widget.focus()
        else:
            super().action_back()
