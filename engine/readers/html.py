"""HTML and XHTML to plain text, with :mod:`html.parser`.

:func:`html_to_text` is the converter (the EPUB, e-mail and .msg readers call it too):
scripts, styles, ``noscript`` and ``template`` are dropped; block tags end a line; table
cells are tab-separated, one row a line; entities are resolved; whitespace outside ``pre``
collapses to single spaces. Every tag costs O(1) and no element stack is kept, so 100k
nested inline tags or a giant attribute stay linear.

The reader decodes by a byte-order mark, then the ``<meta charset>`` (only if it decodes
strictly: a latin-1 page that claims UTF-8 is read as cp1252), then strict UTF-8, then
cp1252.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine import mimes as M
from engine.readers.base import ReadContext, ReadInfo, TextSink, read_all
from engine.readers.text import decode_bytes

_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE
)


def html_to_text(markup: str, sink: TextSink) -> None:
    """Write the visible text of ``markup`` (HTML or XHTML) into ``sink``."""
    from engine.readers._htmltext import TextParser  # html.parser: only once HTML is read

    parser = TextParser(sink)
    parser.feed(markup)
    parser.finish()


def meta_charset(data: bytes) -> str | None:
    """The charset a ``<meta>`` tag in the first 4 KB declares, if any."""
    match = _META_CHARSET.search(data[:4096])
    return match.group(1).decode("ascii") if match else None


def decode_html(data: bytes) -> tuple[str, str]:
    """Decode an HTML document's bytes; return ``(markup, encoding)``."""
    return decode_bytes(data, meta_charset(data))


class HtmlReader:
    """Reads HTML and XHTML documents."""

    name = "html"
    version = 2
    mimes = frozenset({M.HTML, M.XHTML})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the visible text of the page at ``path`` into ``sink``."""
        data = read_all(path)
        markup, _encoding = decode_html(data)
        del data
        html_to_text(markup, sink)
        return ReadInfo(extractor="html")


READERS = (HtmlReader(),)
