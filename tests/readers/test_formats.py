"""Excel binary workbooks, Visio, XPS, Windows Write and WordPerfect: exact text and verdicts."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.extract import Outcome
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.fixedzip import _sheet_record
from engine.tools import Tool, ToolSet
from fixtures.gen import formats as F
from fixtures.gen.common import write, write_zip
from tests.readkit import read_file

NO_TOOLS = ToolSet.empty()


def _read(
    path: Path, tools: ToolSet = NO_TOOLS, limits: Limits = DEFAULT_LIMITS
) -> tuple[Outcome, str]:
    return read_file(path, tools, limits)


@pytest.mark.parametrize(
    ("name", "members", "extractor", "text", "pages"),
    [
        ("s.xlsb", F.xlsb_members(), "xlsb", F.XLSB_TEXT, 3),
        ("s.vsdx", F.vsdx_members(), "vsdx", F.VSDX_TEXT, 3),
        ("s.xps", F.xps_members(), "xps", F.XPS_TEXT, 2),
    ],
)
def test_zip_based_formats_exact(
    tmp_path: Path,
    name: str,
    members: dict[str, bytes | str],
    extractor: str,
    text: str,
    pages: int,
) -> None:
    outcome, got = _read(write_zip(tmp_path, name, members))
    assert (outcome.status, outcome.extractor, outcome.pages, got) == ("ok", extractor, pages, text)


def test_named_as_plain_zip_they_are_still_detected(tmp_path: Path) -> None:
    outcome, _ = _read(write_zip(tmp_path, "workbook.zip", F.xlsb_members()))
    assert outcome.extractor == "xlsb"


def test_xlsb_declaring_a_huge_sheet_is_a_named_limit(tmp_path: Path) -> None:
    members = F.xlsb_members()
    members["xl/worksheets/sheet1.bin"] = F._sheet([], 5000)
    outcome, _ = _read(write_zip(tmp_path, "w.xlsb", members), limits=Limits(parts_per_block=100))
    assert (outcome.status, outcome.reason) == ("error", "limit")


def test_xlsb_whose_sheet_records_carry_four_bytes_more_reads_the_same(tmp_path: Path) -> None:
    """Excel 2007 beta wrote 4 bytes more before a sheet record's names (Tika's
    testEXCEL.xlsb): pyxlsb took a letter of ``rId1`` for a length and the workbook was
    error/corrupt."""
    outcome, got = _read(write_zip(tmp_path, "beta.xlsb", F.xlsb_members(sheet_pad=b"\0" * 4)))
    assert (outcome.status, outcome.pages, got) == ("ok", 3, F.XLSB_TEXT)


def _string(text: str) -> bytes:
    raw = text.encode("utf-16-le", "surrogatepass")
    return struct.pack("<I", len(raw) // 2) + raw


@settings(max_examples=300)
@given(rel=st.text(max_size=20), name=st.text(min_size=1, max_size=40), sheet_id=st.integers(0))
def test_a_sheet_record_s_names_as_the_format_lays_them_out(
    rel: str, name: str, sheet_id: int
) -> None:
    record = struct.pack("<II", 0, sheet_id % 2**32) + _string(rel) + _string(name)
    # (lone surrogates come back replaced, as in any damaged name)
    back = [
        t.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace") for t in (rel, name)
    ]
    assert _sheet_record(record) == (sheet_id % 2**32, *back)


_SHEET_NAME = st.text(st.characters(codec="ascii", categories=["L", "N", "Zs"]), min_size=1)


@settings(max_examples=300)
@given(n=st.integers(1, 10_000), name=_SHEET_NAME)
def test_a_sheet_record_with_four_bytes_more_as_excel_2007_beta_wrote_it(n: int, name: str) -> None:
    record = struct.pack("<III", 0, 0, n) + _string(f"rId{n}") + _string(name)
    assert _sheet_record(record) == (n, f"rId{n}", name)


@given(st.binary(max_size=80))
def test_any_sheet_record_gives_names_that_fit_it_or_none(data: bytes) -> None:
    found = _sheet_record(data)
    if found is not None:
        assert isinstance(found[2], str)


def test_xlsb_damaged_is_corrupt(tmp_path: Path) -> None:
    members = F.xlsb_members()
    del members["xl/_rels/workbook.bin.rels"]
    outcome, _ = _read(write_zip(tmp_path, "d.xlsb", members))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def test_vsdx_without_pages_is_corrupt(tmp_path: Path) -> None:
    members = {k: v for k, v in F.vsdx_members().items() if "/pages/" not in k}
    outcome, _ = _read(write_zip(tmp_path, "n.vsdx", members))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def test_write_exact_and_damaged(tmp_path: Path) -> None:
    outcome, text = _read(write(tmp_path, "s.wri", F.wri_bytes()))
    assert (outcome.status, outcome.extractor, text) == ("ok", "wri", F.WRI_TEXT)
    bad = bytearray(F.wri_bytes())
    struct.pack_into("<I", bad, 14, 10_000_000)
    outcome, _ = _read(write(tmp_path, "b.wri", bytes(bad)))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")
    # a picture paragraph: binary inside the text run is refused, never stored
    junk = bytearray(F.wri_bytes("x\n"))
    junk[128:128] = bytes(range(0, 32)) * 8 + bytes(range(0x80, 0xA0)) * 8
    struct.pack_into("<I", junk, 14, len(junk))
    outcome, _ = _read(write(tmp_path, "p.wri", bytes(junk)))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def _fake(tmp_path: Path, script: str) -> ToolSet:
    exe = tmp_path / "bin" / "wpd2text"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)
    return ToolSet((Tool("wpd2text", str(exe), "0.10"),))


def test_wordperfect_needs_wpd2text_and_reads_its_output(tmp_path: Path) -> None:
    path = write(tmp_path, "w.wpd", b"\xffWPC" + b"\x00" * 60)
    outcome, _ = _read(path)
    assert (outcome.status, outcome.reason, outcome.needs) == (
        "unsupported",
        "needs_tool",
        ("wpd2text",),
    )
    outcome, text = _read(path, _fake(tmp_path, "printf 'WordPerfect text\\n'"))
    assert (outcome.status, outcome.extractor, text) == ("ok", "wpd2text", "WordPerfect text\n")
    outcome, _ = _read(path, _fake(tmp_path, "echo 'ERROR: Unsupported file format!' >&2; exit 1"))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


@pytest.mark.parametrize(
    ("name", "marker", "mime"),
    [
        ("deck.key", "Index/Document.iwa", "application/vnd.apple.keynote"),
        ("sheet.numbers", "Index.zip", "application/vnd.apple.numbers"),
        ("old.pages", "buildVersionHistory.plist", "application/vnd.apple.pages"),
        ("noext", "Index/Document.iwa", "application/vnd.apple.iwork"),
        ("nested.key", "Presentation.key/Index.zip", "application/vnd.apple.keynote"),
    ],
)
def test_iwork_is_recognised_not_read_as_a_zip(
    tmp_path: Path, name: str, marker: str, mime: str
) -> None:
    """Its kind's libetonyek tool reads it (tests/readers/test_liberation.py): without the
    tools it waits on them, never read as a zip of members."""
    path = write_zip(tmp_path, name, {marker: b"\x00protobuf", "Metadata/Properties.plist": "x"})
    outcome, _ = _read(path)
    assert (outcome.status, outcome.reason, outcome.mime) == ("unsupported", "needs_tool", mime)
    assert outcome.members == ()
