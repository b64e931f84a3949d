"""Legacy binary Office files through local tools: .doc, .xls and .ppt.

Word documents go to antiword (paragraphs unwrapped, UTF-8), and to catdoc when antiword is
missing or gives up on an OLE2 file (Word 6/95 streams, "too small to handle"). Excel
workbooks go to xls2csv, which separates sheets with form feeds: each becomes a ``# sheetN``
block of tab-separated rows. PowerPoint files go to catppt, slides likewise as ``# slideN``.
The extractor is the tool's name; a missing tool is ``unsupported/needs_tool``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, NeedsTool, ToolFailed
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.image import tool_exit_code
from engine.readers.pdf import MIN_PRINTABLE, printable_share

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_BLANK_RUN = re.compile(r"\n{3,}")


def _src(path: Path) -> str:
    return os.fspath(path.absolute())


def _is_ole(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(OLE_MAGIC)) == OLE_MAGIC


def run_text_tool(ctx: ReadContext, tool: str, args: list[str]) -> str:
    """Run ``tool``, decode its UTF-8 output and turn its failures into verdicts.

    A message about encryption is EncryptedFile; any other non-zero exit is CorruptFile
    (the file's path in the tool's message replaced by ``FILE``, so messages group);
    timeouts and crashes stay ToolFailed. Output that is mostly unprintable is refused as
    CorruptFile, never stored.
    """
    try:
        raw = ctx.run_tool(tool, args)
    except ToolFailed as exc:
        if "encrypt" in str(exc).lower():
            raise EncryptedFile("needs a password") from exc
        if tool_exit_code(exc) is not None:
            detail = str(exc).partition(": ")[2].replace(args[-1], "FILE")
            raise CorruptFile(f"{tool} could not read it: {detail}".rstrip(": ")) from exc
        raise
    text = raw.decode("utf-8", "replace")
    share = printable_share(text[:1_000_000])
    if share < MIN_PRINTABLE:
        raise CorruptFile(f"{tool} output is {share:.0%} printable")
    return text


def _tidy(text: str) -> str:
    """Trailing blanks off every line, at most one empty line in a row, one final newline."""
    text = _BLANK_RUN.sub("\n\n", "\n".join(line.rstrip() for line in text.splitlines()))
    return text.strip("\n") + "\n" if text.strip() else ""


def _write_parts(sink: TextSink, parts: list[str], label: str) -> None:
    for number, part in enumerate(parts, start=1):
        sink.line(f"# {label}{number}")
        lines = [line.rstrip() for line in part.splitlines()]
        body = "\n".join(line for line in lines if line.strip("\t "))
        if body:
            sink.line(body)


def _nonempty_or_ole(text: str, path: Path) -> str:
    """xls2csv and catppt exit 0 with no output on a file they cannot open at all."""
    if not text.strip() and not _is_ole(path):
        raise CorruptFile("not an OLE2 file")
    return text


def split_pages(text: str) -> list[str]:
    """Split tool output on form feeds; the one after the last part is dropped."""
    parts = text.split("\f")
    if parts and not parts[-1].strip():
        parts.pop()
    return parts


class DocReader:
    """Word 97-2003 (and 6/95) documents by antiword, else catdoc."""

    name = "doc"
    version = 1
    mimes = frozenset({M.DOC})
    tools = ("antiword", "catdoc")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs."""
        have = [t for t in self.tools if ctx.tools.has(t)]
        if not have:
            raise NeedsTool(*self.tools)
        failure: CorruptFile | None = None
        if "antiword" in have:
            try:
                text = run_text_tool(ctx, "antiword", ["-w", "0", "-m", "UTF-8.txt", _src(path)])
            except CorruptFile as exc:
                failure, text = exc, ""
            if text.strip():
                sink.write(_tidy(text))
                return ReadInfo("antiword")
        # catdoc reads any file as text: only trust it with a real OLE2 container.
        if "catdoc" in have and _is_ole(path):
            text = run_text_tool(ctx, "catdoc", ["-d", "utf-8", "-w", _src(path)])
            sink.write(_tidy(text))
            return ReadInfo("catdoc")
        if failure is not None:
            raise failure
        return ReadInfo("antiword")


class XlsReader:
    """Excel 97-2003 workbooks by xls2csv: a ``# sheetN`` block of tab-separated rows each."""

    name = "xls"
    version = 1
    mimes = frozenset({M.XLS})
    tools = ("xls2csv",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's non-empty rows."""
        args = ["-d", "utf-8", "-q", "0", "-c", "\t", "-f", "%Y-%m-%d", _src(path)]
        sheets = split_pages(_nonempty_or_ole(run_text_tool(ctx, "xls2csv", args), path))
        _write_parts(sink, sheets, "sheet")
        return ReadInfo("xls2csv", pages=len(sheets))


class PptReader:
    """PowerPoint 97-2003 presentations by catppt: a ``# slideN`` block each."""

    name = "ppt"
    version = 1
    mimes = frozenset({M.PPT})
    tools = ("catppt",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each slide's text."""
        text = run_text_tool(ctx, "catppt", ["-d", "utf-8", _src(path)])
        slides = split_pages(_nonempty_or_ole(text, path))
        _write_parts(sink, slides, "slide")
        return ReadInfo("catppt", pages=len(slides))


READERS = (DocReader(), XlsReader(), PptReader())
