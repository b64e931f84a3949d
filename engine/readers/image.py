"""Images (PNG, JPEG, TIFF, BMP, GIF, WebP): text by OCR with tesseract.

Without tesseract an image is ``unsupported/needs_tool``. A multi-page TIFF comes back with
its pages separated by form feeds, as tesseract prints them. :func:`ocr_image` is shared with
the PDF reader, which OCRs scanned pages through it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, ToolFailed
from engine.readers.base import ReadContext, ReadInfo, TextSink

_EXITED = re.compile(r"^\S+ exited (\d+)")


def tool_exit_code(exc: ToolFailed) -> int | None:
    """The exit status named in a ToolFailed from ``run_tool`` (None for timeouts, no start)."""
    match = _EXITED.match(str(exc))
    return int(match.group(1)) if match else None


def ocr_image(ctx: ReadContext, path: Path) -> str:
    """Text of the image at ``path`` by tesseract; trailing page separator removed.

    Raises NeedsTool without tesseract, CorruptFile when tesseract cannot read the picture
    and ToolFailed when it times out or will not start.
    """
    try:
        # --psm 1: page segmentation with orientation detection, so a page scanned sideways
        # or upside down is turned before it is read (plain --psm 3 reads it as gibberish).
        out = ctx.run_tool("tesseract", [os.fspath(path.absolute()), "-", "--psm", "1"])
    except ToolFailed as exc:
        if tool_exit_code(exc) is not None:
            raise CorruptFile("tesseract could not read the image") from exc
        raise
    return out.decode("utf-8", "replace").rstrip("\f\n ") + "\n"


class ImageReader:
    """OCR of raster images through tesseract."""

    name = "image"
    version = 1
    mimes = M.IMAGES
    tools = ("tesseract",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the OCR text of ``path``; pages are counted for TIFF only."""
        text = ocr_image(ctx, path)
        pages = text.count("\f") + 1 if ctx.mime == M.TIFF else None
        if text.strip():
            sink.write(text)
        return ReadInfo("tesseract", pages=pages)


READERS = (ImageReader(),)
