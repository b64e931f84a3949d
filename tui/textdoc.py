"""A stored text prepared for the inspector: lines, pages, search, wrapping. No Textual in here.

Pages come from the store's conventions: PDF pages are separated by form feeds, slides and
sheets start with ``# slideN`` / ``# sheetN`` lines. Lines longer than :data:`LINE_CAP` are
cut for display (a single 50 MB line must not hang the screen); search looks at what is shown.

What is shown is safe for a terminal and measured in cells: tabs are expanded, control
characters (escape sequences included), line separators and bidirectional overrides become
visible symbols, and widths count a CJK character as two cells, so wrapping and sideways
scrolling agree with what the terminal draws.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.cells import cell_len, chop_cells

from engine.textsearch import CONTEXT, Query, matches
from engine.visible import for_terminal

LINE_CAP = 2000
"""Characters of one line shown (and searched); the rest is summarised."""
MAX_MATCHES = 100_000
"""Search stops counting here."""
TAB = 4
"""Columns of a tab stop."""
MAX_IN_CONTEXT = 1000
"""A text's matches are counted up to this many for the line under the records table."""
_PAGE_LINE = re.compile(r"^# (slide|sheet)\s*(\d+)\b")
_BREAKS = re.compile(r"[\n\f]")
"""What ends a line of :meth:`TextDoc.parse` (a form feed ends its page's last line)."""


def display_line(line: str) -> str:
    """``line`` as the terminal may draw it: tabs expanded, nothing it would interpret (the
    engine's rule, :func:`engine.visible.for_terminal`, which ``quarry show`` uses too)."""
    if "\t" in line:
        line = line.expandtabs(TAB)
    return for_terminal(line)


def width_of(line: str) -> int:
    """Cells ``line`` takes on a terminal."""
    return len(line) if line.isascii() else cell_len(line)


@dataclass(slots=True)
class Wrapped:
    """Visual rows of a document wrapped at a width: row -> (line, first character)."""

    lines: array[int] = field(default_factory=lambda: array("q"))
    """Text line of each visual row (ascending)."""
    starts: array[int] = field(default_factory=lambda: array("q"))
    """Character offset in its line where each visual row starts."""

    def __len__(self) -> int:
        return len(self.lines)

    def row_of(self, line: int) -> int:
        """First visual row of text line ``line``."""
        return bisect.bisect_left(self.lines, line)

    def span(self, row: int, doc: TextDoc) -> tuple[int, int, int]:
        """(line, start, end) of the characters visual row ``row`` shows."""
        line = self.lines[row]
        start = self.starts[row]
        nxt = row + 1
        end = self.starts[nxt] if nxt < len(self.lines) and self.lines[nxt] == line else None
        return line, start, len(doc.lines[line]) if end is None else end


@dataclass(slots=True)
class TextDoc:
    """Display lines with their page starts."""

    lines: list[str]
    """Lines as shown (capped, made safe for a terminal)."""
    pages: list[tuple[int, str]] = field(default_factory=list)
    """(first line, label) of each page, slide or sheet, in order; empty when not paged."""
    capped: int = 0
    """How many lines were cut at :data:`LINE_CAP`."""
    widest: int = 0
    """Cells of the widest line shown."""

    @classmethod
    def parse(cls, text: str) -> TextDoc:
        """Split ``text`` into lines and find its pages."""
        lines: list[str] = []
        pages: list[tuple[int, str]] = []
        capped = 0
        parts = text.split("\f")
        paged = len(parts) > 1
        for n, part in enumerate(parts, 1):
            if paged:
                pages.append((len(lines), f"page {n}"))
            for line in part.split("\n"):
                m = _PAGE_LINE.match(line)
                if m and not paged:
                    pages.append((len(lines), f"{m.group(1)} {m.group(2)}"))
                if len(line) > LINE_CAP:
                    capped += 1
                    line = line[:LINE_CAP] + f" … [{len(line) - LINE_CAP:,} more characters]"
                lines.append(display_line(line))
        if paged and lines and lines[-1] == "" and len(parts[-1]) == 0:
            lines.pop()  # a trailing form feed makes no empty last page
            pages.pop()
        widest = max(map(width_of, lines), default=0)
        return cls(lines, pages, capped, widest)

    def page_of(self, line: int) -> int:
        """Index into :attr:`pages` of the page holding ``line`` (0 when not paged)."""
        starts = [p[0] for p in self.pages]
        return max(0, bisect.bisect_right(starts, line) - 1)

    def search(self, query: str) -> list[tuple[int, int, int]]:
        """Every ``(line, start, end)`` match of ``query``: text, smart case."""
        if not query:
            return []
        flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
        pattern = re.compile(re.escape(query), flags)
        found: list[tuple[int, int, int]] = []
        for i, line in enumerate(self.lines):
            for m in pattern.finditer(line):
                if m.end() > m.start():
                    found.append((i, m.start(), m.end()))
                if len(found) >= MAX_MATCHES:
                    return found
        return found

    def wrap(self, width: int) -> Wrapped:
        """Visual rows of at most ``width`` cells each (an empty line is one row)."""
        width = max(2, width)  # a two-cell character must fit on a row
        rows = Wrapped()
        for i, line in enumerate(self.lines):
            if width_of(line) <= width:
                rows.lines.append(i)
                rows.starts.append(0)
                continue
            ascii_ = line.isascii()
            for off in range(0, len(line), width) if ascii_ else _cell_chunks(line, width):
                rows.lines.append(i)
                rows.starts.append(off)
        return rows


def doc_spans(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Where the ``(start, end)`` character spans of ``text`` (ascending, as a search of the
    whole text finds them) are in :meth:`TextDoc.parse`'s lines: ``(line, start, end)`` in
    the characters shown (tabs expanded, controls made visible, cut at :data:`LINE_CAP`); a
    span that runs past its line (a phrase across a break) is marked to the line's end."""
    found: list[tuple[int, int, int]] = []
    line, line_start, upto = 0, 0, 0
    for start, end in spans:
        for br in _BREAKS.finditer(text, upto, start):
            line, line_start = line + 1, br.end()
        upto = start
        stop = _BREAKS.search(text, start)
        raw = text[line_start : stop.start() if stop else len(text)]
        col, col_end = start - line_start, min(end - line_start, len(raw))
        shown = min(len(display_line(raw[: min(col, LINE_CAP)])), _capped(raw))
        shown_end = min(len(display_line(raw[: min(col_end, LINE_CAP)])), _capped(raw))
        found.append((line, shown, max(shown_end, shown + 1)))
    return found


def _capped(raw: str) -> int:
    """Characters of a line as shown before its "more characters" note (if cut)."""
    return len(display_line(raw[:LINE_CAP]))


@dataclass(frozen=True, slots=True)
class InContext:
    """A match with the rest of its line around it, each part safe for a terminal: what the
    records screen shows under the table for the row under the cursor."""

    page: int
    line: int
    before: str
    match: str
    after: str
    total: int
    """Matches in the text (counted up to :data:`MAX_IN_CONTEXT`)."""

    @classmethod
    def of(cls, text: str, query: Query) -> InContext | None:
        """The first match of ``query`` in ``text`` in context (None: it has none)."""
        found = list(matches(text, query, limit=MAX_IN_CONTEXT))
        if not found:
            return None
        m = found[0]
        line_start = m.start - m.column + 1
        stop = _BREAKS.search(text, m.end)
        before = text[max(line_start, m.start - CONTEXT) : m.start]
        after = text[m.end : min(stop.start() if stop else len(text), m.end + CONTEXT)]
        body = _BREAKS.sub(" ", m.text)
        return cls(m.page, m.line, display_line(before).lstrip(), display_line(body),
                   display_line(after), len(found))  # fmt: skip

    def fitted(self, width: int) -> tuple[str, str, str, str]:
        """(where, before, match, after) cut to ``width`` cells: the match kept in view
        with as much of its line on each side as fits."""
        more = f"{MAX_IN_CONTEXT:,}+" if self.total >= MAX_IN_CONTEXT else f"{self.total:,}"
        where = f"p.{self.page} l.{self.line} ({more}) "
        room = max(0, width - width_of(where) - width_of(self.match))
        after = _head(self.after, max(room // 2, room - width_of(self.before)))
        before = _tail(self.before, room - width_of(after))
        after = _head(self.after, room - width_of(before))
        return where, before, self.match, after


def _head(text: str, cells: int) -> str:
    """The start of ``text`` that fits in ``cells``."""
    while width_of(text) > max(0, cells):
        text = text[: max(0, min(len(text) - 1, cells))]
    return text


def _tail(text: str, cells: int) -> str:
    """The end of ``text`` that fits in ``cells``."""
    while width_of(text) > max(0, cells):
        text = text[len(text) - max(0, min(len(text) - 1, cells)) :]
    return text


def _cell_chunks(line: str, width: int) -> list[int]:
    """Character offsets where each ``width``-cell piece of ``line`` starts."""
    offsets, pos = [], 0
    for piece in chop_cells(line, width):
        offsets.append(pos)
        pos += len(piece)
    return offsets or [0]
