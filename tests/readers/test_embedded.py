"""Documents embedded in Office documents are read as the document's members.

OOXML packages are written here (an ``embeddings/`` part in its own format, OLE object files
holding a PDF in ``CONTENTS`` or a dropped file in ``\\x01Ole10Native``); the Office 97 layouts
(an ``MBD`` storage in a workbook, ``ObjectPool`` in a Word file) are real files from Tika
(``data/embedded``, see its SOURCES.md).
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.extract import Outcome
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.embedded import ole_native
from engine.readers.ppt import records as ppt_records
from engine.tools import ToolSet, discover
from fixtures.gen import _pdfwriter as W
from fixtures.gen._cfb import compound_file
from fixtures.gen.common import zip_bytes
from fixtures.gen.office import docx_members, pptx_bytes, xlsx_members
from tests.quarrycli import shown, sweep, text_shown
from tests.readers.test_metafile import Emf as EmfPicture
from tests.readers.test_metafile import Wmf as WmfPicture
from tests.readkit import read_bytes

DATA = Path(__file__).parent / "data" / "embedded"


def native(name: str, data: bytes) -> bytes:
    """An ``\\x01Ole10Native`` stream as the Packager writes it for a dropped file."""
    body = (
        b"\x02\x00"
        + name.encode("latin-1") + b"\x00"
        + f"C:\\Users\\me\\{name}".encode("latin-1") + b"\x00"
        + b"\x00\x00\x03\x00" + struct.pack("<I", 0)
        + f"C:\\Temp\\{name}".encode("latin-1") + b"\x00"
        + struct.pack("<I", len(data)) + data
    )  # fmt: skip
    return struct.pack("<I", len(body)) + body


def ole_object(streams: dict[str, bytes]) -> bytes:
    return compound_file({"\x01CompObj": bytes(64), **streams})


def read(
    tmp_path: Path, name: str, data: bytes, limits: Limits = DEFAULT_LIMITS
) -> tuple[Outcome, str]:
    return read_bytes(tmp_path, name, data, limits=limits)


def with_parts(members: dict[str, bytes | str], prefix: str, parts: dict[str, bytes]) -> bytes:
    return zip_bytes({**members, **{f"{prefix}embeddings/{n}": d for n, d in parts.items()}})


PDF = W.text_pdf(["Quarterly figures in the embedded PDF"])
XLSX = zip_bytes(xlsx_members())


def test_a_word_report_s_embedded_workbook_pdf_and_dropped_file_are_its_members(
    tmp_path: Path,
) -> None:
    docx = with_parts(
        docx_members(),
        "word/",
        {
            "Microsoft_Excel_Worksheet.xlsx": XLSX,
            "oleObject1.bin": ole_object({"CONTENTS": PDF}),
            "oleObject2.bin": ole_object(
                {"\x01Ole10Native": native("notes.txt", b"Dropped notes\n")}
            ),
            "oleObject3.bin": ole_object({"Chart": b"no document in here"}),
        },
    )
    outcome, text = read(tmp_path, "report.docx", docx)
    assert outcome.status == "ok", outcome.error
    assert text.startswith("Hello world\n")  # the document's own text first
    assert "# member embedded/Microsoft_Excel_Worksheet.xlsx\n# sheet1\nName\tScore" in text
    assert "# member embedded/oleObject1.bin/CONTENTS\n" in text
    assert "Quarterly figures in the embedded PDF" in text
    assert "# member embedded/oleObject2.bin/notes.txt\nDropped notes\n" in text
    assert "oleObject3" not in text  # an object holding no document is no member
    assert [(m.path, m.status) for m in outcome.members] == [
        ("embedded/Microsoft_Excel_Worksheet.xlsx", "ok"),
        ("embedded/oleObject1.bin/CONTENTS", "ok"),
        ("embedded/oleObject2.bin/notes.txt", "ok"),
    ]
    assert outcome.error is None


def test_a_workbook_and_a_deck_carry_theirs_too(tmp_path: Path) -> None:
    xlsx = with_parts(xlsx_members(), "xl/", {"oleObject1.bin": ole_object({"CONTENTS": PDF})})
    outcome, text = read(tmp_path, "book.xlsx", xlsx)
    assert outcome.pages == 2 and "Quarterly figures" in text
    deck = zip_bytes({**_unzipped(pptx_bytes()), "ppt/embeddings/sheet.xlsx": XLSX})
    outcome, text = read(tmp_path, "deck.pptx", deck)
    assert outcome.status == "ok" and "# member embedded/sheet.xlsx\n# sheet1" in text


def _unzipped(data: bytes) -> dict[str, bytes | str]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_a_damaged_embedded_document_costs_only_itself(tmp_path: Path) -> None:
    docx = with_parts(docx_members(), "word/", {"broken.xlsx": b"PK\x03\x04 not a zip"})
    outcome, text = read(tmp_path, "report.docx", docx)
    assert outcome.status == "ok" and text.startswith("Hello world\n")
    (member,) = outcome.members
    assert (member.path, member.status) == ("embedded/broken.xlsx", "error")
    assert outcome.error == "1 of 1 embedded documents not read"


def test_an_embedded_part_past_the_member_bound_is_named_with_its_verdict(
    tmp_path: Path,
) -> None:
    big = b"x" * 300_000
    docx = with_parts(docx_members(), "word/", {"big.txt": big, "small.txt": b"small one\n"})
    limits = Limits(zip_member_bytes=100_000)
    outcome, text = read(tmp_path, "report.docx", docx, limits)
    assert outcome.status == "ok" and "small one" in text
    verdicts = {m.path: (m.status, m.reason) for m in outcome.members}
    assert verdicts["embedded/big.txt"] == ("error", "limit")
    assert verdicts["embedded/small.txt"] == ("ok", None)


def test_documents_embedded_past_the_nesting_bound_are_not_read_and_it_says_so(
    tmp_path: Path,
) -> None:
    inner = with_parts(docx_members(), "word/", {"deepest.txt": b"too deep\n"})
    outer = with_parts(docx_members(), "word/", {"inner.docx": inner})
    outcome, text = read(tmp_path, "report.docx", outer, Limits(archive_depth=1))
    assert outcome.status == "ok" and "too deep" not in text
    (member,) = outcome.members
    assert (member.path, member.status) == ("embedded/inner.docx", "ok")
    assert member.error == "embedded documents not read: nested more than 1 deep"


def test_an_excel_97_workbook_s_embedded_pdf(tmp_path: Path) -> None:
    outcome, text = _read_data(tmp_path, "testExcel_embeddedPDF.xls")
    assert outcome.status == "ok"
    assert [m.path for m in outcome.members] == ["embedded/MBD0063FA15/CONTENTS"]
    assert "# member embedded/MBD0063FA15/CONTENTS\n" in text


def test_a_word_97_document_s_embedded_rtf(tmp_path: Path) -> None:
    if shutil.which("antiword") is None and shutil.which("catdoc") is None:
        return  # (the document's own text needs one: tests/readers/test_legacy.py)
    outcome, text = _read_data(tmp_path, "testWORD_embedded_rtf.doc", discover())
    assert outcome.status == "ok"
    (member,) = outcome.members
    assert member.path.startswith("embedded/ObjectPool/") and member.status == "ok"
    assert f"# member {member.path}\n" in text


def _read_data(tmp_path: Path, name: str, tools: ToolSet | None = None) -> tuple[Outcome, str]:
    return read_bytes(tmp_path, name, (DATA / name).read_bytes(), tools)


def ole1(klass: str, native_data: bytes, kind: int = 2) -> bytes:
    """An OLE 1 object as RTF's ``\\objdata`` holds it (before its hex)."""

    def lp(text: str) -> bytes:
        raw = text.encode("latin-1") + b"\x00"
        return struct.pack("<I", len(raw)) + raw

    head = struct.pack("<II", 0x0501, kind) + lp(klass) + lp("") + lp("")
    return head + struct.pack("<I", len(native_data)) + native_data


def rtf(*objects: bytes) -> bytes:
    parts = [
        b"{\\object\\objemb{\\*\\objclass X}{\\*\\objdata\r\n"
        + b"\r\n".join(obj.hex().encode()[i : i + 128] for i in range(0, 2 * len(obj), 128))
        + b"\r\n}{\\result {\\pict picture}}}"
        for obj in objects
    ]
    return b"{\\rtf1\\ansi Body text before.\\par " + b"".join(parts) + b"\\par After.}"


def test_an_rtf_document_s_embedded_objects_are_its_members(tmp_path: Path) -> None:
    """A dropped file (class Package), a PDF in an object's CONTENTS and an Excel 97 workbook
    that is the object's OLE2 file itself; a static picture and a link are no members."""
    from fixtures.gen.legacy import xls_bytes

    package = native("notes.txt", b"Dropped notes\n")[4:]  # (OLE 1 has no size before it)
    data = rtf(
        ole1("Package", package),
        ole1("AcroExch.Document.DC", ole_object({"CONTENTS": PDF})),
        ole1("Excel.Sheet.8", xls_bytes()),
        ole1("StaticDib", b"\x00" * 40, kind=5),
        ole1("Word.Document.8", b"link", kind=1),
    )
    outcome, text = read(tmp_path, "letter.rtf", data)
    assert outcome.status == "ok" and text.startswith(
        "Body text before.\n\nAfter.\n# member embedded/object1/notes.txt\n"
    )
    assert [(m.path, m.status) for m in outcome.members] == [
        ("embedded/object1/notes.txt", "ok"),
        ("embedded/object2/CONTENTS", "ok"),
        ("embedded/object3/document", "ok"),
    ]
    assert "Dropped notes" in text and "Quarterly figures" in text and "Widget" in text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_any_objdata_gives_members_or_none_and_the_body_stays(raw: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        outcome, text = read(Path(tmp), "a.rtf", rtf(raw))
    assert outcome.status == "ok" and text.startswith("Body text before.")
    assert outcome.reason is None


def deck_with_objects(*records: bytes) -> bytes:
    """The fixtures' two-slide deck with ``records`` after its last edit (ExOleObjStg
    records live at the stream's top level; nothing in the edit chain points past them)."""
    import io

    import olefile

    from fixtures.gen.legacy import ppt_bytes

    with olefile.OleFileIO(io.BytesIO(ppt_bytes())) as ole:
        stream = ole.openstream("PowerPoint Document").read()
        user = ole.openstream("Current User").read()
    # (the CFB writer pads each stream with zeros: the records end at the first "record" of
    # type 0, and the new ones go right after them)
    end = next(r.start - 8 for r in ppt_records(stream, 0, len(stream)) if r.type == 0)
    stream = stream[:end] + b"".join(records)
    return compound_file({"PowerPoint Document": stream, "Current User": user})


def test_a_powerpoint_97_deck_s_embedded_objects_are_its_members(tmp_path: Path) -> None:
    """Compressed and stored objects are read; one that will not inflate, or inflates past
    the member bound, is named with its verdict and the deck's slides stay."""
    import zlib

    from fixtures.gen.legacy import rec, xls_bytes

    pdf_object = ole_object({"CONTENTS": PDF})
    deck = deck_with_objects(
        rec(0x1011, struct.pack("<I", len(pdf_object)) + zlib.compress(pdf_object), inst=1),
        rec(0x1011, xls_bytes()),
        rec(0x1011, struct.pack("<I", 99) + b"not zlib at all", inst=1),
        rec(0x1011, struct.pack("<I", 1) + zlib.compress(b"\0" * 300_000), inst=1),
    )
    limits = Limits(zip_member_bytes=200_000)
    outcome, text = read(tmp_path, "deck.ppt", deck, limits)
    assert outcome.status == "ok"
    assert text.startswith("# slide1\nTitle one\n")
    verdicts = [(m.path, m.status, m.reason) for m in outcome.members]
    assert verdicts == [
        ("embedded/object1/CONTENTS", "ok", None),
        ("embedded/object2/document", "ok", None),
        ("embedded/object3", "error", "corrupt"),
        ("embedded/object4", "error", "limit"),
    ]
    assert "Quarterly figures" in text and "Widget" in text
    assert outcome.error == "2 of 4 embedded documents not read"


def test_a_packaged_file_s_name_and_bytes() -> None:
    assert ole_native(native("a.pdf", b"%PDF-1.4")) == ("a.pdf", b"%PDF-1.4")
    assert ole_native(native("x.txt", b"")) is None  # nothing dropped
    assert ole_native(native("x.txt", b"abc")[:-1]) is None  # cut short


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_native_stream_gives_a_file_inside_it_or_none(raw: bytes) -> None:
    found = ole_native(raw)
    if found is not None:
        name, data = found
        assert data and data in raw and "/" not in name


def test_as_a_user_meets_it(tmp_path: Path) -> None:
    """``quarry sweep`` then ``quarry show``: the report's record lists its embedded
    documents, and its text holds theirs."""
    root = tmp_path / "docs"
    root.mkdir()
    docx = with_parts(docx_members(), "word/", {"oleObject1.bin": ole_object({"CONTENTS": PDF})})
    (root / "report.docx").write_bytes(docx)
    store = tmp_path / "s"
    proc = sweep(root, store)
    assert proc.returncode == 0, proc.stderr
    record = shown(root / "report.docx", store)
    assert [m["path"] for m in record["members"]] == ["embedded/oleObject1.bin/CONTENTS"]
    assert "Quarterly figures in the embedded PDF" in text_shown(root / "report.docx", store)


def _object_with_picture(obj: bytes, picture: bytes, kind: bytes = b"emfblip") -> bytes:
    """An object as Word writes one: its data, then in its result the picture of it, a
    metafile (in a ``\\shppict``, with a ``\\blipuid`` group of hex digits of its own), and
    the ``\\nonshppict`` copy of that picture an old reader would show."""
    return (
        b"{\\object\\objautlink\\rsltpict{\\*\\objclass Word.Document.8}{\\*\\objdata "
        + obj.hex().encode()
        + b"}{\\result {\\*\\shppict{\\pict{\\*\\picprop\\shplid1025{\\sp{\\sn shapeType}"
        + b"{\\sv 75}}}\\picw100\\pich100\\"
        + kind
        + b"\\bliptag-1{\\*\\blipuid ea04f8a5296af205c71b655ba1a0aa08}\r\n"
        + b"\r\n".join(picture.hex().encode()[i : i + 128] for i in range(0, 2 * len(picture), 128))
        + b"}}{\\nonshppict{\\pict\\wmetafile8\\picw100 "
        + bytes(WmfPicture().textout(b"Old copy", 0, 0)).hex().encode()
        + b"}}}}"
    )


def test_an_object_that_holds_no_document_is_read_by_its_metafile_picture(
    tmp_path: Path,
) -> None:
    """A linked Word document (Tika's testRTFEmbeddedLink.rtf) holds no data but the link;
    Word drew its whole text into the EMF picture in the object's result, and the file read
    empty. That picture is read as the object's member; its old-style copy is not."""
    picture = bytes(EmfPicture().text("Linked text", 0, 0).text("second line", 0, 40))
    link = ole1("Word.Document.8", b"C:\\docs\\linked.doc", kind=1)
    wmf = bytes(WmfPicture().textout(b"Equation text", 0, 0))
    data = (
        b"{\\rtf1\\ansi Before.\\par "
        + _object_with_picture(link, picture)
        + _object_with_picture(ole1("Equation.3", b"\x00" * 16), wmf, b"wmetafile8")
        + b"{\\pict\\emfblip "  # a picture of no object: never read
        + picture.hex().encode()
        + b"}\\par After.}"
    )
    outcome, text = read(tmp_path, "linked.rtf", data)
    assert [(m.path, m.status) for m in outcome.members] == [
        ("embedded/object1/picture.emf", "ok"),
        ("embedded/object2/picture.wmf", "ok"),
    ]
    assert "# member embedded/object1/picture.emf\nLinked text\nsecond line\n" in text
    assert "Equation text" in text
    assert "Old copy" not in text and text.count("Linked text") == 1


def test_an_object_that_holds_a_document_is_not_read_twice_by_its_picture(
    tmp_path: Path,
) -> None:
    package = native("notes.txt", b"Dropped notes\n")[4:]
    picture = bytes(EmfPicture().text("Dropped notes", 0, 0))
    data = (
        b"{\\rtf1\\ansi Body.\\par "
        + _object_with_picture(ole1("Package", package), picture)
        + b"}"
    )
    outcome, text = read(tmp_path, "dropped.rtf", data)
    assert [(m.path, m.status) for m in outcome.members] == [("embedded/object1/notes.txt", "ok")]
    assert text.count("Dropped notes") == 1


def test_embedded_parts_are_members_in_the_order_of_their_numbers(tmp_path: Path) -> None:
    """Word wrote oleObject2 before oleObject1 in the zip (Tika's testWORD_embedded_pdf.docx);
    the members came in that order, and oleObject10 before oleObject9."""
    parts = {f"oleObject{n}.bin": ole_object({"CONTENTS": PDF}) for n in (2, 10, 1, 9)}
    outcome, _text = read(tmp_path, "order.docx", with_parts(docx_members(), "word/", parts))
    assert [m.path for m in outcome.members] == [
        f"embedded/oleObject{n}.bin/CONTENTS" for n in (1, 2, 9, 10)
    ]
