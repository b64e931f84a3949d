"""PowerPoint 97-2003 (.ppt, .pps) without tools: the text atoms of the OLE2 stream.

The ``PowerPoint Document`` stream is a tree of records (8-byte header: version and instance,
type, length; version 0xF marks a container). The current edit is found as PowerPoint does:
the ``Current User`` stream points at the last ``UserEditAtom``, whose persist directories
(followed back through the earlier edits, newer entries winning) map persist ids to record
offsets; the document's ``SlideListWithText`` (instance 0: slides) lists each slide's persist
id followed by its placeholder text, and each slide's own container holds the text of its
other shapes. Masters, notes and handouts are left out. One ``# slideN`` line per slide.

When the edit chain cannot be followed (a damaged or unusual file), every text atom outside
masters and notes is read in stream order under one ``# slide1``. A file whose last edit
names an encryption session is :class:`EncryptedFile`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded
from engine.limits import Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.embedded import Embedded, ole_object_payload, with_embedded

_HEADER = struct.Struct("<HHI")
TEXT_CHARS = 0x0FA0
"""UTF-16LE text."""
TEXT_BYTES = 0x0FA8
"""8-bit text (the low bytes of UTF-16 code units: latin-1)."""
DOCUMENT = 0x03E8
SLIDE = 0x03EE
NOTES = 0x03F0
MAIN_MASTER = 0x03F8
SLIDE_LIST = 0x0FF0
SLIDE_PERSIST = 0x03F3
USER_EDIT = 0x0FF5
PERSIST_DIRECTORY = 0x1772
HANDOUT = 0x0FC9
OLE_STORAGE = 0x1011
"""ExOleObjStg: an embedded OLE object's storage as an OLE2 file of its own, compressed with
zlib when the record's instance is 1 (then its first 4 bytes are the size uncompressed)."""
_SKIPPED = frozenset({MAIN_MASTER, NOTES, HANDOUT})
"""Containers whose text is not the slides' (masters, notes, handouts)."""
MAX_DEPTH = 64
"""Deepest record nesting read."""
MAX_EDITS = 10_000
"""Most user edits followed back."""
_PLAIN_TOKEN = struct.pack("<I", 0xE391C05F)
"""The Current User atom's headerToken of a document that is not encrypted (MS-PPT 2.3.2)."""


@dataclass(frozen=True, slots=True)
class Rec:
    """One record: its type, instance, where its body starts and ends in the stream."""

    type: int
    instance: int
    container: bool
    start: int
    end: int


def records(data: bytes, start: int, end: int) -> Iterator[Rec]:
    """The records directly inside ``data[start:end]``; a header past the end stops the walk."""
    at = start
    while at + _HEADER.size <= end:
        ver_inst, rtype, length = _HEADER.unpack_from(data, at)
        body = at + _HEADER.size
        stop = min(body + length, end)
        yield Rec(rtype, ver_inst >> 4, ver_inst & 0xF == 0xF, body, stop)
        at = body + length


def texts(data: bytes, rec: Rec, limit: int) -> Iterator[str]:
    """Every text atom under ``rec`` (itself included), depth first, masters and notes left out."""
    stack = [iter([rec])]
    seen = 0
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        seen += 1
        if seen > limit:
            raise LimitExceeded("parts_per_block", f"more than {limit} records in one slide")
        if item.container:
            if item.type not in _SKIPPED and len(stack) < MAX_DEPTH:
                stack.append(records(data, item.start, item.end))
        elif item.type in (TEXT_CHARS, TEXT_BYTES):
            yield _atom_text(data, item)


def _atom_text(data: bytes, rec: Rec) -> str:
    raw = data[rec.start : rec.end]
    if rec.type == TEXT_CHARS:
        text = raw[: len(raw) // 2 * 2].decode("utf-16-le", "replace")
    else:
        text = raw.decode("latin-1")
    # PowerPoint ends paragraphs with CR and uses VT for a line break inside one.
    return text.replace("\r", "\n").replace("\x0b", "\n")


def _at(data: bytes, offset: int) -> Rec | None:
    """The record whose header is at ``offset``, if one fits there."""
    if offset < 0 or offset + _HEADER.size > len(data):
        return None
    return next(records(data, offset, len(data)), None)


def persist_map(data: bytes, current_edit: int) -> tuple[dict[int, int], int]:
    """Persist id -> stream offset, and the document's persist id, from the edit chain."""
    offsets: dict[int, int] = {}
    doc_ref = -1
    edit_at, seen = current_edit, set[int]()
    while edit_at not in seen and len(seen) < MAX_EDITS:
        seen.add(edit_at)
        edit = _at(data, edit_at)
        if edit is None or edit.type != USER_EDIT or edit.end - edit.start < 28:
            raise CorruptFile("the PowerPoint edit chain is broken")
        last_edit, directory, doc = struct.unpack_from("<III", data, edit.start + 8)
        if doc_ref < 0:
            doc_ref = doc
            if edit.end - edit.start >= 32 and struct.unpack_from("<I", data, edit.start + 28)[0]:
                raise EncryptedFile("the presentation is password-protected")
        for pid, offset in _directory(data, directory):
            offsets.setdefault(pid, offset)
        if last_edit == 0:
            break
        edit_at = last_edit
    return offsets, doc_ref


def _directory(data: bytes, offset: int) -> Iterator[tuple[int, int]]:
    rec = _at(data, offset)
    if rec is None or rec.type != PERSIST_DIRECTORY:
        raise CorruptFile("the PowerPoint persist directory is missing")
    at = rec.start
    while at + 4 <= rec.end:
        (entry,) = struct.unpack_from("<I", data, at)
        first, count = entry & 0xFFFFF, entry >> 20
        at += 4
        for i in range(count):
            if at + 4 > rec.end:
                return
            yield first + i, struct.unpack_from("<I", data, at)[0]
            at += 4


def slides(data: bytes, current_edit: int, limit: int) -> list[list[str]]:
    """Each slide's texts, in the slide list's order, from the current edit."""
    offsets, doc_ref = persist_map(data, current_edit)
    doc = _at(data, offsets.get(doc_ref, -1))
    if doc is None or doc.type != DOCUMENT:
        raise CorruptFile("the PowerPoint document record is missing")
    placeholders: list[list[str]] = []
    shapes: list[list[str]] = []
    for rec in records(data, doc.start, doc.end):
        if rec.type != SLIDE_LIST or rec.instance != 0:
            continue
        for item in records(data, rec.start, rec.end):
            if item.type == SLIDE_PERSIST and item.end - item.start >= 4:
                (ref,) = struct.unpack_from("<I", data, item.start)
                slide = _at(data, offsets.get(ref, -1))
                own = slide is not None and slide.type == SLIDE
                shapes.append(list(texts(data, slide, limit)) if own and slide else [])
                placeholders.append([])
            elif item.type in (TEXT_CHARS, TEXT_BYTES) and placeholders:
                placeholders[-1].append(_atom_text(data, item))
    # Placeholder text (titles, body) first, then the slide's other shapes.
    return [p + s for p, s in zip(placeholders, shapes, strict=True)]


def _stream_order(data: bytes, limit: int) -> list[list[str]]:
    """Fallback: every slide-side text atom of the stream, in order, as one slide."""
    whole = Rec(0, 0, True, 0, len(data))
    return [list(texts(data, whole, limit))]


def _current_edit(user: bytes) -> int:
    if len(user) < _HEADER.size + 12:
        raise CorruptFile("the Current User stream is too short")
    return int(struct.unpack_from("<I", user, _HEADER.size + 8)[0])


class PptReader:
    """PowerPoint 97-2003 presentations, read from their OLE2 streams with olefile."""

    name = "ppt"
    version = 4
    """3: the documents embedded in it are read as its members (:mod:`embedded`). 4: a
    Microsoft Graph chart object is read as its data and strings, where it was offered to the
    Excel reader and failed as a corrupt member (:mod:`engine.readers.msgraph`)."""
    mimes = frozenset({M.PPT})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write a ``# slideN`` block per slide."""
        data, user = _streams(path)
        limit = ctx.limits.parts_per_block
        try:
            found = slides(data, _current_edit(user), limit) if user else None
        except CorruptFile:
            found = None
        if not found:
            found = _stream_order(data, limit)
        sink.describe("ppt", pages=len(found))
        for number, parts in enumerate(found, start=1):
            lines = [line.rstrip() for part in parts for line in part.split("\n")]
            body = "\n".join(line for line in lines if line.strip())
            if body:  # a slide without text has no block: an all-picture deck is no_text
                sink.line(f"# slide{number}")
                sink.line(body)
        info = ReadInfo("ppt", pages=len(found))
        return with_embedded(info, ctx, sink, embedded_objects(data, ctx.limits))


def embedded_objects(data: bytes, limits: Limits) -> Iterator[Embedded]:
    """The documents the presentation's OLE objects hold (its top-level ``ExOleObjStg``
    records: :func:`engine.readers.embedded.ole_object_payload`), in stream order; one
    whose storage will not inflate, or inflates past ``zip_member_bytes``, by its verdict."""
    objects = (rec for rec in records(data, 0, len(data)) if rec.type == OLE_STORAGE)
    for number, rec in enumerate(objects, start=1):
        name = f"embedded/object{number}"
        body = data[rec.start : rec.end]
        if rec.instance == 1:
            try:
                body = _inflated(body[4:], limits.zip_member_bytes)
            except (LimitExceeded, CorruptFile) as exc:
                yield name, exc
                continue
        payload = ole_object_payload(body)
        if payload is not None:
            yield f"{name}/{payload[0]}", payload[1]


def _inflated(raw: bytes, most: int) -> bytes:
    """``raw`` inflated (zlib), at most ``most`` bytes of it (LimitExceeded past them)."""
    try:
        out = zlib.decompressobj().decompress(raw, most + 1)
    except zlib.error as exc:
        raise CorruptFile(f"an embedded object will not inflate: {exc}") from exc
    if len(out) > most:
        raise LimitExceeded("zip_member_bytes", f"an embedded object inflates past {most} bytes")
    return out


def _streams(path: Path) -> tuple[bytes, bytes]:
    """The ``PowerPoint Document`` and ``Current User`` streams (the latter may be b"")."""
    import olefile

    with quiet_library("olefile"):
        try:
            # A file object: olefile records the caller's stack for a file it opens by name.
            with open(path, "rb") as fh, olefile.OleFileIO(fh) as ole:
                user = ole.openstream("Current User").read() if ole.exists("Current User") else b""
                # A decrypted copy (msoffcrypto-tool's) keeps the EncryptedSummary stream but
                # says in its Current User that it is not encrypted; the edit chain is checked
                # as well (persist_map).
                if ole.exists("EncryptedSummary") and user[12:16] != _PLAIN_TOKEN:
                    raise EncryptedFile("the presentation is password-protected")
                if not ole.exists("PowerPoint Document"):
                    raise CorruptFile("no PowerPoint Document stream")
                data = ole.openstream("PowerPoint Document").read()
        except (EncryptedFile, CorruptFile):
            raise
        except MemoryError:
            raise
        except Exception as exc:  # olefile raises OSError, IndexError, struct.error... on junk
            raise CorruptFile(f"not a readable OLE2 file ({type(exc).__name__})") from exc
    return data, user


READERS = (PptReader(),)
