"""dBase tables (``.dbf``: dBase III-5, FoxPro, Visual FoxPro; a shapefile's attributes).

Read without a tool, as a sheet: the field names, then each record's fields tab-separated
(a deleted record left out), character fields with their padding trimmed, numbers as stored,
dates ISO (``2016-05-24``), logicals ``TRUE``/``FALSE``, Visual FoxPro's integers, currency,
doubles and date-times as values. Memo fields live in a ``.dbt``/``.fpt`` file beside the
table, which is another file (and another record): they are left blank here.

The characters' encoding: UTF-8 when every character field decodes as UTF-8, else the code
page the header's language driver names, else the one the text's bytes say (as a text file's,
:func:`engine.readers.charset.guess_charset`); the record's ``extractor`` names it
(``dbf:cp866``). Records are read a block at a time: a table of millions of rows is never held
whole. A header that is not a table's, or fields that do not fit its records, is
``error/corrupt``; a table cut short keeps the records before the cut and says so.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.charset import guess_charset

VERSIONS = frozenset(
    {0x02, 0x03, 0x04, 0x05, 0x30, 0x31, 0x32, 0x43, 0x63, 0x83, 0x8B, 0x8E, 0xCB, 0xF5, 0xFB}
)
"""First bytes of the dBase family's tables (with and without memo files)."""
_CODE_PAGES = {
    0x01: "cp437", 0x02: "cp850", 0x03: "cp1252", 0x04: "mac_roman", 0x08: "cp865",
    0x09: "cp437", 0x0A: "cp850", 0x0B: "cp437", 0x0D: "cp437", 0x0E: "cp850", 0x0F: "cp437",
    0x10: "cp850", 0x11: "cp437", 0x12: "cp850", 0x13: "cp932", 0x14: "cp850", 0x15: "cp437",
    0x16: "cp850", 0x17: "cp865", 0x18: "cp437", 0x19: "cp437", 0x1A: "cp850", 0x1B: "cp437",
    0x1C: "cp863", 0x1D: "cp850", 0x1F: "cp852", 0x22: "cp852", 0x23: "cp852", 0x24: "cp860",
    0x25: "cp850", 0x26: "cp866", 0x37: "cp850", 0x40: "cp852", 0x4D: "cp936", 0x4E: "cp949",
    0x4F: "cp950", 0x50: "cp874", 0x57: "cp1252", 0x58: "cp1252", 0x59: "cp1252",
    0x64: "cp852", 0x65: "cp866", 0x66: "cp865", 0x67: "cp861", 0x6A: "cp737", 0x6B: "cp857",
    0x6C: "cp863", 0x78: "cp950", 0x79: "cp949", 0x7A: "cp936", 0x7B: "cp932", 0x7C: "cp874",
    0x7D: "cp1255", 0x7E: "cp1256", 0x96: "mac_cyrillic", 0x97: "mac_latin2",
    0x98: "mac_greek", 0xC8: "cp1250", 0xC9: "cp1251", 0xCA: "cp1254", 0xCB: "cp1253",
    0xCC: "cp1257",
}  # fmt: skip
"""The language driver byte (29) -> its code page (0: not said)."""
_BLOCK_RECORDS = 4096
_SAMPLE_BYTES = 256 * 1024
"""Character data looked at to tell the encoding."""
_JULIAN_1970 = 2440588


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kind: str
    offset: int
    size: int
    decimals: int


@dataclass(frozen=True, slots=True)
class Table:
    """A table's header: its records, where they start, and its fields."""

    version: int
    records: int
    start: int
    size: int
    code_page: int
    fields: tuple[_Field, ...]


def header(head: bytes) -> Table | None:
    """The table ``head`` (its first bytes, the whole header among them) begins, or None when
    it is not a dBase table's header."""
    if len(head) < 33 or head[0] not in VERSIONS:
        return None
    month, day = head[2], head[3]
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    records, start, size = struct.unpack_from("<IHH", head, 4)
    fields: list[_Field] = []
    offset = 1  # (the deletion flag)
    at = 32
    end = min(len(head), start)
    while at < end:
        if head[at] == 0x0D:
            break
        if at + 32 > end:
            return None  # (a field that runs past the header)
        raw = head[at : at + 32]
        name = raw[:11].split(b"\x00", 1)[0].decode("ascii", "replace").strip()
        kind = chr(raw[11])
        width = raw[16]
        fields.append(_Field(name, kind, offset, width, raw[17]))
        offset += width
        at += 32
    else:
        return None  # (no end of the field list within the header)
    if not fields or size < offset or start < at + 1:
        return None
    return Table(head[0], records, start, size, head[29], tuple(fields))


def _numeric(raw: bytes) -> str:
    return raw.decode("latin-1").strip().rstrip("\x00")


def _date(raw: bytes) -> str:
    text = raw.decode("latin-1").strip()
    if len(text) == 8 and text.isdigit():
        return f"{text[:4]}-{text[4:6]}-{text[6:]}"
    return text


def _logical(raw: bytes) -> str:
    flag = raw[:1].upper()
    if flag in (b"T", b"Y"):
        return "TRUE"
    if flag in (b"F", b"N"):
        return "FALSE"
    return ""


def _datetime(raw: bytes) -> str:
    day, ms = struct.unpack("<ii", raw[:8])
    if day <= 0:
        return ""
    try:
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(days=day - _JULIAN_1970, milliseconds=ms)
    except OverflowError:
        return ""
    return moment.isoformat(sep=" ")


def _binary(field: _Field, raw: bytes) -> str | None:
    """A Visual FoxPro binary field's value ("" when none); None for a field stored as text."""
    kind = field.kind
    if kind in ("I", "+") and field.size == 4:
        return str(struct.unpack("<i", raw)[0])
    if kind == "Y" and field.size == 8:
        cents = struct.unpack("<q", raw)[0]
        return f"{cents / 10_000:.4f}"
    if kind in ("B", "O") and field.size == 8:
        return repr(struct.unpack("<d", raw)[0])
    if kind == "T" and field.size == 8:
        return _datetime(raw)
    return None


_TEXT_KINDS = frozenset("CV")
_SKIPPED = frozenset("MGPWQ0@")
"""Memo, general (OLE), picture, blob, varbinary, null flags, timestamps: nothing to show."""


def _value(field: _Field, raw: bytes, codec: str) -> str:
    kind = field.kind
    if kind in _TEXT_KINDS:
        text = raw.rstrip(b" \x00").decode(codec, "replace")
        return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    if kind in _SKIPPED:
        return ""
    binary = _binary(field, raw)
    if binary is not None:
        return binary
    if kind == "D":
        return _date(raw)
    if kind == "L":
        return _logical(raw)
    return _numeric(raw)


class DbfReader:
    """Reads dBase and FoxPro tables as a sheet."""

    name = "dbf"
    version = 1
    mimes = frozenset({M.DBF})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the field names and every record that is not deleted."""
        try:
            with open(path, "rb") as fh:
                return self._read(fh, sink)
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc

    def _read(self, fh: BinaryIO, sink: TextSink) -> ReadInfo:
        head = fh.read(65_536)
        table = header(head)
        if table is None:
            raise CorruptFile("not a dBase table: its header does not describe one")
        codec = _encoding(fh, table)
        sink.line("\t".join(field.name for field in table.fields))
        rows = 0
        cut = False
        for record in _records(fh, table):
            if record is None:
                cut = True
                break
            if record[:1] == b"*":
                continue
            sink.line(
                "\t".join(
                    _value(f, record[f.offset : f.offset + f.size], codec) for f in table.fields
                )
            )
            rows += 1
        note = f"the table is cut short: {rows} records read" if cut else None
        return ReadInfo(f"dbf:{codec}", note=note)


def _records(fh: BinaryIO, table: Table) -> Iterator[bytes | None]:
    """Each record's bytes, a block at a time; None after the last whole one when the file
    ends before the header's count."""
    fh.seek(table.start)
    left = table.records
    while left > 0:
        want = min(left, _BLOCK_RECORDS)
        block = fh.read(want * table.size)
        whole = len(block) // table.size
        for i in range(whole):
            record = block[i * table.size : (i + 1) * table.size]
            if record[:1] == b"\x1a":  # (the end-of-file mark before the count said)
                return
            yield record
        left -= whole
        if whole < want:
            yield None
            return


def _encoding(fh: BinaryIO, table: Table) -> str:
    """The codec of the table's character fields (see the module's docstring)."""
    texts = [f for f in table.fields if f.kind in _TEXT_KINDS]
    parts: list[bytes] = []
    size = 0
    for record in _records(fh, table):
        if record is None or size > _SAMPLE_BYTES:
            break
        for field in texts:
            raw = record[field.offset : field.offset + field.size].rstrip(b" \x00")
            parts.append(raw)
            size += len(raw)
    sample = b"\n".join(parts)
    named = _CODE_PAGES.get(table.code_page)
    if sample.isascii():
        return named or "cp1252"
    if all(_utf8(part) for part in parts):
        return "utf-8"
    return named if named is not None else guess_charset(sample)


def _utf8(part: bytes) -> bool:
    """Whether a field's bytes are UTF-8 (its last character may be cut by the field's width,
    as dBase writers cut a value that does not fit)."""
    try:
        part.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data" and exc.start >= len(part) - 3
    return True


READERS = (DbfReader(),)
