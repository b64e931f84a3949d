"""Dates and times in Excel 2007+ workbooks, as dates, where they were serial numbers.

A workbook stores a date as days since its epoch and shows it as a date through its cell's
number format; read without the formats, LibreOffice's ``.xlsx`` of the fixtures' workbook
said ``45293`` and ``45293.1278356482`` where the same workbook as ``.xls`` said
``2024-01-02`` and ``2024-01-02 03:04:05``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import mimes as M
from engine.readers.cellformats import is_date_format, serial_text
from engine.readers.ooxml import XlsxReader
from fixtures.gen import office as O
from fixtures.gen.common import write_zip
from tests.readers.test_smartart import read

X = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


@pytest.mark.parametrize(
    ("number", "code", "date"),
    [
        (14, None, True),  # m/d/yyyy
        (22, None, True),  # m/d/yy h:mm
        (20, None, True),  # h:mm
        (46, None, False),  # [h]:mm:ss, a duration
        (0, None, False),
        (4, None, False),  # #,##0.00
        (164, "yyyy\\-mm\\-dd", True),
        (165, "[$-409]mmmm d, yyyy;@", True),
        (166, "hh:mm:ss.000", True),
        (167, "[Red]dd/mm;[Blue]0", True),
        (168, "0.00%", False),
        (169, '#,##0.00 "days"', False),
        (170, '"Date:" 0', False),
        (171, "General", False),
        (172, "@", False),
        (173, "[h]:mm", False),
        (174, "0.00E+00", False),
        (14, "0.00", False),  # a built-in id given a code of its own
    ],
)
def test_date_formats_are_told_from_numbers_and_durations(
    number: int, code: str | None, date: bool
) -> None:
    assert is_date_format(number, code) is date


@pytest.mark.parametrize(
    ("serial", "date1904", "text"),
    [
        (45293, False, "2024-01-02"),
        (45293.1278356482, False, "2024-01-02 03:04:05"),
        (0.5, False, "12:00:00"),
        (1, False, "1900-01-01"),
        (59, False, "1900-02-28"),
        (60, False, "1900-02-29"),  # (Lotus's day that never was, as Excel shows it)
        (61, False, "1900-03-01"),
        (0, True, "1904-01-01"),
        (2_957_003, True, "9999-12-31"),
        (2_957_004, True, None),
        (43831.999999999, False, "2020-01-02"),  # (rounds up to the next midnight)
        (-1, False, None),
        (3_000_000, False, None),
        (float("nan"), False, None),
    ],
)
def test_a_serial_number_as_its_date(serial: float, date1904: bool, text: str | None) -> None:
    assert serial_text(serial, date1904) == text


@given(st.integers(61, 2_958_465), st.integers(0, 86_399), st.booleans())
def test_any_date_and_time_reads_back_as_its_serial(days: int, seconds: int, mac: bool) -> None:
    if mac and days >= 2_958_466 - 1_462:  # (past 9999-12-31 from 1904)
        assert serial_text(days + seconds / 86_400, mac) is None
        return
    text = serial_text(days + seconds / 86_400, mac)
    assert text is not None
    when = dt.datetime.fromisoformat(text)
    epoch = dt.datetime(1904, 1, 1) if mac else dt.datetime(1899, 12, 30)
    back = when - epoch
    assert (back.days, back.seconds) == (days, seconds)


STYLES = (
    f'<?xml version="1.0"?><styleSheet xmlns="{X}"><numFmts count="2">'
    '<numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/><numFmt numFmtId="165" '
    'formatCode="#,##0.00"/></numFmts><cellStyleXfs count="2"><xf numFmtId="14"/>'
    '<xf numFmtId="0"/></cellStyleXfs><cellXfs count="6"><xf numFmtId="0"/><xf numFmtId="14"/>'
    '<xf numFmtId="164"/><xf numFmtId="46"/><xf numFmtId="22"/><xf numFmtId="165"/></cellXfs>'
    '<dxfs count="1"><dxf><numFmt numFmtId="164" formatCode="0.00"/></dxf></dxfs></styleSheet>'
)
"""Cell styles: none, a built-in date, a custom date (a difference format reuses its id),
a duration, a date and time, a custom number; the named styles' own list comes first."""


def _book(tmp_path: Path, *, mac: bool = False, styles: str | None = STYLES) -> Path:
    cells = "".join(
        f'<c r="{col}1" s="{style}"><v>{value}</v></c>'
        for col, style, value in [
            ("A", 0, "45293"),
            ("B", 1, "45293"),
            ("C", 2, "45293.5"),
            ("D", 3, "1.5"),
            ("E", 4, "45293.1278356482"),
            ("F", 5, "45293"),
            ("G", 99, "45293"),  # (a style the workbook lacks)
            ("H", 1, "-4"),  # (no date: as stored)
        ]
    )
    members = O.xlsx_members(f'<row r="1">{cells}</row>')
    rels = members["xl/_rels/workbook.xml.rels"]
    assert isinstance(rels, str)
    if styles is not None:
        kind = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
        members["xl/_rels/workbook.xml.rels"] = rels.replace(
            "</Relationships>",
            f'<Relationship Id="rId9" Type="{kind}" Target="styles.xml"/></Relationships>',
        )
        members["xl/styles.xml"] = styles
    if mac:
        book = members["xl/workbook.xml"]
        assert isinstance(book, str)
        members["xl/workbook.xml"] = book.replace("<sheets>", '<workbookPr date1904="1"/><sheets>')
    return write_zip(tmp_path, "dates.xlsx", members)


def _first_row(path: Path) -> list[str]:
    return read(XlsxReader(), path, M.XLSX).splitlines()[1].split("\t")


def test_a_cell_s_date_format_shows_its_number_as_a_date(tmp_path: Path) -> None:
    assert _first_row(_book(tmp_path)) == [
        "45293",
        "2024-01-02",
        "2024-01-02 12:00:00",
        "1.5",
        "2024-01-02 03:04:05",
        "45293",
        "45293",
        "-4",
    ]


def test_a_workbook_counting_from_1904_and_one_without_styles(tmp_path: Path) -> None:
    assert _first_row(_book(tmp_path, mac=True))[1] == "2028-01-03"
    (tmp_path / "bare").mkdir()
    bare = _first_row(_book(tmp_path / "bare", styles=None))
    assert bare[:3] == ["45293", "45293", "45293.5"]


def _xlsb(tmp_path: Path, *, mac: bool = False) -> Path:
    """The fixtures' binary workbook, its first sheet's cells styled: none, a built-in date,
    a custom date, a duration; a styles part saying so (and the 1904 epoch, ``mac``)."""
    import struct

    from fixtures.gen.formats import _rec, _sheet, xlsb_members

    def styled(col: int, style: int, value: float) -> bytes:
        return _rec(0x0005, struct.pack("<IId", col, style, value))

    def xf(number: int) -> bytes:
        return _rec(0x2F, struct.pack("<HH", 0, number) + bytes(12))

    code = "yyyy-mm-dd"
    styles = _rec(0x2C, struct.pack("<HI", 164, len(code)) + code.encode("utf-16-le"))
    styles += _rec(0x04F2) + xf(14) + _rec(0x04F3)  # (the named styles' list: not the cells')
    styles += _rec(0x04E9) + xf(0) + xf(14) + xf(164) + xf(46) + _rec(0x04EA)
    members = xlsb_members()
    row = [styled(col, col, 45293.5 if col == 2 else 45293) for col in range(4)]
    members["xl/worksheets/sheet1.bin"] = _sheet([row], 4)
    members["xl/styles.bin"] = styles
    rels = members["xl/_rels/workbook.bin.rels"]
    assert isinstance(rels, str)
    kind = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
    members["xl/_rels/workbook.bin.rels"] = rels.replace(
        "</Relationships>",
        f'<Relationship Id="rId9" Type="{kind}" Target="styles.bin"/></Relationships>',
    )
    if mac:
        book = members["xl/workbook.bin"]
        assert isinstance(book, bytes)
        at = len(_rec(0x0183))  # (after the workbook's first record)
        members["xl/workbook.bin"] = (
            book[:at] + _rec(0x0199, struct.pack("<I", 1) + bytes(8)) + book[at:]
        )
    return write_zip(tmp_path, "dates.xlsb", members)


def test_a_binary_workbook_s_dates_are_dates_too(tmp_path: Path) -> None:
    from engine.readers.fixedzip import XlsbReader

    text = read(XlsbReader(), _xlsb(tmp_path), M.XLSB)
    assert text.splitlines()[1] == "45293\t2024-01-02\t2024-01-02 12:00:00\t45293"
    (tmp_path / "mac").mkdir()
    text = read(XlsbReader(), _xlsb(tmp_path / "mac", mac=True), M.XLSB)
    assert text.splitlines()[1].split("\t")[1] == "2028-01-03"
