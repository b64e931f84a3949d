"""Microsoft Graph charts: the text of a chart object in an Office 97 document.

Word, Excel and PowerPoint 97 charts made with Microsoft Graph (``MSGraph.Chart.8``, the
"Insert > Object > Chart" of those years) are embedded objects whose ``Workbook`` stream is
Graph's own: a datasheet of BIFF2-style cells (``NUMBER``, ``LABEL``) followed by a chart
substream whose ``SERIESTEXT`` records hold its title, axis titles and series names. No
workbook reader reads it (xlrd refuses its version; catdoc's ``xls2csv`` read its bytes as
thousands of numbers), and Tika's ``testMSChart`` workbook read as nothing. Its text here is
the datasheet, a row a line, cells tab-separated by column (the series' names and the
categories as Graph lays them out), then the chart's own strings the datasheet does not hold.
"""

from __future__ import annotations

import struct

GRAPH_CLASS = "0002080"
"""How the classes of Microsoft Graph's charts begin (``MSGraph.Chart.8``: 00020803-...)."""
_SERIESTEXT = 0x100D
_NUMBERS = frozenset({0x0003, 0x0203})
"""A number cell: BIFF2's (row, column, three bytes of attributes) and BIFF3+'s (row,
column, format index), then the IEEE double."""
_LABELS = frozenset({0x0004, 0x0204})
MAX_CELLS = 100_000
"""Datasheet cells kept of one chart."""
MAX_COLUMNS = 4_000
"""Columns a datasheet has at most (Graph's own bound): a cell past them is left out."""


def graph_lines(stream: bytes | memoryview) -> list[str]:
    """The text of a Graph chart's ``Workbook`` stream: its datasheet's rows, then its
    strings (title, axis titles, series names) the datasheet does not hold. Nothing for a
    stream laid out otherwise (a record past the end stops the walk)."""
    cells: dict[tuple[int, int], str] = {}
    strings: list[str] = []
    pos = 0
    while pos + 4 <= len(stream):
        rtype, size = struct.unpack_from("<HH", stream, pos)
        body = stream[pos + 4 : pos + 4 + size]
        if len(body) < size:
            break
        if rtype in _NUMBERS and len(body) >= 12 and len(cells) < MAX_CELLS:
            row, col = struct.unpack_from("<HH", body)
            cells[row, col] = _number(struct.unpack_from("<d", body, len(body) - 8)[0])
        elif rtype in _LABELS and len(cells) < MAX_CELLS:
            label = _label(body, wide_count=rtype == 0x0204)
            if label:
                cells[struct.unpack_from("<HH", body)] = label
        elif rtype == _SERIESTEXT:
            text = series_text(body, biff8=True, encoding=None)
            if text:
                strings.append(text)
        pos += 4 + size
    lines = _rows(cells)
    held = set(cells.values())
    return lines + [s for s in dict.fromkeys(strings) if s not in held]


def series_text(body: bytes | memoryview, biff8: bool, encoding: str | None) -> str:
    """A SERIESTEXT record's string (after its 2-byte id: a count of characters, then, in
    BIFF8, a flags byte whose bit 0 says UTF-16), on one line."""
    count = body[2] if len(body) > 2 else 0
    if biff8:
        wide = len(body) > 3 and body[3] & 1
        raw = bytes(body[4 : 4 + count * (2 if wide else 1)])
        text = raw.decode("utf-16-le" if wide else "latin-1", "replace")
    else:
        text = bytes(body[3 : 3 + count]).decode(encoding or "cp1252", "replace")
    return " ".join(text.split())


def _label(body: bytes | memoryview, wide_count: bool) -> str:
    """A LABEL cell's string: after row, column and attributes (3 bytes in BIFF2's, a 2-byte
    format index in BIFF3+'s), a count of characters (1 byte, or 2), a flags byte whose bit
    0 says UTF-16, then the characters."""
    at = 6 if wide_count else 7
    if len(body) < at + 2:
        return ""
    count = struct.unpack_from("<H", body, at)[0] if wide_count else body[at]
    at += 2 if wide_count else 1
    wide = body[at] & 1
    raw = bytes(body[at + 1 : at + 1 + count * (2 if wide else 1)])
    return " ".join(raw.decode("utf-16-le" if wide else "latin-1", "replace").split())


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _rows(cells: dict[tuple[int, int], str]) -> list[str]:
    """The datasheet a row a line, each cell at its column (tab-separated), blank rows out."""
    if not cells:
        return []
    first = min(col for _row, col in cells)
    rows: dict[int, dict[int, str]] = {}
    for (row, col), text in cells.items():
        if col - first < MAX_COLUMNS:
            rows.setdefault(row, {})[col] = text
    return [
        "\t".join(cols.get(c, "") for c in range(first, max(cols) + 1))
        for _row, cols in sorted(rows.items())
    ]
