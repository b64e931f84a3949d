"""Single compressed files (``.gz``, ``.bz2``, ``.xz``/``.lzma``, ``.zst``): the document inside.

The payload is decompressed a chunk at a time into a private scratch file, counted against
the same caps as a zip member (``zip_member_bytes``, and ``zip_ratio`` against the
compressed file's size past 1 MiB) and the ``archive_bytes`` budget, then read exactly as a
walked file would be, one level deeper (``archive_depth``): a ``.tar.gz`` becomes a tar read
by the archive reader, a ``notes.txt.gz`` text. The record is the inner document's: its text
(no ``# member`` line), its pages, and an extractor naming both (``gzip+text:utf-8``); a
failure of the inner document is the file's verdict. The inner name is the file's own name
without the compression suffix (``.tgz`` gives ``.tar``), which helps detection.

zstd comes from ``backports.zstd`` (the standard library's ``compression.zstd`` of Python
3.14, for 3.11-3.13; py7zr depends on it); without it, ``.zst`` files are
``unsupported/no_reader``.
"""

from __future__ import annotations

import bz2
import gzip
import importlib
import io
import lzma
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.members import CHUNK, copy_bounded, enter, read_file, scratch_dir

Opener = Callable[[Path], io.BufferedIOBase]
_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)
_INNER_SUFFIX = {".tgz": ".tar", ".tbz2": ".tar", ".tbz": ".tar", ".txz": ".tar", ".tzst": ".tar"}


def _zstd_open() -> Opener | None:
    try:
        # by name: whether mypy sees this namespace package's stubs depends on the release
        zstd = importlib.import_module("backports.zstd")
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

    version = 1
    tools: tuple[str, ...] = ()

    def __init__(
        self, name: str, mimes: frozenset[str], suffixes: tuple[str, ...], opener: Opener
    ) -> None:
        self.name = name
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
            except LimitExceeded:
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


def _readers() -> tuple[CompressedReader, ...]:
    gz = frozenset({"application/gzip", "application/x-gzip"})
    readers = [
        CompressedReader("gzip", gz, (".gz",), _gzip),
        CompressedReader("bzip2", frozenset({"application/x-bzip2"}), (".bz2", ".bz"), _bzip2),
        CompressedReader("xz", frozenset({M.XZ, "application/x-lzma"}), (".xz", ".lzma"), _xz),
    ]
    zstd = _zstd_open()
    if zstd is not None:
        zst = frozenset({"application/zstd"})
        readers.append(CompressedReader("zstd", zst, (".zst", ".zstd"), zstd))
    return tuple(readers)


READERS = _readers()
