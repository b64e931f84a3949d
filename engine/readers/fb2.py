"""FictionBook 2 (FB2) e-books: the text of their ``<body>`` elements, streamed.

One line per paragraph, verse line, subtitle and text author (titles and epigraphs are made of
paragraphs, so they come out too), table rows tab-separated; the description (metadata) and
the base64 ``<binary>`` images are skipped without being built. The file goes through
:mod:`xmlsafe`: no DTD, UTF-8 or UTF-16 only, ``xml_bytes`` and ``parts_per_block``.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree.ElementTree import Element

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse

_NS = {
    "http://www.gribuser.ru/xml/fictionbook/2.0": "",
    "http://www.gribuser.ru/xml/fictionbook/2.1": "",
}
_BLOCKS = frozenset({"p", "v", "subtitle", "text-author", "tr"})
_SKIP = frozenset({"description", "binary", "stylesheet"})


def _line(block: Element) -> str:
    if block.tag == "tr":
        cells = (element_text(cell) for cell in block if cell.tag in ("td", "th"))
        return "\t".join(" ".join(c.split()) for c in cells)
    return element_text(block)


class Fb2Reader:
    """Reads FictionBook 2 e-books."""

    name = "fb2"
    version = 1
    mimes = frozenset({M.FB2})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the book's body text into ``sink``."""

        def on_block(block: Element) -> None:
            line = _line(block)
            if line.strip():
                sink.line(line)

        rules = Rules(_NS, blocks=_BLOCKS, on_block=on_block, skip=_SKIP)
        try:
            with open(path, "rb") as fh:
                parse(fh, rules, XmlBudget(ctx.limits))
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
        return ReadInfo(extractor=self.name)


READERS = (Fb2Reader(),)
