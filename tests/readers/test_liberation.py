"""Works, Quattro Pro notebooks, StarOffice Writer, Publisher, iWork and PowerPoint 4 files,
read through the Document Liberation Project's tools.

Real files (``data/liberation/``, see its SOURCES.md) are told apart on any machine; their
text is read where the tools are installed (CI installs them). On a bare machine the tools are
stand-ins that check what they are given and print what the reader must make of it.
"""

from __future__ import annotations

import os
import shutil
import uuid
import zipfile
from pathlib import Path

import orjson
import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, EncryptedFile, NeedsTool
from engine.readers.base import ReadContext, Reader, ReadInfo, TextSink
from engine.readers.registry import reader_for
from engine.tools import ToolSet, discover
from fixtures.gen._cfb import compound_file
from tests.quarrycli import quarry, sweep
from tests.readkit import read_file, stand_in

DATA = Path(__file__).parent / "data" / "liberation"
FILES = {
    "testWORKSWordProcessor3.0.wps": (M.WORKS, "wps2text", "made with Microsoft Works"),
    "testQUATTRO.qpw": (M.QUATTRO_OLE, "wks2text", "example spreadsheet made with Quattro Pro"),
    "testStarOffice-5.2-writer.sdw": (M.STAR_WRITER, "sd2text", "example StarOffice 5.2 document"),
    "testStarOffice-5.2-calc.sdc": (M.STAR_CALC, "sd2text", "example StarOffice 5.2 spreadsheet"),
    "testStarOffice-5.2-draw.sda": (M.STAR_DRAW, "sd2text", "example StarOffice 5.2 drawing"),
    "testStarOffice-5.2-impress.sdd": (
        M.STAR_IMPRESS,
        "sd2text",
        "example StarOffice 5.2 presentation",
    ),
    "testVORImpressTemplate.vor": (
        M.STAR_IMPRESS,
        "sd2text",
        "example StarOffice 5.2 presentation",
    ),
    "testPUBLISHER.pub": (M.PUBLISHER, "pub2xhtml", "0123456789abcdef"),
    "testKeynote2018.key": (M.KEYNOTE, "key2text", "Libreoffice 6.2"),
    "ecdl_paris.ppt": (M.PPT4, "mwaw2text", "JISC Digital Library initiatives"),
    "testWORKS.wps": (M.WORKS, "wps2text", "made with Microsoft Works Word Processor 7.0"),
    "testVISIO.vsd": (M.VISIO, "vsd2text", "I am a test view"),
}


def reader(mime: str) -> Reader:
    found = reader_for(mime)
    assert found is not None, mime
    return found


def read(path: Path, mime: str, tools: ToolSet) -> tuple[str, ReadInfo]:
    sink = TextSink(1_000_000)
    info = reader(mime).read(path, ReadContext(mime, tools=tools), sink)
    return sink.getvalue(), info


def only(tmp_path: Path, name: str, script: str) -> ToolSet:
    """A tool set of one stand-in."""
    return ToolSet((stand_in(tmp_path, name, script),))


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_real_file_is_told_apart_and_waits_on_its_tool(name: str) -> None:
    mime, tool, _text = FILES[name]
    path = DATA / name
    assert detect(path) == mime
    with pytest.raises(NeedsTool) as caught:
        read(path, mime, ToolSet.empty())
    assert caught.value.tools == (tool,)


@pytest.mark.parametrize(
    ("stream", "mime"),
    [
        ("MN0", M.WORKS),
        ("NativeContent_MAIN", M.QUATTRO_OLE),
        ("PerfectOffice_MAIN", M.QUATTRO_OLE),
        ("StarWriterDocument", M.STAR_WRITER),
        ("StarCalcDocument", M.STAR_CALC),
        ("StarDrawDocument3", M.STAR_DRAW),
        ("PP40", M.PPT4),
        ("VisioDocument", M.VISIO),
    ],
)
def test_an_ole2_file_is_told_apart_by_its_stream_whatever_its_name(
    tmp_path: Path, stream: str, mime: str
) -> None:
    path = tmp_path / "document.bin"
    path.write_bytes(compound_file({"\x05SummaryInformation": bytes(64), stream: bytes(64)}))
    assert detect(path) == mime


@pytest.mark.parametrize("name", ["slides.shw", "slides.qpw", "slides"])
def test_corel_presentations_is_no_quattro_notebook_whatever_its_name(
    tmp_path: Path, name: str
) -> None:
    """Its ``PerfectOffice_MAIN`` stream (a WordPerfect-family document: ``\\xffWPC``) is the
    one Quattro Pro notebooks have; a ``SlideShow`` storage beside it says what it is (Tika's
    testCOREL.shw was a notebook the Quattro Pro reader found corrupt)."""
    path = tmp_path / name
    show = b"\xffWPC\x1a\x00\x00\x00\x0f\x0f\x02\x00" + bytes(52)
    streams = {"PerfectOffice_MAIN": show, "SlideShow/Main": bytes(64)}
    path.write_bytes(compound_file({"\x05SummaryInformation": bytes(64), **streams}))
    assert detect(path) == M.COREL_SHOW
    outcome, _ = read_file(path, discover())
    assert (outcome.status, outcome.reason) == ("unsupported", "no_reader")


def test_works_5_to_9_is_told_from_publisher_by_its_class(tmp_path: Path) -> None:
    works = uuid.UUID("0EA45AB2-9E0A-11D1-A407-00C04FB932BA").bytes_le
    path = tmp_path / "letter.bin"
    path.write_bytes(compound_file({"CONTENTS": bytes(64), "SPELLING": bytes(64)}, works))
    assert detect(path) == M.WORKS
    path.write_bytes(compound_file({"CONTENTS": bytes(64)}))  # (no class: not said)
    assert detect(path) == M.OLE


def test_star_impress_is_told_from_star_draw_by_its_class(tmp_path: Path) -> None:
    impress = uuid.UUID("565C7221-85BC-11D1-89D0-008029E4B0B1").bytes_le
    path = tmp_path / "slides.vor"  # (a template's name says neither)
    path.write_bytes(compound_file({"StarDrawDocument3": bytes(64)}, impress))
    assert detect(path) == M.STAR_IMPRESS
    path.write_bytes(compound_file({"StarDrawDocument3": bytes(64)}))
    assert detect(path) == M.STAR_DRAW


def test_an_ole2_file_with_two_kinds_streams_is_neither(tmp_path: Path) -> None:
    path = tmp_path / "document.bin"
    path.write_bytes(compound_file({"MN0": bytes(64), "PP40": bytes(64)}))
    assert detect(path) == M.OLE


def test_powerpoint_97_stays_powerpoint_97_beside_a_pp40_stream(tmp_path: Path) -> None:
    path = tmp_path / "deck.ppt"
    path.write_bytes(compound_file({"PowerPoint Document": bytes(64), "PP40": bytes(64)}))
    assert detect(path) == M.PPT


def test_the_tool_is_given_the_file_and_its_text_kept(tmp_path: Path) -> None:
    path = tmp_path / "-letter.wps"  # (a name a tool would take for an option)
    path.write_bytes(b"works")
    tools = only(
        tmp_path, "wps2text", f'[ "$1" = {os.fspath(path)!r} ] || exit 9\necho "Dear reader,"\n'
    )
    assert read(path, M.WORKS, tools) == ("Dear reader,\n", ReadInfo("wps2text"))


def test_a_file_the_tool_cannot_read_is_corrupt_in_its_words(tmp_path: Path) -> None:
    path = tmp_path / "a.sdw"
    path.write_bytes(b"x")
    tools = only(tmp_path, "sd2text", 'echo "ERROR: Unsupported file format!" >&2\nexit 1\n')
    with pytest.raises(CorruptFile, match=r"^sd2text could not read it: ERROR: Unsupported file"):
        read(path, M.STAR_WRITER, tools)


def test_powerpoint_4_slides_are_blocks_as_powerpoint_97_s_are(tmp_path: Path) -> None:
    path = tmp_path / "deck.ppt"
    path.write_bytes(b"pp4")
    tools = only(
        tmp_path,
        "mwaw2text",
        "printf 'Title one\\n\\n\\n\\t##### Page 1 #####\\n\\nSecond\\n\\tpoint\\n"
        "\\t##### Page 2 #####\\nThird\\n'\n",
    )
    text, info = read(path, M.PPT4, tools)
    assert text == "# slide1\nTitle one\n# slide2\nSecond\n\tpoint\n# slide3\nThird\n"
    assert info == ReadInfo("mwaw2text", pages=3)


def test_each_publisher_text_frame_is_a_line(tmp_path: Path) -> None:
    path = tmp_path / "flyer.pub"
    path.write_bytes(b"pub")
    page = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:svg="http://www.w3.org/2000/svg"><body>'
        "<svg:svg><svg:text><svg:tspan>Spring</svg:tspan><svg:tspan>fair</svg:tspan></svg:text>"
        "<svg:text><svg:tspan>Saturday 10am</svg:tspan></svg:text></svg:svg></body></html>"
    )
    tools = only(tmp_path, "pub2xhtml", f"cat <<'END'\n{page}\nEND\n")
    text, info = read(path, M.PUBLISHER, tools)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines == ["Spring fair", "Saturday 10am"] or lines == ["Springfair", "Saturday 10am"]
    assert info == ReadInfo("pub2xhtml")


def iwork_zip(path: Path, method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("index.xml"), b"<sl:document/>", compress_type=method)
    return path


def test_an_iwork_file_of_no_known_kind_is_tried_with_each_tool(tmp_path: Path) -> None:
    path = iwork_zip(tmp_path / "renamed.zip")
    tools = ToolSet(
        (
            stand_in(tmp_path, "key2text", 'echo "key" >&2\nexit 1\n'),
            stand_in(tmp_path, "numbers2text", 'echo "Category\tAmount"\n'),
            stand_in(tmp_path, "pages2text", 'echo "not pages" >&2\nexit 1\n'),
        )
    )
    text, info = read(path, M.IWORK, tools)
    assert (text, info) == ("Category\tAmount\n", ReadInfo("numbers2text"))


def test_an_iwork_file_no_tool_reads_is_corrupt_in_the_first_tool_s_words(
    tmp_path: Path,
) -> None:
    path = iwork_zip(tmp_path / "renamed.zip")
    tools = only(tmp_path, "pages2text", 'echo "ERROR: Unsupported file format!" >&2\nexit 1\n')
    with pytest.raises(CorruptFile, match=r"^pages2text could not read it"):
        read(path, M.IWORK, tools)


def test_a_pages_file_known_by_name_waits_on_pages2text_alone(tmp_path: Path) -> None:
    path = iwork_zip(tmp_path / "letter.pages")
    with pytest.raises(NeedsTool) as caught:
        read(path, M.PAGES, ToolSet.empty())
    assert caught.value.tools == ("pages2text",)


def test_an_iwork_file_with_enciphered_members_is_encrypted(tmp_path: Path) -> None:
    """iWork protects a document by storing its members in a method of its own: the tool
    fails on it, and the verdict says why."""
    path = iwork_zip(tmp_path / "letter.pages", method=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    for at in (raw.find(b"PK\x03\x04"), raw.find(b"PK\x01\x02")):  # (both headers' method)
        offset = at + (8 if raw[at + 2] == 3 else 10)
        raw[offset : offset + 2] = (25452).to_bytes(2, "little")
    path.write_bytes(bytes(raw))
    tools = only(tmp_path, "pages2text", 'echo "ERROR: Unsupported file format!" >&2\nexit 1\n')
    with pytest.raises(EncryptedFile, match="protected by a password"):
        read(path, M.PAGES, tools)


# -- with the real tools ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_real_file_s_text_is_read(name: str) -> None:
    mime, tool, expected = FILES[name]
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool}")
    text, info = read(DATA / name, mime, discover())
    assert expected in text
    assert info.extractor == tool


@pytest.mark.skipif(shutil.which("pages2text") is None, reason="no pages2text")
def test_a_pages_file_protected_by_a_password_is_encrypted() -> None:
    path = DATA / "testPagesPwdProtected.pages"
    assert detect(path) == M.PAGES
    with pytest.raises(EncryptedFile):
        read(path, M.PAGES, discover())


def test_a_folder_of_them_as_a_user_meets_it(tmp_path: Path) -> None:
    """Swept without the tools, each file waits on its own and ``quarry tools`` counts them
    with the package to install; swept again with the tools (where installed), each is read
    (the ones installed: a tool missing here leaves its file waiting)."""
    root = tmp_path / "docs"
    shutil.copytree(DATA, root)
    store = tmp_path / "s"
    hidden = sorted({tool for _mime, tool, _text in FILES.values()} | {"pages2text"})
    without = [arg for tool in hidden for arg in ("--without", tool)]
    proc = sweep(root, store, *without)
    assert proc.returncode == 0, proc.stderr
    proc = quarry("tools", store, "--json")
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["wps2text"]["files_waiting"] == 2  # (Works 3 and Works 7)
    assert rows["sd2text"]["files_waiting"] == 5  # (Writer, Calc, Draw, Impress, a template)
    assert rows["vsd2text"]["files_waiting"] == 1
    assert rows["key2text"]["files_waiting"] == 1
    assert rows["pages2text"]["files_waiting"] == 1
    assert "libwps-tools" in rows["wks2text"]["install"]["debian"]
    proc = sweep(root, store)
    # (2: the store holds an error: the Pages file protected by a password, where it is read)
    assert proc.returncode == (0 if shutil.which("pages2text") is None else 2), proc.stderr
    records = {
        r["path"]: r for r in map(orjson.loads, (store / "extract.jsonl").read_bytes().splitlines())
    }
    for name, (mime, tool, _text) in FILES.items():
        record = records[name]
        assert record["mime"] == mime
        if shutil.which(tool) is None:
            assert (record["status"], record["reason"]) == ("unsupported", "needs_tool")
        else:
            assert (record["status"], record["extractor"], record["why"]) == (
                "ok",
                tool,
                "tools-changed",
            ), record
