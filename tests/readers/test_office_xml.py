"""Office documents saved as one XML file: Word 2003 XML, Excel 2003 XML and Flat OPC.

Each was read as an XML file, markup and all (Tika's ``testWORD_2003ml.xml``: 126,000
characters of font tables, style names and base64 pictures around a page of text, judged
``good``); each is read as its format's document now.
"""

from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path

from engine import mimes as M
from engine.detect import detect
from engine.readers.base import ReadContext, TextSink
from engine.readers.officexml import Excel2003Reader, FlatOpcReader, Word2003Reader
from fixtures.gen import office as O

W = "http://schemas.microsoft.com/office/word/2003/wordml"
WORD_2003 = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<?mso-application progid="Word.Document"?>
<w:wordDocument xmlns:w="{W}" xmlns:wx="http://schemas.microsoft.com/office/word/2003/auxHint"
 xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"
 xmlns:aml="http://schemas.microsoft.com/aml/2001/core" xml:space="preserve">
<o:DocumentProperties><o:Title>Properties title</o:Title></o:DocumentProperties>
<w:fonts><w:font w:name="Calibri"/></w:fonts>
<w:styles><w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>
<w:body><wx:sect>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Report title</w:t></w:r></w:p>
<w:p><w:r><w:t>Hello </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>world</w:t></w:r><w:r><w:tab/>
<w:t>tabbed</w:t><w:br/><w:t>broken</w:t></w:r></w:p>
<w:p><w:r><w:t>Kept</w:t></w:r><aml:annotation w:type="Word.Comment"><aml:content><w:p><w:r>
<w:t>Reviewer says</w:t></w:r></w:p></aml:content></aml:annotation>
<aml:annotation w:type="Word.Deletion"><aml:content><w:r>
<w:delText>Deleted</w:delText></w:r></aml:content></aml:annotation><w:r><w:fldChar
 w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:fldChar
 w:fldCharType="end"/></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell A</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r>
<w:t>Cell B</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><w:pict><w:binData w:name="wordml://1.png">iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB</w:binData>
<v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>In the box</w:t></w:r></w:p></w:txbxContent>
</v:textbox></v:shape></w:pict></w:r><w:r><w:t>Holder</w:t></w:r></w:p>
<w:p><w:r><w:t>Noted</w:t></w:r><w:r><w:footnote><w:p><w:r><w:t>The footnote</w:t></w:r></w:p>
</w:footnote></w:r></w:p>
<w:p><w:pPr><w:sectPr><w:hdr w:type="odd"><w:p><w:r><w:t>Page header</w:t></w:r></w:p></w:hdr>
<w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:pPr><w:r><w:t>Café ✓</w:t></w:r></w:p>
</wx:sect></w:body></w:wordDocument>
"""
WORD_2003_TEXT = (
    "Report title\nHello world\ttabbed\nbroken\nKept\nCell A\nCell B\nHolder\nIn the box\n"
    "Noted\nThe footnote\nCafé ✓\nPage header\n# comments\nReviewer says\n"
)

SS = "urn:schemas-microsoft-com:office:spreadsheet"
EXCEL_2003 = f"""<?xml version="1.0"?>
<?mso-application progid="Excel.Sheet"?>
<Workbook xmlns="{SS}" xmlns:ss="{SS}" xmlns:o="urn:schemas-microsoft-com:office:office"
 xmlns:html="http://www.w3.org/TR/REC-html40">
<o:DocumentProperties><o:Author>Someone</o:Author></o:DocumentProperties>
<Styles><Style ss:ID="Default" ss:Name="Normal"/></Styles>
<Worksheet ss:Name="Data"><Table>
<Row><Cell><Data ss:Type="String">Name</Data></Cell><Cell><Data ss:Type="String">When</Data>
</Cell><Cell ss:Index="4"><Data ss:Type="Number">12.5</Data></Cell></Row>
<Row><Cell ss:MergeAcross="1"><Data ss:Type="String">Merged</Data></Cell><Cell>
<Data ss:Type="DateTime">2024-01-02T03:04:05.000</Data></Cell><Cell><Data ss:Type="DateTime"
>2024-01-02T00:00:00.000</Data><Comment><Data>A note</Data></Comment></Cell></Row>
<Row><Cell><ss:Data ss:Type="String"><html:B>Rich</html:B> text</ss:Data></Cell><Cell>
<Data ss:Type="Boolean">1</Data></Cell><Cell><Data ss:Type="Boolean">0</Data></Cell></Row>
<Row ss:Index="9"/></Table></Worksheet>
<Worksheet ss:Name="Empty"><Table/></Worksheet>
<Worksheet ss:Name="Third"><Table><Row><Cell><Data ss:Type="String">Last</Data></Cell></Row>
</Table></Worksheet></Workbook>
"""
EXCEL_2003_TEXT = (
    "# sheet1\nName\tWhen\t\t12.5\nMerged\t\t2024-01-02 03:04:05\t2024-01-02\n"
    "Rich text\tTRUE\tFALSE\n# comments\nD2\tA note\n# sheet2\n# sheet3\nLast\n"
)

PKG = "http://schemas.microsoft.com/office/2006/xmlPackage"


def flat(package: bytes, progid: str) -> str:
    """A package as Word or PowerPoint saves it as one XML file: each XML part inline, each
    other part in base64."""
    parts = []
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        types = zf.read("[Content_Types].xml").decode()
        defaults = dict(re.findall(r'<Default Extension="([^"]+)" ContentType="([^"]+)"', types))
        overrides = dict(re.findall(r'<Override PartName="/([^"]+)" ContentType="([^"]+)"', types))
        for name in zf.namelist():
            if name == "[Content_Types].xml":
                continue
            data = zf.read(name)
            kind = overrides.get(name) or defaults.get(name.rsplit(".", 1)[-1], "")
            if name.endswith((".xml", ".rels")):
                body = re.sub(rb"^<\?xml[^>]*\?>\s*", b"", data).decode("utf-8")
                held = f"<pkg:xmlData>{body}</pkg:xmlData>"
            else:
                held = f"<pkg:binaryData>{base64.encodebytes(data).decode()}</pkg:binaryData>"
            parts.append(f'<pkg:part pkg:name="/{name}" pkg:contentType="{kind}">{held}</pkg:part>')
    return (
        f'<?xml version="1.0" standalone="yes"?><?mso-application progid="{progid}"?>'
        f'<pkg:package xmlns:pkg="{PKG}">{"".join(parts)}</pkg:package>'
    )


def _zip(members: dict[str, bytes | str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def read(reader: object, path: Path) -> str:
    sink = TextSink(1_000_000)
    mime = next(iter(reader.mimes))  # type: ignore[attr-defined]
    reader.read(path, ReadContext(mime=mime), sink)  # type: ignore[attr-defined]
    return sink.getvalue()


def test_a_word_2003_document_is_read_as_a_document(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text(WORD_2003, encoding="utf-8")
    assert detect(path) == M.WORD_2003_XML
    assert read(Word2003Reader(), path) == WORD_2003_TEXT


def test_an_excel_2003_workbook_is_read_as_sheets(tmp_path: Path) -> None:
    path = tmp_path / "book.xml"
    path.write_text(EXCEL_2003, encoding="utf-8")
    assert detect(path) == M.EXCEL_2003_XML
    assert read(Excel2003Reader(), path) == EXCEL_2003_TEXT


def test_a_flat_word_package_is_read_as_its_document(tmp_path: Path) -> None:
    path = tmp_path / "flat.xml"
    path.write_text(flat(_zip(O.docx_members()), "Word.Document"), encoding="utf-8")
    assert detect(path) == M.FLAT_OPC
    assert read(FlatOpcReader(), path) == O.DOCX_TEXT


def test_a_flat_powerpoint_package_is_read_as_its_slides(tmp_path: Path) -> None:
    path = tmp_path / "deck.xml"
    path.write_text(flat(O.pptx_bytes(), "PowerPoint.Show"), encoding="utf-8")
    assert detect(path) == M.FLAT_OPC
    assert read(FlatOpcReader(), path) == O.PPTX_TEXT


def test_other_xml_is_still_xml(tmp_path: Path) -> None:
    path = tmp_path / "data.xml"
    path.write_text('<?xml version="1.0"?><Workbook><Row>not Excel</Row></Workbook>')
    assert detect(path) == M.XML
    path.write_text(f'<?xml version="1.0"?><package xmlns="{PKG}x"><part/></package>')
    assert detect(path) == M.XML
