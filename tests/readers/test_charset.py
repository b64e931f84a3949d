"""Charset detection for 8-bit text without a BOM: the right text, the codec in the extractor."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import mimes as M
from engine.readers.base import ReadContext, TextSink
from engine.readers.charset import declared_fits, guess_charset
from engine.readers.csvtsv import READERS as CSV_READERS
from engine.readers.html import decode_html
from engine.readers.text import TextReader, decode_bytes
from fixtures.gen.text import JAPANESE_CSV, POLISH, RUSSIAN

GERMAN = "Sehr geehrte Damen und Herren,\nanbei die Übersicht für März: Größe und Maße.\n"
FRENCH = "Le cœur déjà ému, l'élève répète « voilà » à la fenêtre.\n"
GREEK = "Καλημέρα κόσμε, αυτό είναι ελληνικό κείμενο για δοκιμή.\n"
CHINESE = "这是一个简体中文的测试文件，用于检测字符编码。\n第二行文字。\n"

CASES = [
    (RUSSIAN, "cp866", "cp866"),
    (RUSSIAN, "koi8_r", "koi8-r"),
    (RUSSIAN, "cp1251", "cp1251"),
    (POLISH, "cp1250", "cp1250"),
    (GREEK, "cp1253", "cp1253"),
    (GERMAN, "cp1252", "cp1252"),
    (FRENCH, "cp1252", "cp1252"),
    ("Grüße, déjà vu, Ærø\n", "latin-1", "cp1252"),
    (JAPANESE_CSV, "cp932", "cp932"),
    (JAPANESE_CSV, "euc_jp", "euc_jp"),
    (CHINESE, "gb18030", "gb18030"),
]


def _read_text(tmp_path: Path, data: bytes) -> tuple[str, str]:
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    sink = TextSink(1_000_000)
    info = TextReader().read(path, ReadContext(mime=M.PLAIN), sink)
    return sink.getvalue(), info.extractor


@pytest.mark.parametrize(("text", "encoding", "named"), CASES)
def test_text_files_are_read_in_the_detected_charset(
    tmp_path: Path, text: str, encoding: str, named: str
) -> None:
    assert _read_text(tmp_path, text.encode(encoding)) == (text, f"text:{named}")


def test_little_evidence_stays_cp1252_and_lossless() -> None:
    assert guess_charset(b"caf\xe9 \x81\x8d") == "cp1252"
    assert decode_bytes(b"undef \x81\x8d\x8f") == ("undef \x81\x8d\x8f", "cp1252")


def test_a_late_guess_miss_is_replaced_not_fatal(tmp_path: Path) -> None:
    # Detected as cp932 from the start; a byte pair invalid in cp932 later is one U+FFFD.
    data = JAPANESE_CSV.encode("cp932") * 1500 + b"\x81\x20end\n"  # past the sample
    text, extractor = _read_text(tmp_path, data)
    assert extractor == "text:cp932"
    assert text.endswith("\ufffd end\n")


def test_cp932_csv_rows(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes(JAPANESE_CSV.encode("cp932"))
    sink = TextSink(1_000_000)
    CSV_READERS[0].read(path, ReadContext(mime=M.CSV), sink)
    assert sink.getvalue() == JAPANESE_CSV.replace(",", "\t")


def test_declared_charset_contradicted_by_the_bytes_gives_way() -> None:
    page = f"<meta charset=windows-1252><p>{RUSSIAN}</p>"
    assert decode_html(page.encode("cp1251")) == (page, "cp1251")
    # valid UTF-8 under a single-byte label: the bytes say UTF-8
    page = f"<meta charset=koi8-r><p>{RUSSIAN}</p>"
    assert decode_html(page.encode()) == (page, "utf-8")


def test_declared_charset_borne_out_is_kept() -> None:
    page = "<meta charset=koi8-r><p>Привет, мир</p>"
    assert decode_html(page.encode("koi8_r")) == (page, "koi8-r")
    assert declared_fits(RUSSIAN.encode("cp1251"), "cp1251")
    assert not declared_fits(RUSSIAN.encode("cp1251"), "cp1252")
    assert not declared_fits("日本".encode("cp932") + b"\xff", "cp932")
