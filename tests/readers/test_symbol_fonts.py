"""Text set in the Symbol font, read as the characters its glyphs show.

Word's ``Insert > Symbol`` in the Symbol font stores a ``w:sym`` (font and code), which the
Word reader left out: "α = 0.05" read " = 0.05". Text typed in the Symbol font (a Word run, an
RTF group, an OpenDocument span, a PowerPoint or DrawingML run whose font is Symbol) is stored
as the codes (``a``, or ``U+F061`` as LibreOffice and PowerPoint write it): "a = 0.05" or
private-use characters where the page shows "α = 0.05". Pictures (Wingdings...) stay as they
were.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from pptx import Presentation

from engine import mimes as M
from engine.readers.ooxml import DocxReader
from engine.readers.pptx import PptxReader
from engine.readers.symbolfont import is_symbol, recode, sym, symbol_char
from fixtures.gen import office as O
from fixtures.gen.common import write_zip
from tests.readers.test_odf_objects import read as read_odf
from tests.readers.test_rtf import SYMBOL_FONTS
from tests.readers.test_rtf import read as read_rtf
from tests.readers.test_smartart import _docx as _smartart_docx
from tests.readers.test_smartart import data_model, read


def _sym(font: str, char: str) -> str:
    return f'<w:r><w:sym w:font="{font}" w:char="{char}"/></w:r>'


def _docx(tmp_path: Path, *paragraphs: str) -> Path:
    return write_zip(tmp_path, "sym.docx", O.docx_members("".join(paragraphs)))


def test_the_symbol_font_s_codes_are_its_characters() -> None:
    assert recode("a = 0.05, p \xa3 0.01") == "α = 0.05, π ≤ 0.01"
    assert recode("\uf061\uf0b1\uf0b0") == "α±°"  # Windows' private-use place for its codes
    assert recode("D\tW\n") == "Δ\tΩ\n"  # the letters, not the increment and ohm signs
    assert symbol_char(0xE6) == ""  # a tall bracket's piece: no character
    assert [is_symbol(f) for f in ("Symbol", "Symbol MT", "OpenSymbol", "Segoe UI Symbol")] == [
        True,
        True,
        False,
        False,
    ]


def test_a_word_symbol_reads_as_its_character(tmp_path: Path) -> None:
    body = O.w_par(_sym("Symbol", "F061"), " = 0.05 ", _sym("Symbol", "F0B1"), " 2")
    body += O.w_par("Done ", _sym("Wingdings", "F0FC"), _sym("Arial", "00A9"), _sym("Symbol", "zz"))
    text = read(DocxReader(), _docx(tmp_path, body), M.DOCX)
    assert text == "α = 0.05 ± 2\nDone ©\nPage header\nPage footer\n"


def _run(font: str, text: str) -> str:
    fonts = f'<w:rFonts w:ascii="{font}" w:hAnsi="{font}"/>'
    return f"<w:r><w:rPr><w:b/>{fonts}<w:sz w:val='20'/></w:rPr><w:t>{text}</w:t></w:r>"


def test_a_word_run_in_the_symbol_font_reads_as_its_glyphs(tmp_path: Path) -> None:
    mark = "<w:pPr><w:rPr><w:rFonts w:ascii='Symbol'/></w:rPr></w:pPr>"  # (the mark's: no run)
    body = O.w_par(mark, "p ", _run("Symbol", "\uf0a3"), " 0.01, ", _run("Symbol", "m"), "m")
    body += O.w_par(_run("Times New Roman", "a b"), " and ", _run("Wingdings", "J\uf0fc"))
    text = read(DocxReader(), _docx(tmp_path, body), M.DOCX)
    assert text == "p ≤ 0.01, μm\na b and J\uf0fc\nPage header\nPage footer\n"


def test_an_rtf_group_in_the_symbol_font_reads_as_its_glyphs(tmp_path: Path) -> None:
    data = SYMBOL_FONTS + rb"{\f1 a} = 0.05, {\f1\'b3} 2, {\f1 \u-3999?} {\f0 a}\par}"
    assert read_rtf(tmp_path, data) == "α = 0.05, ≥ 2, α a\n"
    cyrillic = rb"{\rtf1\ansi\ansicpg1251\deff0{\fonttbl{\f0 Arial;}{\f1 Symbol;}}"
    assert read_rtf(tmp_path, cyrillic + rb"\'e1 {\f1\'e1}\par}") == "б 〈\n"


@given(st.text())
def test_recode_keeps_what_the_font_does_not_hold(text: str) -> None:
    """Character by character: a code of the font becomes at most one character, anything
    else (a line break, a letter past Latin-1) stays itself."""
    assert recode(text) == "".join(recode(c) for c in text)
    for c in text:
        code = ord(c)
        if code < 0x20 or (code > 0xFF and not 0xF000 <= code <= 0xF0FF):
            assert recode(c) == c
        else:
            assert recode(c) == symbol_char(code) and len(recode(c)) <= 1


@given(st.text(max_size=8), st.text(max_size=8))
def test_any_word_symbol_is_text_or_nothing(font: str, char: str) -> None:
    got = sym(font, char)
    assert len(got) <= 1
    got.encode("utf-8")


_SVG = 'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
_STYLES = (
    '<office:font-face-decls><style:font-face style:name="Sym" svg:font-family="Symbol"/>'
    "</office:font-face-decls><office:automatic-styles>"
    '<style:style style:name="T1" style:family="text">'
    '<style:text-properties style:font-name="Sym"/></style:style>'
    '<style:style style:name="T2" style:family="text">'
    '<style:text-properties style:font-name="Times New Roman"/></style:style>'
    '<style:style style:name="T3" style:family="text">'
    '<style:text-properties style:font-name="Wingdings"/></style:style>'
    '<text:list-style style:name="L1"><text:list-level-style-bullet text:level="1">'
    '<style:text-properties style:font-name="Symbol"/></text:list-level-style-bullet>'
    "</text:list-style></office:automatic-styles>"
)


def _odf(tmp_path: Path, mime: str, body: str) -> Path:
    members = O.odf_members(mime, body)
    content = members["content.xml"]
    assert isinstance(content, str)
    members["content.xml"] = content.replace("<office:body>", f"{_STYLES}<office:body>").replace(
        "<office:document-content ", f"<office:document-content {_SVG} "
    )
    return write_zip(tmp_path, "sym.zip", members)


def _span(style: str, text: str) -> str:
    return f'<text:span text:style-name="{style}">{text}</text:span>'


def test_an_opendocument_span_in_the_symbol_font_reads_as_its_glyphs(tmp_path: Path) -> None:
    """LibreOffice's alpha in the Symbol font is ``U+F061`` in a span whose automatic style
    names the font (through a font face declared under another name here); a span in
    another font inside it, a Wingdings span and a list's Symbol bullets are not."""
    inner = "\uf0a3 " + _span("T2", "a") + " m"
    para = f"<text:p>p {_span('T1', inner)} 0.01 a {_span('T3', 'J')}</text:p>"
    text, _ = read_odf(_odf(tmp_path, O.M_ODT, f"<office:text>{para}</office:text>"), "odt")
    assert text == "p ≤ a μ 0.01 a J\n"
    cell = f"<table:table-cell><text:p>{_span('T1', 'a')} = 0.05</text:p></table:table-cell>"
    sheet = f"<office:spreadsheet><table:table><table:table-row>{cell}</table:table-row>"
    sheet += "</table:table></office:spreadsheet>"
    text, _ = read_odf(_odf(tmp_path, O.M_ODS, sheet), "ods")
    assert text == "# sheet1\nα = 0.05\n"


def test_a_slide_s_runs_in_the_symbol_font_read_as_its_glyphs(tmp_path: Path) -> None:
    """PowerPoint writes an alpha in the Symbol font as ``U+F061`` (the font in the run's
    ``a:latin``, or ``a:sym``); a Wingdings run's code stays as it was."""
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    paragraph = slide.shapes.add_textbox(0, 0, 100, 100).text_frame.paragraphs[0]
    for text, font in (("\uf061", "Symbol"), (" = 0.05", None), ("\uf0fc", "Wingdings")):
        run = paragraph.add_run()
        run.text = text
        if font:
            run.font.name = font
    paragraph.add_line_break()
    paragraph.add_run().text = "p "
    notes = slide.notes_slide.notes_text_frame.paragraphs[0].add_run()
    notes.text, notes.font.name = "\uf0a3 0.01", "Symbol"
    path = tmp_path / "sym.pptx"
    deck.save(path)
    assert read(PptxReader(), path, M.PPTX) == "# slide1\nα = 0.05\uf0fc\np \n≤ 0.01\n"


def test_a_diagram_s_run_in_the_symbol_font_reads_as_its_glyphs(tmp_path: Path) -> None:
    """SmartArt's text goes through DrawingML's paragraphs, as charts' and a sheet's shapes'
    do: a run whose ``a:sym`` is Symbol; the paragraph's own default font is no run's."""
    model = data_model([["ALPHA = 0.05"], ["alpha"]]).replace(
        "<a:r><a:t>ALPHA",
        '<a:pPr><a:defRPr><a:latin typeface="Symbol"/></a:defRPr></a:pPr><a:r><a:rPr>'
        '<a:sym typeface="Symbol"/></a:rPr><a:t>\uf061</a:t></a:r><a:r><a:t>',
    )
    path = _smartart_docx(tmp_path, [["x"]])
    with zipfile.ZipFile(path) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    members["word/diagrams/data1.xml"] = model
    text = read(DocxReader(), write_zip(tmp_path, "dgm.docx", members), M.DOCX)
    assert text == "Before after\nα = 0.05\nalpha\nNext\nPage header\nPage footer\n"


def test_an_rtf_symbol_field_reads_as_its_character(tmp_path: Path) -> None:
    """Word writes an inserted symbol as a field, ``SYMBOL 97 \\\\f "Symbol"``, whose result
    it often leaves empty (or holds the character again in the font): the instruction says
    the character, once; any other field reads as its result."""
    fields = [
        rb'p {\field{\*\fldinst SYMBOL 163 \\f "Symbol" \\s 10}{\fldrslt\f1\fs20}} 0.01, ',
        rb'{\field{\*\fldinst SYMBOL 97 \\s 12 \\f "Symbol"}{\fldrslt{\f1 a}}} = 0.05, ',
        rb"{\field{\*\fldinst SYMBOL 8364 \\u}{\fldrslt x}}, {\field{\*\fldinst SYMBOL 169}}",
        rb'{\field{\*\fldinst SYMBOL 252 \\f "Wingdings"}{\fldrslt}} ok, ',
        rb'{\field{\*\fldinst HYPERLINK "http://example.com"}{\fldrslt a link}}\par}',
    ]
    text = read_rtf(tmp_path, SYMBOL_FONTS + b"".join(fields))
    assert text == "p ≤ 0.01, α = 0.05, €, © ok, a link\n"


def test_a_symbol_field_s_character_is_not_drawn_again_in_the_font_around_it(
    tmp_path: Path,
) -> None:
    """A field set in the Symbol font itself: the character its instruction names is written
    as it is (a copyright sign, not the Symbol font's glyph for its code, a heart)."""
    field = rb"{\f1{\field{\*\fldinst SYMBOL 169}}{\field{\*\fldinst SYMBOL 169}{\fldrslt x}}}"
    assert read_rtf(tmp_path, SYMBOL_FONTS + field + rb"\par}") == "©©\n"
