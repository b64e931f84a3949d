"""Reviewers' comments in Word documents and cells' comments in Excel workbooks.

Neither was read: a contract's review comments, a figure's note on its cell, were nowhere in
the text (markitdown's and python-docx's samples in ``../shared/corpus``). They come after the
rest, under a ``# comments`` line: they are no body text.
"""

from __future__ import annotations

from pathlib import Path

from engine import mimes as M
from engine.limits import Limits
from engine.readers.base import ReadContext, TextSink
from engine.readers.ooxml import DocxReader, XlsxReader
from fixtures.gen import office as O
from fixtures.gen.common import write_zip

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
X = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PR = "http://schemas.openxmlformats.org/package/2006/relationships"


def read(reader: DocxReader | XlsxReader, path: Path, mime: str) -> str:
    sink = TextSink(1_000_000)
    reader.read(path, ReadContext(mime=mime, limits=Limits()), sink)
    return sink.getvalue()


def test_a_word_document_s_comments_come_last_under_their_heading(tmp_path: Path) -> None:
    members = O.docx_members()
    members["word/comments.xml"] = (
        f'<?xml version="1.0"?><w:comments xmlns:w="{W}">'
        f'<w:comment w:id="0" w:author="Ann">{O.w_par("Check this clause.")}</w:comment>'
        f'<w:comment w:id="1" w:author="Bo">{O.w_par("Agreed")}{O.w_par("<w:r/>")}'
        f"{O.w_par('Second paragraph')}</w:comment></w:comments>"
    )
    text = read(DocxReader(), write_zip(tmp_path, "c.docx", members), M.DOCX)
    assert text == O.DOCX_TEXT + "# comments\nCheck this clause.\nAgreed\nSecond paragraph\n"


def test_a_comments_part_with_no_text_says_nothing(tmp_path: Path) -> None:
    members = O.docx_members()
    members["word/comments.xml"] = f'<?xml version="1.0"?><w:comments xmlns:w="{W}"/>'
    members["word/commentsExtended.xml"] = f'<?xml version="1.0"?><w:x xmlns:w="{W}"/>'
    assert read(DocxReader(), write_zip(tmp_path, "e.docx", members), M.DOCX) == O.DOCX_TEXT


def test_a_sheet_s_cell_comments_come_after_its_rows(tmp_path: Path) -> None:
    members = O.xlsx_members()
    members["xl/worksheets/_rels/sheet2.xml.rels"] = (  # (the first sheet's part)
        f'<?xml version="1.0"?><Relationships xmlns="{PR}"><Relationship Id="rId1" '
        f'Type="{R}/comments" Target="../comments1.xml"/></Relationships>'
    )
    members["xl/comments1.xml"] = (
        f'<?xml version="1.0"?><comments xmlns="{X}"><authors><author>Ann</author></authors>'
        '<commentList><comment ref="B2" authorId="0"><text><r><t>Ann:</t></r>'
        "<r><t>\nfrom the audit</t></r></text></comment>"
        '<comment ref="C9" authorId="0"><text><t>  </t></text></comment>'
        "</commentList></comments>"
    )
    text = read(XlsxReader(), write_zip(tmp_path, "n.xlsx", members), M.XLSX)
    assert text == O.XLSX_TEXT.replace("# sheet2", "# comments\nB2\tAnn: from the audit\n# sheet2")


def test_a_slide_s_comments_older_and_threaded_come_after_its_notes(tmp_path: Path) -> None:
    import io
    import zipfile

    from engine.readers.pptx import PptxReader

    with zipfile.ZipFile(io.BytesIO(O.pptx_bytes())) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    p = "http://schemas.openxmlformats.org/presentationml/2006/main"
    p188 = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    members["ppt/comments/comment1.xml"] = (
        f'<?xml version="1.0"?><p:cmLst xmlns:p="{p}"><p:cm authorId="0" idx="1">'
        '<p:pos x="10" y="10"/><p:text>Older   comment</p:text></p:cm></p:cmLst>'
    )
    members["ppt/comments/modernComment_1.xml"] = (
        f'<?xml version="1.0"?><p188:cmLst xmlns:p188="{p188}" xmlns:a="{a}">'
        '<p188:cm id="{1}"><p188:txBody><a:bodyPr/><a:p><a:r><a:t>Threaded one</a:t></a:r>'
        "</a:p></p188:txBody><p188:replyLst><p188:reply><p188:txBody><a:p><a:r>"
        "<a:t>A reply</a:t></a:r></a:p></p188:txBody></p188:reply></p188:replyLst>"
        "</p188:cm></p188:cmLst>"
    )
    rels = members["ppt/slides/_rels/slide1.xml.rels"]
    assert isinstance(rels, bytes)
    extra = (
        f'<Relationship Id="rIdC1" Type="{R}/comments" Target="../comments/comment1.xml"/>'
        '<Relationship Id="rIdC2" Type="http://schemas.microsoft.com/office/2018/10/'
        'relationships/comments" Target="../comments/modernComment_1.xml"/>'
    )
    members["ppt/slides/_rels/slide1.xml.rels"] = rels.replace(
        b"</Relationships>", extra.encode() + b"</Relationships>"
    )
    sink = TextSink(1_000_000)
    path = write_zip(tmp_path, "c.pptx", members)
    PptxReader().read(path, ReadContext(mime=M.PPTX, limits=Limits()), sink)
    said = "# comments\nOlder comment\nThreaded one\nA reply\n"
    assert sink.getvalue() == O.PPTX_TEXT.replace("# slide2", f"{said}# slide2")


def test_an_opendocument_s_annotations_come_after_their_unit_s_text(tmp_path: Path) -> None:
    """A spreadsheet's cell comments after that sheet's rows, the author and date left out;
    a text's after the text (the generated sample's: ``O.ODT_TEXT``)."""
    from engine.readers.odf import READERS as ODF

    note = (
        "<office:annotation><dc:creator>Ann</dc:creator><dc:date>2024-01-02</dc:date>"
        "<text:p>Check</text:p><text:p>this figure</text:p></office:annotation>"
    )
    body = (
        '<office:spreadsheet><table:table table:name="One"><table:table-row>'
        f'<table:table-cell office:value-type="string">{note}<text:p>12</text:p>'
        '</table:table-cell></table:table-row></table:table><table:table table:name="Two">'
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Only</text:p>'
        "</table:table-cell></table:table-row></table:table></office:spreadsheet>"
    )
    path = write_zip(tmp_path, "n.ods", O.odf_members(O.M_ODS, body))
    sink = TextSink(1_000_000)
    ODF[1].read(path, ReadContext(mime=M.ODS, limits=Limits()), sink)
    assert sink.getvalue() == "# sheet1\n12\n# comments\nCheck\nthis figure\n# sheet2\nOnly\n"


def test_a_presentation_page_s_comments_are_comments_not_slide_text(tmp_path: Path) -> None:
    """LibreOffice's page comments (``officeooo:annotation``) were read as the slide's text."""
    from engine.readers.odf import READERS as ODF

    page = (
        '<draw:page draw:name="p{n}"><draw:frame><draw:text-box><text:p>Slide {n}</text:p>'
        '</draw:text-box></draw:frame><officeooo:annotation xmlns:officeooo="http://openoffice'
        '.org/2009/office"><dc:creator>Ann</dc:creator><dc:date>2024-01-02</dc:date>'
        "<text:p>Comment on {n}</text:p></officeooo:annotation></draw:page>"
    )
    body = f"<office:presentation>{page.format(n=1)}{page.format(n=2)}</office:presentation>"
    path = write_zip(tmp_path, "p.odp", O.odf_members(O.M_ODP, body))
    sink = TextSink(1_000_000)
    ODF[2].read(path, ReadContext(mime=M.ODP, limits=Limits()), sink)
    assert sink.getvalue() == (
        "# slide1\nSlide 1\n# comments\nComment on 1\n# slide2\nSlide 2\n# comments\nComment on 2\n"
    )
