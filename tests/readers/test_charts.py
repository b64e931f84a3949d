"""Charts in Word, PowerPoint and Excel (XLSX, XLSB) files.

A chart keeps its text in a part of its own (``charts/chartN.xml``) that the document names
by a relationship (``c:chart r:id``): its title, its series' names, the categories and values
it plots (cached there, whether or not its workbook came with it) and its axes' titles. None
of it was read: a deck of charts read as its slides' other text only (markitdown's
``test.pptx``, Tika's ``testPPT_charts.pptx``, python-pptx's chart samples in
``../shared/corpus``).
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.readers.fixedzip import XlsbReader
from engine.readers.ooxml import DocxReader, XlsxReader
from engine.readers.pptx import PptxReader
from fixtures.gen import formats as F
from fixtures.gen import office as O
from fixtures.gen.common import write_zip
from tests.readers.test_smartart import MC, XDR, A, R, deck_with_frame, read, rels

C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
C15 = "http://schemas.microsoft.com/office/drawing/2012/chart"


def cache(kind: str, points: list[tuple[int, str]]) -> str:
    """A string or number cache (``kind``: str, num) of (index, text) points."""
    pts = "".join(f'<c:pt idx="{i}"><c:v>{v}</c:v></c:pt>' for i, v in points)
    return f'<c:{kind}Cache><c:ptCount val="{len(points)}"/>{pts}</c:{kind}Cache>'


def series(
    name: str,
    categories: list[tuple[int, str]],
    values: list[tuple[int, str]],
    *,
    axes: tuple[str, str] = ("cat", "val"),
    extra: str = "",
) -> str:
    """A ``c:ser``: its name from a cell, its categories as strings, its values as numbers."""
    x, y = axes
    tx = f"<c:tx><c:strRef><c:f>Sheet1!$B$1</c:f>{cache('str', [(0, name)])}</c:strRef></c:tx>"
    cat = f"<c:{x}><c:strRef><c:f>A</c:f>{cache('str', categories)}</c:strRef></c:{x}>"
    val = f"<c:{y}><c:numRef><c:f>B</c:f>{cache('num', values)}</c:numRef></c:{y}>"
    return (
        f'<c:ser><c:idx val="0"/><c:order val="0"/>{tx if name else ""}<c:spPr/>'
        f"{extra}{cat if categories else ''}{val}</c:ser>"
    )


def rich(*paragraphs: str) -> str:
    body = "".join(f"<a:p><a:r><a:t>{p}</a:t></a:r></a:p>" for p in paragraphs)
    return f"<c:tx><c:rich><a:bodyPr/><a:lstStyle/>{body}</c:rich></c:tx>"


def chart(plot: str, *, title: str = "", axis: str = "", kind: str = "barChart") -> str:
    """A chart part: its title (rich text), a plot of ``plot``'s series, an axis titled
    ``axis``, and alternate content whose fallback would repeat a style."""
    head = f"<c:title>{rich(title)}<c:overlay val='0'/></c:title>" if title else ""
    ax = f'<c:valAx><c:axId val="1"/><c:title>{rich(axis)}</c:title></c:valAx>' if axis else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><c:chartSpace xmlns:c="{C}" xmlns:a="{A}" '
        f'xmlns:r="{R}" xmlns:c15="{C15}"><mc:AlternateContent xmlns:mc="{MC}">'
        '<mc:Choice Requires="c14"><c:style val="1"/></mc:Choice><mc:Fallback><c:title>'
        f"{rich('Fallback title')}</c:title></mc:Fallback></mc:AlternateContent>"
        f'<c:chart>{head}<c:autoTitleDeleted val="0"/><c:plotArea><c:layout/><c:{kind}>'
        f'{plot}<c:axId val="1"/></c:{kind}>{ax}</c:plotArea><c:legend/></c:chart>'
        '<c:externalData r:id="rId1"/></c:chartSpace>'
    )


QUARTERS = [(0, "Q1"), (1, "Q2"), (2, "Q3")]
SALES = chart(
    series("North", QUARTERS, [(0, "8.2"), (1, "3.2"), (2, "1.4")])
    + series("South", QUARTERS, [(0, "1"), (2, "2.5")])
    + "<c:extLst><c:ext uri='x'><c15:filteredBarSeries><c15:ser><c:tx><c:v>Hidden</c:v>"
    "</c:tx></c15:ser></c15:filteredBarSeries></c:ext></c:extLst>",
    title="Sales by quarter",
    axis="Millions",
)
SALES_TEXT = "Sales by quarter\n\tNorth\tSouth\nQ1\t8.2\t1\nQ2\t3.2\t\nQ3\t1.4\t2.5\nMillions\n"


def graphic(rid: str) -> str:
    return (
        f'<a:graphic xmlns:a="{A}"><a:graphicData uri="{C}">'
        f'<c:chart xmlns:c="{C}" xmlns:r="{R}" r:id="{rid}"/></a:graphicData></a:graphic>'
    )


def _docx(tmp_path: Path, part: str, *, name: str = "d.docx") -> Path:
    drawing = f"<w:r><w:drawing>{graphic('rId9')}</w:drawing></w:r>"
    members = O.docx_members(O.w_par("Before", drawing, " after") + O.w_par("Next"))
    members["word/_rels/document.xml.rels"] = rels(
        ("rId1", "header", "header1.xml"),
        ("rId2", "footer", "footer1.xml"),
        ("rId9", "chart", "charts/chart1.xml"),
    )
    members["word/charts/chart1.xml"] = part
    members["word/charts/_rels/chart1.xml.rels"] = rels(
        ("rId1", "package", "../embeddings/Microsoft_Excel_Sheet1.xlsx")
    )
    return write_zip(tmp_path, name, members)


def _docx_text(body: str) -> str:
    return f"Before after\n{body}Next\nPage header\nPage footer\n"


def test_a_docx_chart_is_read_after_the_paragraph_that_holds_it(tmp_path: Path) -> None:
    text = read(DocxReader(), _docx(tmp_path, SALES), M.DOCX)
    assert text == _docx_text(SALES_TEXT)
    assert "Hidden" not in text and "Fallback" not in text


def test_a_chart_whose_part_is_missing_or_unnamed_leaves_the_rest(tmp_path: Path) -> None:
    path = _docx(tmp_path, SALES)
    with zipfile.ZipFile(path) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    del members["word/charts/chart1.xml"]
    assert read(DocxReader(), write_zip(tmp_path, "gone.docx", members), M.DOCX) == _docx_text("")
    members["word/charts/chart1.xml"] = SALES
    members["word/_rels/document.xml.rels"] = rels(
        ("rId1", "header", "header1.xml"), ("rId9", "image", "charts/chart1.xml")
    )
    other = write_zip(tmp_path, "other.docx", members)  # (the id names a part of another kind)
    assert read(DocxReader(), other, M.DOCX) == _docx_text("")


def test_categories_of_several_levels_read_as_one_label(tmp_path: Path) -> None:
    levels = (
        '<c:cat><c:multiLvlStrRef><c:f>A</c:f><c:multiLvlStrCache><c:ptCount val="3"/>'
        '<c:lvl><c:pt idx="0"><c:v>Jan</c:v></c:pt><c:pt idx="1"><c:v>Feb</c:v></c:pt>'
        '<c:pt idx="2"><c:v>Jan</c:v></c:pt></c:lvl>'
        '<c:lvl><c:pt idx="0"><c:v>2023</c:v></c:pt><c:pt idx="2"><c:v>2024</c:v></c:pt></c:lvl>'
        "</c:multiLvlStrCache></c:multiLvlStrRef></c:cat>"
    )
    ser = series("Visits", [], [(0, "5"), (1, "6"), (2, "7")], extra=levels)
    text = read(DocxReader(), _docx(tmp_path, chart(ser)), M.DOCX)
    assert text == _docx_text("\tVisits\n2023 Jan\t5\nFeb\t6\n2024 Jan\t7\n")


def test_a_scatter_chart_s_series_each_with_their_own_x_values(tmp_path: Path) -> None:
    xy = ("xVal", "yVal")
    plot = series("a", [(0, "1"), (1, "2")], [(0, "10"), (1, "20")], axes=xy)
    plot += series("b", [(0, "1"), (1, "3")], [(0, "11"), (1, "31")], axes=xy)
    plot += series("", [], [(0, "7")])  # (no name, no categories: its values alone)
    text = read(DocxReader(), _docx(tmp_path, chart(plot, kind="scatterChart")), M.DOCX)
    assert text == _docx_text("\ta\n1\t10\n2\t20\n\tb\n1\t11\n3\t31\n7\n")


def test_a_data_label_s_own_text_and_a_title_from_a_cell(tmp_path: Path) -> None:
    label = f'<c:dLbls><c:dLbl><c:idx val="1"/>{rich("Record month")}</c:dLbl></c:dLbls>'
    ser = series("Visits", QUARTERS[:2], [(0, "5"), (1, "9")], extra=label)
    part = chart(ser).replace(
        "<c:autoTitleDeleted",
        "<c:title><c:tx><c:strRef><c:f>T</c:f><c:strCache><c:pt idx='0'><c:v>From a cell</c:v>"
        "</c:pt></c:strCache></c:strRef></c:tx></c:title><c:autoTitleDeleted",
    )
    text = read(DocxReader(), _docx(tmp_path, part), M.DOCX)
    assert text == _docx_text("From a cell\n\tVisits\nQ1\t5\nQ2\t9\nRecord month\n")


def _pptx(tmp_path: Path, part: str) -> Path:
    """The generated deck, its first slide given a graphic frame showing a chart."""
    kind = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
    return deck_with_frame(
        tmp_path, graphic("rIdFrame"), "chart", ("charts/chart1.xml", kind, part)
    )


def test_a_slide_s_chart_is_read_among_its_shapes(tmp_path: Path) -> None:
    text = read(PptxReader(), _pptx(tmp_path, SALES), M.PPTX)
    assert text == O.PPTX_TEXT.replace("a\tb\n", f"a\tb\n{SALES_TEXT}")


def _anchored(rid: str) -> str:
    frame = f"<xdr:graphicFrame>{graphic(rid)}</xdr:graphicFrame>"
    return (
        f'<?xml version="1.0"?><xdr:wsDr xmlns:xdr="{XDR}" xmlns:a="{A}"><xdr:twoCellAnchor>'
        f"{frame}<xdr:clientData/></xdr:twoCellAnchor></xdr:wsDr>"
    )


def _with_chart(members: dict[str, bytes | str], sheet: str) -> dict[str, bytes | str]:
    folder, name = sheet.rsplit("/", 1)
    members[f"{folder}/_rels/{name}.rels"] = rels(("rId1", "drawing", "../drawings/drawing1.xml"))
    members["xl/drawings/drawing1.xml"] = _anchored("rId4")
    members["xl/drawings/_rels/drawing1.xml.rels"] = rels(("rId4", "chart", "../charts/chart1.xml"))
    members["xl/charts/chart1.xml"] = SALES
    return members


def test_an_xlsx_sheet_s_chart_is_read_after_its_rows(tmp_path: Path) -> None:
    members = _with_chart(O.xlsx_members(), "xl/worksheets/sheet2.xml")  # (the first sheet)
    text = read(XlsxReader(), write_zip(tmp_path, "x.xlsx", members), M.XLSX)
    assert text == O.XLSX_TEXT.replace("# sheet2", f"{SALES_TEXT}# sheet2")


def test_an_xlsx_chart_sheet_is_read_as_its_chart(tmp_path: Path) -> None:
    members = _with_chart(O.xlsx_members(), "xl/chartsheets/sheet1.xml")
    members["xl/chartsheets/sheet1.xml"] = (
        '<?xml version="1.0"?><chartsheet xmlns="http://schemas.openxmlformats.org/'
        f'spreadsheetml/2006/main" xmlns:r="{R}"><drawing r:id="rId1"/></chartsheet>'
    )
    workbook = members["xl/_rels/workbook.xml.rels"]
    assert isinstance(workbook, str)
    members["xl/_rels/workbook.xml.rels"] = workbook.replace(
        'Target="worksheets/sheet1.xml"', 'Target="chartsheets/sheet1.xml"'
    )
    text = read(XlsxReader(), write_zip(tmp_path, "x.xlsx", members), M.XLSX)
    assert text == O.XLSX_TEXT.replace("Second ünï\n", SALES_TEXT)


def test_an_xlsb_sheet_s_chart_is_read_after_its_rows(tmp_path: Path) -> None:
    members = _with_chart(F.xlsb_members(), "xl/worksheets/sheet2.bin")  # (the blank one)
    text = read(XlsbReader(), write_zip(tmp_path, "x.xlsb", members), M.XLSB)
    assert text == F.XLSB_TEXT.replace("# sheet3", f"# sheet2\n{SALES_TEXT}# sheet3")


_WORDS = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn", "Z")), max_size=8
)
_POINTS = st.dictionaries(st.integers(0, 10**9), _WORDS.filter(str.strip), max_size=5)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.integers(0, 10**9), _WORDS.filter(str.strip), max_size=5),
    st.lists(st.tuples(_WORDS.filter(str.strip), _POINTS), min_size=1, max_size=4),
)
def test_each_series_value_is_in_its_column_on_its_category_s_row(
    categories: dict[int, str], plotted: list[tuple[str, dict[int, str]]]
) -> None:
    def points(found: dict[int, str]) -> list[tuple[int, str]]:
        return [(i, escape(v)) for i, v in sorted(found.items())]

    plot = "".join(series(escape(n), points(categories), points(v)) for n, v in plotted)
    with tempfile.TemporaryDirectory() as tmp:
        text = read(DocxReader(), _docx(Path(tmp), chart(plot)), M.DOCX)
    lines = text.splitlines()
    assert lines[:1] == ["Before after"] and lines[-3:] == ["Next", "Page header", "Page footer"]
    table = [line.split("\t") for line in lines[1:-3]]
    lead = [""] if categories else []
    assert table[0] == [*lead, *(name for name, _ in plotted)]
    rows = sorted(set(categories).union(*(values for _, values in plotted)))
    assert len(table) == 1 + len(rows)
    for row, index in zip(table[1:], rows, strict=True):
        expected = [categories.get(index, "")] if categories else []
        assert row == [*expected, *(values.get(index, "") for _, values in plotted)]


def test_a_point_whose_index_is_no_count_is_left_out(tmp_path: Path) -> None:
    odd = [(0, "1"), (1, "2")]
    plot = series("s", [], odd).replace('idx="1"', f'idx="{"9" * 5000}"')  # (int() refuses it)
    plot += series("t", [], [(0, "3")]).replace('idx="0"', 'idx="-1"')
    plot += series("u", [], [(0, "4")]).replace('idx="0"', 'idx="٣"')  # (a digit, not ASCII)
    text = read(DocxReader(), _docx(tmp_path, chart(plot)), M.DOCX)
    assert text == _docx_text("s\tt\tu\n1\t\t\n")


def test_dates_a_chart_plots_are_read_as_dates(tmp_path: Path) -> None:
    days = (
        "<c:cat><c:numRef><c:f>A</c:f><c:numCache><c:formatCode>m/d/yyyy</c:formatCode>"
        '<c:ptCount val="2"/><c:pt idx="0"><c:v>37261</c:v></c:pt>'
        '<c:pt idx="1" formatCode="0.0"><c:v>37262</c:v></c:pt></c:numCache></c:numRef></c:cat>'
    )
    ser = series("Visits", [], [(0, "32"), (1, "28")], extra=days)
    text = read(DocxReader(), _docx(tmp_path, chart(ser)), M.DOCX)
    assert text == _docx_text("\tVisits\n2002-01-05\t32\n37262\t28\n")
    mac = chart(ser).replace("<c:chart>", '<c:date1904 val="1"/><c:chart>')
    assert "2006-01-06\t32" in read(DocxReader(), _docx(tmp_path, mac, name="mac.docx"), M.DOCX)
