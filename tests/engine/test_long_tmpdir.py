"""A ``$TMPDIR`` of a long path does not stop the workers from starting.

multiprocessing makes its forkserver's socket in the temporary folder, and a Unix socket's path
takes at most 107 bytes: under a deep ``$TMPDIR`` every worker failed to start, and a sweep
ended with every file "not read: the machine failed" (exit 3).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.store import JSONL


def test_a_sweep_under_a_deep_tmpdir_reads_its_files(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-folder-of-a-long-name"] * 5)
    deep.mkdir(parents=True)
    assert len(os.fsencode(deep)) > 107
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("plain text\n")
    run = subprocess.run(
        [sys.executable, "-m", "engine", "sweep", str(docs), "--out", str(tmp_path / "s"), "-q"],
        env={**os.environ, "TMPDIR": str(deep)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert '"status":"ok"' in (tmp_path / "s" / JSONL).read_text()
    assert not [p for p in deep.iterdir() if p.name.startswith("pymp-")]
