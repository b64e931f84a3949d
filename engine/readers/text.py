"""Plain text of every kind: text/*, JSON, YAML, TOML, XML, SQL, SVG, PEM, code.

The bytes are decoded, never parsed, and the encoding is recorded in the extractor
(``text:utf-8``, ``text:utf-16-le``, ``text:cp1252``). The choice, in order:

1. a byte-order mark (UTF-8, UTF-32 LE/BE, UTF-16 LE/BE);
2. BOM-less UTF-16, when NUL bytes fill one side of nearly every byte pair;
3. strict UTF-8, checked over the *whole* file (a later invalid byte means it is not UTF-8,
   unlike a sniff of the first few kilobytes);
4. the charset :func:`engine.readers.charset.guess_charset` detects (charset-normalizer),
   cp1252 when the bytes say too little; cp1252 maps the five bytes it leaves undefined as
   latin-1, so it never fails, and any other guess decodes with replacement characters.

A charset a document declares (HTML ``<meta>``, a MIME part) is used only when its bytes bear
it out: bytes that are valid UTF-8 are UTF-8, and a declaration that makes the bytes read as
mess (see :func:`engine.readers.charset.declared_fits`) gives way to the detected charset.

Decoding streams in chunks through an incremental decoder, so a huge log reaches the sink's
character cap without being loaded whole. The helpers here are shared with the HTML, CSV and
e-mail readers.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.charset import SAMPLE_BYTES, declared_fits, guess_charset

CHUNK = 1 << 20
"""Bytes read per step while decoding a file."""
SMALL_FILE = 8 << 20
"""Files up to this size are decoded once and kept; larger ones are validated, then reread."""
SNIFF = 8192
"""Bytes looked at for a byte-order mark and the NUL share."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_LOSSLESS = "quarry-latin1"
"""Error handler that maps a byte undefined in cp1252 to the latin-1 character."""


def _latin1_fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return exc.object[exc.start : exc.end].decode("latin-1"), exc.end


codecs.register_error(_LOSSLESS, _latin1_fallback)


def sniff_bom(head: bytes) -> tuple[str, int] | None:
    """The encoding a byte-order mark at the start of ``head`` names, and the mark's length."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, len(bom)
    return None


def sniff_utf16(head: bytes) -> str | None:
    """``utf-16-le`` / ``utf-16-be`` when NULs sit on one side of nearly every byte pair."""
    if len(head) < 4:
        return None
    pairs = len(head) // 2
    even = head[0 : pairs * 2 : 2].count(0)
    odd = head[1 : pairs * 2 : 2].count(0)
    if odd > pairs * 0.7 and even < pairs * 0.05:
        return "utf-16-le"
    if even > pairs * 0.7 and odd < pairs * 0.05:
        return "utf-16-be"
    return None


def decode_cp1252(data: bytes) -> str:
    """cp1252 that never fails: undefined bytes become their latin-1 characters."""
    return data.decode("cp1252", _LOSSLESS)


def normalise_charset(name: str | None) -> str | None:
    """A Python codec name for a declared charset, or None when unknown.

    As browsers do, latin-1 and ASCII labels mean cp1252, and a UTF-16 label on a document
    that was read as bytes means UTF-8 (a real UTF-16 document carries a BOM or NULs).
    """
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().strip("\"'").lower()).name
    except (LookupError, ValueError):
        return None
    if codec in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    if codec.startswith(("utf-16", "utf-32")):
        return "utf-8"
    return codec


def decode_bytes(data: bytes, declared: str | None = None) -> tuple[str, str]:
    """Decode a whole byte string; return ``(text, encoding)``.

    BOM, then BOM-less UTF-16, then strict UTF-8, then ``declared`` when the bytes bear it
    out, then the detected charset.
    """
    bom = sniff_bom(data[:4])
    if bom is not None:
        encoding, skip = bom
        return data[skip:].decode(encoding, "replace"), encoding
    utf16 = sniff_utf16(data[:SNIFF])
    if utf16 is not None:
        return data.decode(utf16, "replace"), utf16
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    codec = normalise_charset(declared)
    if codec is None or codec == "utf-8" or not declared_fits(data, codec):
        codec = guess_charset(data)
    return decode_as(data, codec), codec


def decode_as(data: bytes, codec: str) -> str:
    """``data`` in ``codec``: cp1252 losslessly, anything else with replacement characters."""
    if codec == "cp1252":
        return decode_cp1252(data)
    return data.decode(codec, "replace")


def _chunks(fh: BinaryIO) -> Iterator[bytes]:
    while chunk := fh.read(CHUNK):
        yield chunk


def _decode_stream(fh: BinaryIO, encoding: str, errors: str) -> Iterator[str]:
    """Decode ``fh`` from its current position, chunk by chunk."""
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    for chunk in _chunks(fh):
        yield decoder.decode(chunk)
    yield decoder.decode(b"", final=True)


def _utf8_pieces(fh: BinaryIO, keep: bool) -> list[str] | None:
    """Decode ``fh`` as strict UTF-8 to the end: the pieces (if ``keep``), or None if invalid."""
    pieces: list[str] = []
    try:
        for piece in _decode_stream(fh, "utf-8", "strict"):
            if keep:
                pieces.append(piece)
    except UnicodeDecodeError:
        return None
    return pieces


def decode_file(fh: BinaryIO, size: int) -> tuple[str, Iterable[str]]:
    """Choose the encoding of the open file ``fh``; return it and the decoded pieces.

    The pieces are read lazily from ``fh``, so the caller keeps the file open while consuming
    them.
    """
    encoding, skip, pieces = _choose(fh, size)
    if pieces is not None:
        return encoding, pieces
    fh.seek(skip)
    errors = _LOSSLESS if encoding == "cp1252" else "replace"  # a guess may miss a late byte
    return encoding, _decode_stream(fh, encoding, errors)


def _choose(fh: BinaryIO, size: int) -> tuple[str, int, list[str] | None]:
    """The encoding, the bytes to skip, and the whole text when it was decoded on the way."""
    head = fh.read(SNIFF)
    bom = sniff_bom(head[:4])
    if bom is not None:
        return bom[0], bom[1], None
    utf16 = sniff_utf16(head)
    if utf16 is not None:
        return utf16, 0, None
    fh.seek(0)
    keep = size <= SMALL_FILE
    pieces = _utf8_pieces(fh, keep)
    if pieces is None:
        fh.seek(0)
        return guess_charset(fh.read(SAMPLE_BYTES)), 0, None
    return "utf-8", 0, (pieces if keep else None)


class TextReader:
    """Decodes text files of any common encoding into the sink."""

    name = "text"
    version = 2
    mimes = frozenset({"text/*", M.PLAIN, *(M.TEXTUAL_APPLICATION - {M.XML})})
    """(XML files are :mod:`engine.readers.xmldoc`'s: the documents they carry in base64.)"""
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the decoded text of ``path`` into ``sink``."""
        if ctx.data is not None and len(ctx.data) <= SNIFF:
            return _whole(ctx.data, sink)  # the worker read all of it while hashing it
        try:
            with open(path, "rb") as fh:
                head = fh.read(SNIFF + 1)
                if len(head) <= SNIFF:  # the whole file (most are this small)
                    return _whole(head, sink)
                fh.seek(0)
                encoding, pieces = decode_file(fh, path.stat().st_size)
                sink.describe(f"text:{encoding}")
                for piece in pieces:
                    sink.write(piece)
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
        return ReadInfo(extractor=f"text:{encoding}")


def _whole(data: bytes, sink: TextSink) -> ReadInfo:
    """A whole small file decoded at once, with the same choice decode_file makes, for a
    tenth of the calls."""
    text, encoding = decode_bytes(data)
    sink.describe(f"text:{encoding}")
    sink.write(text)
    return ReadInfo(extractor=f"text:{encoding}")


READERS = (TextReader(),)
