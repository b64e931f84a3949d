"""The PDF reader: pdftotext and pypdf paths, encryption, scans and OCR, hostile files."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, NeedsTool, ToolFailed
from engine.limits import Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.pdf import _UNPRINTABLE, PdfReader, printable_share
from engine.tools import Tool, ToolSet, discover
from fixtures.gen import _pdfwriter as W
from fixtures.gen.pdf import scanned_pdf, unmapped_font_pdf

HAVE_PDFTOTEXT = shutil.which("pdftotext") is not None
HAVE_OCR = shutil.which("pdftoppm") is not None and shutil.which("tesseract") is not None
needs_pdftotext = pytest.mark.skipif(not HAVE_PDFTOTEXT, reason="pdftotext not on PATH")
needs_ocr = pytest.mark.skipif(not HAVE_OCR, reason="pdftoppm or tesseract not on PATH")

TWO_PAGES = W.text_pdf(["Hello world", "Second line (x) café"], ["Page two"])
EXPECTED = "Hello world\nSecond line (x) café\n\fPage two\n"
# Both readers, pdftotext when installed: every hostile case must hold on either path.
PATHS = ["pypdf", pytest.param("pdftotext", marks=needs_pdftotext)]


def tools_for(path: str) -> ToolSet:
    """Only pdftotext for the ``pdftotext`` path, nothing for pypdf (no OCR either way)."""
    return discover().without(["pdftoppm", "tesseract"]) if path == "pdftotext" else ToolSet()


def read(tmp_path: Path, data: bytes, tools: ToolSet, **limits: float) -> tuple[str, ReadInfo]:
    """Write ``data`` to a file and read it; return the text and the info."""
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    ctx = ReadContext(M.PDF, limits=Limits(**limits), tools=tools)  # type: ignore[arg-type]
    sink = TextSink(1_000_000)
    info = PdfReader().read(path, ctx, sink)
    return sink.getvalue(), info


def test_pypdf_reads_text_pages_with_form_feeds(tmp_path: Path) -> None:
    text, info = read(tmp_path, TWO_PAGES, ToolSet.empty())
    assert info == ReadInfo("pypdf", pages=2)
    assert text == EXPECTED


def test_pypdf_reads_flate_content(tmp_path: Path) -> None:
    text, info = read(tmp_path, W.text_pdf(["Compressed words"], flate=True), ToolSet.empty())
    assert (text, info.pages) == ("Compressed words\n", 1)


@needs_pdftotext
def test_pdftotext_reads_text_pages_with_form_feeds(tmp_path: Path) -> None:
    text, info = read(tmp_path, TWO_PAGES, tools_for("pdftotext"))
    assert info == ReadInfo("pdftotext", pages=2)
    assert text == EXPECTED


@pytest.mark.parametrize("path", PATHS)
def test_empty_user_password_is_read(tmp_path: Path, path: str) -> None:
    data = W.encrypt(W.text_pdf(["Open sesame"]), "")
    text, info = read(tmp_path, data, tools_for(path))
    assert (text, info.extractor) == ("Open sesame\n", path)


@pytest.mark.parametrize("path", PATHS)
def test_password_protected_is_encrypted(tmp_path: Path, path: str) -> None:
    data = W.encrypt(W.text_pdf(["Top secret words"]), "hunter2")
    with pytest.raises(EncryptedFile) as caught:
        read(tmp_path, data, tools_for(path))
    assert "secret" not in str(caught.value).lower()


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="zero-bytes"),
        pytest.param(b"this is not a pdf at all\n" * 20, id="bad-header"),
        pytest.param(TWO_PAGES[:200], id="truncated"),
        pytest.param(W.cyclic_pages_pdf(), id="page-tree-cycle"),
    ],
)
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.timeout(20)
def test_hostile_pdfs_are_corrupt(tmp_path: Path, data: bytes, path: str) -> None:
    with pytest.raises(CorruptFile):
        read(tmp_path, data, tools_for(path))


@pytest.mark.parametrize("path", PATHS)
def test_image_only_pages_are_scanned_without_ocr_tools(tmp_path: Path, path: str) -> None:
    text, info = read(tmp_path, scanned_pdf(), tools_for(path))
    assert info == ReadInfo(path, pages=2, scanned=True)
    assert text == ""


@needs_ocr
@pytest.mark.timeout(60)
def test_scanned_pages_are_ocrd_when_tools_are_there(tmp_path: Path) -> None:
    text, info = read(tmp_path, scanned_pdf(), discover())
    assert info == ReadInfo("pdftoppm+tesseract", pages=2)
    first, second = text.split("\f")
    assert "TEST 42" in first and "HELLO WORLD" in first
    assert "SCANNED PAGE ONE" in second


@needs_ocr
def test_ocr_needs_both_tools(tmp_path: Path) -> None:
    _, info = read(tmp_path, scanned_pdf(), discover().without(["tesseract"]))
    assert info.scanned and info.extractor == "pdftotext"


@pytest.mark.parametrize("path", PATHS)
def test_a_font_without_a_usable_unicode_map_needs_ocr_whatever_reads_it(
    tmp_path: Path, path: str
) -> None:
    # The file is well formed: neither corrupt (pdftotext reads it, as pypdf does) nor
    # waiting for pdftotext (its font's ToUnicode map is what poppler applies too).
    with pytest.raises(NeedsTool) as caught:
        read(tmp_path, unmapped_font_pdf(), tools_for(path))
    assert caught.value.tools == ("pdftoppm", "tesseract")
    assert "only OCR can read it" in str(caught.value)
    assert "Garbled" not in str(caught.value)


def test_unprintable_pypdf_text_of_a_font_without_tounicode_may_need_pdftotext(
    tmp_path: Path,
) -> None:
    # A font with no ToUnicode map: its codes are read through its encoding, which poppler
    # may know better than pypdf, so pdftotext is named beside OCR.
    codes = bytes(range(1, 9)) + bytes(range(14, 37))  # 31 codes, as many as the words
    data = unmapped_font_pdf().replace(b" /ToUnicode 3 0 R", b" " * 17)  # offsets kept
    data = data.replace(b"(Garbled words all over the page)", b"(" + codes + b")")
    with pytest.raises(NeedsTool) as caught:
        read(tmp_path, data, ToolSet.empty())
    assert caught.value.tools == ("pdftotext", "pdftoppm", "tesseract")
    assert "pdftotext may" in str(caught.value)


@needs_ocr
def test_a_font_without_a_usable_unicode_map_is_read_by_ocr(tmp_path: Path) -> None:
    text, info = read(tmp_path, unmapped_font_pdf(), discover())
    assert (info.extractor, info.pages) == ("pdftoppm+tesseract", 1)
    assert "Garbled words" in text


def test_printable_share() -> None:
    assert printable_share("") == 1.0
    assert printable_share("abc \n\f") == 1.0
    assert printable_share("ab\x01\x02") == 0.5
    assert printable_share("\ue000x") == 0.5


@given(st.text(alphabet=st.characters(codec=None), max_size=200))
def test_printable_share_is_the_share_of_visible_characters_that_print(text: str) -> None:
    """Against the definition, one character at a time (any text, any code point)."""
    visible = [c for c in text if not re.match(r"\s", c)]
    bad = [c for c in text if _UNPRINTABLE.match(c)]
    expected = 1.0 if not visible else 1.0 - len(bad) / len(visible)
    assert printable_share(text) == pytest.approx(expected)


def test_tool_timeout_falls_back_to_pypdf(tmp_path: Path) -> None:
    script = tmp_path / "pdftotext"
    script.write_text("#!/bin/sh\nsleep 5\n")
    script.chmod(0o755)
    tools = ToolSet((Tool("pdftotext", str(script), "0"),))
    text, info = read(tmp_path, TWO_PAGES, tools, tool_timeout_s=0.5)
    assert info.extractor == "pypdf" and "Page two" in text


def test_tool_timeout_with_no_budget_left_is_tool_failed(tmp_path: Path) -> None:
    script = tmp_path / "pdftotext"
    script.write_text("#!/bin/sh\nsleep 5\n")
    script.chmod(0o755)
    tools = ToolSet((Tool("pdftotext", str(script), "0"),))
    path = tmp_path / "doc.pdf"
    path.write_bytes(TWO_PAGES)
    # 2 s left: after pdftotext's 0.5 s, too little for pypdf (OCR_PAGE_SECONDS): its verdict
    ctx = ReadContext(
        M.PDF, limits=Limits(tool_timeout_s=0.5), tools=tools, deadline=time.monotonic() + 2
    )
    with pytest.raises(ToolFailed, match="timed out"):
        PdfReader().read(path, ctx, TextSink(1_000_000))


def test_reader_identity() -> None:
    reader = PdfReader()
    assert (reader.name, reader.version, reader.mimes) == ("pdf", 2, frozenset({M.PDF}))
    assert set(reader.tools) == {"pdftotext", "pdftoppm", "tesseract"}
