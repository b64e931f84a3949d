"""PDF: pdftotext when poppler is installed, pypdf otherwise, OCR for scans.

Pages are separated by a form feed and counted in ``ReadInfo.pages``. A document that opens
with the empty password is read like any other; one that needs a password is
``error/encrypted``. When pdftotext fails on a file, pypdf is tried before a verdict is
given. A page without a text layer that shows an image is a scan: with pdftoppm and
tesseract available it is rendered at 300 dpi and OCR'd (only those pages, in a document
whose other pages have text: extractor ``pdftotext+tesseract``), otherwise a document of
scans reports ``scanned`` and no text. Pages with neither text nor images are empty, never
OCR'd. OCR stops when the read's budget cannot cover another page: the pages read so far
are kept and the record says ``ocr_time: the read's time ran out after OCR of N of M
pages``. Text that is less than 90% printable is never stored: the file is well formed, but
its fonts map their codes to no usable Unicode (a ``ToUnicode`` map onto control
characters), so no text tool can read it: the pages are OCR'd as scans are when pdftoppm and
tesseract are installed, else the file is ``unsupported/needs_tool`` naming them (and
pdftotext too when pypdf read it and a font has no ``ToUnicode`` map, whose codes poppler
may know better). A text layer that is printable but reads as garbage (quality
``suspect`` or ``garbled``: a font whose codes are not its letters) is read again with pypdf,
then by OCR when pdftoppm and tesseract are installed, and the best text by the same quality
signals is kept.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine import quality
from engine.errors import (
    CorruptFile,
    EncryptedFile,
    LimitExceeded,
    NeedsTool,
    ReadFailure,
    ReadTimeout,
    ToolFailed,
)
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.image import ocr_image, tool_exit_code

MIN_PRINTABLE = 0.9
"""Smallest share of printable characters among the non-blank ones that is kept."""
OCR_DPI = 300
"""Resolution scanned pages are rendered at for OCR."""

_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd\U000f0000-\U0010ffff]"
)
_BLANK = re.compile(r"\s")
OCR_TOOLS = ("pdftoppm", "tesseract")
"""The tools OCR needs, both."""


class UnmappedText(ReadFailure):
    """A text layer less than :data:`MIN_PRINTABLE` printable: its fonts map their codes to
    no usable Unicode. Not the file's fault (it is well formed) nor a tool's: a verdict for
    :class:`PdfReader` to give, OCR being the one way left to its words."""

    def __init__(self, reader: str, share: float, pages: int, tools: tuple[str, ...]) -> None:
        super().__init__(f"{reader} text is {share:.0%} printable: a font without a usable map")
        self.share = share
        self.pages = pages
        self.tools = tools
        """The tools that may read it: OCR's, and pdftotext when pypdf could not tell."""

    def verdict(self) -> NeedsTool:
        """What the record says where OCR is not installed."""
        way = (
            "pdftotext may (poppler may know its fonts), OCR would"
            if "pdftotext" in self.tools
            else "only OCR can"
        )
        return NeedsTool(
            *self.tools,
            message=f"the text layer is {self.share:.0%} printable (a font without a usable "
            f"Unicode map): {way} read it, needs pdftoppm and tesseract",
        )


def printable_share(text: str) -> float:
    """Share of the non-blank characters of ``text`` that are printable (1.0 when none)."""
    # Counted in C (a layout text is mostly blanks): 2.5x faster than a match per blank.
    visible = len(_BLANK.sub("", text))
    if visible <= 0:
        return 1.0
    return 1.0 - len(_UNPRINTABLE.findall(text)) / visible


def _src(path: Path) -> str:
    """An absolute path, so a file named ``-x.pdf`` is never taken for an option."""
    return os.fspath(path.absolute())


# --- pdftotext -------------------------------------------------------------------------------


def pdftotext_pages(path: Path, ctx: ReadContext) -> list[str]:
    """Text of each page by ``pdftotext -layout``; a corrupt text layer is refused."""
    try:
        out = ctx.run_tool("pdftotext", ["-layout", "-enc", "UTF-8", _src(path), "-"])
    except ToolFailed as exc:
        raise _pdftotext_verdict(exc) from exc
    pages = out.decode("utf-8", "replace").split("\f")
    pages.pop()  # pdftotext ends every page, the last one too, with a form feed
    share = printable_share("".join(pages[:200]))
    if share < MIN_PRINTABLE:  # poppler applied the fonts' maps: only OCR is left
        raise UnmappedText("pdftotext", share, len(pages), OCR_TOOLS)
    return pages


def _pdftotext_verdict(exc: ToolFailed) -> Exception:
    """Exit 1 is pdftotext's "could not open the PDF": a password or a broken file."""
    message = str(exc)
    if "password" in message.lower():
        return EncryptedFile("needs a password")
    if tool_exit_code(exc) in (1, 3):
        return CorruptFile(f"pdftotext could not open it: {message.partition(': ')[2]}")
    return exc


# --- pypdf -----------------------------------------------------------------------------------


def pypdf_pages(path: Path, ctx: ReadContext) -> list[str]:
    """Text of each page by pypdf; every pypdf exception becomes a ReadFailure."""
    from pypdf import errors as pe

    with quiet_library("pypdf", logging.ERROR):
        try:
            return _pypdf_extract(path, ctx)
        except pe.LimitReachedError as exc:
            raise LimitExceeded("pdf", f"pypdf limit reached: {exc}"[:200]) from exc
        except (pe.FileNotDecryptedError, pe.WrongPasswordError) as exc:
            raise EncryptedFile("needs a password") from exc
        except pe.DependencyError as exc:
            raise NeedsTool("pdftotext", message="encryption pypdf cannot undo here") from exc
        except (ReadFailure, MemoryError):
            raise
        except RecursionError as exc:
            raise CorruptFile("pypdf: objects nested too deeply") from exc
        # pypdf's maintainers call its other exceptions bugs for the caller to catch: any of
        # them means this file could not be read. The message may quote the file: not kept.
        except Exception as exc:
            raise CorruptFile(f"pypdf could not read it ({type(exc).__name__})") from exc


def _pypdf_extract(path: Path, ctx: ReadContext) -> list[str]:
    from pypdf import PasswordType, PdfReader

    reader = PdfReader(path, strict=False)
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise EncryptedFile("needs a password")
    pages: list[str] = []
    kept = 0
    for page in reader.pages:
        # Past the text cap the sink stops anyway; the rest only counts as pages.
        text = page.extract_text() if kept <= ctx.limits.max_chars else ""
        kept += len(text)
        pages.append(text)
    share = printable_share("".join(pages[:200]))
    if share < MIN_PRINTABLE:
        # A font that carries a ToUnicode map reads the same in poppler: OCR only then.
        tools = OCR_TOOLS if _all_mapped(reader.pages[:200]) else ("pdftotext", *OCR_TOOLS)
        raise UnmappedText("pypdf", share, len(pages), tools)
    return pages


def _all_mapped(pages: Any) -> bool:
    """Whether every font the ``pages`` (pypdf's) name carries a ``ToUnicode`` map; False
    when a font cannot be looked at."""
    try:
        for page in pages:
            resources = page.get("/Resources")
            fonts = resources.get_object().get("/Font") if resources is not None else None
            for ref in fonts.get_object().values() if fonts else ():
                if "/ToUnicode" not in ref.get_object():
                    return False
    except Exception:  # pypdf's errors on a broken font: poppler may still read it
        return False
    return True


# --- OCR -------------------------------------------------------------------------------------


def can_ocr(ctx: ReadContext) -> bool:
    """Whether scanned pages can be rendered and OCR'd on this machine."""
    return ctx.tools.has("pdftoppm") and ctx.tools.has("tesseract")


OCR_PAGE_SECONDS = 5.0
"""Seconds of the read's budget a page's OCR needs at least; with less left, OCR stops."""


class OcrStopped(Exception):
    """Raised when the read's time runs out part-way through OCR; holds the pages so far."""

    def __init__(self, pages: list[str], done: int, wanted: int) -> None:
        super().__init__(f"the read's time ran out after OCR of {done} of {wanted} pages")
        self.pages = pages
        self.done = done
        self.wanted = wanted


def ocr_pages(
    path: Path,
    ctx: ReadContext,
    count: int,
    only: list[int] | None = None,
    base: list[str] | None = None,
) -> list[str]:
    """Render pages with pdftoppm and read them with tesseract, one page at a time.

    ``only`` (1-based page numbers) limits OCR to those pages, whose text replaces theirs in
    ``base``. When the read's budget cannot cover another page, :class:`OcrStopped` carries
    the pages done so far: the caller keeps them and says how far OCR got.
    """
    pages = list(base) if base is not None else [""] * count
    wanted = only if only is not None else list(range(1, count + 1))
    with tempfile.TemporaryDirectory(prefix="quarry-ocr-") as tmp:
        stem = os.path.join(tmp, "page")
        for done, number in enumerate(wanted):
            if ctx.remaining() < OCR_PAGE_SECONDS:
                raise OcrStopped(pages, done, len(wanted))
            n = str(number)
            args = ["-r", str(OCR_DPI), "-png", "-f", n, "-l", n, "-singlefile", _src(path), stem]
            try:
                ctx.run_tool("pdftoppm", args)
                image = Path(stem + ".png")
                pages[number - 1] = ocr_image(ctx, image)
            except ReadTimeout:  # the budget ran out inside this page: keep the ones done
                raise OcrStopped(pages, done, len(wanted)) from None
            image.unlink()
    return pages


def pages_with_images(path: Path, blank: list[int], ctx: ReadContext) -> list[int] | None:
    """Which of the ``blank`` pages (1-based) show an image, by their resources (pypdf).

    A page without a text layer and without any image is empty, not a scan: it is never
    OCR'd. None when pypdf cannot tell (every blank page is then taken for a scan).
    """
    from pypdf import PdfReader as PypdfReader

    with quiet_library("pypdf", logging.CRITICAL):
        try:
            reader = PypdfReader(path, strict=False)
            if reader.is_encrypted:
                reader.decrypt("")
            found: list[int] = []
            for number in blank:
                if ctx.remaining() < OCR_PAGE_SECONDS:
                    return found or None
                if _has_image(reader.pages[number - 1]):
                    found.append(number)
            return found
        except (MemoryError, RecursionError):
            raise
        except Exception:  # pypdf's own errors on a file pdftotext could read: cannot tell
            return None


def _has_image(page: Any, depth: int = 0) -> bool:
    """Whether a page (or a form XObject in it, 5 deep at most) draws an image."""
    resources = page.get("/Resources")
    if resources is None or depth > 5:
        return depth == 0 and b"BI" in _content_head(page)
    xobjects = resources.get_object().get("/XObject")
    if xobjects:
        for ref in xobjects.get_object().values():
            obj = ref.get_object()
            subtype = obj.get("/Subtype")
            if subtype == "/Image":
                return True
            if subtype == "/Form" and _has_image(obj, depth + 1):
                return True
    return depth == 0 and b"BI" in _content_head(page)


def _content_head(page: Any) -> bytes:
    """The start of a page's content stream (an inline image begins with ``BI``)."""
    try:
        contents = page.get_contents()
        return bytes(contents.get_data()[:65536]) if contents is not None else b""
    except Exception:  # a broken stream: no inline image to find
        return b""


# --- the reader ------------------------------------------------------------------------------


def _write_pages(sink: TextSink, pages: list[str]) -> None:
    for i, page in enumerate(pages):
        if i:
            sink.write("\f")
        body = page.rstrip()
        if body:
            sink.write(body + "\n")


def _better_text(
    path: Path, ctx: ReadContext, extractor: str, pages: list[str]
) -> tuple[str, list[str]]:
    """A text layer that reads as garbage is read again the next way (pypdf after pdftotext,
    then OCR when it is installed); another way's text is kept only when its verdict is
    better (a tie keeps the text layer: cheaper, and laid out like the page)."""
    if not quality.enabled():
        return extractor, pages
    rank = quality.rank(_score(pages))
    for name, read_again in _next_readers(path, ctx, extractor, len(pages)):
        if rank == 0:  # good: nothing to gain
            break
        try:
            alt = read_again()
        except (ReadFailure, OcrStopped):  # that way fails or runs out of time: keep ours
            continue
        alt_rank = quality.rank(_score(alt)) if any(p.strip() for p in alt) else 3
        if alt_rank < rank:
            rank, extractor, pages = alt_rank, name, alt
    return extractor, pages


def _next_readers(
    path: Path, ctx: ReadContext, extractor: str, count: int
) -> list[tuple[str, Callable[[], list[str]]]]:
    ways: list[tuple[str, Callable[[], list[str]]]] = []
    if extractor == "pdftotext":
        ways.append(("pypdf", lambda: pypdf_pages(path, ctx)))
    if can_ocr(ctx):
        ways.append(("pdftoppm+tesseract", lambda: ocr_pages(path, ctx, count)))
    return ways


def _score(pages: list[str]) -> quality.Quality:
    # The text as _write_pages will write it: the worker then scores the same string.
    text = "\f".join(body + "\n" if (body := p.rstrip()) else "" for p in pages)
    return quality.score(text, M.PDF, pages=len(pages))


def text_layer(path: Path, ctx: ReadContext) -> tuple[str, list[str]]:
    """Each page's text layer: pdftotext when installed, pypdf when it is not or when
    pdftotext fails on the file (its verdict stands when pypdf fails too)."""
    if not ctx.tools.has("pdftotext"):
        return "pypdf", pypdf_pages(path, ctx)
    try:
        return "pdftotext", pdftotext_pages(path, ctx)
    except EncryptedFile:
        raise
    except (CorruptFile, ToolFailed) as failure:
        if ctx.remaining() < OCR_PAGE_SECONDS:
            raise
        try:
            return "pypdf", pypdf_pages(path, ctx)
        except ReadFailure:
            raise failure from None


class PdfReader:
    """PDF text by pdftotext or pypdf, with OCR of scanned pages."""

    name = "pdf"
    version = 2
    mimes = frozenset({M.PDF})
    tools = ("pdftotext", "pdftoppm", "tesseract")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the pages of ``path`` separated by form feeds."""
        try:
            extractor, pages = text_layer(path, ctx)
        except UnmappedText as unmapped:
            if not can_ocr(ctx) or not unmapped.pages:
                raise unmapped.verdict() from None
            extractor, pages = "pdftoppm+tesseract", [""] * unmapped.pages
        if not pages:
            raise CorruptFile("no pages")
        blank = [n for n, page in enumerate(pages, start=1) if not page.strip()]
        try:
            if extractor == "pdftoppm+tesseract":  # no text layer to read: every page OCR'd
                pages = ocr_pages(path, ctx, len(pages))
            elif len(blank) == len(pages):
                scans = pages_with_images(path, blank, ctx)
                if scans == []:  # pages, but neither text nor pictures: empty, not a scan
                    return ReadInfo(extractor, pages=len(pages))
                if not can_ocr(ctx):
                    return ReadInfo(extractor, pages=len(pages), scanned=True)
                extractor = "pdftoppm+tesseract"
                pages = ocr_pages(path, ctx, len(pages), scans, pages)
            else:
                extractor, pages = _better_text(path, ctx, extractor, pages)
                extractor, pages = _ocr_scanned_pages(path, ctx, extractor, pages)
        except OcrStopped as stop:
            if any(page.strip() for page in stop.pages):  # keep what was read, cap named
                sink.describe(extractor, pages=len(pages))
                _write_pages(sink, stop.pages)
            raise LimitExceeded("ocr_time", str(stop)) from None
        sink.describe(extractor, pages=len(pages))
        _write_pages(sink, pages)
        return ReadInfo(extractor, pages=len(pages))


def _ocr_scanned_pages(
    path: Path, ctx: ReadContext, extractor: str, pages: list[str]
) -> tuple[str, list[str]]:
    """A document with text on some pages and scans on others: OCR of the scanned ones."""
    blank = [n for n, page in enumerate(pages, start=1) if not page.strip()]
    if not blank or not can_ocr(ctx) or "tesseract" in extractor:
        return extractor, pages
    scans = pages_with_images(path, blank, ctx)
    if scans == []:  # blank pages, no pictures on them: nothing to OCR
        return extractor, pages
    only = scans if scans is not None else blank  # cannot tell: every blank page
    return f"{extractor}+tesseract", ocr_pages(path, ctx, len(pages), only, pages)


READERS = (PdfReader(),)
