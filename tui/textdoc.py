"""A stored text prepared for the inspector: lines, pages, search. No Textual in here.

Pages come from the store's conventions: PDF pages are separated by form feeds, slides and
sheets start with ``# slideN`` / ``# sheetN`` lines. Lines longer than :data:`LINE_CAP` are
cut for display (a single 50 MB line must not hang the screen); search looks at what is shown.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

LINE_CAP = 2000
"""Characters of one line shown (and searched); the rest is summarised."""
MAX_MATCHES = 100_000
"""Search stops counting here."""
_PAGE_LINE = re.compile(r"^# (slide|sheet)\s*(\d+)\b")


@dataclass(slots=True)
class TextDoc:
    """Display lines with their page starts."""

    lines: list[str]
    """Lines as shown (capped)."""
    pages: list[tuple[int, str]] = field(default_factory=list)
    """(first line, label) of each page, slide or sheet, in order; empty when not paged."""
    capped: int = 0
    """How many lines were cut at :data:`LINE_CAP`."""

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
                lines.append(line)
        if paged and lines and lines[-1] == "" and len(parts[-1]) == 0:
            lines.pop()  # a trailing form feed makes no empty last page
            pages.pop()
        return cls(lines, pages, capped)

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
                found.append((i, m.start(), m.end()))
                if len(found) >= MAX_MATCHES:
                    return found
        return found
