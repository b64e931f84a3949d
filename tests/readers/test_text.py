"""Text reader: the encoding chosen and the exact text, per case."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import mimes as M
from engine.readers import registry
from engine.readers import text as text_mod
from engine.readers.base import ReadContext, TextCapReached, TextSink
from engine.readers.text import TextReader, decode_bytes, normalise_charset, sniff_utf16

SAMPLE = "Grüße, naïve café – “quoted” €5\nline two\n"


def read(tmp_path: Path, data: bytes, max_chars: int = 10**9) -> tuple[str, str]:
    path = tmp_path / "sample.txt"
    path.write_bytes(data)
    sink = TextSink(max_chars)
    info = TextReader().read(path, ReadContext(mime=M.PLAIN), sink)
    return sink.getvalue(), info.extractor


@pytest.mark.parametrize(
    ("data", "expected", "extractor"),
    [
        (b"\xef\xbb\xbf" + SAMPLE.encode(), SAMPLE, "text:utf-8"),
        (b"\xff\xfe" + SAMPLE.encode("utf-16-le"), SAMPLE, "text:utf-16-le"),
        (b"\xfe\xff" + SAMPLE.encode("utf-16-be"), SAMPLE, "text:utf-16-be"),
        (b"\xff\xfe\x00\x00" + SAMPLE.encode("utf-32-le"), SAMPLE, "text:utf-32-le"),
        (b"\x00\x00\xfe\xff" + SAMPLE.encode("utf-32-be"), SAMPLE, "text:utf-32-be"),
        (SAMPLE.encode("utf-16-le"), SAMPLE, "text:utf-16-le"),
        (SAMPLE.encode("utf-16-be"), SAMPLE, "text:utf-16-be"),
        (SAMPLE.encode(), SAMPLE, "text:utf-8"),
        (SAMPLE.encode("cp1252"), SAMPLE, "text:cp1252"),
        ("Grüße, déjà vu\n".encode("latin-1"), "Grüße, déjà vu\n", "text:cp1252"),
        (b"undef \x81\x8d\x8f", "undef \x81\x8d\x8f", "text:cp1252"),
        (b"bad utf-8 \xc3\x28 here", "bad utf-8 Ã( here", "text:cp1252"),
        (b"abc\x00def\x00", "abc\x00def\x00", "text:utf-8"),
        (b"", "", "text:utf-8"),
        (b"x", "x", "text:utf-8"),
        (b"\xe9", "é", "text:cp1252"),
        (b"a\r\nb\rc\n", "a\r\nb\rc\n", "text:utf-8"),
    ],
    ids=[
        "bom-utf8", "bom-utf16le", "bom-utf16be", "bom-utf32le", "bom-utf32be",
        "nobom-utf16le", "nobom-utf16be", "utf8", "cp1252", "latin1", "cp1252-undefined",
        "invalid-utf8", "nul-bytes", "empty", "one-byte", "one-high-byte", "mixed-newlines",
    ],
)  # fmt: skip
def test_decoding(tmp_path: Path, data: bytes, expected: str, extractor: str) -> None:
    assert read(tmp_path, data) == (expected, extractor)


def test_late_non_ascii_byte_is_seen(tmp_path: Path) -> None:
    """4096 ASCII bytes then an em dash: UTF-8, not a sniff-then-crash (markitdown #1949)."""
    data = b"a" * 4096 + "—done".encode()
    assert read(tmp_path, data) == ("a" * 4096 + "—done", "text:utf-8")


def test_late_invalid_byte_means_cp1252(tmp_path: Path) -> None:
    data = "é".encode() + b"a" * 5000 + "—".encode("cp1252")
    assert read(tmp_path, data) == ("Ã©" + "a" * 5000 + "—", "text:cp1252")


@pytest.mark.parametrize("small_file", [8 << 20, 1000])
def test_large_files_stream_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_file: int
) -> None:
    """With tiny chunks, a multi-byte character split across chunks still decodes."""
    monkeypatch.setattr(text_mod, "CHUNK", 7)
    monkeypatch.setattr(text_mod, "SMALL_FILE", small_file)
    body = "é—€日本" * 500
    assert read(tmp_path, body.encode()) == (body, "text:utf-8")
    assert read(tmp_path, "ä".encode() + b"\xff" + b"x" * 3000) == (
        "Ã¤ÿ" + "x" * 3000,
        "text:cp1252",
    )
    assert read(tmp_path, b"\xff\xfe" + body.encode("utf-16-le")) == (body, "text:utf-16-le")


def test_cap_stops_a_huge_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_mod, "CHUNK", 1024)
    monkeypatch.setattr(text_mod, "SMALL_FILE", 4096)
    with pytest.raises(TextCapReached):
        read(tmp_path, b"line\n" * 100_000, max_chars=10_000)


def test_utf16_sniff_needs_nuls_on_one_side() -> None:
    assert sniff_utf16("hello world".encode("utf-16-le")) == "utf-16-le"
    assert sniff_utf16("hello world".encode("utf-16-be")) == "utf-16-be"
    assert sniff_utf16(b"abc\x00def\x00") is None
    assert sniff_utf16(b"\x00\x00\x00\x00\x00\x00") is None
    assert sniff_utf16(b"ab") is None


def test_decode_bytes_order() -> None:
    # Valid UTF-8 contradicts a single-byte declaration: the bytes win.
    assert decode_bytes("é".encode(), "koi8-r") == ("é", "utf-8")
    assert decode_bytes("é".encode(), "no-such-charset") == ("é", "utf-8")
    assert decode_bytes(b"\xe9", "utf-8") == ("é", "cp1252")


def test_charset_names() -> None:
    assert normalise_charset("ISO-8859-1") == "cp1252"
    assert normalise_charset('"us-ascii"') == "cp1252"
    assert normalise_charset("UTF-16") == "utf-8"
    assert normalise_charset("utf8") == "utf-8"
    assert normalise_charset("x-unknown") is None
    assert normalise_charset(None) is None


@pytest.mark.parametrize(
    "mime",
    [M.PLAIN, "text/markdown", "text/x-python", M.JSON, M.SVG, "application/x-yaml"],
)
def test_registry_maps_textual_types_here(mime: str) -> None:
    reader = registry.reader_for(mime)
    assert reader is not None
    assert reader.name == "text"


@pytest.mark.parametrize("mime", [M.XML, "text/xml"])
def test_xml_is_read_by_the_reader_that_takes_its_base64_out(mime: str) -> None:
    reader = registry.reader_for(mime)
    assert reader is not None and reader.name == "xml"


def test_reader_identity() -> None:
    reader = TextReader()
    assert (reader.name, reader.version, reader.tools) == ("text", 2, ())
    assert "text/*" in reader.mimes


SMALL_CASES = {
    "utf8": "naïve café ☕\nline two\n".encode(),
    "utf8-bom": b"\xef\xbb\xbf" + "bom café\n".encode(),
    "utf16-le-bom": "\ufeffwide text\n".encode("utf-16-le"),
    "utf16-be-no-bom": "wide text without a mark, long enough\n".encode("utf-16-be"),
    "cp1252": "caf\xe9 na\xefve \x80 euro \x81 undefined\n".encode("latin-1"),
    "late-invalid-utf8": b"ascii " * 50 + b"\xff\xfe tail\n",
    "one-byte": b"x",
}


@pytest.mark.parametrize("name", sorted(SMALL_CASES))
def test_a_small_file_read_at_once_gives_what_the_stream_gives(tmp_path: Path, name: str) -> None:
    """Files up to SNIFF bytes are decoded in one call: the same text and encoding as the
    chunked path that bigger files take (here forced by a SNIFF smaller than the file)."""
    data = SMALL_CASES[name]
    path = tmp_path / f"{name}.txt"
    path.write_bytes(data)

    def read() -> tuple[str, str | None]:
        sink = TextSink(1000)
        ctx = ReadContext(mime=M.PLAIN)
        info = TextReader().read(path, ctx, sink)
        return sink.getvalue(), info.extractor

    at_once = read()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(text_mod, "SNIFF", max(1, len(data) // 2))
        streamed = read()
    assert at_once == streamed
