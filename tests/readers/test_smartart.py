"""SmartArt diagrams and sheet drawings in Word, PowerPoint and Excel (XLSX, XLSB) files.

A SmartArt diagram (an org chart, a process, a cycle) keeps its text in a part of its own,
the diagram's data model, that the document names by a relationship; a sheet's text boxes
and shapes are in its drawing part. Read without them, every word of a diagram or a text box
was missing (python-docx's, python-pptx's and Tika's samples in ``../shared/corpus``).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.limits import Limits
from engine.readers.base import ReadContext, TextSink
from engine.readers.fixedzip import XlsbReader
from engine.readers.ooxml import DocxReader, XlsxReader
from engine.readers.pptx import PptxReader
from fixtures.gen import formats as F
from fixtures.gen import office as O
from fixtures.gen.common import write_zip

DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PR = "http://schemas.openxmlformats.org/package/2006/relationships"
XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
NODES = [["Plan"], ["Build", "and test"], ["Ship it"]]
DIAGRAM_TEXT = "Plan\nBuild\nand test\nShip it\n"


def _body(*paragraphs: str) -> str:
    return (
        "<dgm:t><a:bodyPr/>"
        + "".join(
            f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" if p else "<a:p><a:endParaRPr/></a:p>"
            for p in paragraphs
        )
        + "</dgm:t>"
    )


def data_model(nodes: list[list[str]]) -> str:
    """A diagram's data model: the document point, a node a list of paragraphs, the
    connections between them (empty text) and a presentation point with its layout's text."""
    points = ['<dgm:pt modelId="0" type="doc"><dgm:prSet/></dgm:pt>']
    for n, paragraphs in enumerate(nodes, start=1):
        points.append(
            f'<dgm:pt modelId="{n}"><dgm:prSet phldrT="[Text]"/>{_body(*paragraphs)}</dgm:pt>'
        )
        points.append(f'<dgm:pt modelId="p{n}" type="parTrans">{_body("")}</dgm:pt>')
        points.append(f'<dgm:pt modelId="s{n}" type="sibTrans">{_body("")}</dgm:pt>')
    points.append(f'<dgm:pt modelId="x" type="pres">{_body("layout text")}</dgm:pt>')
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><dgm:dataModel xmlns:dgm="{DGM}" xmlns:a="{A}">'
        f"<dgm:ptLst>{''.join(points)}</dgm:ptLst><dgm:cxnLst/></dgm:dataModel>"
    )


def rel_ids(rid: str) -> str:
    return (
        f'<a:graphic xmlns:a="{A}"><a:graphicData uri="{DGM}">'
        f'<dgm:relIds xmlns:dgm="{DGM}" xmlns:r="{R}" r:dm="{rid}" r:lo="rIdLo" r:qs="rIdQs"'
        ' r:cs="rIdCs"/></a:graphicData></a:graphic>'
    )


def rels(*targets: tuple[str, str, str]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{R}/{t}" Target="{g}"/>' for i, t, g in targets)
    return f'<?xml version="1.0"?><Relationships xmlns="{PR}">{body}</Relationships>'


def read(reader: object, path: Path, mime: str) -> str:
    sink = TextSink(1_000_000)
    reader.read(path, ReadContext(mime=mime, limits=Limits()), sink)  # type: ignore[attr-defined]
    return sink.getvalue()


def _docx(tmp_path: Path, nodes: list[list[str]]) -> Path:
    drawing = f"<w:r><w:drawing>{rel_ids('rId9')}</w:drawing></w:r>"
    members = O.docx_members(O.w_par("Before", drawing, " after") + O.w_par("Next"))
    members["word/_rels/document.xml.rels"] = rels(
        ("rId1", "header", "header1.xml"),
        ("rId2", "footer", "footer1.xml"),
        ("rId9", "diagramData", "diagrams/data1.xml"),
    )
    members["word/diagrams/data1.xml"] = data_model(nodes)
    return write_zip(tmp_path, "d.docx", members)


def test_a_docx_diagram_is_read_after_the_paragraph_that_holds_it(tmp_path: Path) -> None:
    text = read(DocxReader(), _docx(tmp_path, NODES), M.DOCX)
    assert text == f"Before after\n{DIAGRAM_TEXT}Next\nPage header\nPage footer\n"


def test_a_diagram_whose_part_is_missing_or_unnamed_leaves_the_rest(tmp_path: Path) -> None:
    path = _docx(tmp_path, NODES)
    with zipfile.ZipFile(path) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    del members["word/diagrams/data1.xml"]
    gone = write_zip(tmp_path, "gone.docx", members)
    assert read(DocxReader(), gone, M.DOCX) == "Before after\nNext\nPage header\nPage footer\n"
    members["word/_rels/document.xml.rels"] = rels(("rId1", "header", "header1.xml"))
    unnamed = write_zip(tmp_path, "unnamed.docx", members)
    assert read(DocxReader(), unnamed, M.DOCX) == "Before after\nNext\nPage header\nPage footer\n"


def deck_with_frame(tmp_path: Path, graphic: str, rel: str, part: tuple[str, str, str]) -> Path:
    """The generated deck, its first slide given a graphic frame holding ``graphic`` (its
    relationship id ``rIdFrame``, of type ``rel``) and the part it names: (name under
    ``ppt/``, content type, XML)."""
    with zipfile.ZipFile(io.BytesIO(O.pptx_bytes())) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    name, kind, xml = part
    frame = (
        '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="99" name="Frame 1"/>'
        "<p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>"
        '<p:xfrm><a:off x="0" y="0"/><a:ext cx="10" cy="10"/></p:xfrm>'
        f"{graphic}</p:graphicFrame>"
    )
    slide = members["ppt/slides/slide1.xml"]
    assert isinstance(slide, bytes)
    members["ppt/slides/slide1.xml"] = slide.replace(
        b"</p:spTree>", frame.encode() + b"</p:spTree>"
    )
    slide_rels = members["ppt/slides/_rels/slide1.xml.rels"]
    assert isinstance(slide_rels, bytes)
    extra = f'<Relationship Id="rIdFrame" Type="{R}/{rel}" Target="../{name}"/>'
    members["ppt/slides/_rels/slide1.xml.rels"] = slide_rels.replace(
        b"</Relationships>", extra.encode() + b"</Relationships>"
    )
    members[f"ppt/{name}"] = xml
    types = members["[Content_Types].xml"]
    assert isinstance(types, bytes)
    override = f'<Override PartName="/ppt/{name}" ContentType="{kind}"/>'
    members["[Content_Types].xml"] = types.replace(b"</Types>", override.encode() + b"</Types>")
    return write_zip(tmp_path, "p.pptx", members)


def _pptx(tmp_path: Path, nodes: list[list[str]]) -> Path:
    """The generated deck, its first slide given a graphic frame showing a diagram."""
    kind = "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml"
    part = ("diagrams/data1.xml", kind, data_model(nodes))
    return deck_with_frame(tmp_path, rel_ids("rIdFrame"), "diagramData", part)


def test_a_slide_s_diagram_is_read_among_its_shapes(tmp_path: Path) -> None:
    text = read(PptxReader(), _pptx(tmp_path, NODES), M.PPTX)
    assert text == O.PPTX_TEXT.replace("a\tb\n", f"a\tb\n{DIAGRAM_TEXT}")


def _drawing() -> str:
    """A sheet's drawing: a text box, a diagram, a chart, and alternate content whose
    fallback repeats its choice."""

    def shape(text: str) -> str:
        return (
            f"<xdr:sp><xdr:txBody><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p>"
            "<a:p/></xdr:txBody></xdr:sp>"
        )

    anchors = [
        shape("Box on the sheet"),
        f"<xdr:graphicFrame>{rel_ids('rId1')}</xdr:graphicFrame>",
        f'<xdr:graphicFrame><a:graphic xmlns:a="{A}"><a:graphicData uri="chart"/></a:graphic>'
        "</xdr:graphicFrame>",
        f'<mc:AlternateContent xmlns:mc="{MC}"><mc:Choice Requires="a14">{shape("Chosen")}'
        f"</mc:Choice><mc:Fallback>{shape('Chosen')}</mc:Fallback></mc:AlternateContent>",
    ]
    body = "".join(f"<xdr:twoCellAnchor>{a}<xdr:clientData/></xdr:twoCellAnchor>" for a in anchors)
    return f'<?xml version="1.0"?><xdr:wsDr xmlns:xdr="{XDR}" xmlns:a="{A}">{body}</xdr:wsDr>'


DRAWING_TEXT = f"Box on the sheet\n{DIAGRAM_TEXT}Chosen\n"


def _with_drawing(members: dict[str, bytes | str], sheet: str) -> dict[str, bytes | str]:
    folder, name = sheet.rsplit("/", 1)
    members[f"{folder}/_rels/{name}.rels"] = rels(("rId1", "drawing", "../drawings/drawing1.xml"))
    members["xl/drawings/drawing1.xml"] = _drawing()
    members["xl/drawings/_rels/drawing1.xml.rels"] = rels(
        ("rId1", "diagramData", "../diagrams/data1.xml")
    )
    members["xl/diagrams/data1.xml"] = data_model(NODES)
    return members


def test_an_xlsx_sheet_s_drawings_are_read_after_its_rows(tmp_path: Path) -> None:
    members = _with_drawing(O.xlsx_members(), "xl/worksheets/sheet2.xml")  # (the first sheet)
    text = read(XlsxReader(), write_zip(tmp_path, "x.xlsx", members), M.XLSX)
    assert text == O.XLSX_TEXT.replace("# sheet2", f"{DRAWING_TEXT}# sheet2")


def test_an_xlsb_sheet_s_drawings_are_read_after_its_rows(tmp_path: Path) -> None:
    members = _with_drawing(F.xlsb_members(), "xl/worksheets/sheet2.bin")  # (the blank one)
    text = read(XlsbReader(), write_zip(tmp_path, "x.xlsb", members), M.XLSB)
    assert text == F.XLSB_TEXT.replace("# sheet3", f"# sheet2\n{DRAWING_TEXT}# sheet3")


_WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_WORDS, max_size=3), max_size=6))
def test_every_node_s_paragraphs_in_the_model_s_order(nodes: list[list[str]]) -> None:
    import tempfile
    from xml.sax.saxutils import escape

    escaped = [[escape(p) for p in node] for node in nodes]
    with tempfile.TemporaryDirectory() as tmp:
        text = read(DocxReader(), _docx(Path(tmp), escaped), M.DOCX)
    shown = [p for node in nodes for p in node if p.strip()]
    lines = text.splitlines()
    assert lines[0] == "Before after" and lines[-3:] == ["Next", "Page header", "Page footer"]
    assert "\n".join(lines[1:-3]) == "\n".join(shown)
    assert "layout text" not in text
