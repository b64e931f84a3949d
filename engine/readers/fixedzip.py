"""Zip-based formats of their own: Excel binary workbooks (.xlsb), Visio drawings (.vsdx) and
XPS documents (.xps, .oxps).

- ``.xlsb``: through pyxlsb, after the engine's own zip checks (member count, declared sizes
  and ratios: pyxlsb inflates members itself); a ``# sheetN`` block of tab-separated rows per
  sheet with rows, numbers without a spurious ``.0``, a number whose style's format shows a
  date or a time as ISO text (pyxlsb reads no styles: :class:`_Styles` reads
  ``styles.bin``, and each cell's style is kept as its rows are read); a sheet record's
  names found where they end the record (:func:`_sheet_record`), as not every writer lays
  them out as the format says;
  after a sheet's rows, the text of its drawings (their parts are XML, as in ``.xlsx``:
  :func:`engine.readers.drawingml.sheet_drawing_lines`).
- ``.vsdx``: each page's shapes' ``Text``, in page order, a ``# pageN`` line before a page
  that has any.
- ``.xps``: each fixed page's ``Glyphs`` runs (``UnicodeString``), one per line, in document
  and page order, pages separated by form feeds as PDF pages are.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, ReadFailure
from engine.names import natural
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.cellformats import is_date_format, serial_text
from engine.readers.drawingml import part_of, relationships, sheet_drawing_lines
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse
from engine.readers.zipsafe import SafeZip

# --- xlsb ------------------------------------------------------------------------------------


def _cell(value: Any, dated: bool = False, date1904: bool = False) -> str:
    """A cell's value as text; a number whose style shows a date (``dated``) as one."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if dated and isinstance(value, int | float):
        shown = serial_text(float(value), date1904)
        if shown is not None:
            return shown
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value).replace("\t", " ").replace("\r", " ").replace("\n", " ")


class XlsbReader:
    """Excel binary workbooks through pyxlsb."""

    name = "xlsb"
    version = 5
    """2: sheet records with 4 more bytes read (they were error/corrupt). 3: the text of the
    sheets' drawings (text boxes, shapes, SmartArt diagrams: ``xl/drawings`` are XML here
    too). 4: their charts' text (XML too), equations in
    their text boxes; dates as dates, where they were serial numbers. 5: a drawing's runs in
    the Symbol font as its glyphs' characters (:mod:`engine.readers.symbolfont`)."""
    mimes = frozenset({M.XLSB})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's non-empty rows."""
        sheets = 0
        with SafeZip(path, ctx.limits) as zf:
            for name in zf.names():
                zf.check(zf.info(name))  # pyxlsb inflates members itself: bound them first
            budget = XmlBudget(ctx.limits)
            styles = _Styles(zf, budget)
            with quiet_library("pyxlsb"), _workbook(path) as book:
                names = list(book.sheets)
                parts = _sheet_parts(book)
                sink.describe("xlsb", pages=len(names))
                for index, sheet_name in enumerate(names, start=1):
                    sheets = index
                    said = _write_sheet(book, sheet_name, index, (ctx, sink, styles))
                    part = parts.get(sheet_name, "")
                    drawn = (
                        sheet_drawing_lines(zf, relationships(zf, part, budget), budget)
                        if zf.has(part)
                        else []
                    )
                    if drawn and not said:
                        sink.line(f"# sheet{index}")
                    for line in drawn:
                        sink.line(line)
        return ReadInfo("xlsb", pages=sheets)


_SHEET_STRINGS_AT = (8, 12, 4, 16)
"""Where a sheet record's (BrtBundleSh) two strings may start: after ``hsState`` and
``iTabID`` (8 bytes, the format's own layout, first); some writers put 4 more bytes before
them (Tika's ``testEXCEL.xlsb``), where pyxlsb, reading at 8, took the ``r`` of ``rId1`` for a
length and failed every such workbook with a KeyError."""


def _sheet_record(data: bytes) -> tuple[int, str | None, str] | None:
    """A BrtBundleSh's sheet id, relationship id and name: found where its two strings (a
    32-bit count of UTF-16 units each, the first nullable) end the record exactly, without a
    control character (the 6th sheet of a padded record also fits the format's layout, with
    the count of ``rId6`` read as its first two characters); None when they fit nowhere."""
    fits = [found for at in _SHEET_STRINGS_AT if (found := _strings_at(data, at)) is not None]
    clean = [f for f in fits if not any(_CONTROL.search(t) for t in f[1:] if t is not None)]
    best = clean or fits
    return best[0] if best else None


_CONTROL = re.compile(r"[\x00-\x1f]")


def _strings_at(data: bytes, at: int) -> tuple[int, str | None, str] | None:
    """The sheet record's fields when its strings start at ``at`` and end it exactly."""
    rel, pos = _string_at(data, at, nullable=True)
    if pos is None:
        return None
    name, pos = _string_at(data, pos, nullable=False)
    if pos != len(data) or name is None:
        return None
    return int.from_bytes(data[at - 4 : at], "little"), rel, name


def _string_at(data: bytes, pos: int, nullable: bool) -> tuple[str | None, int | None]:
    """The string counted at ``pos`` and the position after it (None: it does not fit)."""
    if pos + 4 > len(data):
        return None, None
    n = int.from_bytes(data[pos : pos + 4], "little")
    pos += 4
    if nullable and n == 0xFFFFFFFF:
        return None, pos
    if pos + 2 * n > len(data):
        return None, None
    return data[pos : pos + 2 * n].decode("utf-16-le", "replace"), pos + 2 * n


@functools.cache
def _fitted_sheets() -> None:
    """Have pyxlsb read sheet records with :func:`_sheet_record` (its handler table is a
    class attribute, shared by its readers: set once per process)."""
    from pyxlsb import biff12
    from pyxlsb.handlers import SheetHandler
    from pyxlsb.reader import BIFF12Reader

    class FittedSheet(SheetHandler):  # type: ignore[misc]  # (pyxlsb has no annotations)
        def read(self, reader: Any, recid: int, reclen: int) -> Any:
            found = _sheet_record(reader.read(reclen))
            if found is None:
                raise CorruptFile("a sheet record whose names do not fit it")
            return self.cls._make(found)

    BIFF12Reader.handlers[biff12.SHEET] = FittedSheet()


def _workbook(path: Path) -> Any:
    from pyxlsb import open_workbook

    _fitted_sheets()
    try:
        return open_workbook(str(path))
    except (ReadFailure, MemoryError):
        raise
    except Exception as exc:  # pyxlsb raises whatever its parsing meets on a damaged file
        raise CorruptFile(f"pyxlsb could not read it ({type(exc).__name__})") from exc


def _sheet_parts(book: Any) -> dict[str, str]:
    """Each sheet's part in the package by its name (pyxlsb keeps them as (name, target under
    ``xl/``) pairs, privately: none when that changes, and no drawing is read)."""
    try:
        pairs = [(str(name), str(target).lstrip("/")) for name, target in book._sheets]
    except (AttributeError, TypeError, ValueError):
        return {}
    return {n: t if t.startswith("xl/") else posixpath.join("xl", t) for n, t in pairs}


def _write_sheet(
    book: Any, sheet_name: str, index: int, into: tuple[ReadContext, TextSink, _Styles]
) -> bool:
    """Write a sheet's rows; whether it had any (its ``# sheetN`` line written)."""
    ctx, sink, styles = into
    limit = ctx.limits.parts_per_block
    header = f"# sheet{index}"
    try:
        with book.get_sheet(sheet_name) as sheet:
            dim = sheet.dimension
            if dim is not None and dim.c + dim.w > limit:
                # pyxlsb builds every row as a list as wide as the declared dimension
                raise LimitExceeded("parts_per_block", f"a sheet {dim.c + dim.w} cells wide")
            for row in _styled_rows(sheet):
                cells: list[str] = []
                for column, value, style in row:
                    if column >= limit:
                        raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
                    cells.extend([""] * (column - len(cells)))
                    cells.append(_cell(value, styles.dated(style), styles.date1904))
                while cells and not cells[-1]:
                    cells.pop()
                if any(cells):
                    if header:
                        sink.line(header)
                        header = ""
                    sink.line("\t".join(cells))
    except (ReadFailure, MemoryError):
        raise
    except Exception as exc:  # as above: a damaged sheet stream
        raise CorruptFile(f"sheet {index} is damaged ({type(exc).__name__})") from exc
    return not header


def _styled_rows(sheet: Any) -> Iterator[list[tuple[int, Any, int]]]:
    """Each row's cells as (column, value, style index), read as pyxlsb's ``rows`` reads
    them but keeping the style it drops (from its reader, privately: its rows without styles
    when that changes)."""
    from pyxlsb import biff12

    try:
        reader, offset, strings = sheet._reader, sheet._data_offset, sheet._stringtable
    except AttributeError:
        for plain in sheet.rows(sparse=True):
            yield [(cell.c, cell.v, -1) for cell in plain]
        return
    reader.seek(offset, os.SEEK_SET)
    row: list[tuple[int, Any, int]] | None = None
    number = -1
    for recid, item in reader:
        if recid == biff12.ROW and item.r != number:
            if row is not None:
                yield row
            number, row = item.r, []
        elif biff12.BLANK <= recid <= biff12.FORMULA_BOOLERR and row is not None:
            value = strings[item.v] if recid == biff12.STRING and strings is not None else item.v
            row.append((item.c, value, item.style & 0xFFFFFF))  # (its low 24 bits: the style)
        elif recid == biff12.SHEETDATA_END:
            break
    if row is not None:
        yield row


class _Styles:
    """Which cell styles of a binary workbook show dates, and its epoch: its ``BrtXF``
    records between ``BrtBeginCellXFs`` and ``BrtEndCellXFs`` (each's number format the
    second 16-bit field), its ``BrtFmt`` codes, its ``BrtWbProp`` flags (1904: bit 0)."""

    def __init__(self, zf: SafeZip, budget: XmlBudget) -> None:
        self.dates: list[bool] = []
        self.date1904 = False
        workbook = "xl/workbook.bin"
        if not zf.has(workbook):
            return
        for rtype, body in _records(zf.read(workbook)):
            if rtype == _WB_PROP and len(body) >= 4:
                self.date1904 = bool(body[0] & 1)
        part = part_of(relationships(zf, workbook, budget), "/styles") or ""
        if zf.has(part):
            self.dates = _date_styles(zf.read(part))

    def dated(self, style: int) -> bool:
        """Whether style ``style`` shows its number as a date or a time."""
        return 0 <= style < len(self.dates) and self.dates[style]


_WB_PROP, _FMT, _XF, _BEGIN_CELL_XFS, _END_CELL_XFS = 153, 44, 47, 617, 618


def _date_styles(data: bytes) -> list[bool]:
    codes: dict[int, str] = {}
    formats: list[int] = []
    in_cells = False
    for rtype, body in _records(data):
        if rtype in (_BEGIN_CELL_XFS, _END_CELL_XFS):
            in_cells = rtype == _BEGIN_CELL_XFS
        elif rtype == _XF and in_cells and len(body) >= 4:
            formats.append(int.from_bytes(body[2:4], "little"))
        elif rtype == _FMT and len(body) >= 6:
            count = int.from_bytes(body[2:6], "little")
            codes[int.from_bytes(body[0:2], "little")] = body[6 : 6 + 2 * count].decode(
                "utf-16-le", "replace"
            )
    return [is_date_format(number, codes.get(number)) for number in formats]


def _records(data: bytes) -> Iterator[tuple[int, bytes]]:
    """The BIFF12 records of a part: (type, body); type and size are written 7 bits a byte,
    the high bit saying another follows (at most 2 bytes of type, 4 of size)."""
    pos, end = 0, len(data)
    while pos < end:
        fields = []
        for most in (2, 4):
            value = 0
            for shift in range(0, 7 * most, 7):
                if pos >= end:
                    return
                byte = data[pos]
                pos += 1
                value |= (byte & 0x7F) << shift
                if not byte & 0x80:
                    break
            fields.append(value)
        rtype, size = fields
        yield rtype, data[pos : pos + size]
        pos += size


# --- vsdx ------------------------------------------------------------------------------------

_VISIO_NS = {"http://schemas.microsoft.com/office/visio/2012/main": "v"}
_VISIO_PAGE = re.compile(r"^visio/pages/page\d+\.xml$")


class VsdxReader:
    """Visio drawings: the text of every shape, page by page."""

    name = "vsdx"
    version = 1
    mimes = frozenset({M.VSDX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """A ``# pageN`` line and the shapes' text of each page that has any."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            pages = sorted((n for n in zf.names() if _VISIO_PAGE.match(n)), key=natural)
            if not pages:
                raise CorruptFile("no visio/pages/pageN.xml part")
            for number, name in enumerate(pages, start=1):
                lines: list[str] = []

                def on_block(el: Element, lines: list[str] = lines) -> None:
                    text = " ".join(element_text(el).split())
                    if text:
                        lines.append(text)

                with zf.open(name) as stream:
                    parse(stream, Rules(_VISIO_NS, frozenset({"v:Text"}), on_block), budget)
                if lines:
                    sink.line(f"# page{number}")
                    sink.line("\n".join(lines))
        return ReadInfo("vsdx", pages=len(pages))


# --- xps -------------------------------------------------------------------------------------

_XPS_NS = {
    "http://schemas.microsoft.com/xps/2005/06": "",
    "http://schemas.openxps.org/oxps/v1.0": "",
}
_XPS_PAGE = re.compile(r"^Documents/[^/]+/Pages/[^/]+\.fpage$", re.IGNORECASE)


class XpsReader:
    """XPS and OpenXPS documents: the glyph runs of each fixed page."""

    name = "xps"
    version = 1
    mimes = frozenset({M.XPS, "application/oxps"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Each page's runs, one per line; pages separated by form feeds."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            pages = sorted((n for n in zf.names() if _XPS_PAGE.match(n)), key=natural)
            if not pages:
                raise CorruptFile("no fixed pages (Documents/N/Pages/*.fpage)")
            sink.describe("xps", pages=len(pages))
            for number, name in enumerate(pages):
                if number:
                    sink.write("\f")
                for run in _glyph_runs(zf, name, budget):
                    sink.line(run)
        return ReadInfo("xps", pages=len(pages))


def _glyph_runs(zf: SafeZip, name: str, budget: XmlBudget) -> Iterator[str]:
    runs: list[str] = []

    def on_start(_tag: str, attrs: dict[str, str]) -> None:
        text = attrs.get("UnicodeString", "")
        if text.startswith("{}"):  # an escape for a string that starts with "{"
            text = text[2:]
        if text.strip():
            runs.append(text)

    with zf.open(name) as stream:
        parse(stream, Rules(_XPS_NS, starts=frozenset({"Glyphs"}), on_start=on_start), budget)
    yield from runs


READERS = (XlsbReader(), VsdxReader(), XpsReader())
