"""OpenDocument templates, drawings, charts, formulas and StarOffice 6 files: the exact text."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.detect import detect
from engine.errors import Refused
from engine.limits import Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.registry import reader_for
from engine.readers.xmlsafe import Rules, XmlBudget, parse_bytes
from fixtures.gen import office as O

ODF = "application/vnd.oasis.opendocument."
CASES = [
    ("template.ott", ODF + "text-template", "odt", O.ODT_TEXT, None),
    ("template.ots", ODF + "spreadsheet-template", "ods", O.ODS_TEXT, 2),
    ("template.otp", ODF + "presentation-template", "odp", O.ODP_TEXT, 2),
    ("drawing.odg", ODF + "graphics", "odg", O.ODG_TEXT, 2),
    ("drawing_template.otg", ODF + "graphics-template", "odg", O.ODG_TEXT, 2),
    ("chart.odc", ODF + "chart", "odc", O.ODC_TEXT, None),
    ("formula.odf", ODF + "formula", "odf", O.ODF_FORMULA_TEXT, None),
    ("staroffice.sxw", "application/vnd.sun.xml.writer", "odt", O.SXW_TEXT, None),
    ("staroffice_no_mimetype.sxi", "application/vnd.sun.xml.impress", "odp", O.SXI_TEXT, 1),
]


@pytest.fixture(scope="module")
def office(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odf-kinds")
    O.odf_kinds(root)
    return root / "office"


def _read(path: Path) -> tuple[str, str, ReadInfo]:
    mime = detect(path)
    reader = reader_for(mime)
    assert reader is not None, mime
    sink = TextSink(1_000_000)
    info = reader.read(path, ReadContext(mime=mime), sink)
    return mime, sink.getvalue(), info


@pytest.mark.parametrize(("name", "mime", "reader", "text", "pages"), CASES)
def test_every_kind_is_detected_and_read_exactly(
    office: Path, name: str, mime: str, reader: str, text: str, pages: int | None
) -> None:
    got_mime, got, info = _read(office / name)
    assert got_mime == mime
    assert info.extractor == reader
    assert got == text
    assert info.pages == pages


def test_formula_without_annotation_gives_its_tokens(tmp_path: Path) -> None:
    from fixtures.gen.common import write_zip

    members = O.odf_members(ODF + "formula", "")
    members["content.xml"] = O.ODF_FORMULA_CONTENT.replace(
        '<annotation encoding="StarMath 5.0">a^2 + b^2  = c^2</annotation>', ""
    )
    write_zip(tmp_path, "f.odf", members, stored_first="mimetype")
    assert _read(tmp_path / "f.odf")[1] == "a 2 + b 2\n"


def _blocks(doc: str) -> list[str]:
    got: list[str] = []
    rules = Rules({"urn:t": "t"}, frozenset({"t:p"}), lambda el: got.append(el.text or ""))
    parse_bytes(doc.encode(), rules, XmlBudget(Limits()))
    return got


def test_a_doctype_naming_only_an_external_dtd_is_allowed() -> None:
    doc = (
        '<?xml version="1.0"?><!DOCTYPE t:doc PUBLIC "-//X//DTD Y//EN" "y.dtd">'
        '<t:doc xmlns:t="urn:t"><t:p>read &amp; kept</t:p></t:doc>'
    )
    assert _blocks(doc) == ["read & kept"]


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE t:doc PUBLIC "-//X//DTD Y//EN" "y.dtd" [<!ENTITY e "x">]>',
        '<!DOCTYPE t:doc SYSTEM "y.dtd" []>',
        "<!DOCTYPE t:doc [<!ELEMENT t:doc ANY>]>",
    ],
)
def test_any_internal_subset_is_still_refused(prolog: str) -> None:
    with pytest.raises(Refused):
        _blocks(f'<?xml version="1.0"?>{prolog}<t:doc xmlns:t="urn:t"><t:p>x</t:p></t:doc>')


def test_an_undeclared_entity_under_an_external_dtd_is_not_expanded() -> None:
    doc = (
        '<?xml version="1.0"?><!DOCTYPE t:doc SYSTEM "file:///etc/passwd">'
        '<t:doc xmlns:t="urn:t"><t:p>a&ext;b</t:p></t:doc>'
    )
    assert _blocks(doc) == ["ab"]
