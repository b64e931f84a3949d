"""Zip-based formats of their own: Excel binary workbooks (.xlsb), Visio drawings (.vsdx) and
XPS documents (.xps, .oxps).

- ``.xlsb``: through pyxlsb, after the engine's own zip checks (member count, declared sizes
  and ratios: pyxlsb inflates members itself); a ``# sheetN`` block of tab-separated rows per
  sheet with rows, numbers without a spurious ``.0`` (dates stay serial numbers: pyxlsb
  does not read the styles that mark them).
- ``.vsdx``: each page's shapes' ``Text``, in page order, a ``# pageN`` line before a page
  that has any.
- ``.xps``: each fixed page's ``Glyphs`` runs (``UnicodeString``), one per line, in document
  and page order, pages separated by form feeds as PDF pages are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, ReadFailure
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse
from engine.readers.zipsafe import SafeZip

_NUMBER = re.compile(r"(\d+)")


def _natural(name: str) -> list[Any]:
    """Sort key putting ``page10`` after ``page9``."""
    return [int(p) if p.isdigit() else p for p in _NUMBER.split(name)]


# --- xlsb ------------------------------------------------------------------------------------


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value).replace("\t", " ").replace("\r", " ").replace("\n", " ")


class XlsbReader:
    """Excel binary workbooks through pyxlsb."""

    name = "xlsb"
    version = 1
    mimes = frozenset({M.XLSB})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's non-empty rows."""
        with SafeZip(path, ctx.limits) as zf:
            for name in zf.names():
                zf.check(zf.info(name))  # pyxlsb inflates members itself: bound them first
        sheets = 0
        with quiet_library("pyxlsb"), _workbook(path) as book:
            names = list(book.sheets)
            sink.describe("xlsb", pages=len(names))
            for index, sheet_name in enumerate(names, start=1):
                sheets = index
                _write_sheet(book, sheet_name, index, ctx, sink)
        return ReadInfo("xlsb", pages=sheets)


def _workbook(path: Path) -> Any:
    from pyxlsb import open_workbook

    try:
        return open_workbook(str(path))
    except (ReadFailure, MemoryError):
        raise
    except Exception as exc:  # pyxlsb raises whatever its parsing meets on a damaged file
        raise CorruptFile(f"pyxlsb could not read it ({type(exc).__name__})") from exc


def _write_sheet(book: Any, sheet_name: str, index: int, ctx: ReadContext, sink: TextSink) -> None:
    limit = ctx.limits.parts_per_block
    header = f"# sheet{index}"
    try:
        with book.get_sheet(sheet_name) as sheet:
            dim = sheet.dimension
            if dim is not None and dim.c + dim.w > limit:
                # pyxlsb builds every row as a list as wide as the declared dimension
                raise LimitExceeded("parts_per_block", f"a sheet {dim.c + dim.w} cells wide")
            for row in sheet.rows(sparse=True):
                cells: list[str] = []
                for cell in row:
                    if cell.c >= limit:
                        raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
                    cells.extend([""] * (cell.c - len(cells)))
                    cells.append(_cell(cell.v))
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
            pages = sorted((n for n in zf.names() if _VISIO_PAGE.match(n)), key=_natural)
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
            pages = sorted((n for n in zf.names() if _XPS_PAGE.match(n)), key=_natural)
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
