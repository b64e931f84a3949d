"""One document in a wrapper: compressed files (``.gz``, ``.bz2``, ``.xz``/``.lzma``, ``.zst``,
Unix compress's ``.Z``) and signed envelopes (``.p7m``, PKCS#7/CMS SignedData): the document inside.

The payload is decompressed a chunk at a time into a private scratch file, counted against
the same caps as a zip member (``zip_member_bytes``, and ``zip_ratio`` against the
compressed file's size past 1 MiB) and the ``archive_bytes`` budget, then read exactly as a
walked file would be, one level deeper (``archive_depth``): a ``.tar.gz`` becomes a tar read
by the archive reader, a ``notes.txt.gz`` text. The record is the inner document's: its text
(no ``# member`` line), its pages, and an extractor naming both (``gzip+text:utf-8``); a
failure of the inner document is the file's verdict. The inner name is the file's own name
without the compression suffix (``.tgz`` gives ``.tar``), which helps detection.

A ``.p7m`` (the signed files of Italian e-invoicing, S/MIME's ``smime.p7m``) holds its
document in the SignedData's ``eContent``, found by walking the DER or BER encoding
(:func:`signed_content`: definite or indefinite lengths, a content in one OCTET STRING or in
chunks), in binary or base64 (PEM or bare) form; nothing is verified (the signature says who
signed, not what the text is). An EnvelopedData (encrypted for its recipients) is
``error/encrypted``; a detached signature (no content) is ``empty/no_text``.

Unix compress's LZW is decoded in Python (:mod:`engine.readers.lzw`): the standard library
has no reader of it. zstd comes from the standard library's ``compression.zstd`` (Python
3.14) or, before it, ``backports.zstd`` (py7zr depends on it), as zip members in Zstandard
do (:func:`engine.readers.zipsafe.zstd_module`); without it, ``.zst`` files are
``unsupported/no_reader``.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from engine import mimes as M
from engine.detect import PKCS7_SIGNED
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, ReadFailure
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.lzw import unlzw
from engine.readers.members import CHUNK, copy_bounded, enter, read_file, scratch_dir, stream_chunks
from engine.readers.zipsafe import zstd_module

Opener = Callable[[Path], io.BufferedIOBase]
_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)
_INNER_SUFFIX = {
    ".tgz": ".tar", ".tbz2": ".tar", ".tbz": ".tar", ".txz": ".tar", ".tzst": ".tar", ".taz": ".tar"
}  # fmt: skip


def _zstd_open() -> Opener | None:
    try:
        zstd = zstd_module()
    except ImportError:
        return None

    def opener(path: Path) -> io.BufferedIOBase:
        return cast("io.BufferedIOBase", zstd.open(path, "rb"))

    return opener


def inner_name(path: Path, suffixes: tuple[str, ...]) -> str:
    """The payload's name: the file's own without its compression suffix."""
    name = path.name
    lower = name.lower()
    for short, replacement in _INNER_SUFFIX.items():
        if lower.endswith(short):
            return name[: -len(short)] + replacement
    for suffix in suffixes:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _chunks(stream: io.BufferedIOBase) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


class CompressedReader:
    """One compression format: the document it holds, read through the registry."""

    tools: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        mimes: frozenset[str],
        suffixes: tuple[str, ...],
        opener: Opener,
        version: int = 1,
    ) -> None:
        self.name = name
        self.version = version
        """Each format's own: a new version of one reads only its own files again."""
        self.mimes = mimes
        self.suffixes = suffixes
        """File name endings the format uses, longest first."""
        self._open = opener

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Decompress under the caps, then read the payload as a document."""
        enter(ctx)
        name = inner_name(path, self.suffixes)
        packed = max(path.stat().st_size, 1)
        with scratch_dir() as scratch:
            inner_path = Path(scratch) / ("payload" + _suffix_of(name))
            try:
                with self._open(path) as stream:
                    copy_bounded(_chunks(stream), inner_path, ctx, name, packed)
            except (LimitExceeded, EncryptedFile, Unwrapped):
                raise
            except _ERRORS as exc:
                raise CorruptFile(f"{self.name} stream is damaged: {exc}"[:300]) from exc
            inner = read_file(inner_path, ctx, sink.max_chars - len(sink))
        extractor = f"{self.name}+{inner.info.extractor}"
        sink.describe(extractor, pages=inner.info.pages)
        sink.write(inner.text)
        if inner.cut is not None:
            raise inner.cut
        return ReadInfo(
            extractor,
            pages=inner.info.pages,
            scanned=inner.info.scanned,
            members=inner.info.members,
            note=inner.info.note,
        )


def _suffix_of(name: str) -> str:
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    return suffix if suffix[1:].isalnum() and len(suffix) <= 13 else ""


# The openers return open streams that the reader closes (``with``): hence noqa SIM115.
def _gzip(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb")


def _bzip2(path: Path) -> io.BufferedIOBase:
    return bz2.open(path, "rb")


def _xz(path: Path) -> io.BufferedIOBase:
    return lzma.open(path, "rb")


class _Unlzw(io.BufferedIOBase):
    """A compress (``.Z``) file's decoded bytes, read as a file is."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._raw = path.open("rb")
        self._chunks = unlzw(stream_chunks(self._raw.read))
        self._left = b""

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            return self._left + b"".join(self._chunks)
        if not self._left:
            self._left = next(self._chunks, b"")
        out, self._left = self._left[:size], self._left[size:]
        return out

    def close(self) -> None:
        self._raw.close()
        super().close()


# --- PKCS#7 / CMS ------------------------------------------------------------------------

_ENVELOPED_DATA = bytes.fromhex("2a864886f70d010703")
_BER_DEPTH = 64
"""Nesting past which an encoding is refused (a real envelope nests a few levels)."""
_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n \t")


class _Ber:
    """A BER/DER encoding's values, read in place: tag, where the content starts and ends."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def header(self, pos: int) -> tuple[int, int, int | None]:
        """The tag at ``pos``, where its content starts, and its length (None: indefinite)."""
        data = self.data
        if pos + 2 > len(data):
            raise ValueError("an encoding cut short")
        tag = data[pos]
        if tag & 0x1F == 0x1F:
            raise ValueError("a tag number past 30")  # none in PKCS#7's own structure
        first = data[pos + 1]
        pos += 2
        if first < 0x80:
            return tag, pos, first
        if first == 0x80:
            return tag, pos, None
        size = first & 0x7F
        if size > 8 or pos + size > len(data):
            raise ValueError("a length that cannot be")
        return tag, pos + size, int.from_bytes(data[pos : pos + size], "big")

    def end(self, pos: int, depth: int = 0) -> int:
        """Where the value at ``pos`` ends (its end-of-contents octets included)."""
        if depth > _BER_DEPTH:
            raise ValueError("values nested too deep")
        tag, start, length = self.header(pos)
        if length is not None:
            if start + length > len(self.data):
                raise ValueError("a value runs past the end")
            return start + length
        if not tag & 0x20:
            raise ValueError("an indefinite length on a primitive value")
        pos = start
        while self.data[pos : pos + 2] != b"\x00\x00":
            pos = self.end(pos, depth + 1)
        return pos + 2

    def children(self, pos: int, depth: int = 0) -> list[int]:
        """Where each value inside the constructed value at ``pos`` starts."""
        tag, start, length = self.header(pos)
        if not tag & 0x20:
            raise ValueError("a primitive value where a constructed one belongs")
        stop = start + length if length is not None else None
        out: list[int] = []
        pos = start
        while (pos < stop) if stop is not None else self.data[pos : pos + 2] != b"\x00\x00":
            out.append(pos)
            pos = self.end(pos, depth + 1)
        return out

    def octets(self, pos: int, depth: int = 0) -> Iterator[bytes]:
        """An OCTET STRING's bytes, its chunks in order when it is constructed."""
        if depth > _BER_DEPTH:
            raise ValueError("values nested too deep")
        tag, start, length = self.header(pos)
        if tag == 0x04 and length is not None:
            yield self.data[start : start + length]
        elif tag == 0x24:
            for child in self.children(pos):
                yield from self.octets(child, depth + 1)
        else:
            raise ValueError("no OCTET STRING where the content belongs")


def signed_content(data: bytes) -> bytes | None:
    """The document a PKCS#7/CMS SignedData ``data`` holds (None: a detached signature).

    Raises ValueError when ``data`` is no such structure, EncryptedFile for EnvelopedData.
    """
    try:
        return _content(_Ber(_binary(data)))
    except IndexError as exc:  # a structure with fewer values than PKCS#7's
        raise ValueError("not PKCS#7 signed data: values missing") from exc


def _content(ber: _Ber) -> bytes | None:
    info = ber.children(0)  # ContentInfo: contentType, [0] content
    oid = _oid(ber, info[0]) if info else b""
    if oid == _ENVELOPED_DATA:
        raise EncryptedFile("a PKCS#7 envelope encrypted for its recipients")
    if oid != PKCS7_SIGNED or len(info) < 2:
        raise ValueError("not PKCS#7 signed data")
    signed = ber.children(ber.children(info[1])[0])  # [0] EXPLICIT SignedData
    encap = ber.children(signed[2])  # version, digestAlgorithms, encapContentInfo
    if len(encap) < 2:
        return None
    wrapper = ber.children(encap[1])  # eContent [0] EXPLICIT OCTET STRING
    return b"".join(ber.octets(wrapper[0])) if wrapper else None


def _oid(ber: _Ber, pos: int) -> bytes:
    tag, start, length = ber.header(pos)
    if tag != 0x06 or length is None:
        raise ValueError("no object identifier where one belongs")
    return ber.data[start : start + length]


def _binary(data: bytes) -> bytes:
    """``data`` itself when it is binary; the bytes a base64 form (PEM or bare) stands for."""
    if data[:1] == b"\x30":
        return data
    text = data.strip()
    if text.startswith(b"-----BEGIN"):
        lines = text.splitlines()
        text = b"".join(line for line in lines if not line.startswith(b"-----"))
    if not text or not set(text[:4096]) <= _BASE64:
        raise ValueError("not PKCS#7 data, binary or base64")
    return base64.b64decode(b"".join(text.split()), validate=False)


class Unwrapped(ReadFailure):
    """A wrapper that holds no document (a detached signature)."""

    status = "empty"
    reason = "no_text"


def _p7m(path: Path) -> io.BufferedIOBase:
    content = signed_content(path.read_bytes())
    if content is None:
        raise Unwrapped("a detached signature: the signed document is not in it")
    return io.BytesIO(content)


def _readers() -> tuple[CompressedReader, ...]:
    gz = frozenset({"application/gzip", "application/x-gzip"})
    readers = [
        CompressedReader("gzip", gz, (".gz",), _gzip),
        CompressedReader("bzip2", frozenset({"application/x-bzip2"}), (".bz2", ".bz"), _bzip2),
        CompressedReader("xz", frozenset({M.XZ, "application/x-lzma"}), (".xz", ".lzma"), _xz),
        CompressedReader("compress", frozenset({M.COMPRESS}), (".z", ".taz"), _Unlzw),
        # p7m 2: an XML inside (an e-invoice) read without its base64, its attachments members
        CompressedReader(
            "p7m", frozenset({M.PKCS7, "application/x-pkcs7-mime"}), (".p7m",), _p7m, version=2
        ),
    ]
    zstd = _zstd_open()
    if zstd is not None:
        zst = frozenset({"application/zstd"})
        readers.append(CompressedReader("zstd", zst, (".zst", ".zstd"), zstd))
    return tuple(readers)


READERS = _readers()
