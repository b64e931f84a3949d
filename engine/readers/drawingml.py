"""What the Office Open XML readers share: a part's relationships, DrawingML text bodies,
SmartArt diagrams, charts, the drawings on a spreadsheet's sheets (XLSX and XLSB alike) and
the comments on a presentation's slides.

SmartArt (an org chart, a process, a cycle: in all three Office formats) keeps its text in a
part of its own, the diagram's data model (``diagrams/dataN.xml``), that the document names
by a relationship (``dgm:relIds r:dm``): each node's paragraphs are read there
(:func:`diagram_lines`). A sheet's text boxes and shapes are in its drawing part
(:func:`sheet_drawing_lines`). Read without them, every word of a diagram or a text box was
missing from the text.

A chart (``charts/chartN.xml``, named by ``c:chart r:id``) is read the same way, where it
stands (:func:`chart_lines`): its title, a table of what it plots as its caches hold it (the
values as the chart shows them, whether or not its workbook came with it), its axes' titles.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from xml.etree.ElementTree import Element

from engine.readers.cellformats import dated_text, is_date_format
from engine.readers.omml import linear
from engine.readers.symbolfont import is_symbol, recode
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
_C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
_C_STRICT = "http://purl.oclc.org/ooxml/drawingml/chart"
_A14 = "http://schemas.microsoft.com/office/drawing/2010/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_P2018 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"

Rels = dict[str, tuple[str, str]]
"""A part's internal relationships: id -> (type, member name)."""
DIAGRAM_IDS = f"{{{_DGM}}}relIds"
DATA_MODEL = f"{{{_R}}}dm"
"""The element naming a diagram's parts, and its attribute naming the data model, as lxml
(python-pptx's) names them."""
CHART = f"{{{_C}}}chart"
CHART_ID = f"{{{_R}}}id"
"""The element naming a chart's part, and its attribute naming it, as lxml names them."""

NS = {_PKG_RELS: "pr", _R: "r", _R_STRICT: "r", _MC: "mc", _A: "a", _A_STRICT: "a"}
NS |= {_DGM: "dgm", _DGM_STRICT: "dgm", _XDR: "xdr", _XDR_STRICT: "xdr", _P: "p", _P2018: "pc"}
NS |= {_C: "c", _C_STRICT: "c", _A14: "a14"}
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
    break as ``\\n``, a tab as ``\\t``, an equation in linear form, a run in the Symbol font
    as its glyphs' characters: :mod:`engine.readers.symbolfont`)."""
    lines: list[str] = []
    for paragraph in body.iter("a:p"):
        parts: list[str] = []
        symbol = False  # the run's font is the Symbol font (its a:rPr comes before its a:t)
        for el in paragraph.iter():
            if el.tag == "a:t":
                parts.append(recode(el.text or "") if symbol else el.text or "")
            elif el.tag in ("a:r", "a:fld"):
                symbol = False
            elif el.tag in ("a:latin", "a:sym") and is_symbol(el.get("typeface")):
                symbol = True
            elif el.tag == "a:br":
                parts.append("\n")
            elif el.tag == "a:tab":
                parts.append("\t")
            elif el.tag == "a14:m":  # (an equation: its runs are no a:t)
                parts.extend(linear(math) for math in el)
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
    shape's paragraphs (text boxes, shapes with text, groups opened), diagram and chart, in
    drawing order (a chart sheet's chart too). A picture has none; the fallback copy of
    alternate content is left out."""
    lines: list[str] = []
    for rel_type, drawing in sheet.values():
        if not rel_type.endswith("/drawing") or not zf.has(drawing):
            continue
        graphic = graphics_of(zf, drawing, budget)

        def on_anchor(anchor: Element, graphic: Callable[[str], list[str]] = graphic) -> None:
            for el in anchor.iter():
                if el.tag == "xdr:txBody":
                    lines.extend(drawing_paragraphs(el))
                elif el.tag == "dgm:relIds":
                    lines.extend(graphic(el.get("r:dm", "")))
                elif el.tag == "c:chart":
                    lines.extend(graphic(el.get("r:id", "")))

        rules = Rules(NS, blocks=_ANCHORS, on_block=on_anchor, skip=frozenset({"mc:Fallback"}))
        with zf.open(drawing) as stream:
            parse(stream, rules, budget)
    return lines


def part_of(rels: Rels, kind: str) -> str | None:
    """The part a relationship of type ``kind`` names (``/styles``, ``/sharedStrings``)."""
    return next((target for rel_type, target in rels.values() if rel_type.endswith(kind)), None)


def graphic_lines(zf: SafeZip, rels: Rels, rid: str, budget: XmlBudget) -> list[str]:
    """The text of the SmartArt diagram (its data model) or the chart that the relationship
    ``rid`` of ``rels`` names; none for another kind of part or an unknown id."""
    rel_type, member = rels.get(rid, ("", ""))
    if rel_type.endswith("/diagramData"):
        return diagram_lines(zf, member, budget)
    if rel_type.endswith("/chart"):
        return chart_lines(zf, member, budget)
    return []


def graphics_of(zf: SafeZip, part: str, budget: XmlBudget) -> Callable[[str], list[str]]:
    """A diagram's or a chart's lines by its relationship id in ``part`` (the part's
    relationships read at the first one it holds: most documents have none)."""
    rels: list[Rels] = []

    def lines(rid: str) -> list[str]:
        if not rels:
            rels.append(relationships(zf, part, budget))
        return graphic_lines(zf, rels[0], rid, budget)

    return lines


Points = dict[int, str]
"""A chart's categories or a series' values: a point's index -> its text."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _is_index(text: str) -> bool:
    """Whether ``text`` is a point's index (digits, few enough: ``int`` refuses thousands)."""
    return text.isascii() and text.isdigit() and len(text) <= 12


def _cached(level: Element, date1904: bool) -> Points:
    """The points of a cache or a literal (``c:pt idx``, its ``c:v``); numbers whose format
    (the cache's ``c:formatCode``, or a point's own) shows dates as dates."""
    points: Points = {}
    code = child(level, "c:formatCode")
    dated = code is not None and is_date_format(-1, code.text or "")
    for point in level:
        index = point.get("idx", "")
        value = child(point, "c:v") if point.tag == "c:pt" else None
        if value is not None and _is_index(index) and (text := _one_line(value.text or "")):
            own = point.get("formatCode")
            if dated if own is None else is_date_format(-1, own):
                text = dated_text(text, date1904)
            points[int(index)] = text
    return points


_CACHES = frozenset({"c:strCache", "c:numCache", "c:strLit", "c:numLit", "c:lvl"})


def _data(data: Element | None, date1904: bool) -> Points:
    """A series' categories or values, from a reference's cache or a literal; categories of
    several levels (``c:multiLvlStrCache``, the innermost first) as one label, the outer
    levels' first."""
    if data is None:
        return {}
    levels = [_cached(el, date1904) for el in data.iter() if el.tag in _CACHES]
    if len(levels) < 2:
        return levels[0] if levels else {}
    inner, outer = levels[0], levels[:0:-1]
    return {i: " ".join([*(o[i] for o in outer if i in o), text]) for i, text in inner.items()}


def _text_of(tx: Element | None) -> list[str]:
    """A title's or a label's paragraphs (``c:rich``), or the text of its cell (``c:v``)."""
    if tx is None:
        return []
    rich = child(tx, "c:rich")
    if rich is not None:
        return drawing_paragraphs(rich)
    return [text for v in tx.iter("c:v") if (text := _one_line(v.text or ""))]


def _first(elem: Element, *tags: str) -> Element | None:
    """The first child called one of ``tags``, in their order."""
    return next((found for tag in tags if (found := child(elem, tag)) is not None), None)


class _Series:
    """One series of a chart: its name, categories (x values) and values (y values), and
    the text of its data labels that say something of their own."""

    def __init__(self, ser: Element, date1904: bool) -> None:
        self.name = _one_line(" ".join(_text_of(child(ser, "c:tx"))))
        self.categories = _data(_first(ser, "c:cat", "c:xVal"), date1904)
        self.values = _data(_first(ser, "c:val", "c:yVal"), date1904)
        self.labels = [
            line for labels in ser.iter("c:dLbl") for line in _text_of(child(labels, "c:tx"))
        ]


def _table(group: list[_Series]) -> list[str]:
    """The lines of series that share their categories: their names, then a row a point,
    its category and each one's value."""
    categories = group[0].categories
    lead = [""] if categories else []
    lines = []
    if any(series.name for series in group):
        lines.append("\t".join([*lead, *(series.name for series in group)]))
    indexes = set(categories).union(*(series.values for series in group))
    for i in sorted(indexes):
        row = [categories.get(i, "")] if categories else []
        row.extend(series.values.get(i, "") for series in group)
        if any(row):
            lines.append("\t".join(row))
    return lines


def chart_lines(zf: SafeZip, member: str, budget: XmlBudget) -> list[str]:
    """A chart's text, from its part ``member``: its title; then what it plots, a table for
    the series that share their categories (a row of their names, then a row a category:
    it and each series' value, tab-separated, as the chart's caches hold them, dates as
    dates); then its data labels' own text and its axes' titles. None when the part is
    missing. Series hidden from the chart (in its extensions) are left out."""
    if not member or not zf.has(member):
        return []
    head: list[str] = []
    series: list[_Series] = []
    tail: list[str] = []
    date1904 = False

    def on_block(block: Element) -> None:
        if block.tag == "c:ser":
            series.append(_Series(block, date1904))
        else:  # (the chart's title comes before its plot area, its axes' after the series)
            (tail if series else head).extend(_text_of(child(block, "c:tx")))

    def on_start(_tag: str, attrs: dict[str, str]) -> None:
        nonlocal date1904  # (the chart space's first element: before any series)
        date1904 = attrs.get("val", "").strip().lower() in ("1", "true")

    rules = Rules(
        NS,
        blocks=frozenset({"c:title", "c:ser"}),
        on_block=on_block,
        starts=frozenset({"c:date1904"}),
        on_start=on_start,
        skip=frozenset({"mc:Fallback", "c:extLst"}),
    )
    with zf.open(member) as stream:
        parse(stream, rules, budget)
    lines = head
    groups: list[list[_Series]] = []
    for one in series:
        if groups and groups[-1][0].categories == one.categories:
            groups[-1].append(one)
        else:
            groups.append([one])
    for group in groups:
        lines.extend(_table(group))
    lines.extend(label for one in series for label in one.labels)
    return lines + tail


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
