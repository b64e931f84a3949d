"""Word (DOCX) and Excel (XLSX) documents, streamed out of their zip with bounded parts.

DOCX: every paragraph of the main document (runs, ``\\t`` for tabs, ``\\n`` for breaks; text
boxes and SmartArt diagrams after the paragraph that holds them), then headers, footers,
footnotes and endnotes; deleted and moved-from text, field codes and the fallback copy of
alternate content are left out. Blank paragraphs are dropped.

XLSX: a ``# sheetN`` line per sheet in workbook order, then one line per row with the cells
tab-separated at their column (shared strings, inline strings, values as stored; booleans as
TRUE/FALSE); rows without a value are dropped; then the text of the sheet's drawings (text
boxes and shapes, SmartArt diagrams). ``pages`` is the number of sheets.

SmartArt (an org chart, a process, a cycle: in all three Office formats) keeps its text in a
part of its own, the diagram's data model (``diagrams/dataN.xml``), that the document names
by a relationship: each point's paragraphs are read there (:func:`diagram_lines`). Read
without it, every word of a diagram was missing from the text.

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
from engine.readers.embedded import ooxml_embedded, with_embedded
from engine.readers.xmlsafe import Rules, XmlBudget, element_text, parse
from engine.readers.zipsafe import SafeZip

_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_R_STRICT = "http://purl.oclc.org/ooxml/officeDocument/relationships"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W_STRICT = "http://purl.oclc.org/ooxml/wordprocessingml/main"
_X = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_X_STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_A_STRICT = "http://purl.oclc.org/ooxml/drawingml/main"
_DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_DGM_STRICT = "http://purl.oclc.org/ooxml/drawingml/diagram"
_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
_XDR_STRICT = "http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing"

_NS = {_PKG_RELS: "pr", _R: "r", _R_STRICT: "r", _W: "w", _W_STRICT: "w"}
_NS |= {_X: "x", _X_STRICT: "x", _MC: "mc", _A: "a", _A_STRICT: "a"}
_NS |= {_DGM: "dgm", _DGM_STRICT: "dgm", _XDR: "xdr", _XDR_STRICT: "xdr"}

_W_SKIP = frozenset(
    {
        *("w:del", "w:moveFrom", "w:instrText", "w:delInstrText", "mc:Fallback"),
        *("w:pPr", "w:rPr", "w:sectPr", "w:tblPr", "w:tcPr", "w:trPr", "w:tblGrid"),
    }
)
_W_EXTRA_PART = re.compile(r"(header|footer)(\d*)\.xml|footnotes\.xml|endnotes\.xml")
_CELL_ROOM = 16_384
"""Columns a sheet can have; a cell reference past it is placed after the previous cell."""


def relationships(zf: SafeZip, part: str, budget: XmlBudget) -> dict[str, tuple[str, str]]:
    """Id -> (type, member name) of ``part``'s internal relationships ({} if it has none)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", name + ".rels")
    found: dict[str, tuple[str, str]] = {}
    if not zf.has(rels_name):
        return found

    def on_start(_tag: str, attrs: dict[str, str]) -> None:
        target = attrs.get("Target", "")
        if attrs.get("TargetMode") != "External" and target:
            found[attrs.get("Id", "")] = (attrs.get("Type", ""), resolve(folder, target))

    with zf.open(rels_name) as stream:
        parse(stream, Rules(_NS, starts=frozenset({"pr:Relationship"}), on_start=on_start), budget)
    return found


def resolve(folder: str, target: str) -> str:
    """A relationship target as a member name."""
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    return posixpath.normpath(posixpath.join(folder, target))


def main_part(zf: SafeZip, budget: XmlBudget, default: str) -> str:
    """The package's office document part (``_rels/.rels``), or ``default``."""
    for rel_type, target in relationships(zf, "", budget).values():
        if rel_type.endswith("/officeDocument") and zf.has(target):
            return target
    return default


# ---- DrawingML: SmartArt diagrams, shapes' text ------------------------------------------

_TEXTLESS_POINTS = frozenset({"pres", "parTrans", "sibTrans"})
"""A diagram's points that are no node of it (its layout's shapes, the connections between
nodes): their text bodies are empty, or a layout's own."""


def drawing_paragraphs(body: Element) -> list[str]:
    """The non-blank paragraphs of a DrawingML text body (``a:p``: its ``a:t`` runs, a line
    break as ``\\n``, a tab as ``\\t``)."""
    lines: list[str] = []
    for paragraph in body.iter("a:p"):
        parts: list[str] = []
        for el in paragraph.iter():
            if el.tag == "a:t":
                parts.append(el.text or "")
            elif el.tag == "a:br":
                parts.append("\n")
            elif el.tag == "a:tab":
                parts.append("\t")
        text = "".join(parts)
        if text.strip():
            lines.append(text)
    return lines


def diagram_lines(zf: SafeZip, member: str, budget: XmlBudget) -> list[str]:
    """A SmartArt diagram's text, from its data model part ``member``: each node's paragraphs
    in the order the model lists them (the order they were entered); none when the part is
    missing."""
    lines: list[str] = []
    if not member or not zf.has(member):
        return lines

    def on_point(point: Element) -> None:
        body = _child(point, "dgm:t")
        if body is not None and point.get("type", "node") not in _TEXTLESS_POINTS:
            lines.extend(drawing_paragraphs(body))

    with zf.open(member) as stream:
        parse(stream, Rules(_NS, blocks=frozenset({"dgm:pt"}), on_block=on_point), budget)
    return lines


_ANCHORS = frozenset({"xdr:twoCellAnchor", "xdr:oneCellAnchor", "xdr:absoluteAnchor"})


def sheet_drawing_lines(zf: SafeZip, sheet: str, budget: XmlBudget) -> list[str]:
    """The text of the drawings on the sheet whose part is ``sheet``: each anchored shape's
    paragraphs (text boxes, shapes with text, groups opened) and diagram, in drawing order.
    A chart or a picture has none; the fallback copy of alternate content is left out."""
    lines: list[str] = []
    for rel_type, drawing in relationships(zf, sheet, budget).values():
        if not rel_type.endswith("/drawing") or not zf.has(drawing):
            continue
        diagram = _diagrams_of(zf, drawing, budget)

        def on_anchor(anchor: Element, diagram: Callable[[str], list[str]] = diagram) -> None:
            for el in anchor.iter():
                if el.tag == "xdr:txBody":
                    lines.extend(drawing_paragraphs(el))
                elif el.tag == "dgm:relIds":
                    lines.extend(diagram(el.get("r:dm", "")))

        rules = Rules(_NS, blocks=_ANCHORS, on_block=on_anchor, skip=frozenset({"mc:Fallback"}))
        with zf.open(drawing) as stream:
            parse(stream, rules, budget)
    return lines


def _related(rels: dict[str, tuple[str, str]], rid: str) -> str:
    """The member a relationship id names ("" when the part names no such relationship)."""
    return rels[rid][1] if rid in rels else ""


# ---- DOCX -------------------------------------------------------------------------------


def _runs(paragraph: Element) -> tuple[str, list[Element], list[str]]:
    """A paragraph's own text, the text boxes it holds, in order, and the relationship ids of
    the SmartArt diagrams it holds."""
    parts: list[str] = []
    boxes: list[Element] = []
    diagrams: list[str] = []
    stack = list(reversed(paragraph))
    while stack:
        el = stack.pop()
        tag = el.tag
        if tag == "w:t":
            parts.append(el.text or "")
        elif tag in ("w:tab", "w:ptab"):
            parts.append("\t")
        elif tag in ("w:br", "w:cr"):
            parts.append("\n")
        elif tag == "w:noBreakHyphen":
            parts.append("-")
        elif tag == "w:txbxContent":
            boxes.append(el)
        elif tag == "dgm:relIds":
            diagrams.append(el.get("r:dm", ""))
        else:
            stack.extend(reversed(el))
    return "".join(parts), boxes, diagrams


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


def _docx_paragraph(
    sink: TextSink, paragraph: Element, diagram: Callable[[str], list[str]]
) -> None:
    """Write a paragraph, then the paragraphs of its text boxes (depth first, no recursion),
    then the text of its diagrams (``diagram``: a relationship id's lines)."""
    pending = [paragraph]
    while pending:
        text, boxes, diagrams = _runs(pending.pop())
        if text.strip():
            sink.line(text)
        for rid in diagrams:
            for line in diagram(rid):
                sink.line(line)
        inner = [p for box in boxes for p in _paragraphs_in(box)]
        pending.extend(reversed(inner))


def _diagrams_of(zf: SafeZip, part: str, budget: XmlBudget) -> Callable[[str], list[str]]:
    """A diagram's lines by its relationship id in ``part`` (the part's relationships read at
    the first diagram it holds: most documents have none)."""
    rels: list[dict[str, tuple[str, str]]] = []

    def lines(rid: str) -> list[str]:
        if not rels:
            rels.append(relationships(zf, part, budget))
        return diagram_lines(zf, _related(rels[0], rid), budget)

    return lines


def _docx_parts(zf: SafeZip, main: str) -> list[str]:
    """The main part, then headers, footers, footnotes and endnotes beside it."""
    folder = posixpath.dirname(main)
    extra: list[tuple[str, int, str]] = []
    for name in zf.names():
        head, base = posixpath.split(name)
        match = _W_EXTRA_PART.fullmatch(base)
        if head == folder and match:
            kind = match.group(1) or base
            extra.append((kind, int(match.group(2) or 0), name))
    order = {"header": 0, "footer": 1, "footnotes.xml": 2, "endnotes.xml": 3}
    extra.sort(key=lambda item: (order[item[0]], item[1]))
    return [main, *(name for _, _, name in extra)]


class DocxReader:
    """Reads Word documents (DOCX, DOCM, DOTX)."""

    name = "docx"
    version = 3
    """2: the documents embedded in it are read as its members (:mod:`embedded`). 3: the text
    of its SmartArt diagrams."""
    mimes = frozenset({M.DOCX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs into ``sink``."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            main = main_part(zf, budget, "word/document.xml")
            for part in _docx_parts(zf, main):
                rules = Rules(
                    _NS,
                    blocks=frozenset({"w:p"}),
                    on_block=functools.partial(
                        _docx_paragraph, sink, diagram=_diagrams_of(zf, part, budget)
                    ),
                    skip=_W_SKIP,
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


def _child(elem: Element, tag: str) -> Element | None:
    """The first child called ``tag`` (ElementPath would read the prefix as a namespace)."""
    return next((child for child in elem if child.tag == tag), None)


def _cell_value(cell: Element, strings: list[str]) -> str:
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        inline = _child(cell, "x:is")
        return element_text(inline, frozenset({"x:rPh"})) if inline is not None else ""
    value = _child(cell, "x:v")
    raw = (value.text or "") if value is not None else ""
    if kind == "s":
        index = int(raw) if raw.strip().isdigit() else -1
        return strings[index] if 0 <= index < len(strings) else ""
    if kind == "b":
        return "TRUE" if raw.strip() in ("1", "true") else "FALSE"
    return raw


def _row_line(row: Element, strings: list[str]) -> str:
    cells: list[str] = []
    for cell in row:
        if cell.tag != "x:c":
            continue
        value = _cell_value(cell, strings)
        if not value:
            continue
        col = _column(cell.get("r"))
        if col is not None and col > len(cells):
            cells.extend([""] * (col - len(cells)))
        cells.append(value.replace("\t", " ").replace("\n", " "))
    return "\t".join(cells)


def _sheet_targets(zf: SafeZip, workbook: str, budget: XmlBudget) -> list[str]:
    """Member names of the sheets in workbook order; CorruptFile if one is missing."""
    ids: list[str] = []
    rules = Rules(
        _NS, starts=frozenset({"x:sheet"}), on_start=lambda _t, a: ids.append(a.get("r:id", ""))
    )
    with zf.open(workbook) as stream:
        parse(stream, rules, budget)
    rels = relationships(zf, workbook, budget)
    targets = [rels[i][1] if i in rels else "" for i in ids]
    if not all(zf.has(t) for t in targets):
        raise CorruptFile("a sheet of the workbook is missing")
    return targets


def _shared_strings_part(zf: SafeZip, workbook: str, budget: XmlBudget) -> str | None:
    for rel_type, target in relationships(zf, workbook, budget).values():
        if rel_type.endswith("/sharedStrings"):
            return target
    return None


class XlsxReader:
    """Reads Excel workbooks (XLSX, XLSM, XLTX)."""

    name = "xlsx"
    version = 3
    """2: the documents embedded in it are read as its members (:mod:`embedded`). 3: the text
    of its sheets' drawings (text boxes, shapes, SmartArt diagrams)."""
    mimes = frozenset({M.XLSX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each sheet's rows into ``sink``."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            workbook = main_part(zf, budget, "xl/workbook.xml")
            sheets = _sheet_targets(zf, workbook, budget)
            strings = _shared_strings(zf, _shared_strings_part(zf, workbook, budget), budget)

            def on_row(row: Element) -> None:
                line = _row_line(row, strings)
                if line.strip():
                    sink.line(line)

            rules = Rules(_NS, blocks=frozenset({"x:row"}), on_block=on_row)
            for number, sheet in enumerate(sheets, start=1):
                sink.line(f"# sheet{number}")
                with zf.open(sheet) as stream:
                    parse(stream, rules, budget)
                for line in sheet_drawing_lines(zf, sheet, budget):
                    sink.line(line)
            info = ReadInfo(extractor=self.name, pages=len(sheets))
            return with_embedded(info, ctx, sink, ooxml_embedded(zf))


READERS = (DocxReader(), XlsxReader())
