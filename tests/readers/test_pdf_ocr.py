"""PDF fallbacks and OCR: pypdf after a failing pdftotext, OCR of the scanned pages only,
blank pages that are not scans, the OCR time budget, and OCR languages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.extract import Outcome
from engine.readers import image as image_mod
from engine.readers import pdf as pdf_mod
from engine.tools import ToolSet, discover
from fixtures.gen import pdf as P
from fixtures.gen.common import write
from tests.readkit import read_file, stand_in


def _read(path: Path, tools: ToolSet) -> tuple[Outcome, str]:
    return read_file(path, tools)


def _ocr_tools(tmp_path: Path, langs: str = "eng") -> ToolSet:
    """Stand-ins: pdftoppm logs the page it renders; tesseract prints its arguments."""
    log = tmp_path / "pages.log"
    tmp_path.mkdir(parents=True, exist_ok=True)
    pdftoppm = stand_in(tmp_path, "pdftoppm", f'echo "$5" >> {log}; : > "${{10}}.png"')
    listing = "\\n".join(["List of available languages (n):", *langs.split()])
    tesseract = stand_in(
        tmp_path,
        "tesseract",
        f'case "$1" in --list-langs) printf "{listing}\\n"; exit 0;; esac\n'
        'if [ "$4" = 0 ]; then echo "Script: Cyrillic"; exit 0; fi\n'
        'shift 2; echo "OCR $*"',
    )
    return ToolSet((pdftoppm, tesseract))


def test_pypdf_is_tried_when_pdftotext_fails(tmp_path: Path) -> None:
    path = write(tmp_path, "t.pdf", P.W.text_pdf(["Hello pypdf"], ["Page two"]))
    broken = stand_in(tmp_path, "pdftotext", "echo 'Syntax Error: broken' >&2; exit 1")
    outcome, text = _read(path, ToolSet((broken,)))
    assert (outcome.status, outcome.extractor, outcome.pages) == ("ok", "pypdf", 2)
    assert text == "Hello pypdf\n\fPage two\n"


def test_pdftotexts_verdict_stands_when_pypdf_fails_too(tmp_path: Path) -> None:
    path = write(tmp_path, "b.pdf", b"%PDF-1.4\n1 0 obj garbage\n%%EOF\n")
    broken = stand_in(tmp_path, "pdftotext", "echo 'Syntax Error: broken' >&2; exit 1")
    outcome, _ = _read(path, ToolSet((broken,)))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")
    assert outcome.error is not None and "pdftotext could not open it" in outcome.error


def test_only_the_scanned_page_is_ocrd(tmp_path: Path) -> None:
    path = write(tmp_path, "m.pdf", P.mixed_pdf())
    tools = _ocr_tools(tmp_path)
    outcome, text = _read(path, tools)
    assert (outcome.status, outcome.extractor, outcome.pages) == ("ok", "pypdf+tesseract", 3)
    assert text.startswith(P.TYPED + "\fOCR --psm 1 -l eng\n")
    assert (tmp_path / "pages.log").read_text() == "2\n"  # page 3 is blank: not a scan


def test_blank_pages_are_empty_not_scanned(tmp_path: Path) -> None:
    path = write(tmp_path, "b.pdf", P.blank_pdf())
    for tools in (ToolSet.empty(), _ocr_tools(tmp_path)):
        outcome, _ = _read(path, tools)
        assert (outcome.status, outcome.reason, outcome.pages) == ("empty", "no_text", 3)
    assert not (tmp_path / "pages.log").exists()


def test_scans_without_ocr_are_still_scanned(tmp_path: Path) -> None:
    outcome, _ = _read(write(tmp_path, "s.pdf", P.scanned_pdf()), ToolSet.empty())
    assert (outcome.status, outcome.reason) == ("empty", "scanned")


def test_ocr_stops_when_the_budget_runs_out_and_says_how_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_mod, "OCR_PAGE_SECONDS", 10_000.0)  # every page is past budget
    outcome, text = _read(write(tmp_path, "s.pdf", P.scanned_pdf()), _ocr_tools(tmp_path))
    assert (outcome.status, outcome.reason, text) == ("error", "limit", "")
    assert outcome.error == "ocr_time: the read's time ran out after OCR of 0 of 2 pages"


def test_ocr_budget_keeps_the_text_layer_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_mod, "OCR_PAGE_SECONDS", 10_000.0)
    outcome, text = _read(write(tmp_path, "m.pdf", P.mixed_pdf()), _ocr_tools(tmp_path))
    assert outcome.status == "ok"
    assert text.startswith(P.TYPED)
    assert text.endswith(
        # no time even to look for pictures: every blank page counts as one to OCR
        "[quarry: text cut at the ocr_time cap: the read's time ran out after OCR of 0 of 2"
        " pages]\n"
    )


def test_ocr_uses_the_installed_languages_of_the_pages_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image_mod._installed.cache_clear()
    path = write(tmp_path, "s.pdf", P.scanned_pdf())
    tools = _ocr_tools(tmp_path, "eng osd rus ukr")
    _, text = _read(path, tools)
    assert text.startswith("OCR --psm 1 -l rus+ukr\n")
    image_mod._installed.cache_clear()
    _, text = _read(path, _ocr_tools(tmp_path / "one", "eng"))
    assert text.startswith("OCR --psm 1 -l eng\n")
    monkeypatch.setenv(image_mod.LANG_ENV, "deu+eng")
    _, text = _read(path, tools)
    assert text.startswith("OCR --psm 1 -l deu+eng\n")
    image_mod._installed.cache_clear()


@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("pdftotext", "pdftoppm", "tesseract")),
    reason="needs pdftotext, pdftoppm and tesseract",
)
def test_real_tools_ocr_the_scanned_page_of_a_mixed_pdf(tmp_path: Path) -> None:
    outcome, text = _read(write(tmp_path, "m.pdf", P.mixed_pdf()), discover())
    assert outcome.extractor == "pdftotext+tesseract"
    assert text.startswith(P.TYPED) and "SCANNED PAGE TWO" in text


def test_thousands_of_empty_pages_are_empty_and_never_ocrd(tmp_path: Path) -> None:
    """Issue 10: 100,000 empty pages were tool_failed "tesseract timed out after 0 s"."""
    path = write(tmp_path, "e.pdf", P.W.make_pdf([P.W.TextPage(()) for _ in range(3000)]))
    outcome, _ = _read(path, _ocr_tools(tmp_path))
    assert (outcome.status, outcome.reason, outcome.pages) == ("empty", "no_text", 3000)
    assert not (tmp_path / "pages.log").exists()


def test_ocr_that_the_budget_stops_mid_page_keeps_its_verdict_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load a page can take longer than OCR_PAGE_SECONDS: the tool is stopped by the
    read's budget, and the verdict says how far OCR got (not a bare timeout)."""
    import time

    from engine.readers.base import ReadContext, TextSink

    monkeypatch.setattr(pdf_mod, "OCR_PAGE_SECONDS", 0.5)
    pdftoppm = _ocr_tools(tmp_path).found[0]
    slow = stand_in(
        tmp_path / "slow", "tesseract", 'case "$1" in --list-langs) exit 0;; esac; sleep 5'
    )
    tools = ToolSet((pdftoppm, slow))
    path = write(tmp_path, "s.pdf", P.scanned_pdf())
    ctx = ReadContext("application/pdf", tools=tools, deadline=time.monotonic() + 2.0)
    with pytest.raises(pdf_mod.LimitExceeded) as caught:
        pdf_mod.PdfReader().read(path, ctx, TextSink(1000))
    assert str(caught.value) == "ocr_time: the read's time ran out after OCR of 0 of 2 pages"
