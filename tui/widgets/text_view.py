"""A Line-API view of a :class:`~tui.textdoc.TextDoc`: line numbers, wrap, match highlights.

Only the visible rows are drawn. Without wrap a row is a text line, cropped to the view by
cells (so a CJK line scrolls sideways as the terminal draws it); with wrap a row is a piece
of a line at most the view's width (:class:`~tui.textdoc.Wrapped`).
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.textdoc import TextDoc, Wrapped


class TextView(ScrollView, can_focus=True):
    """Shows only the visible lines; in wrap mode a visual row is (line, offset)."""

    COMPONENT_CLASSES = {
        "text-view--gutter",
        "text-view--match",
        "text-view--current",
        "text-view--page",
    }
    DEFAULT_CSS = """
    TextView { background: $surface; }
    TextView > .text-view--gutter { color: $text-muted; background: $panel; }
    TextView > .text-view--match { background: $warning 50%; }
    TextView > .text-view--current { background: $accent; color: $text; text-style: bold; }
    TextView > .text-view--page { color: $accent; text-style: bold; }
    """

    wrap: reactive[bool] = reactive(False, init=False)
    """Whether long lines wrap at the view's width."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.doc = TextDoc([])
        self.matches: list[tuple[int, int, int]] = []
        self.current = -1
        self._by_line: dict[int, list[tuple[int, int, int]]] = {}
        self._rows = Wrapped()
        self._laid_wrapped = False
        """Whether the rows as laid out now are wrapped (``wrap`` changes before the layout)."""
        self._page_lines: set[int] = set()

    def set_doc(self, doc: TextDoc) -> None:
        """Show ``doc`` from the top."""
        self.doc = doc
        self._page_lines = {first for first, _ in doc.pages}
        self.set_matches([])
        self._layout()
        self.scroll_to(0, 0, animate=False, immediate=True)

    def set_matches(self, matches: list[tuple[int, int, int]], current: int = -1) -> None:
        """Highlight ``matches``; ``current`` is the one to stand out."""
        self.matches, self.current = matches, current
        self._by_line = {}
        for i, m in enumerate(matches):
            self._by_line.setdefault(m[0], []).append((m[1], m[2], i))
        self.refresh()

    @property
    def number_width(self) -> int:
        """Width of the line-number column, its space included.

        (Not ``gutter``: that is Textual's own spacing property of every widget, and
        shadowing it with an int broke scrolling.)
        """
        return len(str(max(1, len(self.doc.lines)))) + 2

    @property
    def text_width(self) -> int:
        """Cells a wrapped row may take."""
        return max(10, self.size.width - self.number_width - 1)

    def watch_wrap(self) -> None:
        """Re-lay the rows, keeping the top line."""
        top = self.top_line
        self._layout()
        self.go_to_line(top)

    def on_resize(self) -> None:
        """Wrapped rows depend on the width."""
        top = self.top_line
        self._layout()
        if self.wrap:
            self.go_to_line(top)

    def _layout(self) -> None:
        self._laid_wrapped = self.wrap
        if self.wrap:
            self._rows = self.doc.wrap(self.text_width)
            self.virtual_size = Size(self.text_width, len(self._rows))
        else:
            self._rows = Wrapped()
            width = self.doc.widest + self.number_width + 1
            self.virtual_size = Size(width, len(self.doc.lines))
        self.refresh()

    @property
    def rows(self) -> int:
        """Visual rows of the document as laid out now."""
        return len(self._rows) if self.wrap else len(self.doc.lines)

    @property
    def top_line(self) -> int:
        """The text line at the top of the view (as laid out: read by :meth:`watch_wrap` before
        the rows are laid out again, where ``wrap`` is already the new value)."""
        y = int(self.scroll_y)
        if self._laid_wrapped:
            return self._rows.lines[y] if y < len(self._rows) else 0
        return min(y, max(0, len(self.doc.lines) - 1))

    def go_to_line(self, line: int, center: bool = False) -> None:
        """Scroll so that ``line`` is at the top (or the middle)."""
        line = max(0, min(line, len(self.doc.lines) - 1))
        y = self._rows.row_of(line) if self.wrap else line
        if center:
            y = max(0, y - self.size.height // 2)
        self.scroll_to(y=y, animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        """One visual row: number (on a line's first row), text, highlights."""
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        if row >= self.rows:
            return Strip.blank(width, self.rich_style)
        if self.wrap:
            line, off, end = self._rows.span(row, self.doc)
        else:
            line, off, end = row, 0, len(self.doc.lines[row])
        text = self.doc.lines[line][off:end]
        digits = self.number_width - 1
        number = str(line + 1).rjust(digits) + " " if off == 0 else " " * self.number_width
        gutter = Segment(number, self.get_component_rich_style("text-view--gutter"))
        body = Strip(self._highlight(line, off, text))
        if not self.wrap:
            body = body.crop(scroll_x, scroll_x + width)
        return Strip([gutter, Segment(" ", self.rich_style), *body]).crop(0, width)

    def _highlight(self, line: int, off: int, text: str) -> list[Segment]:
        base = self.rich_style
        if line in self._page_lines and off == 0 and text.startswith("# "):
            base = base + self.get_component_rich_style("text-view--page")
        spans = self._by_line.get(line)
        if not spans:
            return [Segment(text, base)]
        match = base + self.get_component_rich_style("text-view--match")
        current = base + self.get_component_rich_style("text-view--current")
        segs: list[Segment] = []
        pos = 0
        for start, end, idx in spans:
            start, end = max(start - off, 0), min(end - off, len(text))
            if end <= 0 or start >= len(text) or start < pos:
                continue
            segs.append(Segment(text[pos:start], base))
            style: Style = current if idx == self.current else match
            segs.append(Segment(text[start:end], style))
            pos = end
        segs.append(Segment(text[pos:], base))
        return segs
