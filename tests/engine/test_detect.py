"""MIME detection: magic bytes, zip and OLE containers, text sniffing, extension fallback."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from engine import mimes as M
from engine.detect import detect
from fixtures.gen.common import zip_bytes

ODS = M.ODS.encode()
FREE, END, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF


def ole2(*streams: str) -> bytes:
    """A minimal OLE2 compound file: empty streams named ``streams`` under the root."""
    header = bytearray(512)
    header[0:8] = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    struct.pack_into("<HHHHH", header, 24, 0x3E, 3, 0xFFFE, 9, 6)
    struct.pack_into("<IIIIIIIII", header, 40, 0, 1, 1, 0, 4096, END, 0, END, 0)
    struct.pack_into("<109I", header, 76, 0, *([FREE] * 108))
    fat = struct.pack("<128I", FATSECT, END, *([FREE] * 126))
    entries = [_dir_entry("Root Entry", 5, child=1 if streams else NOSTREAM)]
    for i, name in enumerate(streams, start=1):
        right = i + 1 if i < len(streams) else NOSTREAM
        entries.append(_dir_entry(name, 2, right=right))
    if len(entries) > 4:
        raise ValueError("this writer fits four directory entries")
    empty = _dir_entry("", 0)
    directory = b"".join(entries + [empty] * (4 - len(entries)))
    return bytes(header) + fat + directory


def _dir_entry(name: str, kind: int, child: int = NOSTREAM, right: int = NOSTREAM) -> bytes:
    raw = (name + "\x00").encode("utf-16-le") if name else b""
    entry = bytearray(128)
    entry[0 : len(raw)] = raw
    struct.pack_into("<HBB", entry, 64, len(raw), kind, 1)
    struct.pack_into("<III", entry, 68, NOSTREAM, right, child)
    struct.pack_into("<IQ", entry, 116, END, 0)
    return bytes(entry)


def check(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return detect(path)


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", M.PDF),
        (b"junk before\n%PDF-1.4\n", M.PDF),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", M.PNG),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", M.JPEG),
        (b"II*\x00\x08\x00\x00\x00", M.TIFF),
        (b"MM\x00*\x00\x00\x00\x08", M.TIFF),
        (b"GIF89a\x01\x00\x01\x00", M.GIF),
        (b"BM" + struct.pack("<I", 70) + bytes(4) + b"\x36\x00\x00\x00" + bytes(8), M.BMP),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", M.WEBP),
        (b"{\\rtf1\\ansi hello}", M.RTF),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "application/gzip"),
        (b"7z\xbc\xaf\x27\x1c\x00\x04", "application/x-7z-compressed"),
        (b"\x7fELF\x02\x01\x01\x00" + bytes(8), "application/x-executable"),
        (b"SQLite format 3\x00" + bytes(16), "application/vnd.sqlite3"),
        (b"\x37\x7f\x06\x82\x00\x2d\xe2\x18" + bytes(24), M.SQLITE_WAL),
        (b"\x37\x7f\x06\x83\x00\x2d\xe2\x18" + bytes(24), M.SQLITE_WAL),
        (b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + bytes(20), M.SQLITE_JOURNAL),
        ((b"\x18\xe2\x2d\x00" + bytes(44)) * 2 + bytes(32), M.SQLITE_SHM),
        ((b"\x00\x2d\xe2\x18" + bytes(44)) * 2 + bytes(32), M.SQLITE_SHM),
        (b"!BDN\x00\x00\x00\x00SM\x17\x00" + bytes(20), M.PST),
        (b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00", "video/mp4"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", "image/heic"),
    ],
)
def test_magic_bytes_win_over_the_extension(tmp_path: Path, data: bytes, mime: str) -> None:
    assert check(tmp_path, "renamed.txt", data) == mime


@pytest.mark.parametrize(
    ("members", "mime"),
    [
        ({"[Content_Types].xml": "<Types/>", "word/document.xml": "<w/>"}, M.DOCX),
        ({"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<w/>"}, M.XLSX),
        ({"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p/>"}, M.PPTX),
        ({"mimetype": M.ODT, "content.xml": "<c/>"}, M.ODT),
        ({"mimetype": M.ODS, "content.xml": "<c/>"}, M.ODS),
        ({"mimetype": M.ODP, "content.xml": "<c/>"}, M.ODP),
        ({"mimetype": M.EPUB, "META-INF/container.xml": "<c/>", "OEBPS/x.opf": "<p/>"}, M.EPUB),
        ({"META-INF/container.xml": "<c/>", "content.opf": "<p/>"}, M.EPUB),
        ({"notes.txt": "hello"}, M.ZIP),
    ],
    ids=["docx", "xlsx", "pptx", "odt", "ods", "odp", "epub", "epub-no-mimetype", "zip"],
)
def test_zip_containers_by_members(tmp_path: Path, members: dict[str, str], mime: str) -> None:
    assert check(tmp_path, "container.bin", zip_bytes(members)) == mime


def test_odf_without_mimetype_member_goes_by_extension(tmp_path: Path) -> None:
    members = {"content.xml": "<c/>", "META-INF/manifest.xml": "<m/>"}
    assert check(tmp_path, "sheet.ods", zip_bytes(members)) == M.ODS
    assert check(tmp_path, "noext", zip_bytes(members)) == M.ODT


def test_broken_zip_goes_by_extension(tmp_path: Path) -> None:
    assert check(tmp_path, "broken.docx", b"PK\x03\x04" + bytes(40)) == M.DOCX
    assert check(tmp_path, "broken", b"PK\x03\x04" + bytes(40)) == M.ZIP


@pytest.mark.parametrize(
    ("streams", "mime"),
    [
        (("WordDocument", "1Table"), M.DOC),
        (("Workbook",), M.XLS),
        (("PowerPoint Document", "Current User"), M.PPT),
        (("__substg1.0_0037001F", "__properties_version1.0"), M.MSG),
        (("Something",), M.OLE),
    ],
)
def test_ole_files_by_streams(tmp_path: Path, streams: tuple[str, ...], mime: str) -> None:
    assert check(tmp_path, "compound.bin", ole2(*streams)) == mime


def test_ole_files_are_told_apart_without_olefile_recording_the_stack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """olefile keeps the caller's stack, source lines and all, for every file it opens by
    name (a millisecond or more a file in a worker): detection hands it an open file."""
    import traceback

    monkeypatch.setattr(traceback, "extract_stack", lambda *a, **k: pytest.fail("stack kept"))
    assert check(tmp_path, "letter.bin", ole2("WordDocument", "1Table")) == M.DOC


def test_broken_ole_goes_by_extension(tmp_path: Path) -> None:
    junk = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(range(256)) * 4
    assert check(tmp_path, "old.xls", junk) == M.XLS
    assert check(tmp_path, "old", junk) == M.OLE


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("report.pdf", b"<!DOCTYPE html>\n<html><body>not a pdf</body></html>", M.HTML),
        ("page.txt", b"  <html lang=en><head><title>x</title>", M.HTML),
        ("saved.htm", b"<!-- saved from url -->\n<html>", M.HTML),
        ("page.xhtml", b'<?xml version="1.0"?>\n<html xmlns="urn:x">', M.XHTML),
        ("fragment.html", b"<div><p>just a fragment</p></div>", M.HTML),
        ("drawing.xml", b'<?xml version="1.0"?>\n<!-- c -->\n<svg xmlns="x"/>', M.SVG),
        ("book.xml", b'<?xml version="1.0"?><FictionBook xmlns="x"><body/></FictionBook>', M.FB2),
        ("flat.xml", b'<?xml version="1.0"?><office:document office:mimetype="%s">' % ODS, M.FODS),
        ("flat2.xml", b"<office:document xmlns:office='x'><office:body/>", M.FODT),
        ("note.xml", b'<?xml version="1.0"?>\n<note><to>T</to><body>hi</body></note>', M.XML),
        ("meta.txt", b"<meta charset=utf-8>\n<html><body>x</body></html>", M.HTML),
        ("head.dat", b"<head><title>t</title></head>", M.HTML),
        ("feed.dat", b'<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>', M.XML),
        ("readme.md", b'<p align="center">logo</p>\n\n# Title\n', "text/markdown"),
        ("heart.txt", b"<3 you\n", M.PLAIN),
        ("data.json", b'{"a": 1}', M.JSON),
        ("notes", b"just some words\n", M.PLAIN),
        ("table.csv", b"a,b\n1,2\n", M.CSV),
        ("doc.docx", b"plain text pretending\n", M.PLAIN),
    ],
)  # fmt: skip
def test_text_sniffing(tmp_path: Path, name: str, data: bytes, mime: str) -> None:
    assert check(tmp_path, name, data) == mime


MAIL = b"From: a@example.org\nTo: b@example.org\nSubject: hi\nDate: Mon, 1 Jan 2024\n\nbody\n"


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("message.eml", MAIL, M.EML),
        ("message", MAIL, M.EML),
        ("message.txt", MAIL, M.EML),
        ("received", b"Received: from x by y\nReturn-Path: <a@b>\n" + MAIL, M.EML),
        ("dkim", b"DKIM-Signature: v=1\nMessage-ID: <1@x>\n" + MAIL, M.EML),
        ("box", b"From a@example.org Mon Jan  1 10:00:00 2024\n" + MAIL, M.MBOX),
        ("box.mbox", b"From a@example.org Mon Jan  1 10:00:00 2024\n" + MAIL, M.MBOX),
        ("enveloped.eml", b"From a@example.org Mon Jan  1 10:00:00 2024\n" + MAIL, M.EML),
        ("notes.md", b"Date: 2024-01-01\nSubject: diary\n\ntext\n", "text/markdown"),
        ("letter.txt", b"From my desk\nDear Ann,\n", M.PLAIN),
    ],
)
def test_mail_sniffing(tmp_path: Path, name: str, data: bytes, mime: str) -> None:
    assert check(tmp_path, name, data) == mime


@pytest.mark.parametrize(
    ("data", "name", "mime"),
    [
        ("plain words, BOM-less\n".encode("utf-16-le"), "notes", M.PLAIN),
        ("plain words, BOM-less\n".encode("utf-16-be"), "notes", M.PLAIN),
        ("\ufeffwith a BOM\n".encode("utf-16-le"), "notes", M.PLAIN),
        ("\ufeffwith a BOM\n".encode("utf-32-le"), "notes", M.PLAIN),
        ("\ufeffwith a BOM\n".encode("utf-32-be"), "notes", M.PLAIN),
        ("<html><body>x</body></html>".encode("utf-16-le"), "page", M.HTML),
        ("a,b\n1,2\n".encode("utf-16-le"), "table.csv", M.CSV),
        ("Grüße aus Köln\n".encode("cp1252"), "latin", M.PLAIN),
        ("日本語のテキスト\n".encode(), "cjk", M.PLAIN),
    ],
)
def test_encoded_text_is_not_binary(tmp_path: Path, data: bytes, name: str, mime: str) -> None:
    assert check(tmp_path, name, data) == mime


def test_binary_and_empty(tmp_path: Path) -> None:
    noise = random.Random(7).randbytes(4096)
    assert check(tmp_path, "noise", noise) == M.OCTET
    assert check(tmp_path, "noise.bin", noise) == M.OCTET
    assert check(tmp_path, "noise.txt", noise) == M.PLAIN  # content says nothing: extension
    assert check(tmp_path, "empty.pdf", b"") == M.EMPTY
    assert check(tmp_path, "controls", bytes(range(1, 9)) * 100) == M.OCTET


def test_a_name_that_says_text_over_bytes_of_nuls_is_not_believed(tmp_path: Path) -> None:
    """Android's binary XML (``AndroidManifest.xml`` in an ``.apk``: a chunk header, then a
    string pool in UTF-16 among 32-bit fields) was read as text by its name, garbage."""
    axml = struct.pack("<HHI", 3, 8, 1540) + struct.pack("<HHIIIII", 1, 28, 600, 3, 0, 0, 40)
    axml += struct.pack("<3I", 0, 20, 36) + bytes(16)  # the strings' offsets, padding
    for word in ("manifest", "package", "versionCode"):
        axml += struct.pack("<H", len(word)) + word.encode("utf-16-le") + bytes(2)
    axml += bytes(400)  # the element chunks' 32-bit fields, mostly zero
    assert check(tmp_path, "AndroidManifest.xml", axml) == M.OCTET
    assert check(tmp_path, "table.csv", b"a,b\x00\x00\x00\x00\n" * 200) == M.OCTET
    # a few NULs (a log's crash padding in its first bytes) leave a text file text
    log = b"2026-12-07 12:00:00 INFO started\n" * 120 + bytes(64)
    assert check(tmp_path, "app.log", log) == M.PLAIN
    assert check(tmp_path, "short.txt", b"before\x00after NUL\n") == M.PLAIN


def test_unreadable_path_goes_by_extension(tmp_path: Path) -> None:
    assert detect(tmp_path / "missing.docx") == M.DOCX
    assert detect(tmp_path / "missing") == M.OCTET


def test_head_argument_is_used(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"plain")
    assert detect(path, head=b"%PDF-1.4\n") == M.PDF


def _sfnt(magic: bytes, tables: int = 11) -> bytes:
    """A font's offset table: its version, then the table count and the fields derived."""
    power = 1 << (tables.bit_length() - 1)
    fields = struct.pack(
        ">4H", tables, power * 16, power.bit_length() - 1, tables * 16 - power * 16
    )
    return magic + fields + bytes(64)


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("art.psd", b"8BPS\x00\x01" + bytes(20), M.PSD),
        ("big.psb", b"8BPS\x00\x02" + bytes(20), M.PSD),
        ("plan.dwg", b"AC1024\x00\x00\x00\x00\x00\x06" + bytes(20), M.DWG),
        ("old.dwg", b"AC1012\x00\x00\x00\x00\x00\x00" + bytes(20), M.DWG),
        ("notes.one", bytes.fromhex("e4525c7b8cd8a74daeb15378d02996d3") + bytes(40), M.ONENOTE),
        ("go.lnk", bytes.fromhex("4c0000000114020000000000c000000000000046") + bytes(60), M.LNK),
        ("a.ttf", _sfnt(b"\x00\x01\x00\x00"), M.TTF),
        ("mac.ttf", _sfnt(b"true", 1), M.TTF),
        ("b.otf", _sfnt(b"OTTO", 14), M.OTF),
        ("c.ttc", b"ttcf\x00\x02\x00\x00" + bytes(20), M.FONT_COLLECTION),
        ("d.woff", b"wOFF\x00\x01\x00\x00" + bytes(40), M.WOFF),
        ("e.woff2", b"wOF2OTTO" + bytes(40), M.WOFF2),
        ("clip.webm", b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm" + bytes(20), M.WEBM),
        ("film.mkv", b"\x1a\x45\xdf\xa3\x93\x42\x82\x88matroska" + bytes(20), M.MATROSKA),
        # what only looks like one stays what it is
        ("code.txt", b"AC1024 is the part number of the drawing\n", M.PLAIN),
        ("db.mdb", b"\x00\x01\x00\x00Standard Jet DB\x00" + bytes(64), M.ACCESS),
        ("half.ttf", b"\x00\x01\x00\x00" + bytes(60), M.OCTET),
        ("odd.psd", b"8BPS\x00\x07" + bytes(20), M.OCTET),
        ("odd.mkv", b"\x1a\x45\xdf\xa3" + bytes(40), M.OCTET),
    ],
)
def test_binary_kinds_no_reader_takes_are_named(
    tmp_path: Path, name: str, data: bytes, mime: str
) -> None:
    """Fonts, drawings, shortcuts, OneNote sections and videos were all unknown bytes: one
    "application/octet-stream" group on the unsupported screen (detection 12)."""
    assert check(tmp_path, name, data) == mime
