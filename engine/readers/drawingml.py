"""What the Office Open XML readers share: a part's relationships, DrawingML text bodies,
SmartArt diagrams, the drawings on a spreadsheet's sheets (XLSX and XLSB alike) and the
comments on a presentation's slides.

SmartArt (an org chart, a process, a cycle: in all three Office formats) keeps its text in a
part of its own, the diagram's data model (``diagrams/dataN.xml``), that the document names
by a relationship (``dgm:relIds r:dm``): each node's paragraphs are read there
(:func:`diagram_lines`). A sheet's text boxes and shapes are in its drawing part
(:func:`sheet_drawing_lines`). Read without them, every word of a diagram or a text box was
missing from the text.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from xml.etree.ElementTree import Element

from engine.readers.xmlsafe import Rules, XmlBudget, parse
from engine.readers.zipsafe import SafeZip

_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_R_STRICT = "http://purl.oclc.org/ooxml/officeDocument/relationships"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_A_STRICT = "http://purl.oclc.org/ooxml/drawingml/main"
_DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_DGM_STRICT = "http://purl.oclc.org/ooxml/drawingml/diagram"
_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
_XDR_STRICT = "http://purl.oclc.org/ooxml/drawingml/spreadsheetDrawing"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_P2018 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"

Rels = dict[str, tuple[str, str]]
"""A part's internal relationships: id -> (type, member name)."""
DIAGRAM_IDS = f"{{{_DGM}}}relIds"
DATA_MODEL = f"{{{_R}}}dm"
"""The element naming a diagram's parts, and its attribute naming the data model, as lxml
(python-pptx's) names them."""

NS = {_PKG_RELS: "pr", _R: "r", _R_STRICT: "r", _MC: "mc", _A: "a", _A_STRICT: "a"}
NS |= {_DGM: "dgm", _DGM_STRICT: "dgm", _XDR: "xdr", _XDR_STRICT: "xdr", _P: "p", _P2018: "pc"}
"""The prefixes the tags and attributes of these parts come back with."""


def relationships(zf: SafeZip, part: str, budget: XmlBudget) -> Rels:
    """Id -> (type, member name) of ``part``'s internal relationships ({} if it has none)."""
    folder, name = posixpath.split(part)
    rels_name = posixpath.join(folder, "_rels", name + ".rels")
    found: Rels = {}
    if not zf.has(rels_name):
        return found

    def on_start(_tag: str, attrs: dict[str, str]) -> None:
        target = attrs.get("Target", "")
        if attrs.get("TargetMode") != "External" and target:
            found[attrs.get("Id", "")] = (attrs.get("Type", ""), resolve(folder, target))

    with zf.open(rels_name) as stream:
        parse(stream, Rules(NS, starts=frozenset({"pr:Relationship"}), on_start=on_start), budget)
    return found


def resolve(folder: str, target: str) -> str:
    """A relationship target as a member name."""
    if target.startswith("/"):
        return posixpath.normpath(target.lstrip("/"))
    return posixpath.normpath(posixpath.join(folder, target))


def child(elem: Element, tag: str) -> Element | None:
    """The first child called ``tag`` (ElementPath would read the prefix as a namespace)."""
    return next((child for child in elem if child.tag == tag), None)


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
        body = child(point, "dgm:t")
        if body is not None and point.get("type", "node") not in _TEXTLESS_POINTS:
            lines.extend(drawing_paragraphs(body))

    with zf.open(member) as stream:
        parse(stream, Rules(NS, blocks=frozenset({"dgm:pt"}), on_block=on_point), budget)
    return lines


_ANCHORS = frozenset({"xdr:twoCellAnchor", "xdr:oneCellAnchor", "xdr:absoluteAnchor"})


def sheet_drawing_lines(zf: SafeZip, sheet: Rels, budget: XmlBudget) -> list[str]:
    """The text of the drawings on the sheet whose relationships are ``sheet``: each anchored
    shape's paragraphs (text boxes, shapes with text, groups opened) and diagram, in drawing
    order. A chart or a picture has none; the fallback copy of alternate content is left
    out."""
    lines: list[str] = []
    for rel_type, drawing in sheet.values():
        if not rel_type.endswith("/drawing") or not zf.has(drawing):
            continue
        diagram = diagrams_of(zf, drawing, budget)

        def on_anchor(anchor: Element, diagram: Callable[[str], list[str]] = diagram) -> None:
            for el in anchor.iter():
                if el.tag == "xdr:txBody":
                    lines.extend(drawing_paragraphs(el))
                elif el.tag == "dgm:relIds":
                    lines.extend(diagram(el.get("r:dm", "")))

        rules = Rules(NS, blocks=_ANCHORS, on_block=on_anchor, skip=frozenset({"mc:Fallback"}))
        with zf.open(drawing) as stream:
            parse(stream, rules, budget)
    return lines


def related(rels: Rels, rid: str) -> str:
    """The member a relationship id names ("" when the part names no such relationship)."""
    return rels[rid][1] if rid in rels else ""


def diagrams_of(zf: SafeZip, part: str, budget: XmlBudget) -> Callable[[str], list[str]]:
    """A diagram's lines by its relationship id in ``part`` (the part's relationships read at
    the first diagram it holds: most documents have none)."""
    rels: list[Rels] = []

    def lines(rid: str) -> list[str]:
        if not rels:
            rels.append(relationships(zf, part, budget))
        return diagram_lines(zf, related(rels[0], rid), budget)

    return lines


def slide_comment_lines(zf: SafeZip, slide: Rels, budget: XmlBudget) -> list[str]:
    """The comments on the slide whose relationships are ``slide``, a line a paragraph: PowerPoint's
    older comments (``p:cm``, its text one element) and its newer, threaded ones
    (``ppt/comments/modernComment_*.xml``: a DrawingML text body each, and each reply's)."""
    lines: list[str] = []

    def on_comment(comment: Element) -> None:
        for el in comment.iter():
            if el.tag == "p:text" and el.text and el.text.strip():
                lines.append(" ".join(el.text.split()))
            elif el.tag == "pc:txBody":
                lines.extend(drawing_paragraphs(el))

    rules = Rules(NS, blocks=frozenset({"p:cm", "pc:cm"}), on_block=on_comment)
    for rel_type, part in slide.values():
        if rel_type.endswith("/comments") and zf.has(part):
            with zf.open(part) as stream:
                parse(stream, rules, budget)
    return lines
