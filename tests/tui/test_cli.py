"""The quarry command's dashboard entry points, as far as they run without a terminal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def quarry(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=60
    )


def test_read_only_never_creates_a_store(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    proc = quarry(str(tmp_path), "--read-only")
    assert proc.returncode == 1
    assert "no store at" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / ".quarry").exists()


def test_headless_commands_still_work_through_quarry(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    proc = quarry("sweep", "-q", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".quarry" / "extract.jsonl").exists()
