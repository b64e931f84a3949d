"""A Line-API view of two texts' differences: unified, or side by side; changes highlighted.

Only the visible rows are drawn. Every line goes through :func:`tui.textdoc.display_line`
(nothing in a text reaches the terminal as a control sequence) and is cut by cells at the
view's width (or each half's, side by side). ``n``/``N`` (bound by the screen) move
:attr:`DiffView.current` from one change to the next and scroll it into view.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.difftext import DiffLine, LineKind, PairLine, change_starts
from tui.textdoc import LINE_CAP, display_line

_MARK = {
    LineKind.SAME: " ",
    LineKind.REMOVED: "-",
    LineKind.ADDED: "+",
    LineKind.CHANGED: "~",
    LineKind.HUNK: "",
    LineKind.NOTE: "",
}


class DiffView(ScrollView, can_focus=True):
    """Rows of a unified diff (:class:`DiffLine`) or of two columns (:class:`PairLine`)."""

    COMPONENT_CLASSES = {
        "diff-view--removed",
        "diff-view--added",
        "diff-view--hunk",
        "diff-view--note",
        "diff-view--current",
        "diff-view--rule",
    }
    DEFAULT_CSS = """
    DiffView { background: $surface; }
    DiffView > .diff-view--removed { background: $error 30%; }
    DiffView > .diff-view--added { background: $success 30%; }
    DiffView > .diff-view--hunk { color: $accent; text-style: bold; }
    DiffView > .diff-view--note { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--current { text-style: bold reverse; }
    DiffView > .diff-view--rule { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unified_rows: list[DiffLine] = []
        self.pair_rows: list[PairLine] = []
        self.side_by_side = False
        self.starts: list[int] = []
        """Rows where a change begins."""
        self.current = -1
        """Index in :attr:`starts` of the change last gone to (-1: none yet)."""

    # -- content --------------------------------------------------------------------------

    def show(self, unified: list[DiffLine], pairs: list[PairLine], side_by_side: bool) -> None:
        """Show these rows (both views kept: ``s`` switches between them) from the top."""
        self.unified_rows, self.pair_rows = unified, pairs
        self.set_side_by_side(side_by_side)

    def set_side_by_side(self, on: bool) -> None:
        """Two columns or one; the first change again."""
        self.side_by_side = on
        kinds = [r.kind for r in (self.pair_rows if on else self.unified_rows)]
        self.starts = change_starts(kinds)
        self.current = -1
        self.virtual_size = Size(self.size.width, len(kinds))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    @property
    def row_count(self) -> int:
        """Rows of the view as shown."""
        return len(self.pair_rows if self.side_by_side else self.unified_rows)

    def go_change(self, step: int) -> int | None:
        """Move to the next (``step`` 1) or previous (-1) change, wrapping round; its row."""
        if not self.starts:
            return None
        self.current = (self.current + step) % len(self.starts)
        row = self.starts[self.current]
        self.scroll_to(0, max(0, row - 2), animate=False, immediate=True)
        self.refresh()
        return row

    # -- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = y + int(self.scroll_offset.y)
        width = self.size.width
        base = self.rich_style
        if row >= self.row_count:
            return Strip.blank(width, base)
        current = 0 <= self.current < len(self.starts) and self.starts[self.current] == row
        if self.side_by_side:
            strip = self._pair_strip(self.pair_rows[row], width, base)
        else:
            strip = self._unified_strip(self.unified_rows[row], width, base)
        if current:
            strip = strip.apply_style(self.get_component_rich_style("diff-view--current"))
        return strip

    def _style(self, kind: LineKind, base: Style) -> Style:
        name = {
            LineKind.REMOVED: "diff-view--removed",
            LineKind.ADDED: "diff-view--added",
            LineKind.CHANGED: "diff-view--removed",
            LineKind.HUNK: "diff-view--hunk",
            LineKind.NOTE: "diff-view--note",
        }.get(kind)
        return base + self.get_component_rich_style(name) if name else base

    def _unified_strip(self, line: DiffLine, width: int, base: Style) -> Strip:
        text = _MARK[line.kind] + display_line(line.text[:LINE_CAP])
        return Strip([Segment(text, self._style(line.kind, base))]).crop_extend(0, width, base)

    def _pair_strip(self, pair: PairLine, width: int, base: Style) -> Strip:
        half = max(1, (width - 3) // 2)
        left_kind = LineKind.REMOVED if pair.kind is LineKind.CHANGED else pair.kind
        right_kind = LineKind.ADDED if pair.kind is LineKind.CHANGED else pair.kind
        left = self._cell(pair.before, left_kind, half, base)
        right = self._cell(pair.after, right_kind, width - 3 - half, base)
        rule = Segment(" │ ", base + self.get_component_rich_style("diff-view--rule"))
        return Strip([*left, rule, *right]).crop_extend(0, width, base)

    def _cell(self, text: str | None, kind: LineKind, width: int, base: Style) -> list[Segment]:
        style = self._style(kind, base) if text is not None else base
        shown = display_line((text or "")[:LINE_CAP])
        return list(Strip([Segment(shown, style)]).crop_extend(0, width, style))
