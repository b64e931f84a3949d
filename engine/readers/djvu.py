"""DjVu documents (``.djvu``, ``.djv``): scanned books and archives' pages.

A DjVu page is a picture, usually with a hidden text layer its maker's OCR left in it;
DjVuLibre's ``djvused`` (``djvulibre-bin``) counts the pages and prints each one's layer, a
form feed after each page (``djvutxt`` leaves out a page without a layer, so the pages after
it could not be told apart), as ``pdftotext`` separates a PDF's pages. A page without a text
layer is a scan: it is
rendered by ``ddjvu`` (the same package) and read by ``tesseract``, as a scanned PDF page is,
one page at a time while the read's time can cover another (the pages read before are kept,
and the record says how far OCR got). A document with no text layer at all and no way to
OCR it is ``unsupported/needs_tool`` naming what is missing. A file DjVuLibre cannot decode is
``error/corrupt`` in its words. An indirect document is an index of pages kept in files of
their own beside it (each read as the DjVu file it is): it has no text of its own.

Told apart by its header: ``AT&TFORM``, then ``DJVU`` (one page) or ``DJVM`` (a bundle).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, NeedsTool, ReadTimeout
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.image import ocr_image
from engine.readers.legacy import run_text_tool
from engine.readers.pdf import OCR_PAGE_SECONDS

_TEXT, _RENDER, _OCR = "djvused", "ddjvu", "tesseract"


class DjvuReader:
    """Reads DjVu documents: their text layer, and OCR of the pages without one."""

    name = "djvu"
    version = 1
    mimes = frozenset({M.DJVU})
    tools = (_TEXT, _RENDER, _OCR)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each page's text, a form feed between two pages."""
        if _indirect(ctx.data if ctx.data is not None else _head(path)):
            return ReadInfo(_TEXT)  # (no text of its own: its pages are other files)
        ctx.require(_TEXT)
        source = os.fspath(path.absolute())
        pages = _layers(ctx, source)
        blank = [i for i, page in enumerate(pages) if not page.strip()]
        extractor, note = _TEXT, None
        if blank:
            missing = [tool for tool in (_RENDER, _OCR) if not ctx.tools.has(tool)]
            if missing and len(blank) == len(pages):
                raise NeedsTool(*missing, message="scanned pages with no text layer: needs OCR")
            if not missing:
                done = _ocr(ctx, source, pages, blank)
                extractor = f"{_TEXT}+{_OCR}" if len(blank) < len(pages) else f"{_RENDER}+{_OCR}"
                if done < len(blank):
                    note = f"ocr_time: the read's time ran out after OCR of {done} of {len(blank)}"
                    note += " pages"
        text = "\f".join(page.rstrip() for page in pages).strip("\f\n ")
        if text:
            sink.write(text + "\n")
        if note is not None and not text:
            raise LimitExceeded("ocr_time", note.removeprefix("ocr_time: "))
        return ReadInfo(extractor, pages=len(pages), note=note)


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(32)
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc


def _indirect(head: bytes) -> bool:
    """Whether ``head`` begins an indirect multi-page document: a ``DJVM`` form whose
    directory (``DIRM``) says its pages are not bundled in it (the flag's top bit clear)."""
    return head[12:20] == b"DJVMDIRM" and len(head) > 24 and not head[24] & 0x80


def _layers(ctx: ReadContext, source: str) -> list[str]:
    """Each page's text layer ("" for a page without one), through two runs of djvused: the
    count, then a script that prints every page's text (a form feed after each)."""
    count = run_text_tool(ctx, _TEXT, ["-e", "n", source]).strip()
    if not count.isdigit() or int(count) == 0:
        raise CorruptFile(f"{_TEXT} found no page in it")
    n = int(count)
    with tempfile.TemporaryDirectory(prefix="quarry-djvu-") as tmp:
        script = Path(tmp) / "pages.djvused"
        script.write_text("".join(f"select {i}; print-pure-txt\n" for i in range(1, n + 1)))
        out = run_text_tool(ctx, _TEXT, ["-f", str(script), source])
    pages = out.split("\f")[:n]
    return pages + [""] * (n - len(pages))


def _ocr(ctx: ReadContext, source: str, pages: list[str], blank: list[int]) -> int:
    """OCR the ``blank`` pages (0-based) into ``pages``; how many were done before the
    read's time could not cover another."""
    with tempfile.TemporaryDirectory(prefix="quarry-djvu-") as tmp:
        picture = Path(tmp) / "page.tif"
        for done, index in enumerate(blank):
            if ctx.remaining() < OCR_PAGE_SECONDS:
                return done
            try:
                run_text_tool(
                    ctx, _RENDER, ["-format=tiff", f"-page={index + 1}", source, str(picture)]
                )
                pages[index] = ocr_image(ctx, picture)
            except ReadTimeout:  # the budget ran out inside this page: keep the ones done
                return done
            finally:
                picture.unlink(missing_ok=True)
    return len(blank)


READERS = (DjvuReader(),)
