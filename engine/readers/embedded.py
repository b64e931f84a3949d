"""Documents embedded in Office documents, read as the document's members.

A Word report holding a workbook or a PDF, a deck holding a spreadsheet: the embedded
document's text is part of what the file says, and no other reader would find it. OOXML keeps
each embedded object as a part under ``word/``, ``xl/`` or ``ppt/embeddings/``: a document in
its own format (``Microsoft_Excel_Worksheet.xlsx``, a ``.pdf``...) or an OLE2 file
(``oleObject1.bin``) holding one. Word 97 and Excel 97 files keep each as a storage of their
own OLE2 file (``ObjectPool/_NNN`` in a ``.doc``, ``MBDxxxxxxxx`` in a ``.xls``); PowerPoint
97 keeps each as an OLE2 file inside a record of its stream (:mod:`engine.readers.ppt`). Inside an
OLE object the document is the ``CONTENTS`` stream (a PDF, as Acrobat embeds it), the
``Package`` stream (an OOXML document) or the ``\\x01Ole10Native`` stream (a file dropped into
the document, with its name); an object's OLE2 file that is an Office 97 document itself (an
``oleObjectN.bin`` holding a ``Workbook`` stream) is read as that document. An RTF file keeps
each object as an OLE 1 object in an ``\\objdata`` group: a ``Package`` (a dropped file) or
an OLE2 file as above. A Microsoft Graph chart (an object of Graph's class, whose
``Workbook`` stream is Graph's own) is read as its datasheet and strings, a member ``chart``
(:mod:`engine.readers.msgraph`). A picture and a link are left alone.

Every document found goes through :class:`engine.readers.members.MemberReader`: a verdict of
its own, its text after a ``# member NAME`` line, the container bounds (nesting, count,
bytes, time) as for an archive's members.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import replace
from itertools import chain
from pathlib import Path, PurePosixPath
from typing import Any

from engine.errors import LimitExceeded, ReadFailure
from engine.names import natural
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.cfb import storage_file
from engine.readers.members import MemberReader
from engine.readers.msgraph import GRAPH_CLASS, graph_lines
from engine.readers.zipsafe import SafeZip

Embedded = tuple[str, "bytes | ReadFailure"]
"""An embedded document's name and its bytes, or why they could not be had."""

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
DOCUMENT_MAGICS = (b"%PDF-", OLE_MAGIC, b"PK\x03\x04", b"{\\rtf")
"""How a document's bytes start, where a container holds bytes of any kind (a database's
BLOBs, an XML file's base64): a PDF, an Office 97 file, a zip (OOXML, OpenDocument), an RTF."""
_EMBEDDINGS = ("word/embeddings/", "xl/embeddings/", "ppt/embeddings/")
_NATIVE = "\x01Ole10Native"
_PAYLOADS = ("CONTENTS", "Package")
_OBJECT_ROOTS = ("ObjectPool",)
"""Storages of a ``.doc`` that hold one storage per embedded object."""


def with_embedded(
    info: ReadInfo, ctx: ReadContext, sink: TextSink, found: Iterator[Embedded]
) -> ReadInfo:
    """``info`` with the documents ``found`` read as members after the text written so far
    (their verdicts in ``members``, what they wait on in ``needs``); ``info`` itself when
    there are none. A document that is itself as deeply nested as containers may be keeps
    its own text and says its embedded documents were not read."""
    first = next(found, None)
    if first is None:
        return info
    if ctx.depth >= ctx.limits.archive_depth:
        deep = f"embedded documents not read: nested more than {ctx.limits.archive_depth} deep"
        return replace(info, note=f"{info.note}; {deep}" if info.note else deep)
    sink.end_line()  # (a document's text may end mid-line: its members' lines start anew)
    with MemberReader(ctx, sink) as members:
        for name, got in chain((first,), found):
            if isinstance(got, ReadFailure):
                members.skip(name, got.status, got.reason, str(got)[:300])
            else:
                members.read(name, [got], len(got))
        verdicts = tuple(members.verdicts)
        needs = tuple(sorted(set(info.needs) | members.needs))
        note = info.note
        if members.failed:
            gone = f"{members.failed} of {members.noted} embedded documents not read"
            note = f"{note}; {gone}" if note else gone
    return replace(info, members=info.members + verdicts, note=note, needs=needs)


def ooxml_embedded(zf: SafeZip) -> Iterator[Embedded]:
    """The documents embedded in an OOXML package: each ``embeddings/`` part, or what the
    OLE object in it holds; by the part's name (and the dropped file's own), in the order of
    their numbers (``oleObject2`` before ``oleObject10``, whatever the zip's order: Word's
    was 2 before 1). A part past the zip bounds is named with its verdict."""
    for name in sorted(zf.names(), key=natural):
        if not name.startswith(_EMBEDDINGS) or name.endswith("/"):
            continue
        short = name.split("/embeddings/", 1)[1]
        try:
            data = zf.read(name)
        except LimitExceeded as exc:
            if exc.limit == "archive_bytes":
                raise
            yield f"embedded/{short}", exc
            continue
        except ReadFailure as exc:
            yield f"embedded/{short}", exc
            continue
        if data.startswith(OLE_MAGIC):
            payload = ole_object_payload(data)
            if payload is None:
                continue
            inner, data = payload
            short = f"{short}/{inner}"
        yield f"embedded/{short}", data


def ole_embedded(path: Path, limit: int = 64 << 20) -> Iterator[Embedded]:
    """The documents embedded in a Word 97 or Excel 97 file's OLE objects: what a storage's
    ``CONTENTS``, ``Package`` or ``\\x01Ole10Native`` stream holds, or the storage itself when
    it is an Office 97 document (an Excel table pasted into Word: its ``Workbook``), written
    out as a file of its own (:mod:`engine.readers.cfb`; past ``limit`` bytes, its verdict)."""
    import olefile

    try:
        with open(path, "rb") as fh, olefile.OleFileIO(fh) as ole:
            listed = ole.listdir(streams=False, storages=True)
            objects = [
                entry
                for entry in listed
                if (len(entry) == 1 and entry[0].upper().startswith("MBD"))
                or (len(entry) == 2 and entry[0] in _OBJECT_ROOTS)
            ]
            for storage in objects:
                payload = _payload(ole, storage)
                if payload is not None:
                    inner, data = payload
                    yield f"embedded/{'/'.join(storage)}/{inner}", data
                elif _is_document(ole, storage):
                    yield f"embedded/{'/'.join(storage)}/document", _stored(ole, storage, limit)
                elif (chart := _graph_chart(ole, storage, limit)) is not None:
                    yield f"embedded/{'/'.join(storage)}/chart", chart
    except (MemoryError, RecursionError):
        raise
    except Exception:  # olefile's own errors on a damaged file: its main text stands
        return


def _is_document(ole: Any, storage: list[str]) -> bool:
    """Whether an object's storage is an Office 97 document itself (not a Graph chart, whose
    ``Workbook`` stream is Graph's own: :mod:`engine.readers.msgraph`)."""
    if ole.getclsid(storage).startswith(GRAPH_CLASS):
        return False
    return any(ole.exists([*storage, stream]) for stream in _DOCUMENTS)


def _graph_chart(ole: Any, storage: list[str], limit: int) -> bytes | None:
    """The text of a Microsoft Graph chart's storage (:func:`engine.readers.msgraph.graph_lines`)
    as a text file's bytes; None for another storage, or a chart without text."""
    stream = [*storage, "Workbook"]
    if not ole.getclsid(storage).startswith(GRAPH_CLASS) or not ole.exists(stream):
        return None
    if ole.get_size(stream) > limit:
        return None
    lines = graph_lines(ole.openstream(stream).read())
    return "".join(f"{line}\n" for line in lines).encode("utf-8") if lines else None


def _stored(ole: Any, storage: list[str], limit: int) -> bytes | ReadFailure:
    """The Office 97 document a storage is, as a file; a limit's verdict past ``limit``."""
    data = storage_file(ole, storage, limit)
    if data is None:
        return LimitExceeded("zip_member_bytes", f"an embedded document of more than {limit} bytes")
    return data


def ole1_embedded(objects: list[bytes]) -> Iterator[Embedded]:
    """The documents an RTF file's OLE 1 objects (its ``\\objdata``) hold: a file dropped
    into it (class ``Package``), or an OLE2 file (a Word or Excel 97 document itself, or an
    object holding one as above); by the object's class and number."""
    for number, raw in enumerate(objects, start=1):
        found = ole1_document(number, raw)
        if found is not None:
            yield found


def ole1_document(number: int, raw: bytes) -> tuple[str, bytes] | None:
    """The document the RTF file's ``number``-th OLE 1 object ``raw`` holds, by name (see
    :func:`ole1_embedded`); None for a picture's class, a link, or data that is none."""
    found = ole1_native(raw)
    if found is None:
        return None
    klass, data = found
    name = f"embedded/object{number}"
    if klass == "Package":
        dropped = ole_native(len(data).to_bytes(4, "little") + data)
        return (f"{name}/{dropped[0]}", dropped[1]) if dropped is not None else None
    if data.startswith(OLE_MAGIC):
        payload = ole_object_payload(data)
        return (f"{name}/{payload[0]}", payload[1]) if payload is not None else None
    return None


def ole1_native(raw: bytes) -> tuple[str, bytes] | None:
    """An embedded OLE 1 object's class name and native data; None for a link, a static
    picture or a damaged one."""
    try:
        (kind,) = struct.unpack_from("<I", raw, 4)  # after the OLE version
        if kind != 2:  # 2: embedded; 1 is a link, 5 a static picture
            return None
        klass, at = _lpstring(raw, 8)
        _topic, at = _lpstring(raw, at)
        _item, at = _lpstring(raw, at)
        (size,) = struct.unpack_from("<I", raw, at)
    except (ValueError, struct.error):
        return None
    data = raw[at + 4 : at + 4 + size]
    return (klass, data) if len(data) == size and size else None


def _lpstring(raw: bytes, at: int) -> tuple[str, int]:
    """A length-prefixed ANSI string (its NUL included in the length) and where it ends."""
    (size,) = struct.unpack_from("<I", raw, at)
    if size > 1024 or at + 4 + size > len(raw):
        raise ValueError("not a string")
    return raw[at + 4 : at + 4 + size].rstrip(b"\x00").decode("latin-1"), at + 4 + size


_DOCUMENTS = ("WordDocument", "Workbook", "Book", "PowerPoint Document")
"""Streams of an OLE2 file that is an Office 97 document itself."""


def ole_object_payload(data: bytes) -> tuple[str, bytes] | None:
    """What an OLE object file (an OOXML ``oleObjectN.bin``, an RTF's object) holds: the
    document in one of its streams, or itself when it is an Office 97 document."""
    import olefile

    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            found = _payload(ole, [])
            if found is None and _is_document(ole, []):
                return "document", data
            if found is None and (chart := _graph_chart(ole, [], len(data))) is not None:
                return "chart", chart
            return found
    except (MemoryError, RecursionError):
        raise
    except Exception:
        return None


def _payload(ole: Any, storage: list[str]) -> tuple[str, bytes] | None:
    """The document an OLE object's storage holds: (its name, its bytes), or None."""
    for stream in _PAYLOADS:
        if ole.exists("/".join([*storage, stream])):
            return stream, ole.openstream([*storage, stream]).read()
    if ole.exists("/".join([*storage, _NATIVE])):
        native = ole_native(ole.openstream([*storage, _NATIVE]).read())
        if native is not None:
            return native
    return None


def ole_native(raw: bytes) -> tuple[str, bytes] | None:
    """The file an ``\\x01Ole10Native`` stream (the Packager's) holds: its base name and its
    bytes; None for any other layout (a link, a command) or a damaged one."""
    try:
        at = 4 + 2  # the stream's size, then a word of flags
        label, at = _zstring(raw, at)
        source, at = _zstring(raw, at)
        at += 4 + 4  # two words of flags
        _temp, at = _zstring(raw, at)
        (size,) = struct.unpack_from("<I", raw, at)
        at += 4
    except (ValueError, struct.error):
        return None
    data = raw[at : at + size]
    if len(data) != size or size == 0:
        return None
    name = PurePosixPath(source.replace("\\", "/")).name or label or "native"
    return name, data


def _zstring(raw: bytes, at: int) -> tuple[str, int]:
    """A NUL-terminated ANSI string at ``at`` (at most 1 KiB) and where it ends."""
    end = raw.index(b"\x00", at, at + 1024)
    return raw[at:end].decode("latin-1"), end + 1
