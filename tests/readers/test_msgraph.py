"""Microsoft Graph charts embedded in Office 97 documents, read as their data and strings.

A Graph chart's ``Workbook`` stream is Graph's own: xlrd refuses its version and catdoc read
it as thousands of numbers, so it was left out, and Tika's ``testMSChart`` workbook, whose only
content is one, read as nothing. In a deck's or an OOXML file's OLE object it was offered to
the Excel readers as a workbook: a corrupt member, or (``xls2csv``, Tika's
``testPPT_embedded2.ppt``) numbers such as ``2.85482070474931e-56`` where the datasheet says
``East 20.4``.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.readers.msgraph import graph_lines
from fixtures.gen import legacy as L
from fixtures.gen._cfb import compound_file
from fixtures.gen.legacy import rec
from tests.readers.test_embedded import deck_with_objects
from tests.readers.test_embedded_storages import GRAPH_CHART, storage, stream, workbook_with
from tests.readkit import read_bytes


def _record(rtype: int, body: bytes) -> bytes:
    return struct.pack("<HH", rtype, len(body)) + body


def _label(row: int, col: int, text: str) -> bytes:
    raw = text.encode("latin-1")
    return _record(0x0004, struct.pack("<HH3sBB", row, col, bytes(3), len(raw), 0) + raw)


def _number(row: int, col: int, value: float) -> bytes:
    return _record(0x0003, struct.pack("<HH3sd", row, col, bytes(3), value))


def _series_text(text: str) -> bytes:
    raw = text.encode("utf-16-le")
    return _record(0x100D, struct.pack("<HBB", 0, len(text), 1) + raw)


def graph_workbook() -> bytes:
    """Graph's datasheet (years across, a series a row), then its chart's strings."""
    bof = _record(0x0809, struct.pack("<HH", 0x0680, 5) + bytes(12))
    sheet = [_number(0, 1, 2002), _number(0, 2, 2003.5), _label(1, 0, "Tech Partners")]
    sheet += [_number(1, 1, 4175), _number(1, 2, -0.25), _label(2, 0, "Total")]
    sheet += [_number(2, 2, 11790)]
    chart = [_series_text("Partners by year"), _series_text("Tech Partners")]
    eof = _record(0x000A, b"")
    return bof + b"".join(sheet) + bof + b"".join(chart) + eof + eof


CHART_TEXT = "\t2002\t2003.5\nTech Partners\t4175\t-0.25\nTotal\t\t11790\nPartners by year\n"


def test_a_workbook_s_graph_chart_is_read_as_its_datasheet_and_strings(tmp_path: Path) -> None:
    chart = storage("MBD0000ABCD", stream("Workbook", graph_workbook()), clsid=GRAPH_CHART)
    outcome, text = read_bytes(tmp_path, "book.xls", workbook_with(chart))
    assert outcome.status == "ok", outcome.error
    assert [(m.path, m.status) for m in outcome.members] == [("embedded/MBD0000ABCD/chart", "ok")]
    assert text == f"{L.XLS_TEXT}# member embedded/MBD0000ABCD/chart\n{CHART_TEXT}"


def test_a_deck_s_graph_object_is_read_where_it_failed_as_a_workbook(tmp_path: Path) -> None:
    """A PowerPoint 97 deck's chart object (an OLE2 file of Graph's class): its text, where
    the Excel reader was given it and called it corrupt."""
    obj = compound_file({"\x01CompObj": bytes(64), "Workbook": graph_workbook()}, clsid=GRAPH_CHART)
    empty = compound_file({"\x01CompObj": bytes(64), "Workbook": bytes(64)}, clsid=GRAPH_CHART)
    deck = deck_with_objects(
        rec(0x1011, struct.pack("<I", len(obj)) + zlib.compress(obj), inst=1),
        rec(0x1011, empty),
    )
    outcome, text = read_bytes(tmp_path, "deck.ppt", deck)
    assert outcome.status == "ok" and outcome.error is None
    assert [(m.path, m.status) for m in outcome.members] == [("embedded/object1/chart", "ok")]
    assert text.endswith(f"# member embedded/object1/chart\n{CHART_TEXT}")


@given(st.binary(max_size=600))
@settings(max_examples=300, deadline=None)
def test_any_stream_gives_lines_or_none(raw: bytes) -> None:
    """Records of any sizes and contents: lines of text, never an exception."""
    for line in graph_lines(graph_workbook()[:20] + raw):
        assert "\n" not in line
        line.encode("utf-8")
