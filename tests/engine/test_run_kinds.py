"""Each run says why it runs: a full sweep, a rescan, the watcher's changes, a retry or a
tool's files (the dashboard's activity log said "rescan" for each run that was not full)."""

from __future__ import annotations

from pathlib import Path

from engine.events import Event, RunKind, SweepFinished, SweepStarted
from engine.session import Session
from engine.sweep import SweepOptions
from engine.tools import ToolSet


def test_each_run_of_a_session_says_why_it_runs(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    events: list[Event] = []
    session = Session([root], SweepOptions(tools=ToolSet.empty()), events.append)
    try:
        session.sweep()
        (root / "a.txt").write_text("alpha and more\n")
        session.apply({str(root): ["a.txt"]})
        session.retry([(str(root), "a.txt")])
        session.rescan()
    finally:
        session.close()
    started = [(e.kind, e.full) for e in events if isinstance(e, SweepStarted)]
    finished = [(e.kind, e.full) for e in events if isinstance(e, SweepFinished)]
    assert (
        started
        == finished
        == [
            (RunKind.SWEEP, True),
            (RunKind.CHANGES, False),
            (RunKind.RETRY, False),
            (RunKind.RESCAN, False),
        ]
    )
