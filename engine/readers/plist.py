"""Apple's binary property lists (``bplist00``): Safari's web archives, and any other.

A web archive (``.webarchive``, what Safari's "Save As" writes) holds the page's HTML as its
main resource, with the text encoding Safari read it in, and the pages of its frames as
archives of their own: the main resource goes through :func:`engine.readers.html.html_to_text`
(a plain-text page as it is), then each frame's after it, depth first (at most
:data:`MAX_FRAMES` deep). The page's pictures, style sheets and scripts (its subresources) are
left alone. Before this reader a web archive was read as text in cp1252: its HTML among the
property list's binary offsets.

Any other binary property list (an application's preferences or state) is written as one
line a value: the keys and positions that lead to it joined with ``/``, a tab, the value
(text, a number, a date, true or false); bytes are left out, as a text reader would.

Parsed by the standard library's :mod:`plistlib`, whole, from a file no bigger than the read's
``max_bytes``; whatever it cannot parse (a truncated file, offsets past the end, an object
that contains itself) is ``error/corrupt``.
"""

from __future__ import annotations

import datetime
import io
import plistlib
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink, read_all
from engine.readers.html import html_to_text, meta_charset
from engine.readers.text import decode_bytes

MAX_FRAMES = 8
"""How deep frames inside frames are read."""
MAX_KEYS = 64
"""How deep a property list's keys are followed (each level is a line's prefix)."""
_HTML = frozenset({M.HTML, M.XHTML})
_ERRORS = (
    plistlib.InvalidFileException, ValueError, TypeError, KeyError, IndexError, OverflowError,
    struct.error, RecursionError,
)  # fmt: skip
"""What :mod:`plistlib` raises on a damaged file (an object that contains itself recurses)."""


class PlistReader:
    """Reads binary property lists: a web archive's page, another list's values."""

    name = "plist"
    version = 1
    mimes = frozenset({M.BPLIST, M.WEBARCHIVE})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the page of a web archive, or every value of another property list."""
        top = _parse(read_all(path))
        if _is_archive(top):
            _write_archive(top, sink, 0)
            return ReadInfo(extractor="webarchive")
        for line in _lines(top, "", ()):
            sink.line(line)
        return ReadInfo(extractor=self.name)


def _parse(data: bytes) -> object:
    """The property list in ``data``, its strings marked ASCII that are not read as UTF-8
    (iTunes writes them so; Apple's own parser takes them) where plistlib would refuse the
    file; plain plistlib if its parser's insides are not as this Python's were."""
    try:
        try:
            return _Tolerant(dict_type=dict).parse(io.BytesIO(data))
        except AttributeError:  # (plistlib's private parser changed: its public one)
            return plistlib.loads(data, fmt=plistlib.FMT_BINARY)
    except _ERRORS as exc:
        raise CorruptFile(f"not a property list it can read: {exc}"[:300]) from None


class _Tolerant(plistlib._BinaryPlistParser):  # type: ignore[name-defined,misc]
    """plistlib's binary parser, but for its ASCII strings: one with other bytes (UTF-8 from
    iTunes) is decoded as UTF-8, else as Mac OS Roman, not refused."""

    def _read_object(self, ref: int) -> Any:
        if self._objects[ref] is not plistlib._undefined:  # type: ignore[attr-defined]
            return self._objects[ref]
        self._fp.seek(self._object_offsets[ref])
        token = self._fp.read(1)[0]
        if token & 0xF0 != 0x50:
            return super()._read_object(ref)
        size = self._get_size(token & 0x0F)
        data = self._fp.read(size)
        if len(data) != size:
            raise plistlib.InvalidFileException()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("mac_roman")
        self._objects[ref] = text
        return text


def _is_archive(top: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(top, dict) and isinstance(top.get("WebMainResource"), dict)


def _write_archive(archive: dict[str, Any], sink: TextSink, depth: int) -> None:
    """The main resource's text, then each frame's (an archive of its own)."""
    main = archive["WebMainResource"]
    body = main.get("WebResourceData")
    if isinstance(body, bytes) and body:
        mime = str(main.get("WebResourceMIMEType", "")).lower()
        declared = main.get("WebResourceTextEncodingName")
        charset = declared if isinstance(declared, str) and declared else None
        if mime in _HTML or not mime:
            markup, _ = decode_bytes(body, charset or meta_charset(body))
            html_to_text(markup, sink)
        elif mime.startswith("text/"):
            text, _ = decode_bytes(body, charset)
            sink.write(text if text.endswith("\n") else text + "\n")
    frames = archive.get("WebSubframeArchives")
    if depth + 1 < MAX_FRAMES and isinstance(frames, list):
        for frame in frames:
            if _is_archive(frame) and frame is not archive:
                _write_archive(frame, sink, depth + 1)


def _lines(value: object, key: str, within: tuple[int, ...]) -> Iterator[str]:
    """One ``key<TAB>value`` line a value (text on one line), depth first. ``within``: the
    containers that lead here (a damaged list may hold itself: not followed again)."""
    if isinstance(value, (dict, list)):
        if len(within) >= MAX_KEYS or id(value) in within:
            return
        inside = (*within, id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            yield from _lines(v, f"{key}/{k}" if key else str(k), inside)
    elif isinstance(value, bool):
        yield f"{key}\t{'true' if value else 'false'}"
    elif isinstance(value, (str, int, float, datetime.datetime)):
        text = value.isoformat() if isinstance(value, datetime.datetime) else str(value)
        yield f"{key}\t{' '.join(text.split())}"


READERS = (PlistReader(),)
