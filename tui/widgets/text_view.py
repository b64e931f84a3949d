"""A Line-API view of a :class:`~tui.textdoc.TextDoc`: line numbers, wrap, match highlights."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.textdoc import TextDoc


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
        self._rows: list[tuple[int, int]] = []
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
    def gutter(self) -> int:
        """Width of the line-number column."""
        return len(str(max(1, len(self.doc.lines)))) + 2

    def watch_wrap(self) -> None:
        """Re-lay the rows, keeping the top line."""
        top = self.top_line
        self._layout()
        self.go_to_line(top)

    def on_resize(self) -> None:
        """Wrapped rows depend on the width."""
        self._layout()

    def _layout(self) -> None:
        width = max(10, self.size.width - self.gutter - 1)
        if self.wrap:
            self._rows = [
                (i, off)
                for i, line in enumerate(self.doc.lines)
                for off in range(0, max(1, len(line)), width)
            ]
        else:
            self._rows = []
        widest = max((len(line) for line in self.doc.lines), default=0)
        height = len(self._rows) if self.wrap else len(self.doc.lines)
        self.virtual_size = Size(width if self.wrap else widest + self.gutter + 1, height)
        self.refresh()

    @property
    def top_line(self) -> int:
        """The text line at the top of the view."""
        y = int(self.scroll_y)
        if self.wrap:
            return self._rows[y][0] if y < len(self._rows) else 0
        return y

    def go_to_line(self, line: int, center: bool = False) -> None:
        """Scroll so that ``line`` is at the top (or the middle)."""
        y = line
        if self.wrap:
            y = next((r for r, (i, _) in enumerate(self._rows) if i >= line), 0)
        if center:
            y = max(0, y - self.size.height // 2)
        self.scroll_to(y=y, animate=False, immediate=True)

    def render_line(self, y: int) -> Strip:
        """One visual row: number (on a line's first row), text, highlights."""
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        if self.wrap:
            if row >= len(self._rows):
                return Strip.blank(width, self.rich_style)
            line, off = self._rows[row]
            span = max(10, width - self.gutter - 1)
        else:
            if row >= len(self.doc.lines):
                return Strip.blank(width, self.rich_style)
            line, off, span = row, 0, len(self.doc.lines[row])
        text = self.doc.lines[line][off : off + span]
        number = str(line + 1).rjust(self.gutter - 1) + " " if off == 0 else " " * self.gutter
        gutter = Segment(number, self.get_component_rich_style("text-view--gutter"))
        body = Strip(self._highlight(line, off, text))
        if not self.wrap:
            body = body.crop(scroll_x, scroll_x + width)
        return Strip([gutter, Segment(" ", self.rich_style), *body]).crop(0, width)

    def _highlight(self, line: int, off: int, text: str) -> list[Segment]:
        base = self.rich_style
        if line in self._page_lines and text.startswith("# "):
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
