"""The image reader: OCR by tesseract, for real when it is installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine import mimes as M
from engine.errors import CorruptFile, NeedsTool, ToolFailed
from engine.limits import Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.image import ImageReader
from engine.tools import Tool, ToolSet, discover
from fixtures.gen import _raster as R

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="no tesseract")
LINES = ["OCR TEST 42", "HELLO WORLD"]


def ocr(tmp_path: Path, name: str, data: bytes, mime: str, tools: ToolSet) -> tuple[str, ReadInfo]:
    path = tmp_path / name
    path.write_bytes(data)
    sink = TextSink(100_000)
    info = ImageReader().read(path, ReadContext(mime, tools=tools), sink)
    return sink.getvalue(), info


def test_without_tesseract_it_needs_the_tool(tmp_path: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        ocr(tmp_path, "a.png", R.png(R.render(LINES)), M.PNG, ToolSet.empty())
    assert caught.value.tools == ("tesseract",)


@needs_tesseract
@pytest.mark.parametrize(
    ("name", "mime", "encode"),
    [("a.png", M.PNG, R.png), ("a.bmp", M.BMP, R.bmp), ("a.tif", M.TIFF, lambda g: R.tiff([g]))],
)
def test_ocr_of_clear_capitals(tmp_path: Path, name: str, mime: str, encode: object) -> None:
    data = encode(R.render(LINES))  # type: ignore[operator]
    text, info = ocr(tmp_path, name, data, mime, discover())
    assert "TEST 42" in text and "HELLO WORLD" in text
    assert info == ReadInfo("tesseract", pages=1 if mime == M.TIFF else None)


@needs_tesseract
def test_multi_page_tiff_keeps_page_breaks(tmp_path: Path) -> None:
    pages = [R.render(["HELLO WORLD"]), R.render(["SCANNED PAGE ONE"])]
    text, info = ocr(tmp_path, "two.tif", R.tiff(pages), M.TIFF, discover())
    first, second = text.split("\f")
    assert "HELLO WORLD" in first and "SCANNED PAGE ONE" in second
    assert info.pages == 2


@needs_tesseract
def test_blank_image_has_no_text(tmp_path: Path) -> None:
    blank = R.Gray(200, 100, b"\xff" * 20_000)
    assert ocr(tmp_path, "blank.png", R.png(blank), M.PNG, discover())[0] == ""


@needs_tesseract
@pytest.mark.parametrize("data", [b"", R.png(R.render(LINES))[:100]], ids=["empty", "truncated"])
def test_unreadable_image_is_corrupt(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(CorruptFile):
        ocr(tmp_path, "bad.png", data, M.PNG, discover())


def test_tesseract_timeout_is_tool_failed(tmp_path: Path) -> None:
    exe = tmp_path / "tesseract"
    # its languages at once (the reader asks before it reads), then a page that takes too long
    exe.write_text('#!/bin/sh\ncase "$1" in --list-langs) exit 0;; esac\nsleep 5\n')
    exe.chmod(0o755)
    tools = ToolSet((Tool("tesseract", str(exe), "0"),))
    path = tmp_path / "a.png"
    path.write_bytes(R.png(R.render(["X"])))
    ctx = ReadContext(M.PNG, limits=Limits(tool_timeout_s=0.5), tools=tools)
    with pytest.raises(ToolFailed, match="timed out"):
        ImageReader().read(path, ctx, TextSink(100))


def rotate90(img: R.Gray) -> R.Gray:
    """The picture turned a quarter clockwise."""
    rows = [img.row(y) for y in range(img.height)]
    pixels = bytes(rows[img.height - 1 - x][y] for y in range(img.width) for x in range(img.height))
    return R.Gray(img.height, img.width, pixels)


@needs_tesseract
def test_sideways_scan_is_turned_before_reading(tmp_path: Path) -> None:
    img = rotate90(R.render(["HELLO WORLD", "SCANNED PAGE ONE", "OCR TEST 42"]))
    text, _ = ocr(tmp_path, "sideways.png", R.png(img), M.PNG, discover())
    assert "HELLO WORLD" in text
