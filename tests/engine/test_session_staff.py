"""A watcher has a read worker ready for its first change.

A session whose first sweep reads nothing (a folder swept before, unchanged) started no
worker, and its first change waited for one to start (~0.2 s of a one-file edit's way to the
store at a million files, `tests/bench/bench_watch_live.py`): one is started as watching
begins, and the first change's batch starts no other.
"""

from __future__ import annotations

from pathlib import Path

from engine.isolate import ReadPool
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import watching

OPTS = SweepOptions(tools=ToolSet.empty(), workers=2)


def test_a_watcher_whose_first_sweep_read_nothing_has_a_worker_ready(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for n in "abc":
        (root / f"{n}.txt").write_text(f"{n}\n")
    with Sweeper([root], OPTS) as sweeper:
        sweeper.run()
    for w in watching(root, poll=False, sweep=OPTS):
        pool = w.session.sweeper.executor
        assert isinstance(pool, ReadPool)
        assert pool.started == 1  # (the first sweep read nothing: this one is for the watcher)
        (root / "a.txt").write_text("alpha, longer now\n")
        w.wait("the edit's record", lambda recs: recs["a.txt"].chars == 18)
        assert pool.started == 1
