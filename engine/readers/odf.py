"""OpenDocument of every kind, zipped or flat XML, and its StarOffice 6 ancestors.

Text, spreadsheets, presentations, drawings, charts and formulas, with their templates
(``.ott .ots .otp .otg .otc``), and the StarOffice/OpenOffice.org 1 forms (``.sxw .sxc .sxi
.sxd .sxm``), whose XML names the same elements under older namespaces and opens with a
DOCTYPE that has no internal subset (allowed by :mod:`engine.readers.xmlsafe`).

The zipped forms are read from ``content.xml``; the flat forms (FODT/FODS/FODP) from the file
itself, with styles, settings, scripts and metadata left out, so both give the same text.
Output: one line per paragraph or heading (spaces, tabs and line breaks as written; paragraphs
nested in frames, text boxes and notes come after the paragraph holding them); one line per
table row with the cells tab-separated at their column (repeated cells and rows repeated); blank
lines and rows dropped. A spreadsheet adds a ``# sheetN`` line per table and a presentation a
``# slideN`` line per page, each only before a unit that has text (a drawing of shapes without
text is ``empty/no_text``, not headers alone); ``pages`` counts them all. Annotations (comments
on the text or on a cell: ``office:annotation``) are read apart, after their unit's text (the
document's, a sheet's, a slide's) under a ``# comments`` line, their author and date left out; a
presentation's page comments (LibreOffice's ``officeooo:annotation``, whose paragraphs were read
as the slide's text) the same way. An embedded object (a chart: its title, axes' titles and
data table; a formula; a document) is read where it stands, after the paragraph or row that
holds it, among its slide's shapes, after its sheet's rows: in a zipped document its own
``Object N/content.xml``, read once (:class:`_Objects`), in a flat one inline with the body.
Text in a span whose automatic style sets it in the Symbol font is the characters its
glyphs show (LibreOffice writes an alpha in that font as the font's code, ``U+F061``: see
:mod:`engine.readers.symbolfont`). Tracked deletions and embedded binary data are ignored. A
zipped document whose manifest carries encryption data for ``content.xml`` or ``styles.xml`` is
:class:`EncryptedFile`.

A document whose body gives no text is read for what its styles and metadata hold: a style
template has no ``content.xml`` at all (only ``styles.xml`` and ``meta.xml``), and a
presentation template's text is on its master pages. Its text is then the title (``meta.xml``)
and the paragraphs of its master styles: page headers and footers, the text on master slides
and their notes, each once, without fields that only stand for what a page will show (page
numbers, dates, the title or author). A spreadsheet gives its title only: its master styles
are the print headers and footers LibreOffice gives every sheet. A document with a body of
text keeps its masters out, as before. A zipped document with neither ``content.xml`` nor
``styles.xml`` is :class:`CorruptFile`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from xml.etree.ElementTree import Element

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.symbolfont import is_symbol, recode
from engine.readers.xmlsafe import Rules, XmlBudget, parse, parse_bytes
from engine.readers.zipsafe import SafeZip

_OASIS = "urn:oasis:names:tc:opendocument:xmlns:"
_STAR = "http://openoffice.org/2000/"
_NS = {
    _OASIS + "office:1.0": "office",
    _OASIS + "text:1.0": "text",
    _OASIS + "table:1.0": "table",
    _OASIS + "drawing:1.0": "draw",
    _OASIS + "presentation:1.0": "presentation",
    _OASIS + "svg-compatible:1.0": "svg",
    _OASIS + "manifest:1.0": "manifest",
    _OASIS + "chart:1.0": "chart",
    _OASIS + "style:1.0": "style",
    "http://purl.org/dc/elements/1.1/": "dc",
    # StarOffice 6 / OpenOffice.org 1 (.sxw, .sxc, .sxi, .sxd): the same elements, older names.
    _STAR + "office": "office",
    _STAR + "text": "text",
    _STAR + "table": "table",
    _STAR + "drawing": "draw",
    _STAR + "presentation": "presentation",
    _STAR + "chart": "chart",
    "http://openoffice.org/2001/manifest": "manifest",
    "http://openoffice.org/2009/office": "officeooo",
    "http://www.w3.org/1998/Math/MathML": "math",
    "http://www.w3.org/1999/xlink": "xlink",
}
_MANIFEST = "META-INF/manifest.xml"
_PARA = frozenset({"text:p", "text:h"})
_ROW = "table:table-row"
_CELLS = frozenset({"table:table-cell", "table:covered-table-cell"})
_ANNOTATION = "office:annotation"
"""A comment on the text, or on a cell: its paragraphs are read apart (:func:`_annotations`)."""
_OBJECT = "draw:object"
"""An embedded object (a chart, a formula, a document): in a zipped document a folder of its
own (``Object 1/content.xml``) that ``xlink:href`` names; in a flat one, inline."""
_PAGE_ANNOTATION = "officeooo:annotation"
"""A comment on a presentation's or a drawing's page (LibreOffice's own): read apart as well,
where its paragraphs were read as the slide's text."""
_SKIP = frozenset(
    {
        *("office:annotation-end", "text:tracked-changes", "dc:creator", "dc:date"),
        *("office:binary-data", "svg:title", "svg:desc", "office:meta", "office:settings"),
        *("office:scripts", "office:script", "office:styles", "office:master-styles"),
    }
)
"""Left out of a document's content. Its font declarations and automatic styles are read
for the text styles set in the Symbol font (:class:`_SymbolStyles`)."""


class _SymbolStyles:
    """The automatic text styles of a document that set its text in the Symbol font, and the
    spans in them read as the characters the font's glyphs show
    (:mod:`engine.readers.symbolfont`): LibreOffice writes an alpha in the Symbol font as the
    font's code, ``U+F061``, in a span of such a style."""

    def __init__(self) -> None:
        self.faces: set[str] = set()
        """The declared font faces that are the Symbol font (a style names a face)."""
        self.symbol: set[str] = set()
        """Text styles in the Symbol font."""
        self.other: set[str] = set()
        """Text styles in another font (a span of one inside a Symbol span is not)."""

    def face(self, attrs: dict[str, str]) -> None:
        """A ``style:font-face`` declaration."""
        name = attrs.get("style:name", "")
        if is_symbol(name) or is_symbol(attrs.get("svg:font-family", "").strip("'\" ")):
            self.faces.add(name)

    def note(self, style: Element) -> None:
        """A ``style:style``: kept when it is a text style that names a font."""
        if style.get("style:family") != "text":
            return
        for props in style:
            font = props.get("style:font-name") if props.tag == "style:text-properties" else None
            if font is not None:
                symbol = font in self.faces or is_symbol(font)
                (self.symbol if symbol else self.other).add(style.get("style:name", ""))

    def recode(self, block: Element) -> None:
        """Turn the text of ``block``'s spans in the Symbol font into the glyphs' characters,
        in place (a span's tail is its parent's text)."""
        if not self.symbol:
            return
        stack = [(block, False)]
        while stack:
            el, inside = stack.pop()
            style = el.get("text:style-name") if el.tag == "text:span" else None
            if style in self.symbol:
                inside = True
            elif style in self.other:
                inside = False
            if inside and el.text:
                el.text = recode(el.text)
            for child in el:
                if inside and child.tail:
                    child.tail = recode(child.tail)
                stack.append((child, inside))


_OUTSIDE_MASTERS = frozenset(
    {
        *("office:body", "office:meta", "office:settings", "office:scripts"),
        *("office:font-face-decls", "office:styles", "office:automatic-styles"),
        *("office:binary-data", "office:annotation", "text:tracked-changes"),
        # fields: what a page will show (its number, the date, the document's title, author
        # or file name...), not the template's own text
        *("text:page-number", "text:page-count", "text:page-continuation", "text:chapter"),
        *("text:date", "text:time", "text:file-name", "text:sheet-name", "text:template-name"),
        *("text:title", "text:subject", "text:description", "text:keywords"),
        *("text:author-name", "text:author-initials", "text:initial-creator", "text:creator"),
        *("text:creation-date", "text:creation-time", "text:modification-date"),
        *("text:modification-time", "text:print-date", "text:print-time", "text:printed-by"),
        *("text:editing-cycles", "text:editing-duration", "text:user-defined"),
        *("text:variable-get", "text:user-field-get", "text:sequence", "text:word-count"),
        *("text:character-count", "text:paragraph-count", "text:sender-firstname"),
        *("text:sender-lastname", "text:sender-initials", "text:sender-company"),
    }
)
"""Left out when the master styles are read (a flat document holds its body beside them)."""
_OUTSIDE_META = frozenset(
    {
        *("office:body", "office:master-styles", "office:settings", "office:scripts"),
        *("office:font-face-decls", "office:styles", "office:automatic-styles"),
        "office:binary-data",
    }
)
"""Left out when the title is read from the metadata."""
_MAX_SPACES = 1024
"""Most spaces one ``text:s`` element expands to."""
_MATH_TOKENS = frozenset({"math:mi", "math:mn", "math:mo", "math:mtext", "math:ms"})


def _inline(paragraph: Element) -> tuple[str, list[Element]]:
    """A paragraph's own text, and the paragraphs and tables nested inside it, in order."""
    parts: list[str] = [paragraph.text or ""]
    nested: list[Element] = []
    stack: list[Element | str] = list(reversed(paragraph))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if item.tail:
            stack.append(item.tail)
        tag = item.tag
        if tag in _PARA or tag == "table:table":
            nested.append(item)
        elif tag == _ANNOTATION:
            pass  # (read apart; the text after it is its tail, already taken)
        elif tag == "text:s":
            count = item.get("text:c", "1")
            parts.append(" " * min(int(count) if count.isdigit() else 1, _MAX_SPACES))
        elif tag == "text:tab":
            parts.append("\t")
        elif tag == "text:line-break":
            parts.append("\n")
        else:
            parts.append(item.text or "")
            stack.extend(reversed(item))
    return "".join(parts), nested


def _outer(elem: Element, rows: bool) -> list[Element]:
    """The outermost paragraphs (and rows, if ``rows``) inside ``elem``, in order."""
    found: list[Element] = []
    stack = list(reversed(elem))
    while stack:
        el = stack.pop()
        if el.tag in _PARA or (rows and el.tag == _ROW):
            found.append(el)
        elif el.tag != _ANNOTATION:
            stack.extend(reversed(el))
    return found


def _annotations(block: Element, limit: int, page: bool = False) -> list[str]:
    """The lines of the annotations (comments) a block holds, in order (their author and
    date left out); ``page``: the block is a page's annotation itself."""
    return [
        line
        for note in ([block] if page else block.iter(_ANNOTATION))
        for paragraph in _outer(note, False)
        for line in _lines(paragraph, False, limit)
        if line.strip()
    ]


def _lines(block: Element, rows: bool, limit: int) -> Iterator[str]:
    """The lines of a block: paragraphs, then what they nest; rows when ``rows``."""
    pending = [block]
    while pending:
        el = pending.pop()
        if el.tag in _PARA:
            text, inner = _inline(el)
            yield text
            pending.extend(reversed(inner))
        elif rows and el.tag == _ROW:
            yield from _row_lines(el, limit)
        else:
            pending.extend(reversed(_outer(el, rows)))


def _cell_text(cell: Element, limit: int) -> str:
    text = " ".join(s for s in _lines(cell, False, limit) if s.strip())
    if not text:
        text = cell.get("office:string-value") or cell.get("office:value") or ""
    return text.replace("\t", " ").replace("\n", " ")


def _repeat(elem: Element, attr: str) -> int:
    value = elem.get(attr, "1")
    return max(1, int(value)) if value.isdigit() else 1


def _row_lines(row: Element, limit: int) -> Iterator[str]:
    """A row as one tab-separated line, as many times as it is repeated (none if blank)."""
    cells: list[str] = []
    gap = 0
    for cell in row:
        if cell.tag not in _CELLS:
            continue
        times = _repeat(cell, "table:number-columns-repeated")
        value = _cell_text(cell, limit)
        if not value.strip():
            gap += times
            continue
        if len(cells) + gap + times > limit:
            raise LimitExceeded("parts_per_block", f"a row of more than {limit} cells")
        cells.extend([""] * gap + [value] * times)
        gap = 0
    if cells:
        line = "\t".join(cells)
        for _ in range(_repeat(row, "table:number-rows-repeated")):
            yield line


def formula_text(math: Element) -> str:
    """A formula as one line: its StarMath annotation when present, else its MathML tokens."""
    for el in math.iter("math:annotation"):
        if el.text and el.text.strip():
            return " ".join(el.text.split())
    tokens = (el.text.strip() for el in math.iter() if el.tag in _MATH_TOKENS and el.text)
    return " ".join(t for t in tokens if t)


_MARKS = {"sheet": "table:table", "slide": "draw:page", "page": "draw:page"}
"""Kinds whose units are numbered, and the start tag that opens each unit."""


class OdfReader:
    """Reads one OpenDocument family, zipped or flat.

    ``kind`` is ``text``, ``sheet`` (a ``# sheetN`` per table), ``slide`` (``# slideN`` per
    presentation page), ``page`` (``# pageN`` per drawing page), ``chart`` (titles, labels
    and the data table) or ``formula`` (one line per formula).
    """

    version = 7
    """5: annotations (comments) read, after their unit's text under ``# comments``. 6: the
    embedded objects of a zipped document (charts, formulas, documents). 7: text in the
    Symbol font as the characters its glyphs show (:class:`_SymbolStyles`)."""
    tools: tuple[str, ...] = ()

    def __init__(self, name: str, mimes: frozenset[str], kind: str) -> None:
        self.name = name
        self.mimes = mimes
        self.kind = kind
        """One of ``text sheet slide page chart formula``."""

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's paragraphs and rows into ``sink``."""
        limit = ctx.limits.parts_per_block
        pages = 0

        header = ""  # a unit's "# sheetN" line waits for its first line of text
        comments: list[str] = []  # a unit's annotations, said after its text
        drawn: list[str] = []  # a sheet's objects (its shapes come before its rows)

        def emit(line: str) -> None:
            nonlocal header
            if header:
                sink.line(header)
                header = ""
            sink.line(line)

        def say_after() -> None:
            for line in drawn:
                emit(line)
            drawn.clear()
            if comments:
                emit("# comments")
                for line in comments:
                    emit(line)
                comments.clear()

        def on_block(block: Element) -> None:
            if block.tag == "style:style":
                symbols.note(block)
                return
            symbols.recode(block)
            if block.tag == "math:math":
                line = formula_text(block)
                if line:
                    emit(line)
                return
            if block.tag == _PAGE_ANNOTATION:
                comments.extend(_annotations(block, limit, page=True))
                return
            comments.extend(_annotations(block, limit))
            for line in _lines(block, True, limit):
                if line.strip():
                    emit(line)
            for held in block.iter(_OBJECT):
                for line in objects.lines(held.get(_HREF, "")):
                    emit(line)

        def on_start(tag: str, attrs: dict[str, str]) -> None:
            nonlocal pages, header
            if tag == "style:font-face":
                symbols.face(attrs)
                return
            if tag == _OBJECT:
                found = objects.lines(attrs.get(_HREF, ""))
                if self.kind == "sheet":  # (its shapes come before its rows: said after them)
                    drawn.extend(found)
                else:  # (among a page's shapes)
                    for line in found:
                        emit(line)
                return
            say_after()  # (the unit before's)
            pages += 1
            header = f"# {self.kind}{pages}"

        mark = _MARKS.get(self.kind)
        starts = frozenset({mark, _OBJECT}) if mark else frozenset({_OBJECT})
        starts |= {"style:font-face"}
        blocks = _PARA | {_ROW, "math:math", _PAGE_ANNOTATION, "style:style"}
        symbols = _SymbolStyles()
        rules = Rules(_NS, blocks, on_block, starts, on_start, _SKIP)
        budget = XmlBudget(ctx.limits)
        objects = _Objects(path, ctx, budget)
        try:
            has_body = _parse_part(path, ctx, "content.xml", rules, budget)
        finally:
            objects.close()
        say_after()
        if not len(sink):
            # a template: its text is its title and what its master styles hold
            for line in _template_lines(path, ctx, budget, self.kind != "sheet"):
                sink.line(line)
        return ReadInfo(extractor=self.name, pages=pages if mark and has_body else None)


_HREF = "xlink:href"


class _Objects:
    """The embedded objects of a zipped document, each read where a ``draw:object`` names it
    (once: its own ``content.xml``, a chart's title, axes' titles and data table, a formula,
    a document's paragraphs and rows, without comments). The package is opened again at the
    first object, most documents having none; an object in a folder the manifest encrypts, or
    outside the package, is left out, and so are the objects an object names in turn."""

    def __init__(self, path: Path, ctx: ReadContext, budget: XmlBudget) -> None:
        self.path = path
        self.ctx = ctx
        self.budget = budget
        self.zf: SafeZip | None = None
        self.opened = False
        self.seen: set[str] = set()
        self.encrypted: frozenset[str] = frozenset()

    def lines(self, href: str) -> list[str]:
        """The non-blank lines of the object ``href`` names (none if it was read already)."""
        member = _object_member(href)
        zf = self._package() if member and member not in self.seen else None
        if zf is None or not zf.has(member) or member in self.encrypted:
            return []
        self.seen.add(member)
        limit = self.ctx.limits.parts_per_block
        lines: list[str] = []

        def on_block(block: Element) -> None:
            if block.tag == "math:math":
                lines.append(formula_text(block))
            else:
                lines.extend(_lines(block, True, limit))

        blocks = _PARA | {_ROW, "math:math"}
        rules = Rules(_NS, blocks, on_block, skip=_SKIP | {_ANNOTATION, _PAGE_ANNOTATION})
        with zf.open(member) as stream:
            parse(stream, rules, self.budget)
        return [line for line in lines if line.strip()]

    def _package(self) -> SafeZip | None:
        """The document's package, opened once; None when the document is flat XML."""
        if not self.opened:
            self.opened = True
            with open(self.path, "rb") as fh:
                zipped = fh.read(4).startswith(b"PK")
            if zipped:
                self.zf = SafeZip(self.path, self.ctx.limits)
                self.encrypted = encrypted_parts(self.zf, self.budget)
        return self.zf

    def close(self) -> None:
        """Close the package, if an object opened it."""
        if self.zf is not None:
            self.zf.close()


def _object_member(href: str) -> str:
    """The ``content.xml`` of the object folder a relative ``href`` names ("" for a link
    elsewhere: a URL, an absolute path, a path up out of the package)."""
    name = href.removeprefix("./").strip("/") if not href.startswith("/") else ""
    if not name or ":" in name or ".." in name.split("/"):
        return ""
    return f"{name}/content.xml"


def _parse_part(path: Path, ctx: ReadContext, member: str, rules: Rules, budget: XmlBudget) -> bool:
    """Parse ``member`` of a zipped document, or the flat document itself, with ``rules``;
    False when a zipped document has no such member."""
    try:
        with open(path, "rb") as fh:
            zipped = fh.read(4).startswith(b"PK")
            if not zipped:
                fh.seek(0)
                parse(fh, rules, budget)
                return True
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
    with SafeZip(path, ctx.limits) as zf:
        if member == "content.xml":
            _check_parts(zf, budget)
        if not zf.has(member):
            return False
        with zf.open(member) as stream:
            parse(stream, rules, budget)
    return True


def _template_lines(path: Path, ctx: ReadContext, budget: XmlBudget, masters: bool) -> list[str]:
    """The title and (``masters``) the master styles' lines of a document whose body gave no
    text: each line once, in order, stripped (a field left out may leave a space). A
    spreadsheet's master styles are only its print headers and footers, which LibreOffice
    gives every sheet ("Page" and the sheet's name): an empty sheet is no text."""
    limit = ctx.limits.parts_per_block
    lines: list[str] = []

    def on_title(block: Element) -> None:
        lines.append(" ".join("".join(block.itertext()).split()))

    def on_master(block: Element) -> None:
        lines.extend(line.strip() for line in _lines(block, True, limit))

    title = Rules(_NS, frozenset({"dc:title"}), on_title, skip=_OUTSIDE_META)
    _parse_part(path, ctx, "meta.xml", title, budget)
    if masters:
        styles = Rules(_NS, _PARA, on_master, skip=_OUTSIDE_MASTERS)
        _parse_part(path, ctx, "styles.xml", styles, budget)
    return list(dict.fromkeys(line for line in lines if line))


def _check_parts(zf: SafeZip, budget: XmlBudget) -> None:
    """Refuse a zipped document that is encrypted or has no part that could hold text."""
    if _content_encrypted(zf, budget):
        raise EncryptedFile("the document is password-protected")
    if not (zf.has("content.xml") or zf.has("styles.xml")):
        raise CorruptFile("neither content.xml nor styles.xml: not an OpenDocument")


def _content_encrypted(zf: SafeZip, budget: XmlBudget) -> bool:
    """Whether the manifest gives ``content.xml`` or ``styles.xml`` encryption data (a
    password was set)."""
    return not encrypted_parts(zf, budget).isdisjoint(("content.xml", "styles.xml"))


def encrypted_parts(zf: SafeZip, budget: XmlBudget) -> frozenset[str]:
    """The members a package's OpenDocument manifest (``META-INF/manifest.xml``) gives
    encryption data: encrypted with the package's password, no text without it (none when
    there is no manifest)."""
    if not zf.has(_MANIFEST):
        return frozenset()
    current = ""
    encrypted: set[str] = set()

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal current
        if tag == "manifest:file-entry":
            current = attrs.get("manifest:full-path", "")
        elif current:
            encrypted.add(current)

    starts = frozenset({"manifest:file-entry", "manifest:encryption-data"})
    data = zf.read(_MANIFEST)
    try:
        parse_bytes(data, Rules(_NS, starts=starts, on_start=on_start), budget)
    except CorruptFile:  # (a manifest that never declares its prefix: OOo 1.x's, Tika's)
        return _scanned(data)
    return frozenset(encrypted)


_ENTRY = re.compile(rb"<(?:[\w.-]+:)?file-entry\b")
_FULL_PATH = re.compile(rb"""full-path\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_ENCRYPTION = re.compile(rb"<(?:[\w.-]+:)?encryption-data\b")


def _scanned(data: bytes) -> frozenset[str]:
    """:func:`encrypted_parts` of a manifest that is no namespace-well-formed XML, by its
    text: each file entry's path, when encryption data follows before the next entry."""
    found: set[str] = set()
    for entry in _ENTRY.split(data)[1:]:
        tag, _, rest = entry.partition(b">")
        path = _FULL_PATH.search(tag)
        if path is not None and _ENCRYPTION.search(rest):
            raw = path.group(1) if path.group(1) is not None else path.group(2)
            # (html's, not xml.sax's: that one imports urllib, http and email at the start)
            found.add(html.unescape(raw.decode("utf-8", "replace")))
    return frozenset(found)


READERS = (
    OdfReader("odt", M.ODF_TEXT, "text"),
    OdfReader("ods", M.ODF_SHEET, "sheet"),
    OdfReader("odp", M.ODF_SLIDE, "slide"),
    OdfReader("odg", M.ODF_DRAWING, "page"),
    OdfReader("odc", M.ODF_CHART, "chart"),
    OdfReader("odf", M.ODF_FORMULA, "formula"),
)
