"""dBase and FoxPro tables (``.dbf``) read as a sheet, without a tool.

The tables are written field by field here (:func:`table`), as dBase III, dBase IV and
Visual FoxPro write them; two real ones (``data/dbf/``, see its SOURCES.md) hold UTF-8 and
GB18030 text with no code page said.
"""

from __future__ import annotations

import contextlib
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.dbf import DbfReader
from tests.quarrycli import shown, sweep, text_shown

DATA = Path(__file__).parent / "data" / "dbf"
Field = tuple[str, str, int, int]
"""(name, type, width, decimals)"""


def table(
    fields: list[Field],
    rows: list[list[bytes]],
    *,
    version: int = 0x03,
    code_page: int = 0,
    deleted: tuple[int, ...] = (),
    count: int | None = None,
) -> bytes:
    """A dBase table of ``rows`` (each value's bytes, padded to its field's width)."""
    start = 32 + 32 * len(fields) + 1
    size = 1 + sum(width for _name, _kind, width, _dec in fields)
    head = struct.pack(
        "<BBBBIHH", version, 124, 5, 24, len(rows) if count is None else count, start, size
    )
    head += bytes(17) + bytes([code_page]) + bytes(2)
    for name, kind, width, decimals in fields:
        head += (
            name.encode().ljust(11, b"\0")
            + kind.encode()
            + bytes(4)
            + bytes([width, decimals])
            + bytes(14)
        )
    body = b""
    for i, row in enumerate(rows):
        body += b"*" if i in deleted else b" "
        for (_name, kind, width, _dec), value in zip(fields, row, strict=True):
            body += (
                value.rjust(width)
                if kind == "N"
                else value.ljust(width, b" " if kind in "CNDL" else b"\0")
            )
    return head + b"\r" + body + b"\x1a"


def read(data: bytes, tmp_path: Path) -> tuple[str, ReadInfo]:
    path = tmp_path / "t.dbf"
    path.write_bytes(data)
    sink = TextSink(1 << 20)
    info = DbfReader().read(path, ReadContext(M.DBF), sink)
    return sink.getvalue(), info


PEOPLE: list[Field] = [
    ("NAME", "C", 12, 0),
    ("AGE", "N", 3, 0),
    ("BORN", "D", 8, 0),
    ("OK", "L", 1, 0),
]


def test_fields_and_records_as_a_sheet_a_deleted_record_left_out(tmp_path: Path) -> None:
    rows = [
        [b"Ada", b"36", b"18151210", b"T"],
        [b"Gone", b"1", b"20000101", b"F"],
        [b"Grace", b"85", b"19061209", b"?"],
    ]
    text, info = read(table(PEOPLE, rows, deleted=(1,)), tmp_path)
    assert text == "NAME\tAGE\tBORN\tOK\nAda\t36\t1815-12-10\tTRUE\nGrace\t85\t1906-12-09\t\n"
    assert info == ReadInfo("dbf:cp1252")


def test_the_code_page_the_header_names_is_used(tmp_path: Path) -> None:
    rows = [["Привет мир".encode("cp866")]]
    text, info = read(table([("WORD", "C", 20, 0)], rows, code_page=0x65), tmp_path)
    assert text.splitlines()[1] == "Привет мир"
    assert info.extractor == "dbf:cp866"


def test_utf8_wins_even_with_a_character_cut_by_the_fields_width(tmp_path: Path) -> None:
    cut = "日本語".encode()[:7]  # (the last character's bytes cut at the width, as writers do)
    rows = [["Grüße".encode()], [cut]]
    text, info = read(table([("T", "C", 7, 0)], rows, code_page=0x57), tmp_path)
    assert info.extractor == "dbf:utf-8"
    assert text.splitlines()[1:] == ["Grüße", "日本\ufffd"]


def test_no_code_page_said_the_bytes_tell_it(tmp_path: Path) -> None:
    words = "Съешь же ещё этих мягких французских булок, да выпей чаю"
    rows = [[words.encode("cp1251")]]
    text, info = read(table([("PHRASE", "C", 80, 0)], rows), tmp_path)
    assert text.splitlines()[1] == words
    assert info.extractor == "dbf:cp1251"


def test_visual_foxpro_binary_fields(tmp_path: Path) -> None:
    fields: list[Field] = [
        ("N", "I", 4, 0),
        ("PRICE", "Y", 8, 4),
        ("X", "B", 8, 2),
        ("AT", "T", 8, 0),
    ]
    moment = struct.pack("<ii", 2460677, (13 * 3600 + 30 * 60) * 1000)  # 2025-01-01 13:30
    rows = [[struct.pack("<i", -7), struct.pack("<q", 123_4500), struct.pack("<d", 2.5), moment]]
    text, _info = read(table(fields, rows, version=0x30), tmp_path)
    assert text.splitlines()[1] == "-7\t123.4500\t2.5\t2025-01-01 13:30:00"


def test_a_table_cut_short_keeps_its_whole_records_and_says_so(tmp_path: Path) -> None:
    data = table(PEOPLE, [[b"Ada", b"36", b"18151210", b"T"]] * 4)
    text, info = read(data[: -1 - 20], tmp_path)  # (the end mark and most of a record gone)
    assert text.count("Ada") == 3
    assert info.note == "the table is cut short: 3 records read"


@pytest.mark.parametrize(
    "data", [b"", b"\x03" + bytes(40), b"\x03\x7c\x05\x18" + bytes(28) + b"NAME"]
)
def test_what_is_no_table_is_corrupt(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(CorruptFile):
        read(data, tmp_path)


def test_a_table_is_told_apart_by_its_header_whatever_its_name(tmp_path: Path) -> None:
    whole = table(PEOPLE, [[b"Ada", b"36", b"18151210", b"T"]])
    (tmp_path / "export.bin").write_bytes(whole)
    assert detect(tmp_path / "export.bin") == M.DBF
    (tmp_path / "cut.dbf").write_bytes(whole[:-20])  # (named a table: taken for one)
    assert detect(tmp_path / "cut.dbf") == M.DBF
    (tmp_path / "cut.bin").write_bytes(whole[:-20])  # (its size does not fit: not said)
    assert detect(tmp_path / "cut.bin") != M.DBF
    (tmp_path / "noise.bin").write_bytes(b"\x03\x01\x02\x03" + bytes(range(256)) * 4)
    assert detect(tmp_path / "noise.bin") != M.DBF


@given(st.binary(max_size=300))
@settings(max_examples=200, deadline=None)
def test_any_bytes_after_a_header_give_rows_or_corrupt_never_a_crash(tail: bytes) -> None:
    head = table(PEOPLE, [])[:-1]
    sink = TextSink(1 << 20)
    with tempfile.NamedTemporaryFile(suffix=".dbf") as fh:
        fh.write(head + tail)
        fh.flush()
        with contextlib.suppress(CorruptFile):
            DbfReader().read(Path(fh.name), ReadContext(M.DBF), sink)


def test_real_tables_whose_code_page_is_not_said(tmp_path: Path) -> None:
    text, info = read((DATA / "testDBF.dbf").read_bytes(), tmp_path)
    assert info.extractor == "dbf:utf-8"
    assert text.splitlines()[0] == "TEXT_FIELD\tNUMERIC_FI\tDATE_FIELD"
    assert "Whan that aprill\t2.5\t2016-05-24" in text
    text, info = read((DATA / "testDBF_gb18030.dbf").read_bytes(), tmp_path)
    assert info.extractor == "dbf:gb18030"
    assert "It was the best of times" in text


def test_the_real_quarry_reads_a_folder_of_tables(tmp_path: Path) -> None:
    root = tmp_path / "gis"
    root.mkdir()
    shutil.copy(DATA / "testDBF.dbf", root / "parcels.dbf")
    (root / "people.DBF").write_bytes(table(PEOPLE, [[b"Ada", b"36", b"18151210", b"T"]]))
    (root / "broken.dbf").write_bytes(b"\x03\x00\x00\xff" + bytes(60))
    store = tmp_path / "store"
    proc = sweep(root, store)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Whan that aprill" in text_shown(root / "parcels.dbf", store)
    assert shown(root / "people.DBF", store)["reader"] == "dbf"
    assert (
        shown(root / "broken.dbf", store)["status"],
        shown(root / "broken.dbf", store)["reason"],
    ) == ("error", "corrupt")
