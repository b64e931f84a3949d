"""The text of charts in Excel 97 workbooks: drawn on a sheet, or a sheet of their own.

xlrd reads no chart: a chart's title, axis titles and the series names written in it
(``SERIESTEXT`` records) were nowhere (the corpus's ``MonteCarlo.xls``, whose four chart
sheets' axis titles and series names read as nothing; ``valid.xls``'s two sheets of charts
alone read as no sheet at all).
"""

from __future__ import annotations

import struct
from pathlib import Path

import olefile
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.readers.xls import _scan_charts
from fixtures.gen import legacy as L
from fixtures.gen._cfb import compound_file
from tests.readkit import read_bytes

BOF, EOF, BOUNDSHEET, SERIESTEXT = 0x0809, 0x000A, 0x0085, 0x100D


def records(stream: bytes) -> list[tuple[int, bytes]]:
    found, pos = [], 0
    while pos + 4 <= len(stream):
        rtype, size = struct.unpack_from("<HH", stream, pos)
        found.append((rtype, stream[pos + 4 : pos + 4 + size]))
        pos += 4 + size
    return found


def series_text(text: str) -> tuple[int, bytes]:
    units = text.encode("utf-16-le")  # (its count is of UTF-16 units, not characters)
    return SERIESTEXT, struct.pack("<HBB", 0, len(units) // 2, 1) + units


def chart(*texts: str) -> list[tuple[int, bytes]]:
    bof = struct.pack("<HHHHII", 0x0600, 0x0020, 0, 0, 0, 0)
    return [(BOF, bof), *(series_text(t) for t in texts), (EOF, b"")]


def substreams(recs: list[tuple[int, bytes]]) -> list[tuple[int, int, int]]:
    """Each sheet's substream (the globals' left out): the index of its BOF record, of its
    EOF record, and where its BOF starts in the stream."""
    found: list[tuple[int, int, int]] = []
    depth, pos, start = 0, 0, (0, 0)
    for i, (rtype, body) in enumerate(recs):
        if rtype == BOF:
            if depth == 0:
                start = (i, pos)
            depth += 1
        elif rtype == EOF:
            depth -= 1
            if depth == 0 and start[1] > 0:
                found.append((start[0], i, start[1]))
        pos += 4 + len(body)
    return found


def with_charts(stream: bytes, drawn: list[str], alone: list[str]) -> bytes:
    """The fixtures' workbook stream with a chart drawn on its first sheet and a chart sheet
    after its sheets, their BOUNDSHEET offsets set again."""
    recs = records(stream)
    sheets = [i for i, (t, _) in enumerate(recs) if t == BOUNDSHEET]
    name = "Chart1"
    chart_sheet = struct.pack("<IBBBB", 0, 0, 2, len(name), 0) + name.encode("latin-1")
    recs.insert(sheets[-1] + 1, (BOUNDSHEET, chart_sheet))
    first_end = substreams(recs)[0][1]
    recs[first_end:first_end] = chart(*drawn)
    recs += chart(*alone)
    positions = iter(start for _bof, _eof, start in substreams(recs))
    return b"".join(
        struct.pack("<HH", t, len(b))
        + (struct.pack("<I", next(positions)) + b[4:] if t == BOUNDSHEET else b)
        for t, b in recs
    )


def workbook(drawn: list[str], alone: list[str]) -> bytes:
    with olefile.OleFileIO(L.xls_bytes()) as ole:
        stream = ole.openstream("Workbook").read()
    return compound_file({"Workbook": with_charts(stream, drawn, alone)})


def test_a_chart_s_text_after_its_sheet_s_rows_and_a_chart_sheet_s_after_the_sheets(
    tmp_path: Path,
) -> None:
    data = workbook(["Sales by month", "Units"], ["Chart sheet title", "Series A"])
    outcome, text = read_bytes(tmp_path, "book.xls", data)
    assert outcome.status == "ok", outcome.error
    first, rest = L.XLS_TEXT.split("# sheet3\n")
    assert text == (
        f"{first}Sales by month\nUnits\n# sheet3\n{rest}# sheet4\nChart sheet title\nSeries A\n"
    )
    assert outcome.pages == 4


_TEXTS = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20))


@settings(max_examples=50, deadline=None)
@given(_TEXTS, _TEXTS, st.binary(max_size=64))
def test_any_chart_text_and_any_tail_of_bytes_never_take_the_scan_down(
    drawn: list[str], alone: list[str], tail: bytes
) -> None:
    with olefile.OleFileIO(L.xls_bytes()) as ole:
        stream = ole.openstream("Workbook").read()
    stream = with_charts(stream, drawn, alone) + tail
    on_sheets, sheets_alone = _scan_charts(stream, True, None)
    assert on_sheets.get(0, []) == [s for t in drawn if (s := " ".join(t.split()))]
    assert sheets_alone == [[s for t in alone if (s := " ".join(t.split()))]]
