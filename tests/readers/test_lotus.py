"""Lotus 1-2-3 and Quattro Pro spreadsheets, against files written here record by record as
each release lays them out (the corpus's real ones are tried when it is present)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, LimitExceeded
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.lotus import LotusReader, _extended

CORPUS = Path("/work/shared/corpus")


def rec(kind: int, body: bytes) -> bytes:
    return struct.pack("<HH", kind, len(body)) + body


def classic(version: int, *cells: bytes) -> bytes:
    return rec(0x00, struct.pack("<H", version)) + b"".join(cells) + rec(0x01, b"")


def lotus_cell(kind: int, col: int, row: int, value: bytes, fmt: int = 0xFF) -> bytes:
    return rec(kind, bytes([fmt]) + struct.pack("<HH", col, row) + value)


def quattro_cell(kind: int, col: int, row: int, value: bytes, sheet: int = 0) -> bytes:
    return rec(kind, bytes([col, sheet]) + struct.pack("<H", row) + b"\x00\x00" + value)


def extended(value: float) -> bytes:
    """``value`` as the 80-bit extended float release 3 writes."""
    if value == 0:
        return b"\x00" * 10
    mantissa, exponent = math.frexp(abs(value))  # value = mantissa * 2**exponent
    bits = int(mantissa * 2**64)
    top = (exponent - 1 + 16383) | (0x8000 if value < 0 else 0)
    return struct.pack("<QH", bits, top)


def release3(*records: bytes) -> bytes:
    bof = struct.pack("<HH", 0x1000, 4) + b"\x00" * 22
    return rec(0x00, bof) + b"".join(records) + rec(0x01, b"")


def cell3(kind: int, sheet: int, col: int, row: int, value: bytes) -> bytes:
    return rec(kind, struct.pack("<HBB", row, sheet, col) + value)


def read(tmp_path: Path, data: bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[str, ReadInfo]:
    path = tmp_path / "sheet.bin"
    path.write_bytes(data)
    mime = detect(path)
    assert mime in LotusReader.mimes
    sink = TextSink(1_000_000)
    info = LotusReader().read(path, ReadContext(mime, limits=limits), sink)
    return sink.getvalue(), info


def test_a_wk1_sheet_by_rows_whatever_order_its_cells_come_in(tmp_path: Path) -> None:
    """Lotus writes a sheet column by column: the rows are put together, a label loses its
    alignment prefix, a formula gives its value (and the text a STRING record gives it)."""
    data = classic(
        0x0406,
        lotus_cell(0x0F, 0, 0, b"'Name\x00"),
        lotus_cell(0x0F, 0, 1, b'"Ada\tLovelace\x00'),
        lotus_cell(0x0D, 1, 1, struct.pack("<h", -42)),
        lotus_cell(0x0F, 1, 0, b"^Score\x00"),
        lotus_cell(0x0E, 2, 1, struct.pack("<d", 2.5)),
        lotus_cell(0x10, 3, 1, struct.pack("<d", 7.0) + b"\x02\x00\x03\x00"),
        lotus_cell(0x10, 4, 1, struct.pack("<d", 0.0) + b"\x00\x00"),
        lotus_cell(0x33, 4, 1, b"'made\x00"),
        lotus_cell(0x0F, 0, 3, b"'caf\x82\x00"),  # (code page 437)
    )
    text, info = read(tmp_path, data)
    assert text == "# sheet1\nName\tScore\nAda Lovelace\t-42\t2.5\t7\tmade\ncafé\n"
    assert info == ReadInfo("lotus", pages=1)


def test_cells_formatted_as_dates_or_times_are_shown_as_such(tmp_path: Path) -> None:
    """A DOS Lotus file keeps a date as a serial number of days and shows it by the cell's
    format (special, code 9: D4): ISO, as the Excel readers write dates. Lotus counts a 29
    February 1900 that never was (serial 60), so the days after it are one on."""
    number = lambda v: struct.pack("<d", v)  # noqa: E731
    data = classic(
        0x0406,
        lotus_cell(0x0E, 0, 0, number(35249.0), fmt=0xF9),  # D4
        lotus_cell(0x0D, 1, 0, struct.pack("<h", 59), fmt=0x72),  # D1, an integer cell
        lotus_cell(0x0E, 2, 0, number(61.0), fmt=0x72),
        lotus_cell(0x0E, 3, 0, number(60.0), fmt=0x72),  # the day that never was: a number
        lotus_cell(0x0E, 4, 0, number(0.75), fmt=0x77),  # D6, a time
        lotus_cell(0x0E, 5, 0, number(35249.0), fmt=0x82),  # fixed, two decimals: as stored
    )
    row = read(tmp_path, data)[0].splitlines()[1].split("\t")
    assert row == ["1996-07-03", "1900-02-28", "1900-03-01", "60", "18:00:00", "35249"]


def test_quattro_files_by_their_own_layouts(tmp_path: Path) -> None:
    """WQ1 lays cells out as Lotus does but writes a label's length; WQ2 and Quattro Pro for
    Windows put the column, the sheet and the row first (and WQ2 a label's length too)."""
    wq1 = classic(
        0x5120,
        lotus_cell(0x0F, 0, 0, b"'\x04DATE"),
        lotus_cell(0x0E, 1, 0, struct.pack("<d", 35249.0)),
    )
    assert read(tmp_path, wq1)[0] == "# sheet1\nDATE\t35249\n"
    wq2 = classic(
        0x5121,
        quattro_cell(0x0F, 0, 0, b"^\x03sal"),
        quattro_cell(0x0E, 1, 0, struct.pack("<d", 683.38)),
    )
    assert read(tmp_path, wq2)[0] == "# sheet1\nsal\t683.38\n"
    wb1 = classic(
        0x1001,
        quattro_cell(0x0F, 0, 0, b"'X\x00"),
        quattro_cell(0x0D, 1, 0, struct.pack("<h", 5)),
        quattro_cell(0x0F, 0, 0, b"'on two\x00", sheet=1),
    )
    text, info = read(tmp_path, wb1)
    assert text == "# sheet1\nX\t5\n# sheet2\non two\n" and info.pages == 2
    assert detect(tmp_path / "sheet.bin") == M.QUATTRO


def test_release_3_sheets_and_every_kind_of_number(tmp_path: Path) -> None:
    data = release3(
        cell3(0x16, 0, 0, 0, b"'EMPID\x00"),
        cell3(0x17, 0, 0, 1, extended(67543.0)),
        cell3(0x17, 0, 1, 1, extended(-0.1496347509126205)),
        cell3(0x18, 0, 2, 1, struct.pack("<h", 21 << 1)),  # an integer, packed
        cell3(0x18, 0, 3, 1, struct.pack("<h", (3 << 4) | (2 << 1) | 1)),  # 3 / 20, packed
        cell3(0x19, 0, 4, 1, extended(12.0) + b"\x01\x02"),  # a formula's value
        cell3(0x27, 0, 5, 1, struct.pack("<d", 1.25)),
        cell3(0x17, 0, 6, 1, b"\x00" * 8 + b"\xff\xff"),  # ERR: nothing shown
        cell3(0x16, 2, 1, 0, b'"on the third\x00'),
    )
    text, info = read(tmp_path, data)
    lines = text.splitlines()
    assert lines[:2] == ["# sheet1", "EMPID"]
    assert lines[2].split("\t") == ["67543", "-0.1496347509126205", "21", "0.15", "12", "1.25"]
    assert lines[3:] == ["# sheet3", "\ton the third"]
    assert info.pages == 2


@settings(max_examples=200)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_an_extended_float_gives_back_the_double_written(value: float) -> None:
    assert _extended(extended(value)) == value


def test_a_record_cut_short_is_corrupt_and_a_row_past_the_bound_a_limit(tmp_path: Path) -> None:
    whole = classic(0x0406, lotus_cell(0x0F, 0, 0, b"'some words\x00"))
    with pytest.raises(CorruptFile):
        read(tmp_path, whole[:-8])
    wide = classic(0x0406, lotus_cell(0x0F, 300, 0, b"'far\x00"))
    with pytest.raises(LimitExceeded):
        read(tmp_path, wide, Limits(parts_per_block=100))


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([classic(0x0406), classic(0x5121), classic(0x1002), release3()]),
    st.binary(max_size=400),
)
def test_any_bytes_after_a_lotus_bof_give_text_or_a_verdict(
    tmp_path_factory: pytest.TempPathFactory, start: bytes, tail: bytes
) -> None:
    """A damaged file never takes the reader down with an unexpected exception."""
    tmp_path = tmp_path_factory.mktemp("lotus")
    try:
        text, _info = read(tmp_path, start[:-4] + tail)
    except (CorruptFile, LimitExceeded):
        return
    assert isinstance(text, str)


def test_what_only_looks_like_a_lotus_file_is_not_taken_for_one(tmp_path: Path) -> None:
    path = tmp_path / "cursor.cur"
    path.write_bytes(b"\x00\x00\x02\x00\x01\x00" + b"\x20" * 40)  # a Windows cursor
    assert detect(path) not in LotusReader.mimes


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("KSBASE.WK1", "OBSERV\tDATE\tX\tY\tSOIL"),
        ("KSBASE.WQ2", "OBSERV\tDATE\tX\tY\tSOIL"),
        ("PEYTREND.WK3", "NO\tDATE\tVMC5_10"),
        ("testLotus123-lotusftp.wk4", "EMPID\tLAST\tFIRST"),
    ],
)
def test_the_corpus_s_lotus_and_quattro_files(name: str, words: str) -> None:
    found = sorted(CORPUS.rglob(name)) if CORPUS.is_dir() else []
    if not found:
        pytest.skip("shared corpus not present")
    sink = TextSink(1_000_000)
    LotusReader().read(found[0], ReadContext(detect(found[0])), sink)
    assert words in sink.getvalue()
