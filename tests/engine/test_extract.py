"""The read harness: caps keep the text read so far, named, with the reader's own verdict."""

from __future__ import annotations

import hashlib
import unicodedata
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.detect import HEAD_BYTES
from engine.extract import HASH_CHUNK, ReadTask, hash_file, normalise, read_one
from engine.limits import Limits
from engine.records import Status
from engine.tools import ToolSet


def _read(path: Path, tmp: Path, limits: Limits) -> tuple[object, str]:
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    outcome = read_one(
        ReadTask(str(path), sha, limits, ToolSet.empty(), str(tmp), path.stat().st_size)
    )
    text = Path(outcome.text_file).read_text("utf-8") if outcome.text_file else ""
    return outcome, text


def test_text_cap_keeps_the_start_and_the_readers_extractor(tmp_path: Path) -> None:
    src = tmp_path / "big.txt"
    src.write_text("abcdefghij" * 100, encoding="utf-8")
    outcome, text = _read(src, tmp_path, Limits(max_chars=95))
    assert outcome.status == Status.OK  # type: ignore[attr-defined]
    assert outcome.extractor == "text:utf-8"  # type: ignore[attr-defined]
    assert text.startswith("abcdefghij" * 9 + "abcde")
    assert text.endswith("[quarry: text cut at the max_chars cap: 95 characters]\n")
    assert "max_chars" in (outcome.error or "")  # type: ignore[attr-defined]


def test_a_named_limit_keeps_the_text_read_before_it(tmp_path: Path) -> None:
    src = tmp_path / "t.csv"
    src.write_text("a,b\nc,d\n" + "x" * 500 + ",y\n", encoding="utf-8")
    outcome, text = _read(src, tmp_path, Limits(csv_field_chars=100))
    assert outcome.status == Status.OK  # type: ignore[attr-defined]
    assert text.startswith("a\tb\nc\td\n")
    assert "[quarry: text cut at the csv_field_chars cap" in text
    assert "x" * 200 not in text


def test_a_limit_before_any_text_is_an_error(tmp_path: Path) -> None:
    src = tmp_path / "t.csv"
    src.write_text("x" * 500 + ",y\n", encoding="utf-8")
    outcome, _ = _read(src, tmp_path, Limits(csv_field_chars=100))
    assert (outcome.status, outcome.reason) == (Status.ERROR, "limit")  # type: ignore[attr-defined]


def _read_unhashed(path: Path, tmp: Path) -> tuple[object, str]:
    """As a worker reads a file the engine did not hash: it hashes what it reads."""
    outcome = read_one(
        ReadTask(str(path), "", Limits(), ToolSet.empty(), str(tmp), path.stat().st_size)
    )
    text = Path(outcome.text_file).read_text("utf-8") if outcome.text_file else ""
    return outcome, text


def test_a_small_file_is_read_once_from_the_bytes_it_was_hashed_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "small.txt"
    src.write_bytes(b"caf\xc3\xa9 au lait\r\n")

    def no_second_open(*_a: object, **_k: object) -> None:
        raise AssertionError("the text reader opened the file again")

    monkeypatch.setattr("engine.readers.text.open", no_second_open, raising=False)
    outcome, text = _read_unhashed(src, tmp_path)
    assert outcome.status == Status.OK  # type: ignore[attr-defined]
    assert text == "café au lait\n"
    assert outcome.sha256 == hashlib.sha256(src.read_bytes()).hexdigest()  # type: ignore[attr-defined]
    assert outcome.extractor == "text:utf-8"  # type: ignore[attr-defined]


def test_a_file_bigger_than_the_head_is_read_by_its_reader(tmp_path: Path) -> None:
    src = tmp_path / "big.txt"
    body = "word " * (HEAD_BYTES // 5 + 10)
    src.write_text(body, encoding="utf-8")
    outcome, text = _read_unhashed(src, tmp_path)
    assert outcome.status == Status.OK  # type: ignore[attr-defined]
    assert text == body


def test_an_archive_member_is_not_given_its_containers_bytes(tmp_path: Path) -> None:
    src = tmp_path / "small.zip"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("note.txt", "inside the zip\n")
    assert src.stat().st_size <= HEAD_BYTES  # read whole while hashed
    outcome, text = _read_unhashed(src, tmp_path)
    assert outcome.status == Status.OK  # type: ignore[attr-defined]
    assert "inside the zip" in text
    assert "PK" not in text


@pytest.mark.parametrize("size", [0, 1, HEAD_BYTES - 1, HEAD_BYTES, HEAD_BYTES + 1, HASH_CHUNK + 7])
def test_hash_file_hashes_every_byte(tmp_path: Path, size: int) -> None:
    src = tmp_path / "f.bin"
    data = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    src.write_bytes(data)
    got = hash_file(src)
    assert got is not None
    assert got[0] == hashlib.sha256(data).hexdigest()
    assert got[1][2] == size


@given(st.text(alphabet=st.characters(codec=None), max_size=60))
@example("\ud800\udf30 joined, \udf30\ud800 reversed, \ud800 alone")
@settings(max_examples=300, deadline=None)
def test_any_text_a_reader_hands_back_normalises_to_valid_utf8(text: str) -> None:
    """Whatever a reader writes (UTF-16 halves among it), the stored text encodes as UTF-8;
    a pair in order becomes its character, and a text without halves, CR or NUL is only NFC."""
    out = normalise(text)
    out.encode("utf-8")  # (strict)
    plain = not any("\ud800" <= c <= "\udfff" or c in "\r\x00" for c in text)
    if plain:
        assert out == unicodedata.normalize("NFC", text)
    if "\ud800\udf30" in text.replace("\r", "").replace("\x00", ""):
        assert "\U00010330" in out
