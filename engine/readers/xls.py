"""Excel 97-2003 workbooks (.xls, BIFF2-8) without tools, by xlrd.

xlrd is the maintained reader of the legacy binary format (its 2.x line reads only ``.xls``,
which is all we ask of it). Each sheet becomes a ``# sheetN`` line followed by one
tab-separated line per non-empty row, then the text its charts hold (titles, axis titles,
series names and labels written in them), a chart sheet's after the sheets (a sheet with
neither has no line at all); numbers print without a spurious ``.0``, dates as ISO
(``2024-01-02``, with the time when there is one), booleans as ``TRUE``/``FALSE`` and error
cells as Excel shows them (``#DIV/0!``). Sheets are loaded one at a time (``on_demand``).

An encrypted workbook is :class:`EncryptedFile`. When xlrd cannot parse a file and
``xls2csv`` (catdoc) is installed, the tool is tried before a verdict is given.
"""

from __future__ import annotations

import datetime as dt
import os
import struct
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.embedded import ole_embedded, with_embedded
from engine.readers.legacy import run_text_tool, split_pages, write_parts
from engine.readers.msgraph import series_text


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _date(value: float, datemode: int) -> str:
    import xlrd

    try:
        when = xlrd.xldate.xldate_as_datetime(value, datemode)
    except (ValueError, OverflowError, xlrd.xldate.XLDateError):
        return _number(value)
    if when.time() == dt.time(0):
        return str(when.date().isoformat())
    return str(when.isoformat(sep=" "))


def cell_text(ctype: int, value: Any, datemode: int) -> str:
    """One cell as Excel would show it, roughly; tabs and line breaks become spaces."""
    import xlrd

    if ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    if ctype == xlrd.XL_CELL_NUMBER:
        text = _number(float(value))
    elif ctype == xlrd.XL_CELL_DATE:
        text = _date(float(value), datemode)
    elif ctype == xlrd.XL_CELL_BOOLEAN:
        text = "TRUE" if value else "FALSE"
    elif ctype == xlrd.XL_CELL_ERROR:
        text = xlrd.error_text_from_code.get(value, "#ERR")
    else:
        text = str(value)
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


class XlsReader:
    """Excel 97-2003 workbooks: a ``# sheetN`` block of tab-separated rows per sheet."""

    name = "xls"
    version = 5
    """3: the documents embedded in it are read as its members (:mod:`embedded`). 4: an
    Office 97 document embedded as a storage (a Word document in an ``MBD`` storage) too;
    its charts' text (:func:`charts_of`). 5: its Microsoft Graph charts' data and strings, as
    members (:mod:`engine.readers.msgraph`)."""
    mimes = frozenset({M.XLS})
    tools = ("xls2csv",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's non-empty rows."""
        try:
            return self._xlrd(path, ctx, sink)
        except CorruptFile as failure:
            if not ctx.tools.has("xls2csv") or len(sink):
                raise
            return self._xls2csv(path, ctx, sink, failure)

    def _xlrd(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        book = _open(path)
        try:
            drawn, alone = charts_of(book)
            pages = book.nsheets + len(alone)
            sink.describe("xlrd", pages=pages)
            for index in range(book.nsheets):
                _write_sheet(book, index, ctx, sink, drawn.get(index, []))
                book.unload_sheet(index)
            for number, lines in enumerate(alone, start=book.nsheets + 1):
                sink.rows(f"# sheet{number}", ([line] for line in lines))
        finally:
            book.release_resources()
        found = ole_embedded(path, ctx.limits.zip_member_bytes)
        return with_embedded(ReadInfo("xlrd", pages=pages), ctx, sink, found)

    def _xls2csv(
        self, path: Path, ctx: ReadContext, sink: TextSink, failure: CorruptFile
    ) -> ReadInfo:
        args = ["-d", "utf-8", "-q", "0", "-c", "\t", "-f", "%Y-%m-%d"]
        text = run_text_tool(ctx, "xls2csv", [*args, os.fspath(path.absolute())])
        if not text.strip():  # xls2csv exits 0 with no output on what it cannot open
            raise failure
        sheets = split_pages(text)
        write_parts(sink, sheets, "sheet")
        return ReadInfo("xls2csv", pages=len(sheets))


def _open(path: Path) -> Any:
    import xlrd

    with quiet_library("xlrd"), open(os.devnull, "w") as devnull:
        try:
            return xlrd.open_workbook(os.fspath(path), on_demand=True, logfile=devnull, verbosity=0)
        except xlrd.XLRDError as exc:
            if "encrypt" in str(exc).lower():
                raise EncryptedFile("the workbook is password-protected") from exc
            raise CorruptFile(f"xlrd could not read it: {str(exc)[:200]}") from exc
        except MemoryError:
            raise
        # xlrd raises struct.error, IndexError, AssertionError... on damaged files.
        except Exception as exc:
            raise CorruptFile(f"xlrd could not read it ({type(exc).__name__})") from exc


def _write_sheet(
    book: Any, index: int, ctx: ReadContext, sink: TextSink, charts: list[str]
) -> None:
    import xlrd

    try:
        sheet = book.sheet_by_index(index)
    except (xlrd.XLRDError, IndexError, ValueError, AssertionError) as exc:
        raise CorruptFile(f"sheet {index + 1} is damaged ({type(exc).__name__})") from exc
    limit = ctx.limits.parts_per_block
    if sheet.ncols > limit:
        raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
    rows = chain(_rows(sheet, book.datemode), ([line] for line in charts))
    sink.rows(f"# sheet{index + 1}", rows)


def _rows(sheet: Any, datemode: int) -> Iterator[list[str]]:
    """Each row's cells as text, without the empty ones it ends in."""
    for row in range(sheet.nrows):
        cells = [
            cell_text(ctype, value, datemode)
            for ctype, value in zip(sheet.row_types(row), sheet.row_values(row), strict=False)
        ]
        while cells and not cells[-1]:
            cells.pop()
        yield cells


_BOF, _EOF, _BOUNDSHEET, _SERIESTEXT = (0x0809, 0x0409, 0x0209, 0x0009), 0x000A, 0x0085, 0x100D
_CHART = 0x0020
"""A substream's type in its BOF record: a chart (drawn on a sheet, or a sheet of its own)."""


def charts_of(book: Any) -> tuple[dict[int, list[str]], list[list[str]]]:
    """The text of a workbook's charts (their titles, axis titles, series names and labels
    written in the chart, ``SERIESTEXT`` records: xlrd reads no chart): by the worksheet they
    are drawn on (its index, as xlrd counts worksheets), and each chart sheet's, in order.
    Nothing when the stream is not to be had or not as the format lays it out."""
    try:  # (xlrd's: the file, mapped, the stream from ``base``; or the stream copied out)
        mem, base, size = book.mem, int(book.base), int(book.stream_len)
        stream = memoryview(mem)[base : base + size]  # (not copied: a workbook may be large)
        return _scan_charts(stream, int(book.biff_version) >= 80, book.encoding)
    except (AttributeError, struct.error, IndexError, ValueError, LookupError, TypeError):
        return {}, []


def _scan_charts(
    mem: bytes | memoryview, biff8: bool, encoding: str | None
) -> tuple[dict[int, list[str]], list[list[str]]]:
    """Walk the stream's records: the globals' BOUNDSHEET records say where each sheet's
    substream starts and what it is; a chart's ``SERIESTEXT`` belongs to the substream it is
    nested in, or to the chart sheet it is."""
    where: dict[int, tuple[bool, int]] = {}  # substream start -> (a worksheet?, its number)
    sheets = charts = 0
    drawn: dict[int, list[str]] = {}
    alone: list[list[str]] = []
    opened: list[tuple[bool, int] | None] = []
    pos = 0
    while pos + 4 <= len(mem):
        rtype, size = struct.unpack_from("<HH", mem, pos)
        body = mem[pos + 4 : pos + 4 + size]
        if rtype == _BOUNDSHEET and len(body) >= 6:
            offset, kind = struct.unpack_from("<I", body)[0], body[5]
            if kind in (0, 2):  # (a worksheet, which xlrd reads; a chart sheet)
                where[offset] = (kind == 0, sheets if kind == 0 else charts)
                sheets, charts = sheets + (kind == 0), charts + (kind == 2)
        elif rtype in _BOF:
            opened.append(where.get(pos) if not opened else opened[-1])
            if not opened[:-1] and opened[-1] is not None and not opened[-1][0]:
                alone.extend([] for _ in range(opened[-1][1] + 1 - len(alone)))
        elif rtype == _EOF and opened:
            opened.pop()
        elif rtype == _SERIESTEXT and opened and opened[-1] is not None:
            text = series_text(body, biff8, encoding)
            if text:
                worksheet, number = opened[-1]
                (drawn.setdefault(number, []) if worksheet else alone[number]).append(text)
        pos += 4 + size
    return drawn, alone


READERS = (XlsReader(),)
