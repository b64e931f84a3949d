"""XML files: their text, as the text reader reads any text file, and the documents they carry
in base64.

An Italian e-invoice (FatturaPA, ``<Allegati>``) carries its PDF attachments as base64 element
content, and so do other exchange formats (a SOAP message's attachments, an archive's export
of its documents): hundreds of kilobytes of letters no one reads, which made the whole record
``garbled``, and a document whose text was nowhere. Each long element content that is base64
(one line, or lines of one width as encoders wrap them, that decode cleanly) is taken out of the
text; one that decodes to a document (a PDF, an Office or OpenDocument file, a zip, an RTF) is
read as a member after the text (:func:`engine.readers.embedded.with_embedded`), named as the
XML names it: the file name the element before it holds (``<NomeAttachment>fattura.pdf``,
``<nomeAllegato>``, a ``...name`` element), else the element's own name and its number. A
picture or other bytes are left alone, as an Office document's are.

A file past :data:`WHOLE_BYTES` is read as the text reader reads it, streamed, nothing taken
out (an XML file that big is data, not a message with attachments).
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.embedded import (
    DOCUMENT_MAGICS,
    OLE_MAGIC,
    Embedded,
    ole_object_payload,
    with_embedded,
)
from engine.readers.text import TextReader, decode_bytes

WHOLE_BYTES = 64 * 1024 * 1024
"""Largest file whose base64 contents are looked for (it is decoded whole in memory)."""
MIN_BASE64 = 256
"""Shortest element content taken for base64: a hash or a short key stays in the text (a
signature's value or its certificate, XML-DSig's base64, goes: no one's words either)."""
NAME_BEFORE = 2048
"""How far before a base64 content its file name is looked for."""

_NODE = re.compile(rf">([^<]{{{MIN_BASE64},}})<")
"""A long text node: the only place base64 content can be."""
_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_NAMED = re.compile(
    r"<(?:[\w.-]+:)?[\w.-]*(?:[Nn]ome|[Nn]ame)[\w.-]*(?:\s[^<>]*)?>\s*([^<>\s][^<>]{0,254}?)\s*</"
)
"""An element whose name says it holds a name (``NomeAttachment``, ``fileName``), its text."""
_FILE_NAME = re.compile(r"[^/\\]+\.[A-Za-z0-9]{1,8}")
_TAG = re.compile(r"<(?:[\w.-]+:)?([\w.-]+)[^<>]*>\Z")


def taken_out(text: str) -> tuple[str, list[Embedded]]:
    """``text`` without its base64 element contents, and the documents among them with
    their names."""
    pieces: list[str] = []
    found: list[Embedded] = []
    last = 0
    for m in _NODE.finditer(text):
        data = _base64(m.group(1))
        if data is None:
            continue
        pieces.append(text[last : m.start(1)])
        last = m.end(1)
        if data.startswith(DOCUMENT_MAGICS):
            document = _document(_name(text, m.start(), len(found) + 1), data)
            if document is not None:
                found.append(document)
    if not pieces:
        return text, found
    pieces.append(text[last:])
    return "".join(pieces), found


def _base64(node: str) -> bytes | None:
    """The bytes ``node`` spells in base64, or None when it is not base64: one line, or
    lines of one width but the last (as every encoder wraps), each of the alphabet alone."""
    lines = [line.strip() for line in node.strip().splitlines()]
    if not lines or not all(_LINE.fullmatch(line) for line in lines):
        return None  # (none: white space alone, as an XMP packet's padding is)
    width = len(lines[0])
    if len(lines) > 1 and (width < 16 or any(len(x) != width for x in lines[1:-1])):
        return None
    if len(lines) > 1 and len(lines[-1]) > width:
        return None
    try:
        return base64.b64decode("".join(lines), validate=True)
    except (binascii.Error, ValueError):
        return None


def _document(name: str, data: bytes) -> Embedded | None:
    """The document ``data`` is (an OLE object: the one it holds, as in an Office file; none
    for an equation's or a picture's)."""
    if not data.startswith(OLE_MAGIC):
        return name, data
    payload = ole_object_payload(data)
    return None if payload is None else (f"{name}/{payload[0]}", payload[1])


def _name(text: str, at: int, n: int) -> str:
    """The name of the document whose content starts after ``text[at]`` (the ``>`` of its
    element's start tag): a file name an element before it holds, else its element's."""
    before = text[max(0, at + 1 - NAME_BEFORE) : at + 1]
    names = [m.group(1) for m in _NAMED.finditer(before) if _FILE_NAME.fullmatch(m.group(1))]
    if names:
        return names[-1]
    start = before.rfind("<")
    tag = _TAG.match(before, start) if start >= 0 else None
    return f"{tag.group(1) if tag else 'base64'}-{n}"


class XmlReader:
    """XML files: their text, without base64 contents, and the documents those carry."""

    name = "xml"
    version = 2
    """2: its own text as in 1; files it read, Word 2003 XML, Excel 2003 XML and Flat OPC
    among them (told apart since detection 13, :mod:`engine.readers.officexml`), read again."""
    mimes = frozenset({M.XML, "text/xml"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the XML file's text without its base64 contents, then read the documents
        they hold as its members."""
        size = path.stat().st_size
        if size > WHOLE_BYTES:
            return TextReader().read(path, ctx, sink)
        try:
            data = ctx.data if ctx.data is not None and len(ctx.data) == size else path.read_bytes()
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
        text, encoding = decode_bytes(data)
        kept, found = taken_out(text)
        sink.describe(f"text:{encoding}")
        sink.write(kept)
        return with_embedded(ReadInfo(f"text:{encoding}"), ctx, sink, iter(found))


READERS = (XmlReader(),)
