"""Office, OpenDocument and e-book readers against generated samples: the exact text."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from engine import mimes as M
from engine.detect import detect
from engine.limits import Limits
from engine.readers import registry
from engine.readers.base import ReadContext, Reader, ReadInfo, TextCapReached, TextSink
from engine.readers.epub import EpubReader
from engine.readers.fb2 import Fb2Reader
from engine.readers.odf import READERS as ODF
from engine.readers.ooxml import DocxReader, XlsxReader
from engine.readers.pptx import PptxReader
from fixtures.gen import office as O
from fixtures.gen.common import write, write_zip

ODT, ODS, ODP = ODF[:3]
CASES = [
    ("sample.docx", DocxReader(), M.DOCX, O.DOCX_TEXT, None),
    ("sample.xlsx", XlsxReader(), M.XLSX, O.XLSX_TEXT, 2),
    ("sample.pptx", PptxReader(), M.PPTX, O.PPTX_TEXT, 2),
    ("sample.odt", ODT, M.ODT, O.ODT_TEXT, None),
    ("sample.ods", ODS, M.ODS, O.ODS_TEXT, 2),
    ("sample.odp", ODP, M.ODP, O.ODP_TEXT, 2),
    ("sample.fodt", ODT, M.FODT, O.ODT_TEXT, None),
    ("sample.fods", ODS, M.FODS, O.ODS_TEXT, 2),
    ("sample.fodp", ODP, M.FODP, O.ODP_TEXT, 2),
    ("sample.epub", EpubReader(), M.EPUB, O.EPUB_TEXT, None),
    ("sample.fb2", Fb2Reader(), M.FB2, O.FB2_TEXT, None),
]


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated samples, plus the flat spreadsheet and presentation."""
    root = tmp_path_factory.mktemp("fixtures")
    O.build(root)
    write(root, "office/sample.fods", O.flat_odf(O.M_ODS, O.ODS_BODY))
    write(root, "office/sample.fodp", O.flat_odf(O.M_ODP, O.ODP_BODY))
    return root / "office"


def read(reader: Reader, path: Path, mime: str, cap: int = 1_000_000) -> tuple[str, ReadInfo]:
    """Read ``path`` with default limits; return the text and the info."""
    sink = TextSink(cap)
    info = reader.read(path, ReadContext(mime=mime, limits=Limits()), sink)
    return sink.getvalue(), info


@pytest.mark.parametrize(("name", "reader", "mime", "text", "pages"), CASES)
def test_sample_gives_exact_text(
    samples: Path, name: str, reader: Reader, mime: str, text: str, pages: int | None
) -> None:
    got, info = read(reader, samples / name, mime)
    assert got == text
    assert info == ReadInfo(reader.name, pages=pages)


@pytest.mark.parametrize(("name", "reader", "mime", "text", "pages"), CASES)
def test_detection_and_registry_route_each_sample(
    samples: Path, name: str, reader: Reader, mime: str, text: str, pages: int | None
) -> None:
    assert detect(samples / name) == mime
    found = registry.reader_for(mime)
    assert found is not None and found.name == reader.name


def test_readers_declare_name_version_and_no_tools() -> None:
    for reader in (DocxReader(), XlsxReader(), PptxReader(), *ODF, EpubReader(), Fb2Reader()):
        assert isinstance(reader, Reader)
        assert reader.version >= 1 and reader.tools == ()
    assert [r.name for r in ODF] == ["odt", "ods", "odp", "odg", "odc", "odf"]


def test_text_cap_keeps_the_text_so_far(samples: Path) -> None:
    sink = TextSink(8)
    with pytest.raises(TextCapReached):
        DocxReader().read(samples / "sample.docx", ReadContext(mime=M.DOCX), sink)
    assert sink.getvalue() == "Hello wo"


def test_epub_follows_the_spine_not_the_manifest(tmp_path: Path) -> None:
    path = write_zip(
        tmp_path, "b.epub", O.epub_members(("c2", "c1", "css")), stored_first="mimetype"
    )
    assert read(EpubReader(), path, M.EPUB)[0] == "Second chapter\nChapter One\nFirst & best.\n"


def test_xlsx_places_cells_at_their_column(tmp_path: Path) -> None:
    rows = '<row><c r="C1"><v>3</v></c><c r="AA1"><v>27</v></c><c><v>next</v></c></row>'
    path = write_zip(tmp_path, "c.xlsx", O.xlsx_members(rows))
    text, _ = read(XlsxReader(), path, M.XLSX)
    assert text.splitlines()[1] == "\t\t3" + "\t" * 24 + "27\tnext"


def test_xlsx_without_shared_strings(tmp_path: Path) -> None:
    members = O.xlsx_members('<row><c t="s"><v>0</v></c><c><v>1.5</v></c></row>')
    del members["xl/sharedStrings.xml"]
    text, info = read(XlsxReader(), write_zip(tmp_path, "d.xlsx", members), M.XLSX)
    assert (text, info.pages) == ("# sheet1\n1.5\n# sheet2\n", 2)


def test_docx_in_utf16(tmp_path: Path) -> None:
    members = O.docx_members(O.w_par("wide text"), prolog="")
    members["word/document.xml"] = str(members["word/document.xml"]).encode("utf-16")
    text, _ = read(DocxReader(), write_zip(tmp_path, "w.docx", members), M.DOCX)
    assert text == "wide text\nPage header\nPage footer\n"


def test_odt_deep_spans_do_not_recurse(tmp_path: Path) -> None:
    body = "<office:text><text:p>" + "<text:span>a" * 20_000 + "</text:span>" * 20_000
    members = O.odf_members(O.M_ODT, body + "</text:p></office:text>")
    text, _ = read(ODT, write_zip(tmp_path, "deep.odt", members), M.ODT)
    assert text == "a" * 20_000 + "\n"


def test_pptx_slideshow_and_media_are_not_inflated(tmp_path: Path, samples: Path) -> None:
    """A ppsx reads like a pptx; a 2 MiB media member at 1000:1 is never opened."""
    src = zipfile.ZipFile(samples / "sample.pptx")
    members: dict[str, bytes | str] = {n: src.read(n) for n in src.namelist()}
    src.close()
    types = members["[Content_Types].xml"]
    assert isinstance(types, bytes)
    members["[Content_Types].xml"] = types.replace(b"presentation.main", b"slideshow.main")
    members["ppt/media/huge.emf"] = bytes(2 * 1024 * 1024)
    text, info = read(PptxReader(), write_zip(tmp_path, "show.ppsx", members), M.PPTX)
    assert (text, info.pages) == (O.PPTX_TEXT, 2)
