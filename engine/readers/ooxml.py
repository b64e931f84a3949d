"""Word (DOCX) and Excel (XLSX) documents, streamed out of their zip with bounded parts.

DOCX: every paragraph of the main document (runs, ``\\t`` for tabs, ``\\n`` for breaks;
equations in Word's linear format, :mod:`engine.readers.omml`; text boxes, SmartArt diagrams
and charts after the paragraph that holds them), then headers, footers, footnotes and
endnotes, then the reviewers' comments after a ``# comments`` line; deleted and moved-from
text, field codes and the fallback copy of alternate content are left out. Blank paragraphs
are dropped.

XLSX: a ``# sheetN`` line per sheet in workbook order, then one line per row with the cells
tab-separated at their column (shared strings, inline strings, values as stored; booleans as
TRUE/FALSE; a number whose cell's format shows a date or a time as ISO text, ``2024-01-02
03:04:05``, :mod:`engine.readers.cellformats`); rows without a value are dropped; then the
text of the sheet's drawings (text boxes and shapes, SmartArt diagrams, charts), then its
cells' comments after a ``# comments`` line (the cell, a tab, the comment). ``pages`` is the
number of sheets.

SmartArt diagrams, charts and sheet drawings: :mod:`engine.readers.drawingml`.

Both formats are transitional or strict OOXML; every part goes through :mod:`zipsafe` and
:mod:`xmlsafe`.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from xml.etree.ElementTree import Element

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.cellformats import dated_text, is_date_format
from engine.readers.drawingml import NS as _DRAWING_NS
from engine.readers.drawingml import (
    Rels,
    child,
    graphics_of,
    part_of,
    relationships,
    sheet_drawing_lines,
)
from engine.readers.embedded import ooxml_embedded, with_embedded
from engine.readers.omml import linear
from engine.readers.symbolfont import is_symbol, recode, sym
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse
from engine.readers.zipsafe import SafeZip

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W_STRICT = "http://purl.oclc.org/ooxml/wordprocessingml/main"
_X = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_X_STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
_M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
_M_STRICT = "http://purl.oclc.org/ooxml/officeDocument/math"

_NS = {**_DRAWING_NS, _W: "w", _W_STRICT: "w", _X: "x", _X_STRICT: "x", _M: "m", _M_STRICT: "m"}
_MATH = frozenset({"m:oMath", "m:oMathPara"})

W_SKIP = frozenset(
    {
        *("w:del", "w:moveFrom", "w:instrText", "w:delInstrText", "mc:Fallback"),
        *("w:pPr", "w:rPr", "w:sectPr", "w:tblPr", "w:tcPr", "w:trPr", "w:tblGrid"),
    }
)
W_LIFT = frozenset({"w:rFonts"})
"""What a run keeps of its skipped properties (``w:rPr``): its font, for text in the Symbol
font. Building every run's properties made the read of a document whose every run is
formatted 70% slower; its font alone, 15% (the corpus's Word documents: 1%)."""
_W_EXTRA_PART = re.compile(r"(header|footer)(\d*)\.xml|footnotes\.xml|endnotes\.xml|comments\.xml")
_CELL_ROOM = 16_384
"""Columns a sheet can have; a cell reference past it is placed after the previous cell."""


def main_part(zf: SafeZip, budget: XmlBudget, default: str) -> str:
    """The package's office document part (``_rels/.rels``), or ``default``."""
    for rel_type, target in relationships(zf, "", budget).values():
        if rel_type.endswith("/officeDocument") and zf.has(target):
            return target
    return default


# ---- DOCX -------------------------------------------------------------------------------


def _runs(paragraph: Element) -> tuple[str, list[Element], list[str]]:
    """A paragraph's own text, the text boxes it holds, in order, and the relationship ids of
    the SmartArt diagrams and charts it holds."""
    parts: list[str] = []
    boxes: list[Element] = []
    diagrams: list[str] = []
    stack: list[Element | None] = list(reversed(paragraph))
    symbol = 0  # runs open in the Symbol font (a None on the stack closes one)
    while stack:
        el = stack.pop()
        if el is None:
            symbol -= 1
            continue
        tag = el.tag
        if tag == "w:t":
            parts.append(recode(el.text or "") if symbol else el.text or "")
        elif tag == "w:sym":  # (Insert > Symbol: a font's glyph)
            parts.append(sym(el.get("w:font"), el.get("w:char")))
        elif tag == "w:r" and _in_symbol_font(el):
            symbol += 1
            stack.append(None)
            stack.extend(reversed(el))
        elif tag in ("w:tab", "w:ptab"):
            parts.append("\t")
        elif tag in ("w:br", "w:cr"):
            parts.append("\n")
        elif tag == "w:noBreakHyphen":
            parts.append("-")
        elif tag in _MATH:
            parts.append(linear(el))
        elif tag in _HELD:
            boxes.append(el)
        elif tag == "dgm:relIds":
            diagrams.append(el.get("r:dm", ""))
        elif tag == "c:chart":
            diagrams.append(el.get("r:id", ""))
        else:
            stack.extend(reversed(el))
    return "".join(parts), boxes, diagrams


def _in_symbol_font(run: Element) -> bool:
    """Whether the run ``run`` is set in the Symbol font: its text is then the font's codes
    (``a`` for alpha, or ``U+F061`` as LibreOffice and Word write it). Its ``w:rFonts`` is
    there alone of its properties (:data:`W_LIFT`)."""
    # (the properties come first in a run: a font kept is its first child)
    fonts = run[0] if len(run) else None
    return fonts is not None and fonts.tag == "w:rFonts" and is_symbol(fonts.get("w:ascii"))


_HELD = frozenset({"w:txbxContent", "w:hdr", "w:ftr", "w:footnote", "w:endnote", "w:p"})
"""What a paragraph may hold whose paragraphs come after it: a text box; in Word 2003 XML,
which keeps them where they belong, a section's headers and footers, a footnote, a comment's
paragraphs (:mod:`engine.readers.officexml`)."""


def _paragraphs_in(box: Element) -> list[Element]:
    """The outermost ``w:p`` elements inside ``box``, in document order."""
    found: list[Element] = []
    stack = list(reversed(box))
    while stack:
        el = stack.pop()
        if el.tag == "w:p":
            found.append(el)
        else:
            stack.extend(reversed(el))
    return found


def _is_comments(part: str) -> bool:
    return posixpath.basename(part) == "comments.xml"


class Headed:
    """Lines into a sink, a heading line before the first of them (none if none come)."""

    def __init__(self, sink: TextSink, heading: str) -> None:
        self.sink = sink
        self.heading: str | None = heading

    def line(self, text: str) -> None:
        """Write ``text`` as a line (the heading first, once)."""
        if self.heading is not None:
            self.sink.line(self.heading)
            self.heading = None
        self.sink.line(text)


def docx_paragraph(
    sink: TextSink | Headed, paragraph: Element, diagram: Callable[[str], list[str]]
) -> None:
    """Write a paragraph, then the paragraphs of its text boxes (depth first, no recursion),
    then the text of its diagrams and charts (``diagram``: a relationship id's lines)."""
    pending = [paragraph]
    while pending:
        text, boxes, diagrams = _runs(pending.pop())
        if text.strip():
            sink.line(text)
        for rid in diagrams:
            for line in diagram(rid):
                sink.line(line)
        inner = [p for box in boxes for p in ([box] if box.tag == "w:p" else _paragraphs_in(box))]
        pending.extend(reversed(inner))


def _docx_parts(zf: SafeZip, main: str) -> list[str]:
    """The main part, then headers, footers, footnotes, endnotes and comments beside it."""
    folder = posixpath.dirname(main)
    extra: list[tuple[str, int, str]] = []
    for name in zf.names():
        head, base = posixpath.split(name)
        match = _W_EXTRA_PART.fullmatch(base)
        if head == folder and match:
            kind = match.group(1) or base
            extra.append((kind, int(match.group(2) or 0), name))
    order = {"header": 0, "footer": 1, "footnotes.xml": 2, "endnotes.xml": 3, "comments.xml": 4}
    extra.sort(key=lambda item: (order[item[0]], item[1]))
    return [main, *(name for _, _, name in extra)]


class DocxReader:
    """Reads Word documents (DOCX, DOCM, DOTX)."""

    name = "docx"
    version = 5
    """2: the documents embedded in it are read as its members (:mod:`embedded`). 3: the text
    of its SmartArt diagrams; its reviewers' comments, after a ``# comments`` line. 4: its
    charts' text (:func:`engine.readers.drawingml.chart_lines`); its equations
    (:mod:`engine.readers.omml`). 5: a symbol (``w:sym``), and a run in the Symbol font (its
    diagrams' and charts' too), as the characters the font's glyphs show
    (:mod:`engine.readers.symbolfont`)."""
    mimes = frozenset({M.DOCX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs into ``sink``."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            main = main_part(zf, budget, "word/document.xml")
            for part in _docx_parts(zf, main):
                # (a reviewer's comments are no body text: said so, after the rest)
                into = Headed(sink, "# comments") if _is_comments(part) else sink
                rules = Rules(
                    _NS,
                    blocks=frozenset({"w:p"}),
                    on_block=functools.partial(
                        docx_paragraph, into, diagram=graphics_of(zf, part, budget)
                    ),
                    skip=W_SKIP,
                    lift=W_LIFT,
                )
                with zf.open(part) as stream:
                    parse(stream, rules, budget)
            return with_embedded(ReadInfo(extractor=self.name), ctx, sink, ooxml_embedded(zf))


# ---- XLSX -------------------------------------------------------------------------------


def _shared_strings(zf: SafeZip, name: str | None, budget: XmlBudget) -> list[str]:
    strings: list[str] = []
    if name is None or not zf.has(name):
        return strings
    skip = frozenset({"x:rPh", "x:phoneticPr"})
    rules = Rules(
        _NS, blocks=frozenset({"x:si"}), on_block=lambda si: strings.append(element_text(si, skip))
    )
    with zf.open(name) as stream:
        parse(stream, rules, budget)
    return strings


def _column(ref: str | None) -> int | None:
    """0-based column of a cell reference like ``AB12``; None when absent or odd."""
    if not ref:
        return None
    col = 0
    for ch in ref:
        if "A" <= ch <= "Z":
            col = col * 26 + ord(ch) - 64
        elif "a" <= ch <= "z":
            col = col * 26 + ord(ch) - 96
        else:
            break
        if col > _CELL_ROOM:
            return None
    return col - 1 if col else None


class _Book:
    """What a workbook's cells are read with: its shared strings, whether each cell style
    (by its index, a cell's ``s``) shows a date, and its epoch (1904 on old Macs)."""

    def __init__(self, strings: list[str], dates: list[bool], date1904: bool) -> None:
        self.strings = strings
        self.dates = dates
        self.date1904 = date1904


def _index(text: str | None) -> int:
    """A non-negative index written in ``text`` (-1 for none, or thousands of digits)."""
    text = (text or "").strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else -1


def _number(raw: str, cell: Element, book: _Book) -> str:
    """A number as its cell shows it: a date or a time when its style's format is one."""
    style = _index(cell.get("s"))
    dated = 0 <= style < len(book.dates) and book.dates[style]
    return dated_text(raw, book.date1904) if dated else raw


def _cell_value(cell: Element, book: _Book) -> str:
    strings = book.strings
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        inline = child(cell, "x:is")
        return element_text(inline, frozenset({"x:rPh"})) if inline is not None else ""
    value = child(cell, "x:v")
    raw = (value.text or "") if value is not None else ""
    if kind == "s":
        index = int(raw) if raw.strip().isdigit() else -1
        return strings[index] if 0 <= index < len(strings) else ""
    if kind == "b":
        return "TRUE" if raw.strip() in ("1", "true") else "FALSE"
    return _number(raw, cell, book) if kind == "n" and raw else raw


def _row_line(row: Element, book: _Book) -> str:
    cells: list[str] = []
    for cell in row:
        if cell.tag != "x:c":
            continue
        value = _cell_value(cell, book)
        if not value:
            continue
        col = _column(cell.get("r"))
        if col is not None and col > len(cells):
            cells.extend([""] * (col - len(cells)))
        cells.append(value.replace("\t", " ").replace("\n", " "))
    return "\t".join(cells)


def _sheet_targets(
    zf: SafeZip, workbook: str, rels: Rels, budget: XmlBudget
) -> tuple[list[str], bool]:
    """Member names of the sheets in workbook order, and whether its dates count from 1904;
    CorruptFile if a sheet is missing."""
    ids: list[str] = []
    date1904 = False

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal date1904
        if tag == "x:sheet":
            ids.append(attrs.get("r:id", ""))
        else:
            date1904 = attrs.get("date1904", "").strip().lower() in ("1", "true")

    rules = Rules(_NS, starts=frozenset({"x:sheet", "x:workbookPr"}), on_start=on_start)
    with zf.open(workbook) as stream:
        parse(stream, rules, budget)
    targets = [rels[i][1] if i in rels else "" for i in ids]
    if not all(zf.has(t) for t in targets):
        raise CorruptFile("a sheet of the workbook is missing")
    return targets, date1904


_STYLE_SECTIONS = frozenset({"x:numFmts", "x:cellStyleXfs", "x:cellXfs", "x:dxfs"})


def _date_styles(zf: SafeZip, part: str | None, budget: XmlBudget) -> list[bool]:
    """Whether each cell style (``cellXfs``, in order) shows its number as a date or a time
    (:func:`engine.readers.cellformats.is_date_format`); none without a styles part."""
    if part is None or not zf.has(part):
        return []
    codes: dict[int, str] = {}
    formats: list[int] = []
    section = ""

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal section
        if tag == "x:xf":
            if section == "x:cellXfs":  # (not the named styles' nor the differences')
                formats.append(max(_index(attrs.get("numFmtId")), 0))
        elif tag == "x:numFmt":
            if section == "x:numFmts":
                codes[_index(attrs.get("numFmtId"))] = attrs.get("formatCode", "")
        else:
            section = tag

    starts = _STYLE_SECTIONS | {"x:xf", "x:numFmt"}
    with zf.open(part) as stream:
        parse(stream, Rules(_NS, starts=starts, on_start=on_start), budget)
    return [is_date_format(number, codes.get(number)) for number in formats]


def _sheet_comments(zf: SafeZip, sheet: Rels, budget: XmlBudget, into: Headed) -> None:
    """The comments (notes) on the sheet whose relationships are ``sheet``: each one a line,
    its cell, a tab and its text on one line (a threaded comment's legacy copy, which Excel
    writes beside it, holds its text as well)."""
    for rel_type, part in sheet.values():
        if not rel_type.endswith("/comments") or not zf.has(part):
            continue

        def on_comment(comment: Element) -> None:
            body = child(comment, "x:text")
            text = element_text(body, _PHONETIC) if body is not None else ""
            if text.strip():
                into.line(f"{comment.get('ref', '')}\t{' '.join(text.split())}")

        with zf.open(part) as stream:
            parse(stream, Rules(_NS, blocks=frozenset({"x:comment"}), on_block=on_comment), budget)


_PHONETIC = frozenset({"x:rPh", "x:phoneticPr"})


class XlsxReader:
    """Reads Excel workbooks (XLSX, XLSM, XLTX)."""

    name = "xlsx"
    version = 5
    """2: the documents embedded in it are read as its members (:mod:`embedded`). 3: the text
    of its sheets' drawings (text boxes, shapes, SmartArt diagrams) and its cells' comments
    (``# comments``, then the cell, a tab, the comment). 4: its charts' text, a chart sheet's
    too; equations in its text boxes; dates and times as dates (``2024-01-02``), where they
    were serial numbers. 5: a drawing's runs in the Symbol font as its glyphs' characters
    (:mod:`engine.readers.symbolfont`)."""
    mimes = frozenset({M.XLSX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's rows into ``sink``."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            workbook = main_part(zf, budget, "xl/workbook.xml")
            parts = relationships(zf, workbook, budget)
            sheets, date1904 = _sheet_targets(zf, workbook, parts, budget)
            strings = _shared_strings(zf, part_of(parts, "/sharedStrings"), budget)
            book = _Book(strings, _date_styles(zf, part_of(parts, "/styles"), budget), date1904)

            def on_row(row: Element) -> None:
                line = _row_line(row, book)
                if line.strip():
                    sink.line(line)

            rules = Rules(_NS, blocks=frozenset({"x:row"}), on_block=on_row)
            for number, sheet in enumerate(sheets, start=1):
                sink.line(f"# sheet{number}")
                with zf.open(sheet) as stream:
                    parse(stream, rules, budget)
                rels = relationships(zf, sheet, budget)  # (its drawings' and comments')
                for line in sheet_drawing_lines(zf, rels, budget):
                    sink.line(line)
                _sheet_comments(zf, rels, budget, Headed(sink, "# comments"))
            info = ReadInfo(extractor=self.name, pages=len(sheets))
            return with_embedded(info, ctx, sink, ooxml_embedded(zf))


READERS = (DocxReader(), XlsxReader())
