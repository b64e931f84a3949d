"""The read harness: caps keep the text read so far, named, with the reader's own verdict."""

from __future__ import annotations

import hashlib
from pathlib import Path

from engine.extract import ReadTask, read_one
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
