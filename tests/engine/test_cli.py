"""The quarry command line as a user runs it: exit codes, messages, output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

QUARRY = [sys.executable, "-m", "engine"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*QUARRY, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_missing_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = run("sweep", str(tmp_path / "nope"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"quarry: no such folder: {tmp_path / 'nope'}"


def test_bad_flag_is_a_usage_message_and_exit_1(tmp_path: Path) -> None:
    proc = run("sweep", "--frobnicate", str(tmp_path))
    assert proc.returncode == 1
    assert "usage: quarry" in proc.stderr and "--frobnicate" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_size_is_a_usage_message(tmp_path: Path) -> None:
    proc = run("sweep", "--max-bytes", "lots", str(tmp_path))
    assert proc.returncode == 1 and "not a size" in proc.stderr


def test_clean_sweep_exits_0_and_json_summary(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    proc = run("sweep", "--json", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    summary = orjson.loads(proc.stdout)
    assert summary["files"] == 1 and summary["counts"]["ok"] == 1 and summary["chars"] == 5


def test_error_records_exit_2_with_a_plain_log(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("fine")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    proc = run("sweep", "--no-external", str(tmp_path))
    assert proc.returncode == 2
    assert "error/corrupt" in proc.stderr and "broken.pdf" in proc.stderr
    assert "ok " in proc.stderr and "good.txt" in proc.stderr
    assert "error" in proc.stdout  # the summary table


def test_show_prints_record_and_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\r\nworld")
    assert run("sweep", "-q", str(tmp_path)).returncode == 0
    proc = run("show", str(tmp_path / "a.txt"))
    assert proc.returncode == 0
    assert "extractor: text:utf-8" in proc.stdout
    assert proc.stdout.endswith("hello\nworld")


def test_show_outside_any_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    proc = run("show", str(tmp_path / "a.txt"))
    assert proc.returncode == 1 and "no store found" in proc.stderr


def test_retry_reads_the_file_again(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    run("sweep", "-q", str(tmp_path))
    proc = run("retry", str(tmp_path / "a.txt"))
    assert proc.returncode == 0, proc.stderr
    assert "a.txt" in proc.stdout
    shown = run("show", "--no-text", str(tmp_path / "a.txt")).stdout
    assert "why: forced" in shown


def test_tools_lists_every_known_tool_as_json() -> None:
    proc = run("tools", "--json")
    rows = orjson.loads(proc.stdout)
    names = {r["tool"] for r in rows}
    assert {"pdftotext", "pdftoppm", "tesseract", "antiword"} <= names
    assert all("debian" in r["install"] for r in rows)


def test_several_roots_need_out(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    proc = run("sweep", str(tmp_path / "a"), str(tmp_path / "b"))
    assert proc.returncode == 1 and "--out" in proc.stderr


def test_engine_alone_says_where_the_dashboard_is(tmp_path: Path) -> None:
    proc = run("ui", "--store", str(tmp_path))
    assert proc.returncode == 1 and "'quarry' command" in proc.stderr


def test_quarry_ui_on_a_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tui", "ui", "--store", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "no store at" in proc.stderr
    assert "Traceback" not in proc.stderr
