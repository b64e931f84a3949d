"""Built-in legacy Office readers: .xls by xlrd, .ppt text atoms from the OLE2 stream."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.ppt import PptReader
from engine.readers.xls import XlsReader
from fixtures.gen import legacy as L
from fixtures.gen._cfb import compound_file


def _read(
    reader: XlsReader | PptReader, path: Path, limits: Limits = DEFAULT_LIMITS
) -> tuple[str, ReadInfo]:
    sink = TextSink(1_000_000)
    info = reader.read(path, ReadContext(mime=next(iter(reader.mimes)), limits=limits), sink)
    return sink.getvalue(), info


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_xls_exact_text_types_and_blank_sheet(tmp_path: Path) -> None:
    path = _file(tmp_path, "s.xls", L.xls_bytes())
    assert detect(path) == M.XLS
    assert _read(XlsReader(), path) == (L.XLS_TEXT, ReadInfo("xlrd", pages=3))


def test_xls_truncated_is_corrupt(tmp_path: Path) -> None:
    data = L.xls_bytes()
    with pytest.raises(CorruptFile):
        _read(XlsReader(), _file(tmp_path, "t.xls", data[: len(data) // 2]))


def test_xls_row_wider_than_the_part_cap_is_a_named_limit(tmp_path: Path) -> None:
    path = _file(tmp_path, "s.xls", L.xls_bytes())
    with pytest.raises(LimitExceeded) as caught:
        _read(XlsReader(), path, Limits(parts_per_block=3))
    assert caught.value.limit == "parts_per_block"


def test_ppt_exact_text_from_the_current_edit(tmp_path: Path) -> None:
    path = _file(tmp_path, "s.ppt", L.ppt_bytes())
    assert detect(path) == M.PPT
    text, info = _read(PptReader(), path)
    assert text == L.PPT_TEXT
    assert info == ReadInfo("ppt", pages=2)
    assert "Old title" not in text and "Master" not in text and "Speaker" not in text


def test_ppt_streams_are_read_without_olefile_recording_the_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import traceback

    path = _file(tmp_path, "s.ppt", L.ppt_bytes())
    monkeypatch.setattr(traceback, "extract_stack", lambda *a, **k: pytest.fail("stack kept"))
    assert _read(PptReader(), path)[0] == L.PPT_TEXT


def test_ppt_encrypted_edit_is_encrypted(tmp_path: Path) -> None:
    with pytest.raises(EncryptedFile):
        _read(PptReader(), _file(tmp_path, "e.ppt", L.ppt_bytes(encrypted=True)))


def test_ppt_encrypted_summary_stream_is_encrypted(tmp_path: Path) -> None:
    data = compound_file({"PowerPoint Document": b"", "EncryptedSummary": b"x"})
    with pytest.raises(EncryptedFile):
        _read(PptReader(), _file(tmp_path, "e.ppt", data))


def _streams(data: bytes) -> dict[str, bytes]:
    import olefile

    with olefile.OleFileIO(data) as ole:
        return {"/".join(n): ole.openstream(n).read() for n in ole.listdir()}


def test_ppt_without_current_user_reads_the_stream_in_order(tmp_path: Path) -> None:
    streams = _streams(L.ppt_bytes())
    del streams["Current User"]
    text, info = _read(PptReader(), _file(tmp_path, "n.ppt", compound_file(streams)))
    # every slide-side atom, stale edit included, masters and notes still left out
    assert text == (
        "# slide1\nShape on slide one\nPlain bytes shape\nOld title\nTitle one\nBody line\n"
        "second line\nZweite Folie – ü\n"
    )
    assert info.pages == 1


def test_ppt_broken_edit_chain_falls_back(tmp_path: Path) -> None:
    streams = _streams(L.ppt_bytes())
    user = bytearray(streams["Current User"])
    struct.pack_into("<I", user, 16, 3)  # offsetToCurrentEdit into the middle of a record
    streams["Current User"] = bytes(user)
    text, _ = _read(PptReader(), _file(tmp_path, "b.ppt", compound_file(streams)))
    assert "Title one" in text and "Shape on slide one" in text


def test_ppt_truncated_stream_never_raises_past_the_reader(tmp_path: Path) -> None:
    streams = _streams(L.ppt_bytes())
    streams["PowerPoint Document"] = streams["PowerPoint Document"][:90]
    text, _ = _read(PptReader(), _file(tmp_path, "t.ppt", compound_file(streams)))
    assert text == "# slide1\nShape on slide one\n"


def test_ppt_not_ole_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile):
        _read(PptReader(), _file(tmp_path, "x.ppt", b"\x01\x02" * 300))


def test_ppt_deep_nesting_is_bounded(tmp_path: Path) -> None:
    atom = L.chars("deep")
    for _ in range(10_000):
        atom = L.box(0xF00D, atom)
    streams = {"PowerPoint Document": atom}
    text, _ = _read(PptReader(), _file(tmp_path, "d.ppt", compound_file(streams)))
    assert text == ""  # past MAX_DEPTH the atoms are not reached; nothing recursed
