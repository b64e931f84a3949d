"""Legacy Word documents (.doc) through local tools, and the helpers tool readers share.

Word documents go to antiword (paragraphs unwrapped, UTF-8), and to catdoc when antiword is
missing or gives up on an OLE2 file (Word 6/95 streams, "too small to handle"). The extractor
is the tool's name; with neither tool the verdict is ``unsupported/needs_tool``. Excel and
PowerPoint 97-2003 files are read without tools (:mod:`engine.readers.xls`,
:mod:`engine.readers.ppt`); xls2csv stays the workbook reader's fallback.
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


def write_parts(sink: TextSink, parts: list[str], label: str) -> None:
    """Each part as a ``# labelN`` line and its non-blank lines."""
    for number, part in enumerate(parts, start=1):
        sink.line(f"# {label}{number}")
        lines = [line.rstrip() for line in part.splitlines()]
        body = "\n".join(line for line in lines if line.strip("\t "))
        if body:
            sink.line(body)


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


READERS = (DocReader(),)
