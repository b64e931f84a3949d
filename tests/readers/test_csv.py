"""CSV/TSV reader: exact rows, quoting, encodings and the field limit."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import pytest

from engine import mimes as M
from engine.errors import LimitExceeded
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers import text as text_mod
from engine.readers.base import ReadContext, TextSink
from engine.readers.csvtsv import CsvReader


def read(
    tmp_path: Path, data: bytes, mime: str = M.CSV, limits: Limits = DEFAULT_LIMITS
) -> tuple[str, str]:
    path = tmp_path / ("table.tsv" if mime == M.TSV else "table.csv")
    path.write_bytes(data)
    sink = TextSink(limits.max_chars)
    info = CsvReader().read(path, ReadContext(mime=mime, limits=limits), sink)
    return sink.getvalue(), info.extractor


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"name,qty\napple,3\npear,12\n", "name\tqty\napple\t3\npear\t12\n"),
        (b'a,"b, with comma",c\r\n', "a\tb, with comma\tc\n"),
        (b'"say ""hi""",x\n', 'say "hi"\tx\n'),
        (b'id,note\n1,"line one\nline two"\n2,ok\n', "id\tnote\n1\tline one line two\n2\tok\n"),
        (b'1,"tab\there"\n', "1\ttab here\n"),
        (b"a,,c\n,,\n\nd\n", "a\t\tc\nd\n"),
        (b"no newline at end", "no newline at end\n"),
        (b"old,mac\rline,two\r", "old\tmac\nline\ttwo\n"),
        (b'x,"unterminated\nrest,of,file\n', "x\tunterminated rest,of,file\n"),
        (b'5" screw,"ok"trailing\n', '5" screw\toktrailing\n'),
        (b"a;b;c\n1;2;3\n", "a\tb\tc\n1\t2\t3\n"),
        (b"x, y;z;w\n1;2,5;3\n", "x, y\tz\tw\n1\t2,5\t3\n"),
        (b"a|b|c\n1|2|3\n", "a\tb\tc\n1\t2\t3\n"),
        (b"a,b|c\n", "a\tb|c\n"),
        (b"nul\x00inside,x\n", "nul\x00inside\tx\n"),
        (b"", ""),
    ],
    ids=[
        "plain", "quoted-comma", "escaped-quotes", "embedded-newline", "embedded-tab",
        "blank-rows", "no-final-newline", "cr-only", "unterminated-quote", "stray-quotes",
        "semicolons", "more-semicolons", "pipes", "tie-is-comma", "nul", "empty",
    ],
)  # fmt: skip
def test_csv_rows(tmp_path: Path, data: bytes, expected: str) -> None:
    assert read(tmp_path, data) == (expected, "csv")


def test_tsv(tmp_path: Path) -> None:
    data = b"name\tcity, country\n\xc3\xa9mile\tParis, France\n"
    assert read(tmp_path, data, M.TSV) == ("name\tcity, country\némile\tParis, France\n", "tsv")


def test_encodings(tmp_path: Path) -> None:
    assert read(tmp_path, "é,ü\n".encode("cp1252"))[0] == "é\tü\n"
    assert read(tmp_path, "\ufeffé,ü\n".encode("utf-16-le"))[0] == "é\tü\n"
    assert read(tmp_path, b"\xef\xbb\xbfh1,h2\n")[0] == "h1\th2\n"


def test_cp932_is_detected(tmp_path: Path) -> None:
    """Shift-JIS without a BOM is detected (charset-normalizer), not read as cp1252."""
    rows = "名前,数量,メモ\nりんご,3,赤い果物\nみかん,5,オレンジ色\n"
    text, _ = read(tmp_path, rows.encode("cp932"))
    assert text == "名前\t数量\tメモ\nりんご\t3\t赤い果物\nみかん\t5\tオレンジ色\n"
    assert read(tmp_path, "名前,値\n".encode("cp932"))[0] == "名前\t値\n"


def test_oversized_field_is_a_named_limit(tmp_path: Path) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, csv_field_chars=1000)
    with pytest.raises(LimitExceeded) as info:
        read(tmp_path, b'a,"' + b"x" * 5000 + b'"\n', limits=limits)
    assert info.value.limit == "csv_field_chars"
    assert "xxx" not in str(info.value)


def test_a_read_gives_the_process_its_csv_field_limit_back(tmp_path: Path) -> None:
    """The cap is the read's own: a read that fails on it and one that does not both leave
    the process's limit as it was (it leaked once, and failed an export's read-back)."""
    limits = dataclasses.replace(DEFAULT_LIMITS, csv_field_chars=100)
    before = csv.field_size_limit()
    with pytest.raises(LimitExceeded):
        read(tmp_path, b'a,"' + b"x" * 500 + b'"\n', limits=limits)
    assert csv.field_size_limit() == before
    assert read(tmp_path, b"a,b\n", limits=limits)[0] == "a\tb\n"
    assert csv.field_size_limit() == before


def test_field_under_the_limit_is_fine(tmp_path: Path) -> None:
    limits = dataclasses.replace(DEFAULT_LIMITS, csv_field_chars=1000)
    assert read(tmp_path, b"a," + b"x" * 900 + b"\n", limits=limits)[0] == "a\t" + "x" * 900 + "\n"


def test_endless_line_is_a_named_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_mod, "CHUNK", 256)
    monkeypatch.setattr(text_mod, "SMALL_FILE", 1024)
    limits = dataclasses.replace(DEFAULT_LIMITS, csv_field_chars=1000, max_chars=2000)
    with pytest.raises(LimitExceeded):
        read(tmp_path, b"x," * 5000, limits=limits)


@pytest.mark.timeout(300)  # a bound on a blow-up (a quadratic pass: hours), never a speed
def test_many_columns_are_linear(tmp_path: Path) -> None:
    text, _ = read(tmp_path, b",".join(b"c" for _ in range(1_000_000)) + b"\n")
    assert text.count("\t") == 999_999


def test_crlf_split_across_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_mod, "CHUNK", 4)
    monkeypatch.setattr(text_mod, "SMALL_FILE", 0)
    assert read(tmp_path, b"ab,c\r\nde,f\r\n")[0] == "ab\tc\nde\tf\n"
