"""Lotus 1-2-3 and Quattro Pro spreadsheets (``.wks``, ``.wk1``, ``.wk3``, ``.wk4``, ``.123``,
``.wq1``, ``.wq2``): each sheet's cells as ``# sheetN`` blocks of tab-separated rows, as the
Excel readers write them. No tool reads these on Linux but LibreOffice; the formats are
records (a 16-bit type and length, then the body) simple enough to read here.

Two families, told apart by the first record (BOF):

- **Lotus 1-2-3 release 1-2 and Quattro (DOS)** (BOF body of 2 bytes: ``0x0404`` WKS,
  ``0x0406`` WK1, ``0x5120`` WQ1, ``0x5121`` WQ2, ``0x1001``-``0x1007`` Quattro Pro for
  Windows): one sheet in Lotus's files, several in Quattro Pro's. A cell is a label (text
  after an alignment prefix), an integer, a double, or a formula with its value as last
  computed; a formula that gives text is followed by a STRING record with that text.
- **Lotus 1-2-3 release 3 and later** (BOF body of 26 bytes, version ``0x1000``-``0x1005``:
  WK3, WK4, 123): cells name their sheet; numbers are 80-bit extended floats, or 16-bit
  packed ones, or doubles.

Numbers are written as the spreadsheet stored them, but for cells formatted as dates or times
in the DOS formats (ISO, as the Excel readers write dates; release 3 keeps formats in records
of their own, and its dates stay serial numbers); formulas give their last value, never their
text. Text is decoded as
code page 437 in the DOS formats (Lotus's own character set agrees with it on letters and
digits) and 1252 in the later ones.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Iterator
from pathlib import Path

from engine import mimes as M
from engine.detect import RELEASE3, lotus_kind
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink, read_all

_LABEL_PREFIXES = "'\"^\\|"
"""The alignment prefix a Lotus label starts with."""
_PACKED = ((5000, 1), (500, 1), (1, 20), (1, 200), (1, 2000), (1, 20000), (1, 16), (1, 64))
"""The multiplier and divisor of a 16-bit packed number of release 3 (chosen by its bits
1-3): 3 packed over 20 is 0.15, where times 1/20 it would be 0.15000000000000002."""

_DATE_CODES = frozenset({2, 3, 4, 9, 10})
"""The special formats that show a date: D1-D3, and D4-D5 (international)."""
_TIME_CODES = frozenset({7, 8, 11, 12})
"""The special formats that show a time of day: D6-D7, and D8-D9 (international)."""
_BOGUS_LEAP_DAY = 60
_LAST_SERIAL = 2958466
"""31 December 9999 and one: a serial past it is shown as a number."""

Cells = dict[int, dict[int, dict[int, str]]]
"""Sheet -> row -> column -> the cell's text."""


class LotusReader:
    """Lotus 1-2-3 (every release) and Quattro Pro spreadsheets, cells by sheet."""

    name = "lotus"
    version = 1
    mimes = frozenset({M.LOTUS, M.QUATTRO})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """A ``# sheetN`` line and the tab-separated rows of each sheet that has cells."""
        data = read_all(path)
        kind = lotus_kind(data[:6])
        if kind is None:
            raise CorruptFile("not a Lotus 1-2-3 or Quattro Pro file")
        (version,) = struct.unpack_from("<H", data, 4)
        cells = _release3(data) if data[:4] == RELEASE3 else _classic(data, version)
        limit = ctx.limits.parts_per_block
        sink.describe("lotus", pages=len(cells))
        for sheet in sorted(cells):
            _write_sheet(cells[sheet], sheet, limit, sink)
        return ReadInfo("lotus", pages=len(cells))


def _records(data: bytes) -> Iterator[tuple[int, memoryview]]:
    """(type, body) of each record up to EOF; a record cut short ends the file."""
    view = memoryview(data)
    at = 0
    while at + 4 <= len(data):
        kind, size = struct.unpack_from("<HH", data, at)
        at += 4
        if at + size > len(data):
            raise CorruptFile(f"a record at byte {at - 4} runs past the end of the file")
        yield kind, view[at : at + size]
        at += size
        if kind == 0x01:  # EOF
            return


def _classic(data: bytes, version: int) -> Cells:
    """The cells of a Lotus release 1-2 or Quattro file."""
    cells: Cells = {}
    quattro = version >= 0x1000 and version != 0x5120  # (WQ1 lays its cells out as Lotus)
    for kind, body in _records(data):
        if kind not in (0x0D, 0x0E, 0x0F, 0x10, 0x33) or len(body) < 5:
            continue
        fmt: int | None = None
        if quattro:
            if len(body) < 6:
                continue
            col, sheet, row = body[0], body[1], int.from_bytes(body[2:4], "little")
            value = body[6:]
        else:
            sheet, fmt = 0, body[0]
            col, row = struct.unpack_from("<HH", body, 1)
            value = body[5:]
        text = _classic_value(kind, bytes(value), version, quattro, fmt)
        if text:
            cells.setdefault(sheet, {}).setdefault(row, {})[col] = text
    return cells


def _classic_value(kind: int, value: bytes, version: int, quattro: bool, fmt: int | None) -> str:
    if kind == 0x0D and len(value) >= 2:
        return _shown(float(int.from_bytes(value[:2], "little", signed=True)), fmt)
    if kind in (0x0E, 0x10) and len(value) >= 8:
        return _shown(struct.unpack_from("<d", value)[0], fmt)
    if kind in (0x0F, 0x33):
        if version in (0x5120, 0x5121) and len(value) >= 2:  # prefix, length, text
            return _label(value[2 : 2 + value[1]], "cp437", prefixed=False)
        return _label(value[1:] if quattro else value, "cp437", prefixed=not quattro)
    return ""


def _release3(data: bytes) -> Cells:
    """The cells of a Lotus release 3+ file (WK3, WK4, 123)."""
    cells: Cells = {}
    for kind, body in _records(data):
        if kind not in (0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x27, 0x28) or len(body) < 4:
            continue
        row, sheet, col = int.from_bytes(body[:2], "little"), body[2], body[3]
        text = _release3_value(kind, bytes(body[4:]))
        if text:
            cells.setdefault(sheet, {}).setdefault(row, {})[col] = text
    return cells


def _release3_value(kind: int, value: bytes) -> str:
    if kind in (0x16, 0x1A):  # a label; the text a formula gave
        return _label(value, "cp1252", prefixed=kind == 0x16)
    if kind in (0x17, 0x19) and len(value) >= 10:
        number = _extended(value[:10])
        return "" if number is None else _number(number)
    if kind == 0x18 and len(value) >= 2:
        return _number(_packed(int.from_bytes(value[:2], "little", signed=True)))
    if kind == 0x25 and len(value) >= 4:
        return _number(float(int.from_bytes(value[:4], "little", signed=True) >> 6))
    if kind in (0x27, 0x28) and len(value) >= 8:
        return _number(struct.unpack_from("<d", value)[0])
    return ""


def _extended(raw: bytes) -> float | None:
    """An 80-bit extended float (64-bit mantissa, then sign and exponent); None for the
    error and not-available values, which Lotus stores with an exponent of all ones."""
    mantissa, top = struct.unpack("<QH", raw)
    exponent = top & 0x7FFF
    if top == 0xFFFF or exponent == 0x7FFF:
        return None
    if mantissa == 0:
        return 0.0
    try:
        value = math.ldexp(float(mantissa), exponent - 16383 - 63)
    except OverflowError:
        return None
    return -value if top & 0x8000 else value


def _packed(n: int) -> float:
    """A 16-bit packed number: an integer in its upper 15 bits, or (bit 0 set) a 12-bit one
    times a multiplier its bits 1-3 choose."""
    if not n & 1:
        return float(n >> 1)
    times, over = _PACKED[(n >> 1) & 7]
    return (n >> 4) * times / over


def _shown(value: float, fmt: int | None) -> str:
    """A number as its cell's format shows it when that is a date or a time (ISO, as the
    Excel readers write them: a serial number of days from 1900), else as stored. The format
    byte: the kind in bits 4-6 (7: special), and a special kind's code in bits 0-3."""
    if fmt is not None and fmt & 0x70 == 0x70 and math.isfinite(value):
        code = fmt & 0x0F
        if code in _DATE_CODES and 1 <= value < _LAST_SERIAL and int(value) != _BOGUS_LEAP_DAY:
            # (Lotus counts a 29 February 1900 that never was: serials after it are a day on)
            day = int(value) - (1 if value > _BOGUS_LEAP_DAY else 0)
            return (dt.date(1899, 12, 31) + dt.timedelta(days=day)).isoformat()
        if code in _TIME_CODES:
            seconds = round((value % 1) * 86400) % 86400
            return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return _number(value)


def _number(value: float) -> str:
    if not math.isfinite(value):
        return ""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _label(raw: bytes, encoding: str, *, prefixed: bool) -> str:
    """A label's text: up to its NUL, less its alignment prefix; tabs and line breaks become
    spaces, as in the other spreadsheet readers."""
    text = raw.split(b"\x00", 1)[0].decode(encoding, "replace")
    if prefixed and text[:1] in _LABEL_PREFIXES:
        text = text[1:]
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ").rstrip()


def _write_sheet(rows: dict[int, dict[int, str]], sheet: int, limit: int, sink: TextSink) -> None:
    sink.rows(f"# sheet{sheet + 1}", _lines(rows, limit))


def _lines(rows: dict[int, dict[int, str]], limit: int) -> Iterator[list[str]]:
    """Each row's cells in order, the columns between them empty."""
    for row in sorted(rows):
        by_col = rows[row]
        width = max(by_col) + 1
        if width > limit:
            raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
        yield [by_col.get(col, "") for col in range(width)]


READERS = (LotusReader(),)
