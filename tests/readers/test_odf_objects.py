"""Embedded objects in OpenDocument files: charts, formulas, documents.

A zipped OpenDocument keeps each chart, formula or embedded document in a folder of its own
(``Object 1/content.xml``) that a ``draw:object`` names where it stands; none of it was read
(LibreOffice's own conversions of the corpus's chart documents read without their charts; a
presentation whose only slide is a chart read as its master's placeholder text).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.odf import READERS
from fixtures.gen import office as O
from fixtures.gen.common import write_zip

_CHART_NS = 'xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0"'
_XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"'
CHART = (
    f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {O._ODF_NS} {_CHART_NS}>'
    f"<office:body>{O.ODC_BODY}</office:body></office:document-content>"
)
READ = {reader.name: reader for reader in READERS}


def frame(href: str) -> str:
    return f'<draw:frame><draw:object xlink:href="{href}" {_XLINK}/></draw:frame>'


def package(tmp_path: Path, mime: str, body: str, objects: dict[str, str]) -> Path:
    members = O.odf_members(mime, body)
    for folder, content in objects.items():
        members[f"{folder}/content.xml"] = content
        members[f"ObjectReplacements/{folder}"] = b"\x00picture"
    return write_zip(tmp_path, "doc.zip", members)


def read(path: Path, name: str) -> tuple[str, ReadInfo]:
    sink = TextSink(1_000_000)
    reader = READ[name]
    info = reader.read(path, ReadContext(mime=next(iter(reader.mimes))), sink)
    return sink.getvalue(), info


def test_a_text_document_s_chart_and_formula_after_the_paragraph_holding_them(
    tmp_path: Path,
) -> None:
    body = (
        f"<office:text><text:p>Before{frame('./Object 1')} after</text:p>"
        f"<text:p>Then{frame('./Object 2')}</text:p><text:p>Last</text:p></office:text>"
    )
    objects = {"Object 1": CHART, "Object 2": O.ODF_FORMULA_CONTENT}
    text, info = read(package(tmp_path, O.M_ODT, body, objects), "odt")
    assert text == f"Before after\n{O.ODC_TEXT}Then\n{O.ODF_FORMULA_TEXT}Last\n"
    assert info.pages is None


def test_a_sheet_s_chart_comes_after_its_rows(tmp_path: Path) -> None:
    shapes = f"<table:shapes>{frame('./Object 1')}</table:shapes>"
    body = O.ODS_BODY.replace(
        '<table:table table:name="One">', f'<table:table table:name="One">{shapes}'
    )
    text, info = read(package(tmp_path, O.M_ODS, body, {"Object 1": CHART}), "ods")
    assert text == O.ODS_TEXT.replace("# sheet2", f"{O.ODC_TEXT}# sheet2")
    assert info.pages == 2


def test_a_slide_s_chart_among_its_shapes_and_a_slide_of_a_chart_alone(tmp_path: Path) -> None:
    body = (
        "<office:presentation><draw:page><draw:frame><draw:text-box><text:p>Title</text:p>"
        f"</draw:text-box></draw:frame>{frame('./Object 1')}<draw:frame><draw:text-box>"
        f"<text:p>Below</text:p></draw:text-box></draw:frame></draw:page><draw:page>"
        f"{frame('Object 2/')}</draw:page></office:presentation>"
    )
    text, info = read(
        package(tmp_path, O.M_ODP, body, {"Object 1": CHART, "Object 2": CHART}), "odp"
    )
    assert text == f"# slide1\nTitle\n{O.ODC_TEXT}Below\n# slide2\n{O.ODC_TEXT}"
    assert info.pages == 2


def test_an_object_is_read_once_and_links_elsewhere_are_left_alone(tmp_path: Path) -> None:
    links = [
        "./Object 1",
        "Object 1",
        "../Object 1",
        "/Object 1",
        "http://x/Object 1",
        "",
        "./Gone",
    ]
    body = "<office:text>" + "".join(
        f"<text:p>P{i}{frame(h)}</text:p>" for i, h in enumerate(links)
    )
    body += "</office:text>"
    text, _ = read(package(tmp_path, O.M_ODT, body, {"Object 1": CHART}), "odt")
    assert text == f"P0\n{O.ODC_TEXT}" + "".join(f"P{i}\n" for i in range(1, len(links)))


def test_an_encrypted_object_is_left_out(tmp_path: Path) -> None:
    path = package(
        tmp_path,
        O.M_ODT,
        f"<office:text><text:p>Text{frame('./Object 1')}</text:p></office:text>",
        {"Object 1": CHART},
    )
    with zipfile.ZipFile(path) as zf:
        members: dict[str, bytes | str] = {n: zf.read(n) for n in zf.namelist()}
    manifest = members["META-INF/manifest.xml"]
    assert isinstance(manifest, bytes)
    members["META-INF/manifest.xml"] = manifest.replace(
        b"</manifest:manifest>",
        b'<manifest:file-entry manifest:full-path="Object 1/content.xml" '
        b'manifest:media-type="text/xml">'
        b'<manifest:encryption-data manifest:checksum-type="SHA1" manifest:checksum="x"/>'
        b"</manifest:file-entry></manifest:manifest>",
    )
    members["Object 1/content.xml"] = b"\x93\x12 not xml at all"
    text, _ = read(write_zip(tmp_path, "enc.odt", members), "odt")
    assert text == "Text\n"


def test_a_flat_document_s_inline_object_is_read_once(tmp_path: Path) -> None:
    inline = (
        f"<draw:frame><draw:object {_XLINK}><office:document {_CHART_NS} office:mimetype="
        f'"application/vnd.oasis.opendocument.chart"><office:body>{O.ODC_BODY}</office:body>'
        "</office:document></draw:object></draw:frame>"
    )
    body = f"<office:text><text:p>Before{inline}</text:p><text:p>After</text:p></office:text>"
    path = tmp_path / "flat.fodt"
    path.write_text(O.flat_odf(O.M_ODT, body), encoding="utf-8")
    text, _ = read(path, "odt")
    assert text == f"Before\n{O.ODC_TEXT}After\n"
