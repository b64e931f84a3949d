"""Archives, compressed files and attachments: exact text, member verdicts and every bound."""

from __future__ import annotations

import dataclasses
import io
import tarfile
import zipfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.extract import Outcome, ReadTask, read_one
from engine.limits import DEFAULT_LIMITS
from engine.records import Member
from engine.tools import ToolSet
from fixtures.gen import archives as A
from fixtures.gen import office as O


def _read(tmp_path: Path, name: str, data: bytes, **limits: int) -> tuple[Outcome, str]:
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    task = ReadTask(str(path), "0" * 64, dataclasses.replace(DEFAULT_LIMITS, **limits),
                    ToolSet.empty(), str(out))  # fmt: skip
    outcome = read_one(task)
    text = Path(outcome.text_file).read_text(encoding="utf-8") if outcome.text_file else ""
    return outcome, text


def _verdicts(outcome: Outcome) -> list[tuple[str, str, str | None]]:
    return [(m.path, m.status, m.reason) for m in outcome.members]


def test_zip_members_nested_zip_and_docx_exact(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.zip", A.sample_zip())
    assert (outcome.status, outcome.extractor, outcome.error) == ("ok", "zip", None)
    assert text == A.ZIP_TEXT
    assert outcome.members == (
        Member("docs/notes.txt", "ok", None, None, len(A.NOTES)),
        Member("docs/report.docx", "ok", None, None, len(O.DOCX_TEXT)),
        Member("inner.zip", "ok", None, None, len("# member inner.zip//deep/readme.txt\n") + 14),
        Member("inner.zip//deep/readme.txt", "ok", None, None, len(A.README)),
    )


def test_tar_links_and_fifos_are_never_followed(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.tar", A.sample_tar())
    assert text == A.TAR_TEXT
    assert _verdicts(outcome) == [
        ("dir/notes.txt", "ok", None),
        ("dir/table.csv", "ok", None),
        ("dir/link", "skipped", "link"),
        ("dir/fifo", "skipped", "special"),
    ]
    assert outcome.error == "2 of 4 members not read"


@pytest.mark.parametrize(
    ("name", "data", "extractor"),
    [
        ("notes.txt.gz", A.gz(A.NOTES.encode()), "gzip+text:utf-8"),
        ("notes.txt.xz", __import__("lzma").compress(A.NOTES.encode()), "xz+text:utf-8"),
        ("notes.txt.bz2", __import__("bz2").compress(A.NOTES.encode()), "bzip2+text:utf-8"),
        ("notes.txt.zst", A.zst(A.NOTES.encode()), "zstd+text:utf-8"),
    ],
)
def test_single_compressed_files_are_their_document(
    tmp_path: Path, name: str, data: bytes | None, extractor: str
) -> None:
    if data is None:
        pytest.skip("backports.zstd is not installed")
    outcome, text = _read(tmp_path, name, data)
    assert (outcome.status, outcome.extractor, text) == ("ok", extractor, A.NOTES)


def test_tgz_is_a_tar_inside_gzip(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.tgz", A.gz(A.sample_tar()))
    assert (outcome.extractor, text) == ("gzip+tar", A.TAR_TEXT)
    assert len(outcome.members) == 4


def test_seven_zip_exact(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.7z", A.seven_z())
    assert (outcome.status, outcome.extractor, text) == ("ok", "7z", A.SEVEN_TEXT)


def test_encrypted_seven_zip(tmp_path: Path) -> None:
    py7zr = pytest.importorskip("py7zr")
    out = io.BytesIO()
    with py7zr.SevenZipFile(out, "w", password="secret") as archive:
        archive.writestr(b"hidden\n", "h.txt")
    outcome, _ = _read(tmp_path, "e.7z", out.getvalue())
    assert (outcome.status, outcome.reason) == ("error", "encrypted")


def test_a_zip_in_a_zip_in_a_mail(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "m.eml", A.mail_with(A.sample_zip(), "bundle.zip"))
    assert outcome.extractor == "email"
    assert text.endswith(
        "# member bundle.zip//inner.zip\n# member bundle.zip//inner.zip//deep/readme.txt\n"
        + A.README
    )
    assert ("bundle.zip//inner.zip//deep/readme.txt", "ok", None) in _verdicts(outcome)


def test_nesting_past_archive_depth_is_a_member_verdict(tmp_path: Path) -> None:
    data = A.mail_with(A.sample_zip(), "bundle.zip")
    outcome, text = _read(tmp_path, "m.eml", data, archive_depth=2)
    verdicts = {m.path: m for m in outcome.members}
    inner = verdicts["bundle.zip//inner.zip"]
    assert (inner.status, inner.reason) == ("error", "limit")
    assert inner.error is not None and inner.error.startswith("archive_depth:")
    assert "deep/readme.txt" not in text and "# member bundle.zip//docs/notes.txt" in text
    assert outcome.status == "ok" and outcome.error == "1 of 4 members not read"


def test_member_count_cap_keeps_the_text_so_far(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.zip", A.sample_zip(), archive_members=2)
    assert outcome.status == "ok"
    assert text.startswith("# member docs/notes.txt\n" + A.NOTES + "# member docs/report.docx\n")
    assert text.endswith("[quarry: text cut at the archive_members cap: more than 2 members]\n")


def test_member_byte_cap_costs_only_that_member(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.zip", A.sample_zip(), zip_member_bytes=200)
    notes = next(m for m in outcome.members if m.path == "docs/notes.txt")
    assert (notes.status, notes.reason) == ("ok", None)
    docx = next(m for m in outcome.members if m.path == "docs/report.docx")
    assert (docx.status, docx.reason) == ("error", "limit")
    assert "# member inner.zip//deep/readme.txt\n" in text


def test_total_archive_bytes_stop_the_read(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "s.zip", A.sample_zip(), archive_bytes=60)
    assert outcome.status == "ok"
    assert text.startswith("# member docs/notes.txt\n")
    assert "text cut at the archive_bytes cap" in text


def test_bomb_inside_a_gz_is_refused_by_ratio(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "b.txt.gz", A.bomb())
    assert (outcome.status, outcome.reason, text) == ("error", "limit", "")
    assert outcome.error is not None and outcome.error.startswith("zip_ratio:")


def test_bomb_inside_a_gz_is_refused_by_size(tmp_path: Path) -> None:
    outcome, _ = _read(tmp_path, "b.txt.gz", A.bomb(), zip_member_bytes=1024 * 1024)
    assert outcome.error is not None and outcome.error.startswith("zip_member_bytes:")


def test_zip_slip_symlink_and_encrypted_members(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, "h.zip", A.hostile_zip())
    assert text == "# member ok.txt\nthe one readable member\n"
    assert _verdicts(outcome) == [
        ("ok.txt", "ok", None),
        ("../../evil.txt", "error", "refused"),
        ("secret.txt", "error", "encrypted"),
        ("link.txt", "skipped", "link"),
    ]


def test_an_archive_of_only_an_encrypted_member_is_encrypted(tmp_path: Path) -> None:
    data = A.encrypt_member(A.zip_bytes({"s.txt": b"x\n"}), "s.txt")
    outcome, _ = _read(tmp_path, "e.zip", data)
    assert (outcome.status, outcome.reason) == ("error", "encrypted")


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_a_zip_of_bzip2_or_lzma_members_reads_as_a_deflated_one(
    tmp_path: Path, method: int
) -> None:
    """7-Zip's zips (LZMA, bzip2) and ``zip -Z bzip2``'s: their members read as any."""
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", method) as zf:
        zf.writestr("docs/notes.txt", A.NOTES)
        zf.writestr("docs/report.docx", O._zip_bytes(O.docx_members()))
    outcome, text = _read(tmp_path, "seven.zip", packed.getvalue())
    assert (outcome.status, outcome.error) == ("ok", None)
    assert (
        text == "# member docs/notes.txt\n" + A.NOTES + "# member docs/report.docx\n" + O.DOCX_TEXT
    )


@pytest.mark.parametrize("method", [A.DEFLATE64, A.ZSTANDARD, A.XZ, A.PPMD])
def test_a_zip_of_members_zipfile_cannot_read_reads_as_a_deflated_one(
    tmp_path: Path, method: int
) -> None:
    """Deflate64 (7-Zip's, Windows Explorer's for big files), Zstandard, xz and PPMd (7-Zip's
    and WinZip's) members: they were unsupported/no_reader ("no reader here decompresses")."""
    members = {
        "docs/notes.txt": A.NOTES.encode(),
        "docs/report.docx": O._zip_bytes(O.docx_members()),
    }
    outcome, text = _read(tmp_path, "packed.zip", A.zip_packed(members, method))
    assert (outcome.status, outcome.error) == ("ok", None)
    assert (
        text == "# member docs/notes.txt\n" + A.NOTES + "# member docs/report.docx\n" + O.DOCX_TEXT
    )


def _with_method(data: bytes, method: int, names: tuple[str, ...]) -> bytes:
    """A stored zip whose members ``names`` say they use compression ``method`` (in their
    local headers and the central directory), as a PKZIP 1.x archive's do."""
    out = bytearray(data)
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        if info.filename in names:
            out[info.header_offset + 8 : info.header_offset + 10] = method.to_bytes(2, "little")
    at = 0
    while (at := out.find(b"PK\x01\x02", at)) >= 0:
        name_len = int.from_bytes(out[at + 28 : at + 30], "little")
        if out[at + 46 : at + 46 + name_len].decode() in names:
            out[at + 10 : at + 12] = method.to_bytes(2, "little")
        at += 4
    return bytes(out)


def test_a_pkzip_1_archive_is_unsupported_not_corrupt(tmp_path: Path) -> None:
    """Members imploded (method 6) or shrunk (1) by PKZIP 1.x, as Tika's moby.zip (1985):
    no reader here decompresses them; the archive is not damaged."""
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("README", "read me\n")
        zf.writestr("moby.0", "Call me Ishmael.\n")
    old = _with_method(plain.getvalue(), 6, ("README", "moby.0"))
    outcome, text = _read(tmp_path, "moby.zip", old)
    assert (outcome.status, outcome.reason, text) == ("unsupported", "no_reader", "")
    assert outcome.error == (
        "2 members not read; zip member 'README' uses compression method 6 (implode, PKZIP 1.x),"
        " which no reader here decompresses"
    )
    mixed = _with_method(plain.getvalue(), 1, ("README",))  # one shrunk, one stored
    outcome, text = _read(tmp_path, "mixed.zip", mixed)
    assert (outcome.status, text) == ("ok", "# member moby.0\nCall me Ishmael.\n")
    assert _verdicts(outcome) == [("README", "unsupported", "no_reader"), ("moby.0", "ok", None)]


def test_damaged_and_unreadable_payloads(tmp_path: Path) -> None:
    outcome, _ = _read(tmp_path, "t.txt.gz", A.gz(A.NOTES.encode() * 50)[:40])
    assert (outcome.status, outcome.reason) == ("error", "corrupt")
    outcome, _ = _read(tmp_path, "x.bin.gz", A.gz(bytes(range(256)) * 8))
    assert (outcome.status, outcome.reason) == ("unsupported", "no_reader")
    outcome, _ = _read(tmp_path, "j.7z", b"7z\xbc\xaf\x27\x1c" + b"\x00" * 40)
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


def test_member_names_are_one_line_and_the_record_encodes(tmp_path: Path) -> None:
    info = tarfile.TarInfo("a\nb\x1b[31m\udce9.txt")
    data = b"odd name\n"
    info.size = len(data)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tf:  # fmt: skip
        tf.addfile(info, io.BytesIO(data))
    outcome, text = _read(tmp_path, "n.tar", out.getvalue())
    assert text == "# member a\\nb\\x1b[31m\\xe9.txt\nodd name\n"
    assert orjson.loads(orjson.dumps([dataclasses.asdict(m) for m in outcome.members]))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(names=st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: b"\x00" not in b),
                      min_size=1, max_size=5, unique=True))  # fmt: skip
def test_any_member_names_give_a_verdict_each(tmp_path: Path, names: list[bytes]) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tf:  # fmt: skip
        for raw in names:
            info = tarfile.TarInfo(raw.decode("utf-8", "surrogateescape"))
            info.size = 2
            tf.addfile(info, io.BytesIO(b"x\n"))
    outcome, text = _read(tmp_path, "h.tar", out.getvalue())
    assert outcome.status in ("ok", "error")
    assert len(outcome.members) <= len(names)
    orjson.dumps([dataclasses.asdict(m) for m in outcome.members])
    sections = [line for line in text.splitlines() if line.startswith("# member ")]
    assert len(sections) == sum(1 for m in outcome.members if m.status == "ok")
    # one line each, nothing a terminal would interpret (engine.names.shown)
    assert not any(ch in "".join(sections) for ch in "\x1b\x85\u2028\u2029\x9b")


def _sealed_package(manifest: bytes) -> bytes:
    """A zip holding an OpenDocument-style package's parts (Tika's
    testZip_with_DataDescriptor2.zip): a part its manifest says is encrypted, another not."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as zf:
        zf.writestr("mimetype", b"")
        zf.writestr("source.xml", bytes(range(256)) * 4)  # (Blowfish output: bytes, no text)
        zf.writestr("notes.txt", b"Plain notes beside it\n")
        zf.writestr("META-INF/manifest.xml", manifest)
    return raw.getvalue()


_MANIFEST = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
    b'<manifest:file-entry manifest:media-type="text/xml" manifest:full-path="source.xml">'
    b'<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x">'
    b'<manifest:algorithm manifest:algorithm-name="Blowfish CFB"/></manifest:encryption-data>'
    b"</manifest:file-entry>"
    b'<manifest:file-entry manifest:media-type="" manifest:full-path="notes.txt"/>'
    b"</manifest:manifest>"
)


_UNDECLARED = _MANIFEST.replace(
    b' xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"', b""
)
"""The same manifest with its prefix never declared, as Tika's sample has it (no XML parser
that knows namespaces reads it)."""


@pytest.mark.parametrize("manifest", [_MANIFEST, _UNDECLARED], ids=["declared", "undeclared"])
def test_a_member_its_package_manifest_says_is_encrypted_is_not_read_as_text(
    tmp_path: Path, manifest: bytes
) -> None:
    """Its bytes, read as text, were the record's garbled text."""
    assert manifest != _UNDECLARED or b"xmlns" not in manifest
    outcome, text = _read(tmp_path, "sealed.zip", _sealed_package(manifest))
    verdicts = {path: (status, reason) for path, status, reason in _verdicts(outcome)}
    assert verdicts["source.xml"] == ("error", "encrypted")
    assert verdicts["notes.txt"] == ("ok", None)
    assert outcome.status == "ok" and outcome.quality is not None
    assert outcome.quality.verdict == "good"
    assert "# member source.xml" not in text and "Plain notes beside it" in text


def test_a_manifest_that_cannot_be_read_leaves_every_member_read(tmp_path: Path) -> None:
    outcome, _text = _read(tmp_path, "odd.zip", _sealed_package(b"<manifest:manifest"))
    verdicts = {path: status for path, status, _reason in _verdicts(outcome)}
    assert verdicts["source.xml"] == "ok" and verdicts["notes.txt"] == "ok"


@given(st.lists(st.sampled_from([
    b"<manifest:file-entry ", b'manifest:full-path="a.xml"', b"full-path='b&amp;c'", b">",
    b"<manifest:encryption-data", b"</manifest:file-entry>", b"<x:file-entry>", b"\xff", b'"',
]), max_size=30))  # fmt: skip
def test_a_manifest_scanned_by_its_text_names_only_entries_with_encryption_data(
    pieces: list[bytes],
) -> None:
    from engine.readers.odf import _scanned

    found = _scanned(b"".join(pieces))
    assert found <= {"a.xml", "b&c"}
    if found:
        assert b"encryption-data" in b"".join(pieces)
