"""Windows Write documents (``.wri``, Write 3.x): the text run after the 128-byte header.

The header names the end of the text (``fcMac``); the text itself is cp1252 with CR LF line
ends and form feeds for page breaks (dropped: they are layout). Embedded pictures and OLE
objects sit inside the text run as binary paragraphs: control characters are dropped, and a
text that is still less than 90% printable is refused as corrupt rather than stored.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink, read_all
from engine.readers.pdf import MIN_PRINTABLE, printable_share
from engine.readers.text import decode_cp1252

HEADER = 128
MAGIC = (b"\x31\xbe", b"\x32\xbe")
"""``wIdent``: Write without and with OLE objects."""
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def is_write(head: bytes) -> bool:
    """Whether ``head`` opens a Write 3.x file (``wIdent`` then ``wTool`` 0xAB00)."""
    return head[:2] in MAGIC and head[4:6] == b"\x00\xab"


class WriteReader:
    """Windows Write 3.x documents."""

    name = "wri"
    version = 1
    mimes = frozenset({M.WRI})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's text."""
        data = read_all(path)
        if len(data) < HEADER or not is_write(data):
            raise CorruptFile("not a Windows Write file")
        (end,) = struct.unpack_from("<I", data, 14)
        if end < HEADER or end > len(data):
            raise CorruptFile(f"text end {end} is outside the file")
        text = decode_cp1252(data[HEADER:end]).replace("\f", "")  # a page break: layout only
        text = _CONTROL.sub("", text)
        share = printable_share(text)
        if share < MIN_PRINTABLE:
            raise CorruptFile(f"text is {share:.0%} printable")
        sink.write(text)
        return ReadInfo("wri")


READERS = (WriteReader(),)
