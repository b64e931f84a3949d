"""The records table: a Line-API ScrollView that renders only the rows on screen.

Textual's DataTable builds every row up front (minutes and a gigabyte at a million rows); this
table reads rows straight from the :class:`~tui.model.RecordModel`'s view as lines are drawn,
so its cost depends on the terminal's height, never on the store's size.
"""

from __future__ import annotations

import time

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from engine.names import shown
from tui.model import COLUMNS, RecordModel, Row

FLASH_SECONDS = 1.5
"""How long a row changed by a live event stays highlighted."""

WIDTHS: dict[str, int] = {
    "status": 11,
    "reason": 11,
    "mime": 20,
    "extractor": 12,
    "chars": 9,
    "pages": 5,
    "size": 6,
    "ms": 6,
    "quality": 7,
}
"""Fixed column widths; the path takes what is left."""
RIGHT = {"chars", "pages", "size", "ms"}
MIN_PATH = 20
PATH_SHARE = 3
"""The path keeps at least 1/PATH_SHARE of the table before a droppable column is shown (at
160 columns, beside the detail pane, it had 26 cells while MIME and extractor took 34)."""
DROP_ORDER: tuple[str, ...] = ("ms", "pages", "extractor", "mime", "size", "chars", "reason")
"""Columns left out, in this order, when the table is too narrow for them and a readable
path (status and path always stay)."""


def layout_columns(
    width: int, hidden: frozenset[str] | set[str] = frozenset(), extra: dict[str, int] | None = None
) -> list[tuple[str, int]]:
    """(column, width) of the columns shown in ``width`` cells: the path takes what is left,
    at least :data:`MIN_PATH` and a :data:`PATH_SHARE` of the width; ``hidden`` columns are
    left out, ``extra`` widens some."""
    extra = extra or {}
    least = max(MIN_PATH, width // PATH_SHARE) + extra.get("path", 0)
    shown_cols = [c for c in COLUMNS if c not in hidden or c in ("path", "status")]

    def fixed(cols: list[str]) -> int:
        return sum(WIDTHS[c] + extra.get(c, 0) + 1 for c in cols if c != "path") + 1

    for column in DROP_ORDER:
        if width - fixed(shown_cols) >= least:
            break
        if column in shown_cols:
            shown_cols.remove(column)
    path = max(MIN_PATH, width - fixed(shown_cols))
    return [(c, path if c == "path" else WIDTHS[c] + extra.get(c, 0)) for c in shown_cols]


def fit_path(path: str, width: int) -> str:
    """``path`` in ``width`` cells: the file name whole when it fits, and as much of the
    folder's start as fits before it (``projects/2024/cust…/invoice.pdf``). Cells, not
    characters: a wide character (CJK, most emoji) takes two columns of the terminal."""
    if cell_len(path) <= width:
        return path
    folder, _, name = path.rpartition("/")
    named = cell_len(name)
    if not folder or named + 2 > width:  # the name alone is too long: keep its end
        return "…" + end_cells(path, width - 1)
    head = width - named - 2
    return (start_cells(folder, head) + "…/" + name) if head > 0 else "…/" + name


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, ending in … when cut."""
    return text if cell_len(text) <= width else start_cells(text, width - 1) + "…"


def fit_cell(text: str, width: int, right: bool = False) -> str:
    """``text`` in exactly ``width`` cells: cut when longer, padded (on the left when
    ``right``) when shorter."""
    text = cut(text, width)
    gap = " " * (width - cell_len(text))
    return gap + text if right else text + gap


def start_cells(text: str, cells: int) -> str:
    """As much of ``text``'s start as fits in ``cells`` (a wide character whole or not at
    all)."""
    used = 0
    for end, char in enumerate(text):
        used += get_character_cell_size(char)
        if used > cells:
            return text[:end]
    return text


def end_cells(text: str, cells: int) -> str:
    """As much of ``text``'s end as fits in ``cells`` (a wide character whole or not at
    all)."""
    used = 0
    start = len(text)
    while start > 0:
        size = get_character_cell_size(text[start - 1])
        if used + size > cells:
            break
        used += size
        start -= 1
    return text[start:]


def human_size(n: int) -> str:
    """Bytes in at most five characters: ``999``, ``12K``, ``3.4M``."""
    value = float(n)
    for unit in ("", "K", "M", "G", "T"):
        if value < 1000 or unit == "T":
            if unit == "":
                return str(int(value))
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
        value /= 1024
    return str(n)


def human_count(n: int, width: int) -> str:
    """``n`` with thousands separators when it fits ``width`` cells, else in thousands,
    millions or billions (``16.8M``): a text cut at the 16 MiB cap is ten characters long
    with its commas and showed as ``16,777,2…`` in a column of nine."""
    exact = f"{n:,}"
    if len(exact) <= width:
        return exact
    value = float(n)
    for unit in ("K", "M", "G", "T", "P"):
        value /= 1000
        if round(value) >= 1000:  # (999,950 is 1.0M, never 1000K)
            continue
        short = f"{value:.1f}{unit}" if round(value, 1) < 100 else f"{value:.0f}{unit}"
        if len(short) <= width:
            return short
    return exact


def cell_text(column: str, row: Row) -> str:
    """What one cell shows."""
    idx = COLUMNS.index(column) + 1  # rows start with the root
    value = row[idx]
    if value is None:
        return ""
    if column == "size":
        return human_size(value)
    if column in RIGHT and isinstance(value, int):
        return human_count(value, WIDTHS[column])
    return shown(str(value))  # a name (or a foreign store's text) never reaches the terminal raw


class RecordTable(ScrollView, can_focus=True):
    """A sticky header plus the view's rows, a cursor, status colours and changed-row flashes."""

    COMPONENT_CLASSES = {
        "record-table--header",
        "record-table--cursor",
        "record-table--flash",
        "record-table--ok",
        "record-table--empty",
        "record-table--unsupported",
        "record-table--error",
        "record-table--skipped",
    }
    DEFAULT_CSS = """
    RecordTable { background: $surface; scrollbar-gutter: stable; overflow-x: hidden; }
    RecordTable > .record-table--header { background: $panel; text-style: bold; }
    RecordTable:focus > .record-table--header { background: $accent 40%; }
    RecordTable > .record-table--cursor { background: $block-cursor-blurred-background; }
    RecordTable:focus > .record-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    RecordTable > .record-table--flash { background: $warning 35%; }
    RecordTable > .record-table--ok { color: $text-success; }
    RecordTable > .record-table--empty { color: $text-warning; }
    RecordTable > .record-table--unsupported { color: $text-primary; }
    RecordTable > .record-table--error { color: $text-error; text-style: bold; }
    RecordTable > .record-table--skipped { color: $text-muted; }
    """
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First row", show=False),
        Binding("end,G", "last", "Last row", show=False),
        Binding("enter", "open", "Open"),
    ]

    cursor: reactive[int] = reactive(0, repaint=False, init=False)
    """View position of the highlighted row."""

    class Highlighted(Message):
        """The cursor moved to another record (or the view became empty)."""

        def __init__(self, rid: int | None) -> None:
            super().__init__()
            self.rid = rid
            """Row id now under the cursor."""

    class Opened(Message):
        """The user asked to open the highlighted record (enter or double click)."""

        def __init__(self, rid: int) -> None:
            super().__init__()
            self.rid = rid
            """Row id to open."""

    class HeaderClicked(Message):
        """A column title was clicked (sort by it)."""

        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column
            """The column clicked."""

    def __init__(self, model: RecordModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self.flash: dict[int, float] = {}
        self.hidden_columns: set[str] = set()
        """Columns the user hid (``h``); ``H`` shows them all again."""
        self.extra_widths: dict[str, int] = {}
        """Cells added to a column's width (``+`` / ``-`` on the sort column)."""
        self._flash_timer: Timer | None = None
        self._last_rid: int | None = None
        self.moved = False
        """Whether the user has moved the cursor (keys or a click) since the table was made."""

    def on_mount(self) -> None:
        """Start the (paused) timer that ends row highlights."""
        self._flash_timer = self.set_interval(0.25, self._expire_flash, pause=True)
        self.reload()

    # -- data ------------------------------------------------------------------------------

    @property
    def rid(self) -> int | None:
        """Row id under the cursor."""
        if not self.model.view:
            return None
        return self.model.rid_at(min(self.cursor, len(self.model.view) - 1))

    @property
    def kept_rid(self) -> int | None:
        """The row a live change keeps the cursor on: the one under it once the user has
        moved it; before that None, so the cursor stays on the top row while a sweep fills
        the table (not on whichever file happened to be decided first)."""
        return self.rid if self.moved else None

    def reload(self, keep: int | None = None) -> None:
        """The view changed: resize, and put the cursor back on row ``keep`` if still shown."""
        n = len(self.model.view)
        self.virtual_size = Size(self._width(), n + 1)
        pos = self.model.position(keep) if keep is not None else None
        target = pos if pos is not None else min(self.cursor, max(0, n - 1))
        if target != self.cursor:
            self.cursor = target
        else:
            self._cursor_moved()
        self.refresh()

    def changed(self, rids: set[int], keep: int | None) -> None:
        """Rows changed live: flash them and keep the cursor on ``keep``."""
        until = time.monotonic() + FLASH_SECONDS
        self.flash.update(dict.fromkeys(rids, until))
        if self._flash_timer is not None and self.flash:
            self._flash_timer.resume()
        self.reload(keep)

    def _expire_flash(self) -> None:
        now = time.monotonic()
        for rid in [r for r, t in self.flash.items() if t <= now]:
            del self.flash[rid]
        if not self.flash and self._flash_timer is not None:
            self._flash_timer.pause()
        self.refresh()

    # -- cursor ----------------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        """Scroll the cursor into view and announce the record under it."""
        self._cursor_moved()
        self._refresh_pos(old)
        self._refresh_pos(new)

    def _cursor_moved(self) -> None:
        page = max(1, self.size.height - 1)
        if self.cursor < self.scroll_y:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= self.scroll_y + page:
            self.scroll_to(y=self.cursor - page + 1, animate=False, immediate=True)
        rid = self.rid
        if rid != self._last_rid:
            self._last_rid = rid
            self.post_message(self.Highlighted(rid))

    def _refresh_pos(self, pos: int) -> None:
        y = pos - int(self.scroll_y) + 1
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _move(self, delta: int) -> None:
        self.moved = True
        self.cursor = max(0, min(len(self.model.view) - 1, self.cursor + delta))

    def action_cursor_up(self) -> None:
        """Move the cursor up one row."""
        self._move(-1)

    def action_cursor_down(self) -> None:
        """Move the cursor down one row."""
        self._move(1)

    def action_page_up(self) -> None:
        """Move the cursor up one screen."""
        self._move(-(self.size.height - 1))

    def action_page_down(self) -> None:
        """Move the cursor down one screen."""
        self._move(self.size.height - 1)

    def action_first(self) -> None:
        """Move to the first row."""
        self.moved = True
        self.cursor = 0

    def action_last(self) -> None:
        """Move to the last row."""
        self._move(len(self.model.view))

    def action_open(self) -> None:
        """Open the highlighted record's text."""
        if self.rid is not None:
            self.post_message(self.Opened(self.rid))

    # -- mouse -----------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        """Header click sorts; row click moves the cursor; double click opens."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            column = self._column_at(offset.x + int(self.scroll_x))
            if column:
                self.post_message(self.HeaderClicked(column))
            return
        pos = int(self.scroll_y) + offset.y - 1
        if 0 <= pos < len(self.model.view):
            self.moved = True
            self.cursor = pos
            if event.chain >= 2:
                self.action_open()

    def _column_at(self, x: int) -> str | None:
        left = 0
        for column, width in self._layout():
            if left <= x < left + width + 1:
                return column
            left += width + 1
        return None

    # -- rendering -------------------------------------------------------------------------

    def _layout(self) -> list[tuple[str, int]]:
        width = self.scrollable_content_region.width
        return layout_columns(width, self.hidden_columns, self.extra_widths)

    def _width(self) -> int:
        return sum(w + 1 for _, w in self._layout())

    def on_resize(self) -> None:
        """Column widths follow the terminal."""
        self.virtual_size = Size(self._width(), len(self.model.view) + 1)

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the widget: the header, a row, or blank."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        if y == 0:
            strip = self._header()
        else:
            pos = scroll_y + y - 1
            if pos >= len(self.model.view):
                return Strip.blank(width, self.rich_style)
            strip = self._row(pos)
        return strip.crop(scroll_x, scroll_x + width)

    def _header(self) -> Strip:
        style = self.get_component_rich_style("record-table--header")
        arrow = " ▼" if self.model.sort_reverse else " ▲"
        segs = []
        for column, width in self._layout():
            title = column + (arrow if column == self.model.sort_column else "")
            text = title.rjust(width) if column in RIGHT else title.ljust(width)
            segs.append(Segment(text[:width] + " ", style))
        return Strip(segs)

    def _status_style(self, status: str) -> Style:
        """The colour of a status; none for one no engine of ours wrote (a newer writer's)."""
        name = f"record-table--{status}"
        if name not in self.COMPONENT_CLASSES:
            return Style()
        return self.get_component_rich_style(name, partial=True)

    def _label(self, root: object) -> str:
        """The folder a row's path is shown under, when the store holds several."""
        labels = self.model.root_labels
        return shown(labels.get(root, "")) if labels and isinstance(root, str) else ""

    def _row(self, pos: int) -> Strip:
        rid = self.model.rid_at(pos)
        row = self.model.rows[rid]
        if row is None:  # (a paged store's row the index no longer has: drawn again anon)
            return Strip.blank(self.size.width, self.rich_style)
        base = self.rich_style
        if pos == self.cursor:
            base += self.get_component_rich_style("record-table--cursor")
        elif rid in self.flash:
            base += self.get_component_rich_style("record-table--flash")
        status_style = base + self._status_style(row[2])
        segs = []
        for column, width in self._layout():
            text = cell_text(column, row)
            if column == "path":
                text = fit_path(self._label(row[0]) + text, width)
            text = fit_cell(text, width, column in RIGHT)
            style: Style = status_style if column == "status" else base
            segs.append(Segment(text + " ", style))
        return Strip(segs)
