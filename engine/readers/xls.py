"""Excel 97-2003 workbooks (.xls, BIFF2-8) without tools, by xlrd.

xlrd is the maintained reader of the legacy binary format (its 2.x line reads only ``.xls``,
which is all we ask of it). Each sheet becomes a ``# sheetN`` line followed by one
tab-separated line per non-empty row (a sheet without any has no line at all, so a workbook
of charts only is ``empty/no_text``); numbers print without a spurious ``.0``, dates as ISO
(``2024-01-02``, with the time when there is one), booleans as ``TRUE``/``FALSE`` and error
cells as Excel shows them (``#DIV/0!``). Sheets are loaded one at a time (``on_demand``).

An encrypted workbook is :class:`EncryptedFile`. When xlrd cannot parse a file and
``xls2csv`` (catdoc) is installed, the tool is tried before a verdict is given.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.embedded import ole_embedded, with_embedded
from engine.readers.legacy import run_text_tool, split_pages, write_parts


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
    version = 4
    """3: the documents embedded in it are read as its members (:mod:`embedded`). 4: an
    Office 97 document embedded as a storage (a Word document in an ``MBD`` storage) too."""
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
            sink.describe("xlrd", pages=book.nsheets)
            for index in range(book.nsheets):
                _write_sheet(book, index, ctx, sink)
                book.unload_sheet(index)
        finally:
            book.release_resources()
        found = ole_embedded(path, ctx.limits.zip_member_bytes)
        return with_embedded(ReadInfo("xlrd", pages=book.nsheets), ctx, sink, found)

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


def _write_sheet(book: Any, index: int, ctx: ReadContext, sink: TextSink) -> None:
    import xlrd

    try:
        sheet = book.sheet_by_index(index)
    except (xlrd.XLRDError, IndexError, ValueError, AssertionError) as exc:
        raise CorruptFile(f"sheet {index + 1} is damaged ({type(exc).__name__})") from exc
    limit = ctx.limits.parts_per_block
    if sheet.ncols > limit:
        raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
    sink.rows(f"# sheet{index + 1}", _rows(sheet, book.datemode))


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


READERS = (XlsReader(),)
