"""Office, OpenDocument and e-book readers against hostile files: every failure is typed.

Each bound is tested by lowering its limit so a few-KB file acts as the bomb; a real zip bomb
(past 64 MiB) and real billion-laughs documents run at the default caps.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, ReadFailure, Refused
from engine.limits import Limits, MiB
from engine.readers.base import ReadContext, Reader, TextSink
from engine.readers.epub import EpubReader
from engine.readers.fb2 import Fb2Reader
from engine.readers.odf import READERS as ODF
from engine.readers.ooxml import DocxReader, XlsxReader
from engine.readers.pptx import PptxReader
from fixtures.gen import office as O
from fixtures.gen.common import write, write_zip
from tests.readers.zipkit import set_encrypted_flag

SECRET = "SECRETWORD"


def _pptx_members() -> O.Members:
    with zipfile.ZipFile(io.BytesIO(O.pptx_bytes())) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


@dataclass(frozen=True)
class Format:
    """A zip-based format: its reader, a good package and the part to spoil."""

    name: str
    reader: Reader
    mime: str
    members: Callable[[], O.Members]
    part: str
    root: str
    """The spoiled part's root element, to build replacement documents."""


FORMATS = [
    Format("docx", DocxReader(), M.DOCX, O.docx_members, "word/document.xml", "w:document"),
    Format("xlsx", XlsxReader(), M.XLSX, O.xlsx_members, "xl/worksheets/sheet2.xml", "worksheet"),
    Format("pptx", PptxReader(), M.PPTX, _pptx_members, "ppt/slides/slide1.xml", "p:sld"),
    Format(
        "odt", ODF[0], M.ODT, lambda: O.odf_members(O.M_ODT, O.ODT_BODY), "content.xml", "o:doc"
    ),
    Format("epub", EpubReader(), M.EPUB, O.epub_members, "OEBPS/content.opf", "package"),
]
IDS = [f.name for f in FORMATS]


def read(fmt: Format, path: Path, **limits: int) -> str:
    """Read ``path`` as ``fmt``; return the text (the test expects a failure first)."""
    sink = TextSink(1_000_000)
    fmt.reader.read(path, ReadContext(mime=fmt.mime, limits=Limits(**limits)), sink)
    return sink.getvalue()


def package(tmp_path: Path, fmt: Format, **changes: bytes | str) -> Path:
    """The format's good package with some members replaced."""
    members = fmt.members() | changes
    stored = "mimetype" if "mimetype" in members else None
    return write_zip(tmp_path, f"doc.{fmt.name}", members, stored_first=stored)


def failure(fmt: Format, path: Path, kind: type[ReadFailure], **limits: int) -> ReadFailure:
    """Read and expect ``kind``; the message never carries the document's text."""
    with pytest.raises(kind) as err:
        read(fmt, path, **limits)
    assert SECRET not in str(err.value)
    return err.value


def limit_hit(fmt: Format, path: Path, **limits: int) -> str:
    """The name of the limit the read stopped at."""
    exc = failure(fmt, path, LimitExceeded, **limits)
    assert isinstance(exc, LimitExceeded)
    return exc.limit


@pytest.fixture(params=FORMATS, ids=IDS)
def fmt(request: pytest.FixtureRequest) -> Format:
    """Each zip-based format in turn."""
    return request.param  # type: ignore[no-any-return]


def test_good_package_reads(tmp_path: Path, fmt: Format) -> None:
    assert read(fmt, package(tmp_path, fmt)).strip()


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04" + bytes(40), b"just some text\n"])
def test_not_a_zip_is_corrupt(tmp_path: Path, fmt: Format, data: bytes) -> None:
    failure(fmt, write(tmp_path, f"bad.{fmt.name}", data), CorruptFile)


def test_truncated_is_corrupt(tmp_path: Path, fmt: Format) -> None:
    whole = package(tmp_path, fmt).read_bytes()
    failure(fmt, write(tmp_path, f"half.{fmt.name}", whole[: len(whole) // 2]), CorruptFile)


def test_encrypted_member(tmp_path: Path, fmt: Format) -> None:
    data = set_encrypted_flag(package(tmp_path, fmt).read_bytes())
    failure(fmt, write(tmp_path, f"enc.{fmt.name}", data), EncryptedFile)


def test_bad_xml_is_corrupt(tmp_path: Path, fmt: Format) -> None:
    spoiled = f"<{fmt.root} xmlns:o='urn:o'><p>{SECRET}</q></{fmt.root}>"
    failure(fmt, package(tmp_path, fmt, **{fmt.part: spoiled}), CorruptFile)


def test_missing_part_is_corrupt(tmp_path: Path, fmt: Format) -> None:
    members = fmt.members()
    del members[fmt.part]
    stored = "mimetype" if "mimetype" in members else None
    path = write_zip(tmp_path, f"gap.{fmt.name}", members, stored_first=stored)
    failure(fmt, path, CorruptFile)


def test_billion_laughs_at_default_caps_is_refused(tmp_path: Path, fmt: Format) -> None:
    bomb = O.LAUGHS.replace("lolz", fmt.root) + f"<{fmt.root} xmlns:o='urn:o'>&lol9;</{fmt.root}>"
    failure(fmt, package(tmp_path, fmt, **{fmt.part: bomb}), Refused)


def test_latin1_xml_is_refused(tmp_path: Path, fmt: Format) -> None:
    doc = f"<?xml version='1.0' encoding='ISO-8859-1'?><{fmt.root} xmlns:o='urn:o'/>"
    failure(fmt, package(tmp_path, fmt, **{fmt.part: doc.encode("latin-1")}), Refused)


def test_member_count_cap(tmp_path: Path, fmt: Format) -> None:
    assert limit_hit(fmt, package(tmp_path, fmt), zip_members=2) == "zip_members"


def test_member_size_cap(tmp_path: Path, fmt: Format) -> None:
    assert limit_hit(fmt, package(tmp_path, fmt), zip_member_bytes=300) == "zip_member_bytes"


def test_ratio_cap_on_a_few_kb_bomb(tmp_path: Path, fmt: Format) -> None:
    """The spoiled part padded with 2 MiB of comment: a file of a few KB at 1000:1."""
    members = fmt.members()
    padded = str(members[fmt.part]) + "<!--" + " " * (2 * MiB) + "-->"
    path = package(tmp_path, fmt, **{fmt.part: padded})
    assert path.stat().st_size < 40_000
    assert limit_hit(fmt, path) == "zip_ratio"


def test_xml_bytes_cap(tmp_path: Path, fmt: Format) -> None:
    assert limit_hit(fmt, package(tmp_path, fmt), xml_bytes=1000) == "xml_bytes"


@pytest.mark.parametrize("name", ["docx", "xlsx", "pptx", "odt"])
def test_parts_per_block_cap(tmp_path: Path, name: str) -> None:
    fmt = FORMATS[IDS.index(name)]
    assert limit_hit(fmt, package(tmp_path, fmt), parts_per_block=5) == "parts_per_block"


@pytest.mark.parametrize("name", ["docx", "odt"])
def test_real_zip_bomb_past_64_mib_at_default_caps(tmp_path: Path, name: str) -> None:
    """The main part inflates to 65 MiB of paragraphs (about 100 KB zipped)."""
    fmt = FORMATS[IDS.index(name)]
    members = fmt.members()
    bomb = tmp_path / f"bomb.{fmt.name}"
    stored = "mimetype" if "mimetype" in members else None
    _zip_with_streamed_part(bomb, members, fmt.part, 65 * MiB, stored)
    assert bomb.stat().st_size < 300_000
    assert limit_hit(fmt, bomb) == "zip_member_bytes"


def _zip_with_streamed_part(
    path: Path, members: O.Members, part: str, size: int, stored: str | None
) -> None:
    """``members`` zipped, with ``part`` replaced by ``size`` bytes written in chunks."""
    chunk = b"<a/>" * (MiB // 4)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            if name == part:
                with zf.open(name, "w") as fh:
                    for _ in range(size // len(chunk)):
                        fh.write(chunk)
            else:
                method = zipfile.ZIP_STORED if name == stored else zipfile.ZIP_DEFLATED
                zf.writestr(name, data, compress_type=method)


def test_odf_with_encrypted_content_is_encrypted(tmp_path: Path) -> None:
    fmt = FORMATS[IDS.index("odt")]
    manifest = str(fmt.members()["META-INF/manifest.xml"]).replace(
        'manifest:media-type="text/xml"/>',
        'manifest:media-type="text/xml"><manifest:encryption-data manifest:checksum="x"/>'
        "</manifest:file-entry>",
    )
    path = package(tmp_path, fmt, **{"META-INF/manifest.xml": manifest, "content.xml": "\x8f"})
    failure(fmt, path, EncryptedFile)


def _encryption_xml(*uris: str) -> str:
    refs = "".join(
        '<enc:EncryptedData xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:CipherData>'
        f'<enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData>'
        for uri in uris
    )
    return (
        f'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">{refs}</encryption>'
    )


def test_epub_with_an_encrypted_chapter_is_encrypted(tmp_path: Path) -> None:
    fmt = FORMATS[IDS.index("epub")]
    enc = _encryption_xml("OEBPS/fonts/a.otf", "OEBPS/Text/chapter%202.xhtml")
    failure(fmt, package(tmp_path, fmt, **{"META-INF/encryption.xml": enc}), EncryptedFile)


def test_epub_with_only_obfuscated_fonts_reads(tmp_path: Path) -> None:
    fmt = FORMATS[IDS.index("epub")]
    path = package(tmp_path, fmt, **{"META-INF/encryption.xml": _encryption_xml("OEBPS/a.otf")})
    assert read(fmt, path) == O.EPUB_TEXT


def test_flat_odf_billion_laughs_is_refused(tmp_path: Path) -> None:
    doc = O.LAUGHS.replace("lolz", "office:document") + "<office:document>&lol9;</office:document>"
    fmt = Format("fodt", ODF[0], M.FODT, dict, "", "")
    failure(fmt, write(tmp_path, "laughs.fodt", doc), Refused)


FB2 = Format("fb2", Fb2Reader(), M.FB2, dict, "", "FictionBook")


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", CorruptFile),
        (O.FB2[: len(O.FB2) // 2].encode(), CorruptFile),
        (f"<FictionBook><body><p>{SECRET}</b></body></FictionBook>".encode(), CorruptFile),
        ((O.LAUGHS.replace("lolz", "FictionBook") + "<FictionBook>&lol9;</FictionBook>").encode(),
         Refused),
        (O.FB2.replace("UTF-8", "windows-1251").encode(), Refused),
    ],
    ids=["empty", "truncated", "bad-xml", "billion-laughs", "cp1251"],
)  # fmt: skip
def test_fb2_hostile(tmp_path: Path, data: bytes, kind: type[ReadFailure]) -> None:
    failure(FB2, write(tmp_path, "book.fb2", data), kind)


def test_fb2_bounds(tmp_path: Path) -> None:
    path = write(tmp_path, "book.fb2", O.FB2)
    assert read(FB2, path) == O.FB2_TEXT
    assert limit_hit(FB2, path, xml_bytes=500) == "xml_bytes"
    assert limit_hit(FB2, path, parts_per_block=2) == "parts_per_block"


def test_pptx_reads_only_the_parts_its_text_comes_from(tmp_path: Path) -> None:
    """Layouts, masters and themes (most of a deck's XML) are never inflated or parsed, so a
    billion-laughs layout or a broken theme costs nothing and refuses nothing; the slides
    and their notes are read as before."""
    fmt = FORMATS[IDS.index("pptx")]
    good = read(fmt, package(tmp_path, fmt))
    bomb = (
        O.LAUGHS.replace("lolz", "p:sldLayout")
        + "<p:sldLayout xmlns:p='urn:p'>&lol9;</p:sldLayout>"
    )
    spoiled = {"ppt/slideLayouts/slideLayout1.xml": bomb, "ppt/theme/theme1.xml": "<a:theme><"}
    assert read(fmt, package(tmp_path, fmt, **spoiled)) == good
    assert good.strip()


def test_pptm_and_other_main_types_read_like_a_presentation(tmp_path: Path) -> None:
    fmt = FORMATS[IDS.index("pptx")]
    good = read(fmt, package(tmp_path, fmt))
    types = bytes(_pptx_members()["[Content_Types].xml"])
    main = b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    for other in (
        b"application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
        b"application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    ):
        changed = {"[Content_Types].xml": types.replace(main, other)}
        assert read(fmt, package(tmp_path, fmt, **changed)) == good
