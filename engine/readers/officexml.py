"""Office documents saved as one XML file: Word 2003 XML, Excel 2003 XML (SpreadsheetML) and
the flat packages Word and PowerPoint 2007+ save as ``.xml`` (Flat OPC).

All three were read as XML files, markup and all: Tika's ``testWORD_2003ml.xml`` gave
126,000 characters of font tables, style names and base64 pictures around a page of text,
judged ``good``. Each is read as its format's document now:

- Word 2003 XML (``w:wordDocument``): its paragraphs as a ``.docx``'s are read (the same
  elements in an older namespace, :mod:`engine.readers.ooxml`); text boxes, headers,
  footers, footnotes and endnotes, which this format keeps inside the paragraph they belong
  to, after it; its comments after the text under ``# comments``, as a ``.docx``'s;
  pictures' base64 (``w:binData``) and deleted text left out.
- Excel 2003 XML (``ss:Workbook``): a ``# sheetN`` line a worksheet, a row a line, its cells
  tab-separated at their column (``ss:Index``), a date and time cell as ISO text
  (``2024-01-02``, ``2024-01-02 03:04:05``); then its cells' comments under ``# comments``,
  as an ``.xlsx``'s (the cell, a tab, the comment).
- Flat OPC (``pkg:package``): its parts are put back into the package they came from, and
  that is read by the ``.docx`` or ``.pptx`` reader (its base64 parts, pictures, decoded
  only to go back where they were).
"""

from __future__ import annotations

import base64
import binascii
import zipfile
from dataclasses import replace
from html import escape
from pathlib import Path
from xml.etree.ElementTree import Element, tostring

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.members import scratch_dir
from engine.readers.ooxml import W_LIFT, W_SKIP, Headed, docx_paragraph
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse

_W2003 = "http://schemas.microsoft.com/office/word/2003/wordml"
_WX = "http://schemas.microsoft.com/office/word/2003/auxHint"
_AML = "http://schemas.microsoft.com/aml/2001/core"
_VML = "urn:schemas-microsoft-com:vml"
_OFFICE = "urn:schemas-microsoft-com:office:office"
_WORD_NS = {_W2003: "w", _WX: "wx", _AML: "aml", _VML: "v", _OFFICE: "o"}
_WORD_SKIP = (W_SKIP - {"w:pPr", "w:sectPr"}) | {
    *("w:binData", "w:fonts", "w:styles", "w:lists", "w:docPr", "w:docOleData"),
    *("o:DocumentProperties", "o:CustomDocumentProperties", "o:SmartTagType", "w:delText"),
    *("w:pStyle", "w:tabs", "w:spacing", "w:ind", "w:pgSz", "w:pgMar", "w:cols"),
}
"""Properties are walked here (a section's headers are in its paragraph's properties); what
they hold besides text, and the parts of the file before its body, are not."""


class Word2003Reader:
    """Reads Word 2003 XML documents (``w:wordDocument``)."""

    name = "wordml"
    version = 2
    """2: a symbol (``w:sym``), and a run in the Symbol font, as the characters the font's
    glyphs show (:mod:`engine.readers.symbolfont`)."""
    mimes = frozenset({M.WORD_2003_XML})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs into ``sink``."""

        comments: list[Element] = []

        def on_paragraph(paragraph: Element) -> None:
            comments.extend(_comments_taken(paragraph))
            docx_paragraph(sink, paragraph, _no_graphics)

        rules = Rules(
            _WORD_NS,
            blocks=frozenset({"w:p"}),
            on_block=on_paragraph,
            skip=_WORD_SKIP,
            lift=W_LIFT,
        )
        _parse_file(path, rules, XmlBudget(ctx.limits))
        said = Headed(sink, "# comments")  # (a reviewer's comments are no body text)
        for paragraph in comments:
            docx_paragraph(said, paragraph, _no_graphics)
        return ReadInfo(extractor=self.name)


def _no_graphics(_rid: str) -> list[str]:
    return []  # (no part holds a diagram or a chart here: the document is one file)


def _comments_taken(paragraph: Element) -> list[Element]:
    """The paragraphs of the comments (``aml:annotation`` of type ``Word.Comment``) a
    paragraph holds, taken out of it: they are read after the text, as a ``.docx``'s are."""
    taken: list[Element] = []
    for parent in list(paragraph.iter()):
        for kid in list(parent):
            if kid.tag == "aml:annotation" and kid.get("w:type") == "Word.Comment":
                parent.remove(kid)
                taken.extend(p for content in kid for p in content if p.tag == "w:p")
    return taken


_SS = "urn:schemas-microsoft-com:office:spreadsheet"
_SHEET_NS = {_SS: "ss", "urn:schemas-microsoft-com:office:excel": "x", _OFFICE: "o"}


class Excel2003Reader:
    """Reads Excel 2003 XML workbooks (SpreadsheetML, ``ss:Workbook``)."""

    name = "spreadsheetml"
    version = 1
    mimes = frozenset({M.EXCEL_2003_XML})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each worksheet's rows into ``sink``, then its cells' comments."""
        sheets = 0
        limit = ctx.limits.parts_per_block
        number = 0  # (the row's, 1-based: ``ss:Index`` skips rows)
        notes: list[str] = []

        def say_notes() -> None:
            said = Headed(sink, "# comments")  # (as an .xlsx's: cell, a tab, its text)
            for line in notes:
                said.line(line)
            notes.clear()

        def on_sheet(_tag: str, _attrs: dict[str, str]) -> None:
            nonlocal sheets, number
            say_notes()
            sheets += 1
            number = 0
            sink.line(f"# sheet{sheets}")

        def on_row(row: Element) -> None:
            nonlocal number
            number = _index_of(row, number + 1)
            cells, comments = _row_cells(row, limit)
            line = "\t".join(cells)
            if line.strip():
                sink.line(line)
            notes.extend(f"{_column_name(col)}{number}\t{text}" for col, text in comments)

        rules = Rules(
            _SHEET_NS,
            blocks=frozenset({"ss:Row"}),
            on_block=on_row,
            starts=frozenset({"ss:Worksheet"}),
            on_start=on_sheet,
            skip=frozenset({"o:DocumentProperties", "ss:Styles", "x:WorksheetOptions"}),
        )
        _parse_file(path, rules, XmlBudget(ctx.limits))
        say_notes()
        return ReadInfo(extractor=self.name, pages=sheets)


def _index_of(elem: Element, default: int) -> int:
    """An element's ``ss:Index`` (1-based), or ``default``."""
    index = elem.get("ss:Index", "")
    return int(index) if index.isascii() and index.isdigit() and 0 < len(index) <= 7 else default


def _column_name(column: int) -> str:
    """A 0-based column as Excel names it (0: A, 26: AA)."""
    name = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        name = chr(65 + rest) + name
    return name


def _row_cells(row: Element, limit: int) -> tuple[list[str], list[tuple[int, str]]]:
    """A row's cells at their columns (``ss:Index``, 1-based, skips columns; a merged cell
    takes ``ss:MergeAcross`` more), trailing empty ones left out; and its cells' comments,
    by their column."""
    cells: list[str] = []
    comments: list[tuple[int, str]] = []
    for cell in row:
        if cell.tag != "ss:Cell":
            continue
        column = _index_of(cell, 0) - 1
        if len(cells) < column <= limit:
            cells.extend([""] * (column - len(cells)))
        data = next((kid for kid in cell if kid.tag == "ss:Data"), None)
        text = _data_text(data) if data is not None else ""
        note = next((kid for kid in cell if kid.tag == "ss:Comment"), None)
        if note is not None and (said := " ".join(element_text(note, frozenset()).split())):
            comments.append((len(cells), said))
        cells.append(" ".join(text.split("\t")).replace("\n", " "))
        across = cell.get("ss:MergeAcross", "")
        if across.isascii() and across.isdigit() and len(across) <= 6:
            cells.extend([""] * min(int(across), limit))
    while cells and not cells[-1]:
        cells.pop()
    return cells, comments


def _data_text(data: Element) -> str:
    """A cell's value as Excel shows it, roughly: a date and time as ISO text."""
    text = element_text(data, frozenset())
    if data.get("ss:Type") == "Boolean":
        return "TRUE" if text.strip() in ("1", "true") else "FALSE"
    if data.get("ss:Type") == "DateTime" and len(text) >= 10:
        day, _, clock = text.partition("T")
        clock = clock.split(".", 1)[0]
        return day if clock in ("", "00:00:00") else f"{day} {clock}"
    return text


_PKG = "http://schemas.microsoft.com/office/2006/xmlPackage"
_PACKAGE_READERS = {
    "word/document.xml": (M.DOCX, ".docx"),
    "ppt/presentation.xml": (M.PPTX, ".pptx"),
    "xl/workbook.xml": (M.XLSX, ".xlsx"),
}


class FlatOpcReader:
    """Reads the flat XML packages of Word and PowerPoint 2007+ (``pkg:package``)."""

    name = "flat-opc"
    version = 2
    """2: a Word package read as the Word reader's version 5 reads it (its symbols)."""
    mimes = frozenset({M.FLAT_OPC})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Put the parts back into their package, and read that as its format's document."""
        from engine.readers.registry import reader_for

        parts = _package_parts(path, XmlBudget(ctx.limits))
        found = next((kind for name, kind in _PACKAGE_READERS.items() if name in parts), None)
        if found is None:
            raise CorruptFile("a flat package with no Word, PowerPoint or Excel document in it")
        mime, suffix = found
        reader = reader_for(mime)
        if reader is None:
            raise CorruptFile(f"no reader for the {suffix} it holds")
        with scratch_dir() as folder:
            package = Path(folder) / f"package{suffix}"
            with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as zf:
                zf.writestr("[Content_Types].xml", _content_types(parts))
                for name, (_kind, data) in parts.items():
                    zf.writestr(name, data)
            info = reader.read(package, replace(ctx, mime=mime, data=None), sink)
        return replace(info, extractor=f"{self.name}+{info.extractor}")


def _package_parts(path: Path, budget: XmlBudget) -> dict[str, tuple[str, bytes]]:
    """Each part's name (without its leading slash), content type and bytes."""
    parts: dict[str, tuple[str, bytes]] = {}

    def on_part(part: Element) -> None:
        name = part.get("pkg:name", "").lstrip("/")
        if not name or ".." in name.split("/"):
            return
        kind = part.get("pkg:contentType", "")
        for held in part:
            if held.tag == "pkg:xmlData":
                root = next(iter(held), None)
                data = b"" if root is None else tostring(root, encoding="utf-8")
                parts[name] = (kind, data)
            elif held.tag == "pkg:binaryData":
                try:
                    parts[name] = (kind, base64.b64decode("".join((held.text or "").split())))
                except (binascii.Error, ValueError):
                    continue

    rules = Rules({_PKG: "pkg"}, blocks=frozenset({"pkg:part"}), on_block=on_part)
    _parse_file(path, rules, budget)
    return parts


def _content_types(parts: dict[str, tuple[str, bytes]]) -> bytes:
    """``[Content_Types].xml`` naming every part's type (as the flat package gave it)."""
    overrides = "".join(
        f'<Override PartName="{escape("/" + name)}" ContentType="{escape(kind)}"/>'
        for name, (kind, _data) in parts.items()
        if kind
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        f'package/2006/content-types">{overrides}</Types>'
    ).encode()


def _parse_file(path: Path, rules: Rules, budget: XmlBudget) -> None:
    try:
        with open(path, "rb") as stream:
            parse(stream, rules, budget)
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc


READERS = (Word2003Reader(), Excel2003Reader(), FlatOpcReader())
