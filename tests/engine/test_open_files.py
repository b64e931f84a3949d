"""More workers than the open-file limit lets the engine run: fewer run, and it says so.

The default is one worker a core: on a machine of some 180 cores under the common limit of
1,024 open files (``ulimit -n``), every sweep failed as a machine failure ("cannot start a
worker process: Too many open files") and read nothing, where the workers that fit read it all.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from engine.isolate import FDS_A_WORKER, FDS_KEPT, workers_that_fit

LIMIT = 200
"""The open-file limit the sweep runs under: room for 14 workers, where 60 are asked for."""


def test_the_workers_that_fit_the_limit() -> None:
    assert workers_that_fit(8, 1024) == 8
    assert workers_that_fit(384, 1024) == (1024 - FDS_KEPT) // FDS_A_WORKER < 384
    assert workers_that_fit(4, 64) == 1  # always one: the read goes on, slowly
    assert workers_that_fit(3) == 3  # (this process's own limit: far above three)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def test_a_sweep_asking_for_more_workers_than_fit_reads_every_file(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for d in range(6):
        (root / f"d{d}").mkdir(parents=True)
        for f in range(40):
            (root / f"d{d}" / f"f{f}.txt").write_text(f"file {d} {f}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "sweep", str(root), "--workers", "60", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limited,  # (the child sets its own limit, nothing else)
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    fit = (LIMIT - FDS_KEPT) // FDS_A_WORKER
    said = f"{fit} read workers, of the 60 asked for: the open-file limit (ulimit -n {LIMIT})"
    assert said in proc.stderr, proc.stderr[-2000:]
    summary = json.loads((root / ".quarry" / "extract.summary.json").read_text())
    assert summary["counts"]["ok"] == 240, summary["counts"]


def test_a_session_says_the_cap_to_its_listener_once_its_sweep_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's session warms its pool while it opens the store, before it has a
    listener: the cap said then took ``quarry DIR`` down (AttributeError) before any screen."""
    from engine import isolate
    from engine.events import Notice, NoticeKind
    from engine.session import Session
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet

    monkeypatch.setattr(isolate, "workers_that_fit", lambda asked, soft_limit=None: 1)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    events: list[object] = []
    session = Session([root], SweepOptions(workers=3, tools=ToolSet.empty()), events.append)
    try:
        assert session.sweep().summary.counts["ok"] == 1
    finally:
        session.close()
    said = [e for e in events if isinstance(e, Notice) and e.kind is NoticeKind.WORKERS]
    assert len(said) == 1 and said[0].message.startswith("1 read worker, of the 3 asked for")
