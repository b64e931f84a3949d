"""Office formats no Python library reads, through the Document Liberation Project's tools.

The project behind LibreOffice's import filters ships, for each library, a command that writes a
document's text: ``wps2text`` (libwps: Microsoft Works word processor files, the DOS and
Works 3-4 ones with an ``MN0`` stream, Works 5-9's a ``CONTENTS`` stream), ``wks2text``
(libwps: Quattro Pro's OLE2 notebooks, ``.wb3`` and ``.qpw``), ``sd2text`` (libstaroffice:
StarOffice 3-5 Writer, Calc, Draw and Impress documents, ``.sdw .sdc .sda .sdd`` and their
``.vor`` templates), ``mwaw2text`` (libmwaw: PowerPoint 4 presentations, whose OLE2 file
holds a ``PP40`` stream the PowerPoint 97 reader cannot read), ``pages2text``,
``numbers2text`` and ``key2text`` (libetonyek: Apple iWork, the zipped XML of iWork '09 and
the protobuf streams of 2013 and later), and ``pub2xhtml`` (libmspub: Microsoft Publisher;
its XHTML's text is taken as an HTML page's is), ``vsd2text`` (libvisio: Visio 2003-2010
drawings, the shapes' text). Each reader waits on its tool (``unsupported/needs_tool``, so
installing the package reads exactly those files again) and its failures are verdicts as
:func:`engine.readers.legacy.run_text_tool` gives them; an iWork document whose members are
enciphered (a password) is ``error/encrypted``.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, NeedsTool
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.html import html_to_text
from engine.readers.legacy import run_text_tool, write_parts

_IWORK_TOOLS = {M.PAGES: "pages2text", M.NUMBERS: "numbers2text", M.KEYNOTE: "key2text"}
"""Each iWork kind's tool; a document of no known kind (renamed) is tried with each."""
_ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_PAGE_BREAK = re.compile(r"^\t?#{5} Page \d+ #{5}$", re.M)
"""The line mwaw2text writes between two pages (a presentation's slides)."""
_FRAME_END = "</svg:text>"
"""Where a text frame of pub2xhtml's pages ends: a line ends there too."""


class LiberationReader:
    """A format one of the project's ``*2text`` commands reads."""

    def __init__(self, name: str, tool: str, mimes: frozenset[str]) -> None:
        self.name = name
        self.version = 1
        self.mimes = mimes
        self.tools: tuple[str, ...] = (tool,)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the tool's text of ``path``."""
        tool = self.tools[0]
        sink.write(run_text_tool(ctx, tool, [os.fspath(path.absolute())]))
        return ReadInfo(tool)


class PowerPoint4Reader:
    """PowerPoint 4 presentations through libmwaw's mwaw2text: a ``# slideN`` block each, as
    the PowerPoint 97 reader writes them."""

    name = "powerpoint4"
    version = 1
    mimes = frozenset({M.PPT4})
    tools = ("mwaw2text",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each slide's non-blank lines under its ``# slideN`` line."""
        text = run_text_tool(ctx, "mwaw2text", [os.fspath(path.absolute())])
        slides = _PAGE_BREAK.split(text)
        write_parts(sink, slides, "slide")
        return ReadInfo("mwaw2text", pages=len(slides))


class PublisherReader:
    """Microsoft Publisher files: the text of the XHTML ``pub2xhtml`` writes of them."""

    name = "publisher"
    version = 1
    mimes = frozenset({M.PUBLISHER})
    tools = ("pub2xhtml",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the text of each page's text frames."""
        markup = run_text_tool(ctx, "pub2xhtml", [os.fspath(path.absolute())])
        html_to_text(markup.replace(_FRAME_END, _FRAME_END + "<br/>"), sink)
        return ReadInfo("pub2xhtml")


class IworkReader:
    """Apple iWork documents (Pages, Numbers, Keynote) through libetonyek's tools."""

    name = "iwork"
    version = 1
    mimes = frozenset({*_IWORK_TOOLS, M.IWORK})
    tools = ("pages2text", "numbers2text", "key2text")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's text by its kind's tool (a document of no known kind: the
        first tool that reads it)."""
        known = _IWORK_TOOLS.get(ctx.mime)
        tools = (known,) if known is not None else self.tools
        usable = [tool for tool in tools if ctx.tools.has(tool)]
        if not usable:
            raise NeedsTool(*tools)
        failure: CorruptFile | None = None
        for tool in usable:
            try:
                text = run_text_tool(ctx, tool, [os.fspath(path.absolute())])
            except CorruptFile as exc:
                failure = failure or exc
                continue
            sink.write(text)
            return ReadInfo(tool)
        if _enciphered(path):
            raise EncryptedFile("an iWork document protected by a password")
        assert failure is not None
        raise failure


def _enciphered(path: Path) -> bool:
    """Whether the iWork zip at ``path`` holds members in a method no zip reader knows: how
    iWork stores a document protected by a password."""
    try:
        with zipfile.ZipFile(path) as zf:
            return any(info.compress_type not in _ZIP_METHODS for info in zf.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


READERS = (
    LiberationReader("works", "wps2text", frozenset({M.WORKS})),
    LiberationReader("quattro-pro", "wks2text", frozenset({M.QUATTRO_OLE})),
    LiberationReader("staroffice", "sd2text", M.STAR_OFFICE),
    LiberationReader("visio", "vsd2text", frozenset({M.VISIO})),
    PowerPoint4Reader(),
    PublisherReader(),
    IworkReader(),
)
