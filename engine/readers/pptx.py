"""PowerPoint (PPTX) presentations through python-pptx, opened only after the zip checks.

python-pptx inflates every member when it opens a package, so the file never reaches it
directly. Every XML part is read under the :mod:`zipsafe` caps and parsed once by
:mod:`xmlsafe` (no DTD, UTF-8/16, ``xml_bytes``, ``parts_per_block`` in a DrawingML paragraph
or table row); python-pptx is then given a skeleton package holding those parts and empty
media, which are never inflated at all. Slideshow and template packages are presented to it as
ordinary presentations.

Output: a ``# slideN`` line per slide in presentation order, then every non-blank paragraph
of its shapes (groups opened, table rows tab-separated, line breaks as ``\\n``), then the
paragraphs of its notes. ``pages`` is the number of slides.
"""

from __future__ import annotations

import importlib.util
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine.errors import CorruptFile, ReadFailure
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
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
    if name == "[Content_Types].xml":
        for other in _OTHER_MAINS:
            data = data.replace(other, _MAIN)
    return data


def skeleton(zf: SafeZip, budget: XmlBudget) -> bytes:
    """A stored zip with the package's checked XML parts and every other member empty.

    Media are never inflated, so they are not checked either: a well-compressed EMF picture
    is no reason to refuse the slides.
    """
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for name in zf.names():
            if name.endswith("/"):
                continue
            dst.writestr(name, _xml_part(zf, name, budget) if _is_xml(name) else b"")
    return out.getvalue()


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape, group members in place (iterative: deep groups cannot recurse)."""
    from pptx.shapes.group import GroupShape

    stack = list(reversed(list(shapes)))
    while stack:
        shape = stack.pop()
        if isinstance(shape, GroupShape):
            stack.extend(reversed(list(shape.shapes)))
            continue
        yield shape


def _shape_lines(shape: Any) -> Iterator[str]:
    if getattr(shape, "has_text_frame", False):
        for paragraph in shape.text_frame.paragraphs:
            yield paragraph.text.replace("\v", "\n")
    if getattr(shape, "has_table", False):
        for row in shape.table.rows:
            yield "\t".join(_cell_text(cell) for cell in row.cells)


def _cell_text(cell: Any) -> str:
    return " ".join(str(cell.text).split("\n")).replace("\v", " ").replace("\t", " ")


def _slide_lines(slide: Any) -> Iterator[str]:
    for shape in _shapes(slide.shapes):
        yield from _shape_lines(shape)
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        if frame is not None:
            for paragraph in frame.paragraphs:
                yield paragraph.text.replace("\v", "\n")


def _open(data: bytes) -> Any:
    from pptx import Presentation

    return Presentation(io.BytesIO(data))


def _write_slides(prs: Any, sink: TextSink) -> int:
    count = 0
    for count, slide in enumerate(prs.slides, start=1):
        sink.line(f"# slide{count}")
        for line in _slide_lines(slide):
            if line.strip():
                sink.line(line)
    return count


class PptxReader:
    """Reads PowerPoint presentations (PPTX, PPTM, PPSX, POTX)."""

    name = "pptx"
    version = 1
    mimes = frozenset({M.PPTX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each slide's paragraphs and notes into ``sink``."""
        with SafeZip(path, ctx.limits) as zf:
            data = skeleton(zf, XmlBudget(ctx.limits))
        try:
            slides = _write_slides(_open(data), sink)
        except (ReadFailure, TextCapReached):
            raise
        except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors...
            raise CorruptFile(f"python-pptx cannot read it: {type(exc).__name__}") from exc
        return ReadInfo(extractor=self.name, pages=slides)


READERS = (PptxReader(),)
