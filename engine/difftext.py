"""Two texts of one file, line by line: what the compare screen shows of a changed text.

:func:`texts_of` reads a change's two texts from their stores (the screen never opens a
store's files itself); :func:`unified` gives the lines of a unified diff (three lines of
context, a hunk line before each block), :func:`side_by_side` the two texts in two columns,
changed rows marked; :func:`change_starts` the rows where a change begins (``n``/``N`` go
from one to the next). Pure but for the reading; nothing here knows about Textual.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import StrEnum

from engine.diff import TEXT_LIMIT, FileChange, Side
from engine.store import Store

CONTEXT = 3
"""Unchanged lines shown around each change in the unified view."""
MAX_LINES = 20_000
"""Lines of each text compared line by line: a longer text is cut there, said in a last row
(difflib's matching grows faster than the lines)."""


class LineKind(StrEnum):
    """What a row of a diff is."""

    SAME = "same"
    REMOVED = "removed"
    ADDED = "added"
    CHANGED = "changed"
    """Side by side: the line differs on the two sides."""
    HUNK = "hunk"
    """Unified: where the next block is, in both texts (``@@ -1,3 +1,4 @@``)."""
    NOTE = "note"
    """Something said about the texts (cut, missing), not a line of them."""


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One row of a unified diff."""

    kind: LineKind
    """What the row is."""
    text: str
    """The line, without its newline (a hunk's ``@@`` line, a note's words)."""


@dataclass(frozen=True, slots=True)
class PairLine:
    """One row of a side-by-side view: a line of each text (None where a side has none)."""

    kind: LineKind
    """SAME, CHANGED, REMOVED (only before), ADDED (only after) or NOTE."""
    before: str | None
    """The first text's line."""
    after: str | None
    """The second text's line."""


def _text(store: Store, side: Side | None) -> str | None:
    if side is None or side.status != "ok" or side.sha256 is None:
        return None
    try:
        return store.text_bytes(side.sha256, TEXT_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None


def texts_of(before: Store, after: Store, change: FileChange) -> tuple[str | None, str | None]:
    """The change's two texts (None: the side has no text, or it is not in its store)."""
    return _text(before, change.before), _text(after, change.after)


def _lines(text: str | None) -> tuple[list[str], bool]:
    lines = (text or "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines[:MAX_LINES], len(lines) > MAX_LINES


def _cut_note(cut: bool) -> list[str]:
    return [f"(compared on the first {MAX_LINES:,} lines of each text)"] if cut else []


def unified(a: str | None, b: str | None) -> list[DiffLine]:
    """The unified diff of ``a`` and ``b`` by lines (no ``---``/``+++`` header)."""
    la, cut_a = _lines(a)
    lb, cut_b = _lines(b)
    rows: list[DiffLine] = []
    marks = {" ": LineKind.SAME, "-": LineKind.REMOVED, "+": LineKind.ADDED}
    for i, line in enumerate(difflib.unified_diff(la, lb, n=CONTEXT, lineterm="")):
        if i < 2:  # the two file lines
            continue
        if line.startswith("@@"):
            rows.append(DiffLine(LineKind.HUNK, line))
        else:
            rows.append(DiffLine(marks[line[:1]], line[1:]))
    rows += [DiffLine(LineKind.NOTE, n) for n in _cut_note(cut_a or cut_b)]
    return rows


def side_by_side(a: str | None, b: str | None) -> list[PairLine]:
    """Both texts whole, aligned: a replaced block pairs its lines row by row."""
    la, cut_a = _lines(a)
    lb, cut_b = _lines(b)
    rows: list[PairLine] = []
    matcher = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [
                PairLine(LineKind.SAME, x, y) for x, y in zip(la[i1:i2], lb[j1:j2], strict=True)
            ]
            continue
        left, right = la[i1:i2], lb[j1:j2]
        for k in range(max(len(left), len(right))):
            x = left[k] if k < len(left) else None
            y = right[k] if k < len(right) else None
            kind = (
                LineKind.CHANGED
                if x is not None and y is not None
                else (LineKind.REMOVED if x is not None else LineKind.ADDED)
            )
            rows.append(PairLine(kind, x, y))
    rows += [PairLine(LineKind.NOTE, n, None) for n in _cut_note(cut_a or cut_b)]
    return rows


def change_starts(kinds: list[LineKind]) -> list[int]:
    """The rows where a run of changed rows begins."""
    changed = {LineKind.REMOVED, LineKind.ADDED, LineKind.CHANGED}
    return [
        i
        for i, kind in enumerate(kinds)
        if kind in changed and (i == 0 or kinds[i - 1] not in changed)
    ]


__all__ = [
    "DiffLine",
    "LineKind",
    "PairLine",
    "change_starts",
    "side_by_side",
    "texts_of",
    "unified",
]
