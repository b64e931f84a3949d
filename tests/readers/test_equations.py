"""Equations (Office Math, OMML) in Word and PowerPoint files, as linear text.

Every equation of a Word document was missing from its text (``w:t`` was read, never
``m:t``: markitdown's and kreuzberg's ``equations.docx`` in ``../shared/corpus`` read "For ,"
and "an inline equation:  ."), and a slide's text box that holds one was skipped whole
(PowerPoint writes it as alternate content, which python-pptx does not see).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from xml.etree.ElementTree import fromstring
from xml.sax.saxutils import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.readers.omml import linear
from engine.readers.ooxml import DocxReader, XlsxReader
from engine.readers.pptx import PptxReader
from fixtures.gen import office as O
from fixtures.gen.common import write_zip
from tests.readers.test_smartart import XDR, A, read, rels

MATH = "http://schemas.openxmlformats.org/officeDocument/2006/math"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


WORD_RUN = "<w:rPr><w:rFonts w:ascii='Cambria Math'/></w:rPr>"


def r(text: str, props: str = WORD_RUN) -> str:
    return f"<m:r>{props}<m:t>{text}</m:t></m:r>"


def e(*inner: str, tag: str = "e") -> str:
    return f"<m:{tag}>{''.join(inner)}</m:{tag}>"


def script(kind: str, base: str, index: str, props: str = WORD_RUN) -> str:
    """A superscript (``kind`` sup) or a subscript (sub)."""
    tag = "sSup" if kind == "sup" else "sSub"
    return (
        f"<m:{tag}><m:{tag}Pr><m:ctrlPr/></m:{tag}Pr>{e(r(base, props))}"
        f"{e(r(index, props), tag=kind)}</m:{tag}>"
    )


QUADRATIC = (
    r("x=")
    + "<m:f><m:fPr><m:ctrlPr/></m:fPr><m:num>"
    + r("-b±")
    + "<m:rad><m:radPr><m:degHide m:val='1'/></m:radPr><m:deg/>"
    + e(script("sup", "b", "2"), r("-4ac"))
    + "</m:rad></m:num><m:den>"
    + r("2a")
    + "</m:den></m:f>"
)
BINOMIAL = (
    f"<m:f><m:fPr><m:type m:val='noBar'/></m:fPr>{e(r('n'), tag='num')}{e(r('k'), tag='den')}</m:f>"
)
SUM = (
    "<m:nary><m:naryPr><m:chr m:val='∑'/></m:naryPr>"
    + e(r("k=0"), tag="sub")
    + e(r("n"), tag="sup")
    + e(f"<m:d><m:dPr><m:ctrlPr/></m:dPr>{e(BINOMIAL)}</m:d>")
    + "</m:nary>"
)
MATRIX = (
    "<m:d><m:dPr><m:begChr m:val='['/><m:endChr m:val=']'/></m:dPr><m:e><m:m>"
    + "".join(f"<m:mr>{e(r(a))}{e(r(b))}</m:mr>" for a, b in [("1", "0"), ("0", "1")])
    + "</m:m></m:e></m:d>"
)
FUNC = (
    script("sub", "a", "n") + f"<m:func><m:funcPr/>{e(r('cos'), tag='fName')}{e(r('x'))}</m:func>"
)


def math(*inner: str) -> str:
    return f'<m:oMath xmlns:m="{MATH}" xmlns:w="{W}">{"".join(inner)}</m:oMath>'


def test_each_structure_in_word_s_linear_format() -> None:
    assert linear(fromstring(math(QUADRATIC))) == "x=(-b±√(b^2-4ac))/2a"
    assert linear(fromstring(math(SUM))) == "∑_(k=0)^n (n¦k)"
    assert linear(fromstring(math(MATRIX))) == "[1, 0; 0, 1]"
    assert linear(fromstring(math(FUNC))) == "a_n cos x"
    two = script("sup", "x", "k") + script("sup", "a", "n") + r("+1")
    assert linear(fromstring(math(two))) == "x^k a^n+1"  # (not x^ka^n: k's index runs on)


def _docx(tmp_path: Path, *paragraphs: str) -> Path:
    body = "".join(paragraphs)
    members = O.docx_members(body)
    document = members["word/document.xml"]
    assert isinstance(document, str)
    members["word/document.xml"] = document.replace(
        "<w:document ", f'<w:document xmlns:m="{MATH}" '
    )
    return write_zip(tmp_path, "eq.docx", members)


def test_a_word_equation_inline_and_displayed(tmp_path: Path) -> None:
    inline = O.w_par("Roots: ", f"<m:oMath>{QUADRATIC}</m:oMath>", " for a≠0")
    lines = f"<m:oMath>{SUM}</m:oMath><m:oMath>{r('E=mc')}</m:oMath>"
    display = f"<w:p><m:oMathPara>{lines}</m:oMathPara></w:p>"
    text = read(DocxReader(), _docx(tmp_path, inline, display), M.DOCX)
    assert text == (
        "Roots: x=(-b±√(b^2-4ac))/2a for a≠0\n∑_(k=0)^n (n¦k)\nE=mc\nPage header\nPage footer\n"
    )


def test_an_equation_nested_past_any_stack_is_read_as_its_runs(tmp_path: Path) -> None:
    deep = "<m:f><m:num>" * 5000 + r("x") + "</m:num><m:den>" + r("y") + "</m:den></m:f>"
    deep += "</m:num></m:f>" * 4999
    text = read(DocxReader(), _docx(tmp_path, O.w_par(f"<m:oMath>{deep}</m:oMath>")), M.DOCX)
    assert "x" in text and "y" in text


def _pptx(tmp_path: Path) -> Path:
    """The generated deck, its first slide given a text box of an equation as PowerPoint
    writes it: alternate content whose fallback is a picture."""
    with zipfile.ZipFile(io.BytesIO(O.pptx_bytes())) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}

    def box(body: str) -> str:
        return (
            '<p:sp><p:nvSpPr><p:cNvPr id="50" name="TextBox 49"/><p:cNvSpPr txBox="1"/><p:nvPr/>'
            '</p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="10" cy="10"/></a:xfrm>'
            f"</p:spPr>{body}</p:sp>"
        )

    area = script("sup", "πr", "2", props='<a:rPr i="1"/>')
    equation = (
        "<p:txBody><a:bodyPr/><a:p><a:r><a:t>Area </a:t></a:r><a14:m><m:oMathPara "
        f'xmlns:m="{MATH}"><m:oMath>{area}'
        "</m:oMath></m:oMathPara></a14:m></a:p><a:p><a:r><a:t>of a circle</a:t></a:r></a:p>"
        "</p:txBody>"
    )
    alternate = (
        '<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/'
        '2006"><mc:Choice xmlns:a14="http://schemas.microsoft.com/office/drawing/2010/main" '
        f'Requires="a14">{box(equation)}</mc:Choice><mc:Fallback>'
        f"{box('<p:txBody><a:bodyPr/><a:p><a:r><a:t>Picture of it</a:t></a:r></a:p></p:txBody>')}"
        "</mc:Fallback></mc:AlternateContent>"
    )
    slide = members["ppt/slides/slide1.xml"]
    assert isinstance(slide, bytes)
    head, tail = slide.split(b"</p:spTree>")
    first_shape = head.index(b"<p:sp>")
    members["ppt/slides/slide1.xml"] = (
        head[:first_shape] + alternate.encode() + head[first_shape:] + b"</p:spTree>" + tail
    )
    return write_zip(tmp_path, "eq.pptx", members)


def test_a_slide_s_equation_box_is_read_in_its_place(tmp_path: Path) -> None:
    text = read(PptxReader(), _pptx(tmp_path), M.PPTX)
    assert text == O.PPTX_TEXT.replace("# slide1\n", "# slide1\nArea πr^2\nof a circle\n")


_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=4
)


def _structures() -> st.SearchStrategy[str]:
    runs = _TEXT.map(lambda t: r(escape(t)))

    def wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        two = st.tuples(inner, inner)
        return st.one_of(
            two.map(lambda p: f"<m:f>{e(p[0], tag='num')}{e(p[1], tag='den')}</m:f>"),
            two.map(
                lambda p: (
                    f"<m:sSubSup>{e(p[0])}{e(p[1], tag='sub')}{e(p[1], tag='sup')}</m:sSubSup>"
                )
            ),
            two.map(lambda p: f"<m:rad>{e(p[0], tag='deg')}{e(p[1])}</m:rad>"),
            two.map(lambda p: f"<m:d>{e(p[0])}{e(p[1])}</m:d>"),
            two.map(lambda p: f"<m:func>{e(p[0], tag='fName')}{e(p[1])}</m:func>"),
            two.map(lambda p: f"<m:m><m:mr>{e(p[0])}{e(p[1])}</m:mr></m:m>"),
            two.map(lambda p: f"<m:nary>{e(p[0], tag='sub')}{e(p[1])}</m:nary>"),
            inner.map(lambda p: f"<m:acc>{e(p)}</m:acc>"),
            two.map(lambda p: p[0] + p[1]),
        )

    return st.recursive(runs, wrap, max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(_structures())
def test_every_run_s_text_comes_out_in_order(structure: str) -> None:
    element = fromstring(math(structure))
    out = linear(element)
    at = 0
    for t in element.iter(f"{{{MATH}}}t"):
        found = out.find(t.text or "", at)
        assert found >= 0, (t.text, out)
        at = found + len(t.text or "")


def test_an_equation_in_a_sheet_s_text_box(tmp_path: Path) -> None:
    area = script("sup", "πr", "2", props="<a:rPr/>")
    body = (
        f'<xdr:sp><xdr:txBody><a:bodyPr/><a:p><a:r><a:t>Area </a:t></a:r><a14:m xmlns:a14="'
        f'http://schemas.microsoft.com/office/drawing/2010/main"><m:oMathPara xmlns:m="{MATH}">'
        f"<m:oMath>{area}</m:oMath></m:oMathPara></a14:m></a:p></xdr:txBody></xdr:sp>"
    )
    drawing = (
        f'<?xml version="1.0"?><xdr:wsDr xmlns:xdr="{XDR}" xmlns:a="{A}"><xdr:oneCellAnchor>'
        f"{body}<xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>"
    )
    members = O.xlsx_members()
    members["xl/worksheets/_rels/sheet1.xml.rels"] = rels(
        ("rId1", "drawing", "../drawings/drawing1.xml")
    )
    members["xl/drawings/drawing1.xml"] = drawing
    text = read(XlsxReader(), write_zip(tmp_path, "eq.xlsx", members), M.XLSX)
    assert text == O.XLSX_TEXT + "Area πr^2\n"
