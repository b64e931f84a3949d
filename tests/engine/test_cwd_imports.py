"""Run from inside a received folder, quarry imports nothing of it.

The read workers come from a forkserver started with ``python -c``, which puts the current
folder first on ``sys.path``: a folder holding an ``engine/`` package had its code run by every
read worker of a ``quarry sweep .`` started inside it (found in session 10, by a benchmark run
from another checkout: its workers unpickled the other checkout's classes).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

QUARRY = Path(sys.executable).with_name("quarry")


@pytest.mark.skipif(not QUARRY.exists(), reason="needs the installed quarry command")
def test_a_folder_with_an_engine_package_runs_none_of_its_code(tmp_path: Path) -> None:
    marker = tmp_path / "RAN"
    for name in ("engine", "tui"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"
        )
    (tmp_path / "worker.py").write_text(f"open({str(marker)!r}, 'a').write('worker\\n')\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("plain text\n")
    (docs / "b.html").write_text("<p>more text</p>\n")
    cmd = [str(QUARRY), "sweep", "docs", "--out", "out", "--workers", "1"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()
    assert "a.txt" in (tmp_path / "out" / "extract.jsonl").read_text()
