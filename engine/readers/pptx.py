"""PowerPoint (PPTX) presentations through python-pptx, opened only after the zip checks.

python-pptx inflates every member when it opens a package, so the file never reaches it
directly. The XML parts the text comes from (the presentation, its slides, their notes, their
relationships and ``[Content_Types].xml``) are read under the :mod:`zipsafe` caps and parsed
once by :mod:`xmlsafe` (no DTD, UTF-8/16, ``xml_bytes``, ``parts_per_block`` in a DrawingML
paragraph or table row); python-pptx is then given a skeleton package holding those parts.
Every other member is in it empty, never inflated: media, and the layouts, masters, themes,
charts and properties (two thirds of a deck's XML), typed as bytes python-pptx keeps unparsed,
their relationships left out. Slideshow, template and macro-enabled packages are presented to
it as ordinary presentations.

Output: a ``# slideN`` line per slide in presentation order, then every non-blank paragraph
of its shapes (groups opened, table rows tab-separated, line breaks as ``\\n``; a SmartArt
diagram's text read from its data model part and a chart's from its part,
:mod:`engine.readers.drawingml`, which the skeleton never holds; a shape in alternate
content, which python-pptx does not see, as the content chooses it: a text box holding an
equation, :mod:`engine.readers.omml`), then the paragraphs of its notes, then its comments
(older and threaded ones, from the package itself) after a ``# comments`` line. ``pages``
is the number of slides.
"""

from __future__ import annotations

import importlib.util
import io
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine.errors import CorruptFile, ReadFailure
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.readers.drawingml import (
    CHART,
    CHART_ID,
    DATA_MODEL,
    DIAGRAM_IDS,
    Rels,
    graphic_lines,
    relationships,
    slide_comment_lines,
)
from engine.readers.embedded import ooxml_embedded, with_embedded
from engine.readers.omml import linear
from engine.readers.symbolfont import is_symbol, recode
from engine.readers.xmlsafe import Rules, XmlBudget, parse_bytes
from engine.readers.zipsafe import SafeZip

# python-pptx is imported when a presentation is read, not with the registry: it costs the
# engine's start a fifth of a second. Its absence still drops this reader, as an import would.
if importlib.util.find_spec("pptx") is None:
    raise ImportError("python-pptx is not installed")

_MAIN = b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
_OTHER_MAINS = (
    b"application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    b"application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
    b"application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
    b"application/vnd.ms-powerpoint.template.macroEnabled.main+xml",
)
_CHECK_ONLY = Rules(
    ns={"http://schemas.openxmlformats.org/drawingml/2006/main": "a"},
    blocks=frozenset({"a:p", "a:tr"}),
)
"""Parse rules that keep nothing: the parse checks DTDs, encoding and parts per paragraph."""


def _is_xml(name: str) -> bool:
    return name.endswith((".xml", ".rels"))


def _xml_part(zf: SafeZip, name: str, budget: XmlBudget) -> bytes:
    """One XML part, read under the zip caps and validated by xmlsafe."""
    data = zf.read(name)
    parse_bytes(data, _CHECK_ONLY, budget)
    return data


_CONTENT_TYPES = "[Content_Types].xml"
_TYPES_NS = "http://schemas.openxmlformats.org/package/2006/content-types"
_READ = frozenset(
    {
        _MAIN.decode(),
        *(main.decode() for main in _OTHER_MAINS),
        "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
        "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
        "application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml",
    }
)
"""Content types of the parts the text comes from: the presentation, its slides, their notes."""
_UNREAD = "application/x-quarry-unread"
"""The content type a part that is not read is given: python-pptx keeps it as bytes."""


class _Types:
    """A package's ``[Content_Types].xml``: the content type of each part by its name."""

    def __init__(self, data: bytes, budget: XmlBudget) -> None:
        self.defaults: dict[str, str] = {}
        self.overrides: dict[str, tuple[str, str]] = {}
        """Lower-case part name -> (its name as written, its content type)."""

        def on_start(tag: str, attrs: dict[str, str]) -> None:
            kind = attrs.get("ContentType", "")
            if tag == "Default":
                self.defaults[attrs.get("Extension", "").lower()] = kind
            else:
                name = attrs.get("PartName", "")
                self.overrides[name.lower()] = (name, kind)

        rules = Rules({_TYPES_NS: ""}, starts=frozenset({"Default", "Override"}), on_start=on_start)
        parse_bytes(data, rules, budget)

    def of(self, name: str) -> str:
        """The content type of the member ``name`` (a part name without its leading slash)."""
        found = self.overrides.get("/" + name.lower())
        if found is not None:
            return found[1]
        return self.defaults.get(name.rpartition(".")[2].lower(), "")

    def read(self, name: str) -> bool:
        """Whether the member ``name`` is a part the text comes from, or the relationships of
        one (or of the package)."""
        if name.endswith(".rels"):
            folder, _, rels = name.rpartition("_rels/")
            return (not folder and rels == ".rels") or self.of(folder + rels[:-5]) in _READ
        return self.of(name) in _READ

    def xml(self, unread: list[str]) -> bytes:
        """The content types again, every main type as a presentation's and the ``unread``
        parts as bytes that python-pptx never parses."""
        lines = [f'<Types xmlns="{_TYPES_NS}">']
        for ext, kind in self.defaults.items():
            lines.append(f'<Default Extension="{_attr(ext)}" ContentType="{_attr(kind)}"/>')
        typed = {"/" + name.lower(): ("/" + name, _UNREAD) for name in unread}
        main = _MAIN.decode()
        for name, kind in {**self.overrides, **typed}.values():
            kind = main if kind in _READ and kind.endswith(".main+xml") else kind
            lines.append(f'<Override PartName="{_attr(name)}" ContentType="{_attr(kind)}"/>')
        lines.append("</Types>")
        return "".join(lines).encode()


def _attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def skeleton(zf: SafeZip, budget: XmlBudget) -> bytes:
    """A stored zip with the XML parts the text comes from, checked, and every other member
    empty.

    Only the presentation, its slides, their notes and the relationships of those are read
    and checked: layouts, masters, themes, charts and properties (two thirds of a deck's XML)
    are never inflated, and their relationships are left out, so python-pptx does not follow
    them. Media are never inflated either: a well-compressed EMF picture is no reason to
    refuse the slides. A package without ``[Content_Types].xml`` keeps every XML part.
    """
    names = [name for name in zf.names() if not name.endswith("/")]
    types = _Types(zf.read(_CONTENT_TYPES), budget) if _CONTENT_TYPES in names else None
    unread = [
        name
        for name in names
        if types is not None and name != _CONTENT_TYPES and _is_xml(name) and not types.read(name)
    ]
    skipped = set(unread)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for name in names:
            if name in skipped:
                if not name.endswith(".rels"):  # relationships of an unread part: left out
                    dst.writestr(name, b"")
            elif name == _CONTENT_TYPES and types is not None:
                dst.writestr(name, types.xml([n for n in unread if not n.endswith(".rels")]))
            else:
                dst.writestr(name, _xml_part(zf, name, budget) if _is_xml(name) else b"")
    return out.getvalue()


_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_A14_MATH = "{http://schemas.microsoft.com/office/drawing/2010/main}m"


def _in_order(tree: Any, shapes: Any) -> list[Any]:
    """The shapes of a shape tree (a slide's, a group's) in order, with the shapes that each
    piece of alternate content chooses in its place, as lxml elements: python-pptx skips
    alternate content, and a text box holding an equation is one."""
    known = {shape.element: shape for shape in shapes}
    found: list[Any] = []
    for el in tree:
        if el in known:
            found.append(known[el])
        elif el.tag == f"{_MC}AlternateContent":
            choice = el.find(f"{_MC}Choice")
            found.extend(choice if choice is not None else ())
    return found


def _shapes(tree: Any, shapes: Any) -> Iterator[Any]:
    """Every shape, group members in place (iterative: deep groups cannot recurse)."""
    from pptx.shapes.group import GroupShape

    stack = list(reversed(_in_order(tree, shapes)))
    while stack:
        shape = stack.pop()
        if isinstance(shape, GroupShape):
            stack.extend(reversed(_in_order(shape.element, shape.shapes)))
            continue
        yield shape


_GLYPH = re.compile("[\uf020-\uf0ff]")
"""A symbol font's code, as PowerPoint writes a character set in one (``U+F061``)."""


def _paragraph_text(paragraph: Any) -> str:
    """A text frame's paragraph as python-pptx gives it, its runs in the Symbol font as the
    characters the font's glyphs show (its runs and fields looked at only when the text holds
    a symbol font's code: PowerPoint writes an alpha in the Symbol font as ``U+F061``)."""
    text = str(paragraph.text)
    element = getattr(paragraph, "_p", None)
    if element is None or not _GLYPH.search(text):
        return text
    parts: list[str] = []
    for el in element:
        if el.tag in (f"{_A}r", f"{_A}fld"):
            run = "".join(t.text or "" for t in el.iter(f"{_A}t"))
            fonts = el.iter(f"{_A}latin", f"{_A}sym")
            parts.append(recode(run) if any(is_symbol(f.get("typeface")) for f in fonts) else run)
        elif el.tag == f"{_A}br":
            parts.append("\v")
    return "".join(parts)


def _chosen_lines(elem: Any) -> Iterator[str]:
    """The paragraphs of a shape alternate content chose (an lxml element), an equation's
    in linear form (:mod:`engine.readers.omml`)."""
    for paragraph in elem.iter(f"{_A}p"):
        parts: list[str] = []
        symbol = False  # (as in drawingml.drawing_paragraphs: a run's font comes first)
        for el in paragraph.iter(*_CHOSEN_TAGS):
            if el.tag == _A14_MATH:
                parts.extend(linear(math) for math in el)
            elif el.tag == f"{_A}t":
                parts.append(recode(el.text or "") if symbol else el.text or "")
            elif el.tag == f"{_A}br":
                parts.append("\n")
            elif el.tag in (f"{_A}r", f"{_A}fld"):
                symbol = False
            else:
                symbol = symbol or is_symbol(el.get("typeface"))
        yield "".join(parts)


_CHOSEN_TAGS = (*(f"{_A}{tag}" for tag in ("t", "br", "r", "fld", "latin", "sym")), _A14_MATH)
"""What :func:`_chosen_lines` looks at in a paragraph."""


Diagram = Callable[[str], list[str]]
"""A diagram's or a chart's lines by its relationship id in the slide that shows it."""


def _shape_lines(shape: Any, diagram: Diagram) -> Iterator[str]:
    if getattr(shape, "element", None) is None:  # (alternate content's choice)
        yield from _chosen_lines(shape)
        return
    for ids in shape.element.iter(DIAGRAM_IDS, CHART):  # (a graphic frame: SmartArt, a chart)
        yield from diagram(ids.get(DATA_MODEL) or ids.get(CHART_ID) or "")
    if getattr(shape, "has_text_frame", False):
        for paragraph in shape.text_frame.paragraphs:
            yield _paragraph_text(paragraph).replace("\v", "\n")
    if getattr(shape, "has_table", False):
        for row in shape.table.rows:
            yield "\t".join(_cell_text(cell) for cell in row.cells)


def _cell_text(cell: Any) -> str:
    return " ".join(str(cell.text).split("\n")).replace("\v", " ").replace("\t", " ")


def _slide_lines(slide: Any, diagram: Diagram, comments: list[str]) -> Iterator[str]:
    for shape in _shapes(slide.element.cSld.spTree, slide.shapes):
        yield from _shape_lines(shape, diagram)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        if frame is not None:
            for paragraph in frame.paragraphs:
                yield _paragraph_text(paragraph).replace("\v", "\n")
    said = [line for line in comments if line.strip()]
    if said:  # (a reviewer's comments are no slide text: said so, after the rest)
        yield "# comments"
        yield from said


def _open(data: bytes) -> Any:
    from pptx import Presentation

    return Presentation(io.BytesIO(data))


def _write_slides(prs: Any, sink: TextSink, zf: SafeZip, budget: XmlBudget) -> int:
    """Each slide's lines; its diagrams and comments read from the package itself (the
    skeleton holds neither), its relationships read once for both."""
    count = 0
    for count, slide in enumerate(prs.slides, start=1):
        sink.line(f"# slide{count}")
        rels = relationships(zf, str(slide.part.partname).lstrip("/"), budget)

        def diagram(rid: str, rels: Rels = rels) -> list[str]:
            return graphic_lines(zf, rels, rid, budget)

        comments = slide_comment_lines(zf, rels, budget)
        for line in _slide_lines(slide, diagram, comments):
            if line.strip():
                sink.line(line)
    return count


class PptxReader:
    """Reads PowerPoint presentations (PPTX, PPTM, PPSX, POTX)."""

    name = "pptx"
    version = 6
    """2: layouts, masters and themes are no longer read (a broken or hostile one no longer
    refuses the deck); every readable deck's text is as in 1. 3: the documents embedded in it
    are read as its members (:mod:`engine.readers.embedded`). 4: the text of its SmartArt
    diagrams; each slide's comments after its notes, under a ``# comments`` line. 5: its
    charts' text (:func:`engine.readers.drawingml.chart_lines`); the shapes in alternate
    content (a text box holding an equation), equations in linear form. 6: runs in the Symbol
    font as the characters its glyphs show (:mod:`engine.readers.symbolfont`)."""
    mimes = frozenset({M.PPTX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each slide's paragraphs and notes into ``sink``."""
        with SafeZip(path, ctx.limits) as zf:
            budget = XmlBudget(ctx.limits)
            data = skeleton(zf, budget)
            try:
                slides = _write_slides(_open(data), sink, zf, budget)
            except (ReadFailure, TextCapReached):
                raise
            except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors...
                raise CorruptFile(f"python-pptx cannot read it: {type(exc).__name__}") from exc
            info = ReadInfo(extractor=self.name, pages=slides)
            return with_embedded(info, ctx, sink, ooxml_embedded(zf))


READERS = (PptxReader(),)
