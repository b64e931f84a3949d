"""Legacy Word documents (.doc) through local tools, and the helpers tool readers share.

Word documents go to antiword (paragraphs unwrapped, UTF-8), and to catdoc when antiword is
missing or gives up on an OLE2 file (Word 6/95 streams, "too small to handle"). When neither
reads it: an OLE2 file whose streams are named in upper case (``WORDDOCUMENT``, which the
format allows and both tools miss) is read again from a copy with Word's names, and a file
that is no OLE2 container is offered to wpd2text when it is found (WordPerfect 4.2, which has
no signature, named ``.doc``). The extractor is the tool's name; with neither antiword nor
catdoc the verdict is ``unsupported/needs_tool``. Excel and PowerPoint 97-2003 files are read
without tools (:mod:`engine.readers.xls`, :mod:`engine.readers.ppt`); xls2csv stays the
workbook reader's fallback.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, NeedsTool, ToolFailed
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.embedded import ole_embedded, with_embedded
from engine.readers.image import tool_exit_code
from engine.readers.members import scratch_dir
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
    # A symbol font's glyph comes out as its code in the private-use block (U+F020-U+F0FF:
    # catdoc's alpha in the Symbol font): the document's own text, not a broken mapping as
    # other private-use characters are (a one-line .doc with three was refused as corrupt).
    share = printable_share(_GLYPH_CODES.sub("", text[:1_000_000]))
    if share < MIN_PRINTABLE:
        raise CorruptFile(f"{tool} output is {share:.0%} printable")
    return text


_GLYPH_CODES = re.compile("[\uf020-\uf0ff]")
"""Where Windows puts a symbol font's codes (:mod:`engine.readers.symbolfont`)."""


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
    """Word 97-2003 (and 6/95) documents by antiword, else catdoc; a WordPerfect file named
    ``.doc`` by wpd2text."""

    name = "doc"
    version = 4
    """2: the documents embedded in it are read as its members (:mod:`embedded`). 3: an
    Office 97 document embedded as a storage (an Excel table pasted into it) too. 4: a text
    with symbol fonts' glyphs (private-use codes) is no corrupt output; its Microsoft Graph
    charts' data and strings, as members (:mod:`engine.readers.msgraph`)."""
    mimes = frozenset({M.DOC})
    tools = ("antiword", "catdoc")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs."""
        have = [t for t in self.tools if ctx.tools.has(t)]
        if not have:
            raise NeedsTool(*self.tools)
        ole = _is_ole(path)
        try:
            read = _by_tools(ctx, have, _src(path), ole)
        except CorruptFile as exc:
            read = _otherwise(ctx, have, path, ole, exc)
        if read is None:
            return ReadInfo("antiword")
        text, tool = read
        sink.write(text)
        found = ole_embedded(path, ctx.limits.zip_member_bytes) if ole else iter(())
        return with_embedded(ReadInfo(tool), ctx, sink, found)


def _by_tools(ctx: ReadContext, have: list[str], src: str, ole: bool) -> tuple[str, str] | None:
    """(tidy text, tool) of the first tool that reads ``src`` to any text; None when each
    gives none. Raises the last tool's CorruptFile when none reads it."""
    failure: CorruptFile | None = None
    if "antiword" in have:
        try:
            text = run_text_tool(ctx, "antiword", ["-w", "0", "-m", "UTF-8.txt", src])
        except CorruptFile as exc:
            failure, text = exc, ""
        if text.strip():
            return _tidy(text), "antiword"
    # catdoc reads any file as text: only trust it with a real OLE2 container.
    if "catdoc" in have and ole:
        return _tidy(run_text_tool(ctx, "catdoc", ["-d", "utf-8", "-w", src])), "catdoc"
    if failure is not None:
        raise failure
    if not ole and "antiword" not in have:
        raise CorruptFile("not a Word document catdoc reads (no OLE2 container)")
    return None


def _otherwise(
    ctx: ReadContext, have: list[str], path: Path, ole: bool, failure: CorruptFile
) -> tuple[str, str] | None:
    """What reads a ``.doc`` neither tool could: the same file with its streams named as
    Word names them, or a WordPerfect file by wpd2text; else ``failure`` is raised."""
    if ole:
        with scratch_dir() as scratch:
            fixed = canonical_copy(path, Path(scratch) / "named.doc")
            if fixed:
                return _by_tools(ctx, have, _src(Path(scratch) / "named.doc"), ole)
    elif ctx.tools.has("wpd2text"):
        # WordPerfect 4.2 has no signature (5.x and later do, and are told apart by it):
        # libwpd knows it by its codes, and says so by reading it or refusing it.
        with contextlib.suppress(CorruptFile):
            text = run_text_tool(ctx, "wpd2text", [_src(path)])
            if text.strip():
                return _tidy(text), "wpd2text"
    raise failure


_WORD_STREAMS = {n.upper(): n for n in ("WordDocument", "1Table", "0Table", "Data", "ObjectPool")}
"""The streams of a Word file as Word names them."""
_ENTRY = 128
"""Bytes of an OLE2 directory entry: a UTF-16 name of up to 64 bytes, then its length."""


def canonical_copy(path: Path, dest: Path) -> bool:
    """Copy ``path`` to ``dest`` with its Word streams named as Word names them, when any is
    named in another case (``WORDDOCUMENT``): the compound file format compares names without
    case and some writers use upper case, but antiword and catdoc look for ``WordDocument``
    as written. False, nothing written, when none is.

    Directory entries lie at multiples of 128 bytes in the file (sectors of 512 or 4096
    after a 512-byte header); a copy a block at a time renames each in place (same length,
    and the directory's tree orders names without case, so it stays as it was).
    """
    found = False
    with open(path, "rb") as src, open(dest, "wb") as out:
        while block := src.read(_ENTRY * 8192):
            renamed = _renamed(block)
            found = found or renamed is not block
            out.write(renamed)
    if not found:
        dest.unlink()
    return found


def _renamed(block: bytes) -> bytes:
    """``block`` with each stream entry named in another case renamed (itself when none)."""
    out: bytearray | None = None
    for at in range(0, len(block) - _ENTRY + 1, _ENTRY):
        size = int.from_bytes(block[at + 64 : at + 66], "little")
        if not 4 <= size <= 64 or size % 2 or block[at + 66] != 2:  # (2: a stream)
            continue
        raw = block[at : at + size - 2]
        name = raw.decode("utf-16-le", "replace")
        right = _WORD_STREAMS.get(name.upper())
        if right is not None and right != name:
            out = out if out is not None else bytearray(block)
            out[at : at + size - 2] = right.encode("utf-16-le")
    return block if out is None else bytes(out)


READERS = (DocReader(),)
