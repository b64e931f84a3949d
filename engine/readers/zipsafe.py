"""Zip containers opened on a budget: the checks every zip-based reader goes through.

:class:`SafeZip` refuses a container before it is parsed when its end record declares more
than ``limits.zip_members`` members, and again after parsing. Each member is read through
:class:`MemberStream`, which counts the decompressed bytes as they come (declared sizes are
never trusted): past ``limits.zip_member_bytes`` the read stops, and past 1 MiB a member whose
output exceeds ``limits.zip_ratio`` times its compressed size is refused. Encrypted members
raise :class:`EncryptedFile`, as does a password-protected OOXML file (an OLE2 container
holding an ``EncryptedPackage`` stream). Stored and deflated members are read through
zipfile; bzip2 and LZMA ones (7-Zip's, Info-ZIP's ``zip -Z bzip2``) from their raw bytes by
:class:`Unpacked`, at most a chunk of output a call (zipfile inflates a whole 4 KiB of input
at once, which a bomb turns into gigabytes before any count sees them), their CRC checked, as
are those zipfile does not read: Deflate64 (7-Zip's, Windows Explorer's for big files),
Zstandard, xz and PPMd (7-Zip's and WinZip's), with the decoders py7zr brings (inflate64,
backports.zstd, pyppmd). Other methods (PKZIP 1.x's shrink and implode, IBM's TERSE...)
raise :class:`NoDecoder` (``unsupported/no_reader``); any damage raises :class:`CorruptFile`.
Every limit error names its limit: ``zip_members``, ``zip_member_bytes``, ``zip_ratio``.
"""

from __future__ import annotations

import bz2
import importlib
import io
import lzma
import struct
import zipfile
import zlib
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, NoDecoder, ReadFailure
from engine.limits import Limits, MiB
from engine.records import Reason

CHUNK = 64 * 1024
"""Decompressed bytes asked of zipfile per read."""
RATIO_FLOOR = 1 * MiB
"""Members smaller than this are never refused for their ratio (tiny XML compresses well)."""
DEFLATE64, ZSTANDARD, XZ, PPMD = 9, 93, 95, 98
"""Methods of PKWARE's APPNOTE that zipfile does not read and :class:`Unpacked` does."""
_UNPACKED = frozenset({zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, DEFLATE64, ZSTANDARD, XZ, PPMD})
"""Methods read by :class:`Unpacked` rather than zipfile."""
DEFLATE64_SLICE = 256
"""Compressed bytes handed to the Deflate64 inflater at a time: its output for them has no
bound of its own (a match runs to 64 KiB, ~30,000:1), so at most ~8 MB comes of one."""
XZ_MEMORY = 256 * MiB
"""Most memory an xz member's header may ask of its decoder (xz -9 asks 65 MiB)."""
_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}) | _UNPACKED
"""Every method a member may be read in."""
_METHOD_NAMES = {
    1: "shrink, PKZIP 1.x", 2: "reduce, PKZIP 1.x", 3: "reduce, PKZIP 1.x",
    4: "reduce, PKZIP 1.x", 5: "reduce, PKZIP 1.x", 6: "implode, PKZIP 1.x",
    10: "PKWARE's old IBM TERSE", 18: "IBM TERSE", 19: "IBM LZ77", 96: "JPEG",
    97: "WavPack",
}  # fmt: skip
"""The methods of PKWARE's APPNOTE no member is read in, by name."""
_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
_ZIP_ERRORS = (
    zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError, struct.error
)  # fmt: skip
_LOCAL_HEADER = struct.Struct("<4s22xHH")
"""A member's local header: its signature, then (after 22 bytes) its name's and extra
field's lengths."""


def declared_members(path: Path) -> int | None:
    """Members the end-of-central-directory record declares, read without parsing the rest."""
    with open(path, "rb") as fh:
        fh.seek(0, io.SEEK_END)
        size = fh.tell()
        start = max(0, size - (65535 + _EOCD.size + _ZIP64_LOCATOR.size))
        fh.seek(start)
        tail = fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < _EOCD.size:
            return None
        count = _EOCD.unpack_from(tail, at)[4]
        loc = at - _ZIP64_LOCATOR.size
        if count != 0xFFFF or loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
            return int(count)
        fh.seek(_ZIP64_LOCATOR.unpack_from(tail, loc)[2])
        record = fh.read(_ZIP64_EOCD.size)
    if len(record) < _ZIP64_EOCD.size or not record.startswith(b"PK\x06\x06"):
        return int(count)
    return int(_ZIP64_EOCD.unpack(record)[6])


def is_encrypted_ole(path: Path) -> bool:
    """Whether ``path`` is an OLE2 file holding an ``EncryptedPackage`` stream.

    That is what Office writes for a password-protected DOCX, XLSX or PPTX: the zip is inside,
    encrypted. The stream name is looked for in the raw bytes, a chunk at a time.
    """
    try:
        with open(path, "rb") as fh:
            if fh.read(len(_OLE_MAGIC)) != _OLE_MAGIC:
                return False
            tail = b""
            while chunk := fh.read(1 * MiB):
                if _ENCRYPTED_PACKAGE in tail + chunk:
                    return True
                tail = chunk[-len(_ENCRYPTED_PACKAGE) :]
    except OSError:
        return False
    return False


class MemberStream(io.RawIOBase):
    """One member's decompressed bytes, counted against the member and ratio caps."""

    def __init__(self, raw: IO[bytes] | Unpacked, info: zipfile.ZipInfo, limits: Limits) -> None:
        super().__init__()
        self._raw = raw
        self._name = info.filename
        self._packed = max(info.compress_size, 1)
        self._limits = limits
        self.count = 0
        """Decompressed bytes read so far."""

    def readable(self) -> bool:
        """Always: this is a read-only stream."""
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        """Fill ``buffer`` with the next decompressed bytes; 0 at the end."""
        data = self.read_chunk(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read_chunk(self, size: int = CHUNK) -> bytes:
        """The next at most ``size`` decompressed bytes (b"" at the end), checked."""
        try:
            data = self._raw.read(min(size, CHUNK))
        except _ZIP_ERRORS as exc:
            raise CorruptFile(f"zip member {self._name!r} is damaged: {exc}") from exc
        self.count += len(data)
        self._check()
        return data

    def _check(self) -> None:
        limits = self._limits
        if self.count > limits.zip_member_bytes:
            raise LimitExceeded(
                "zip_member_bytes",
                f"member {self._name!r} inflates past {limits.zip_member_bytes} bytes",
            )
        if self.count > RATIO_FLOOR and self.count > limits.zip_ratio * self._packed:
            raise LimitExceeded(
                "zip_ratio",
                f"member {self._name!r} inflates more than {limits.zip_ratio}:1",
            )

    def close(self) -> None:
        """Close the underlying zip member."""
        self._raw.close()
        super().close()


class _Deflate64:
    """inflate64's inflater (a library py7zr brings, 7-Zip's Deflate64) with the face of
    bz2's decompressors: ``decompress(data, max_length)``, ``needs_input``, ``eof``.

    Its ``inflate`` returns all that a piece of input makes, so the input goes in
    :data:`DEFLATE64_SLICE` bytes at a time, and only while less than ``max_length`` of
    output waits.
    """

    def __init__(self) -> None:
        import inflate64

        self._inflater = inflate64.Inflater()
        self._in = b""
        self._at = 0
        self._out = bytearray()

    @property
    def eof(self) -> bool:
        """The stream ended and all its output was taken."""
        return bool(self._inflater.eof) and not self._out

    @property
    def needs_input(self) -> bool:
        """Nothing waits: the next call needs more of the stream."""
        return self._at >= len(self._in) and not self._out and not self._inflater.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        """At most ``max_length`` bytes of output, taking ``data`` in."""
        if data:
            self._in, self._at = self._in[self._at :] + data, 0
        while len(self._out) < max_length and self._at < len(self._in) and not self._inflater.eof:
            piece = self._in[self._at : self._at + DEFLATE64_SLICE]
            self._at += len(piece)
            self._out += self._inflater.inflate(piece)
        out = bytes(self._out[:max_length])
        del self._out[:max_length]
        return out


class _Ppmd:
    """A PPMd member (version I, revision 1, as 7-Zip and WinZip write it) decoded by
    pyppmd (a library py7zr brings), with the face of bz2's decompressors. Its stream may
    have no end mark: the member's size ends it.

    pyppmd's decoder runs in a thread of its own, and a call given an output bound could
    abort the whole process (SIGABRT in its ``OutputBuffer_Grow``, when the resumed thread
    wrote past the bound: pyppmd's pull request 131; a damaged member in a test worker, under
    load). So it is given no bound, and its input :data:`DEFLATE64_SLICE` bytes at a time,
    only while less than ``max_length`` of output waits, as :class:`_Deflate64` is.
    """

    def __init__(self, head: bytes, size: int, name: str) -> None:
        import pyppmd

        props = int.from_bytes(head, "little") if len(head) == 2 else -1
        order, megabytes, restore = (props & 0xF) + 1, ((props >> 4) & 0xFF) + 1, props >> 12
        if props < 0 or order < 2 or restore > 1:
            raise CorruptFile(f"zip member {name!r}: its PPMd header is damaged")
        try:
            self._decoder = pyppmd.Ppmd8Decoder(order, megabytes * MiB, restore)
        except MemoryError as exc:  # (up to 256 MiB, allocated whole: past a small --memory)
            raise ReadFailure(
                f"zip member {name!r}: its PPMd model of {megabytes} MiB is more than this "
                "read's memory (--memory) allows",
                reason=Reason.MEMORY,
            ) from exc
        self._left = size
        self._in = b""
        self._at = 0
        self._out = bytearray()

    @property
    def eof(self) -> bool:
        """The member's size was given out (or the stream's end mark met, its output taken)."""
        return self._left <= 0 or (bool(self._decoder.eof) and not self._out)

    @property
    def needs_input(self) -> bool:
        """Nothing waits: the next call needs more of the stream."""
        return self._at >= len(self._in) and not self._out and not self._decoder.eof

    def decompress(self, data: bytes, max_length: int) -> bytes:
        """At most ``max_length`` bytes of output (never past the member's size)."""
        if data:
            self._in, self._at = self._in[self._at :] + data, 0
        while (
            len(self._out) < max_length
            and len(self._out) < self._left
            and self._at < len(self._in)
            and not self._decoder.eof
        ):
            piece = self._in[self._at : self._at + DEFLATE64_SLICE]
            self._at += len(piece)
            self._out += self._decoder.decode(piece, -1)
        out = bytes(self._out[: min(max_length, self._left)])
        del self._out[: len(out)]
        self._left -= len(out)
        if self._left <= 0:
            self._out.clear()  # (past the member's size: no part of it)
        return out


class Unpacked:
    """A member zipfile does not read, or reads a bomb of (bzip2, LZMA, Deflate64,
    Zstandard, xz, PPMd), inflated from its raw bytes at most ``size`` a read.

    The raw bytes are found from the member's local header, as zipfile finds them; an LZMA
    member's own header (a version, then its properties) comes first, as a PPMd member's
    (its order, memory and restore method). The output's CRC is checked at its end, and a
    stream that stops short is damaged.
    """

    def __init__(self, path: Path, info: zipfile.ZipInfo) -> None:
        self._name = info.filename
        self._crc = 0
        self._expected = info.CRC
        self._size = info.file_size
        self._out = 0
        self._left = info.compress_size
        self._fh = open(path, "rb")  # noqa: SIM115 (closed by close())
        try:
            self._fh.seek(info.header_offset)
            head = self._fh.read(_LOCAL_HEADER.size)
            if len(head) < _LOCAL_HEADER.size:
                raise CorruptFile(f"zip member {self._name!r}: its local header is cut short")
            magic, name_len, extra_len = _LOCAL_HEADER.unpack(head)
            if magic != b"PK\x03\x04":
                raise CorruptFile(f"zip member {self._name!r}: no local header where it says")
            self._fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
            self._dec = self._decompressor(info.compress_type)
        except BaseException:
            self._fh.close()
            raise

    def _decompressor(self, method: int) -> _Decompressor:
        try:
            return self._decompressor_of(method)
        except ImportError as exc:  # py7zr's decoders, installed with it
            raise NoDecoder(
                f"zip member {self._name!r} uses compression method {method}, whose decoder "
                f"({exc.name}) is not installed"
            ) from exc

    def _decompressor_of(self, method: int) -> _Decompressor:
        if method == zipfile.ZIP_BZIP2:
            return bz2.BZ2Decompressor()
        if method == DEFLATE64:
            return _Deflate64()
        if method == ZSTANDARD:
            return zstd_module().ZstdDecompressor()
        if method == XZ:
            return lzma.LZMADecompressor(lzma.FORMAT_XZ, memlimit=XZ_MEMORY)
        if method == PPMD:
            return _Ppmd(self._take(2), self._size, self._name)
        head = self._take(4)  # LZMA SDK version, then the properties' size
        size = int.from_bytes(head[2:4], "little") if len(head) == 4 else -1
        props = self._take(size) if 0 <= size <= 64 else b""
        if len(props) != size:
            raise CorruptFile(f"zip member {self._name!r}: its LZMA header is damaged")
        decode = lzma._decode_filter_properties  # type: ignore[attr-defined]  # as zipfile does
        return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[decode(lzma.FILTER_LZMA1, props)])

    def _take(self, size: int) -> bytes:
        data = self._fh.read(min(size, self._left))
        self._left -= len(data)
        return data

    def read(self, size: int) -> bytes:
        """The next at most ``size`` bytes of the member (b"" at its end)."""
        dec = self._dec
        while not dec.eof:
            data = b""
            if dec.needs_input:
                data = self._take(CHUNK)
                if not data:
                    if self._out == self._size:  # LZMA without an end marker: its size ends it
                        break
                    raise CorruptFile(f"zip member {self._name!r} is cut short")
            try:
                out = dec.decompress(data, size)
            except Exception as exc:  # each library says damage its own way (zstd's ZstdError)
                raise CorruptFile(f"zip member {self._name!r} is damaged: {exc}") from exc
            if out:
                self._out += len(out)
                self._crc = zlib.crc32(out, self._crc)
                return out
            # Neither input taken nor output given, and still none wanted: it never ends. (A
            # decoder whose output filled the last call may find nothing more and only then
            # want input: zstd's does at a block's end.)
            if not data and not dec.eof and not dec.needs_input:
                raise CorruptFile(f"zip member {self._name!r} is damaged: its stream stalls")
        if self._crc != self._expected or self._out != self._size:
            raise CorruptFile(f"zip member {self._name!r} is damaged: its CRC or size is wrong")
        return b""

    def close(self) -> None:
        """Close the archive's file."""
        self._fh.close()


_Decompressor = (
    bz2.BZ2Decompressor | lzma.LZMADecompressor | _Deflate64 | _Ppmd | Any
)  # Any: Zstandard's, from the standard library (3.14) or its backport
"""What :class:`Unpacked` inflates a member with."""


def zstd_module() -> Any:
    """Zstandard's module: the standard library's (Python 3.14), else its backport (which
    py7zr brings); ImportError when neither is there."""
    try:
        return importlib.import_module("compression.zstd")
    except ImportError:  # by name: mypy's view of the backport's stubs varies by release
        return importlib.import_module("backports.zstd")


class SafeZip:
    """A zip container whose member count was checked; members are read under the caps."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.limits = limits
        self._path = path
        try:
            declared = declared_members(path)
            if declared is not None:
                self._check_count(declared)
            self._zf = zipfile.ZipFile(path)
        except NotImplementedError as exc:  # a member needing a version of zip past 6.3
            raise NoDecoder(f"a zip this reader does not know: {exc}") from exc
        except _ZIP_ERRORS as exc:
            if is_encrypted_ole(path):
                raise EncryptedFile("a password-protected Office document") from exc
            raise CorruptFile(f"not a readable zip: {exc}") from exc
        infos = self._zf.infolist()
        self._check_count(len(infos))
        self._infos = {info.filename: info for info in infos}

    def _check_count(self, count: int) -> None:
        if count > self.limits.zip_members:
            self._close_quietly()
            raise LimitExceeded(
                "zip_members", f"{count} members, more than {self.limits.zip_members}"
            )

    def _close_quietly(self) -> None:
        zf = getattr(self, "_zf", None)
        if zf is not None:
            zf.close()

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the archive (as leaving its ``with`` block does)."""
        self._zf.close()

    def names(self) -> list[str]:
        """Member names in central-directory order (directories included)."""
        return list(self._infos)

    def has(self, name: str) -> bool:
        """Whether the container holds a member called ``name``."""
        return name in self._infos

    def info(self, name: str) -> zipfile.ZipInfo:
        """The member's entry; CorruptFile when it is missing."""
        try:
            return self._infos[name]
        except KeyError:
            raise CorruptFile(f"zip member {name!r} is missing") from None

    def check(self, info: zipfile.ZipInfo) -> None:
        """Refuse a member before reading it: encrypted, odd method, declared too big."""
        if info.flag_bits & 0x1:
            raise EncryptedFile(f"zip member {info.filename!r} is encrypted")
        if info.compress_type not in _METHODS:
            method = _METHOD_NAMES.get(info.compress_type, "")
            raise NoDecoder(
                f"zip member {info.filename!r} uses compression method {info.compress_type}"
                + (f" ({method})" if method else "")
                + ", which no reader here decompresses"
            )
        limits = self.limits
        if info.file_size > limits.zip_member_bytes:
            raise LimitExceeded(
                "zip_member_bytes",
                f"member {info.filename!r} declares {info.file_size} bytes",
            )
        packed = max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR and info.file_size > limits.zip_ratio * packed:
            raise LimitExceeded(
                "zip_ratio", f"member {info.filename!r} declares more than {limits.zip_ratio}:1"
            )

    def open(self, name: str) -> MemberStream:
        """A checked, counting stream over one member."""
        info = self.info(name)
        self.check(info)
        try:
            raw: IO[bytes] | Unpacked
            if info.compress_type in _UNPACKED:
                raw = Unpacked(self._path, info)
            else:
                raw = self._zf.open(info)
        except NotImplementedError as exc:
            raise NoDecoder(f"zip member {name!r}: {exc}") from exc
        except _ZIP_ERRORS as exc:
            raise CorruptFile(f"zip member {name!r} is damaged: {exc}") from exc
        return MemberStream(raw, info, self.limits)

    def read(self, name: str) -> bytes:
        """A member's whole content, read in counted chunks."""
        parts: list[bytes] = []
        with self.open(name) as stream:
            while chunk := stream.read_chunk():
                parts.append(chunk)
        return b"".join(parts)
