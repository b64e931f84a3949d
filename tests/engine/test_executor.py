"""The executor seam: a run reads only through an Executor, and any Executor will do.

The default is the local worker pool; these tests drive a sweep through a second executor
written against the Protocol's docstring alone (reads in this process, for the test only),
the way issue 13's Dask executor plugs in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from engine.errors import MachineFailure
from engine.events import Event, Notice
from engine.executor import Executor
from engine.extract import Outcome, ReadTask, read_one
from engine.isolate import ReadPool
from engine.limits import Limits
from engine.records import Status
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet


class InlineExecutor:
    """Reads in the calling process: fine for plain text files in a test, nowhere else."""

    def __init__(self, limits: Limits, workers: int, *, broken: bool = False) -> None:
        self.queue: deque[ReadTask] = deque()
        self.broken = broken
        self.submitted = 0
        self.closed = False

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        for task in tasks:
            self.queue.append(task)
            self.submitted += 1

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        if self.broken:
            raise MachineFailure("the cluster is gone")
        while self.queue:
            task = self.queue.popleft()
            yield task, read_one(task)
            if tick is not None:
                tick()

    def cancel(self) -> None:
        self.queue.clear()

    def close(self) -> None:
        self.cancel()
        self.closed = True


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.html").write_text("<p>bravo</p>")
    (root / "copy.txt").write_text("alpha\n")
    return root


def _options(tmp_path: Path, name: str, **kw: object) -> SweepOptions:
    return SweepOptions(out=tmp_path / name, tools=ToolSet.empty(), workers=1, **kw)  # type: ignore[arg-type]


def test_the_pool_and_a_second_executor_meet_the_protocol() -> None:
    pool = ReadPool(Limits(), workers=1)
    try:
        assert isinstance(pool, Executor)
        assert isinstance(InlineExecutor(Limits(), 1), Executor)
    finally:
        pool.close()


def test_a_sweep_through_another_executor_gives_the_same_records(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    made: list[InlineExecutor] = []

    def factory(limits: Limits, workers: int) -> InlineExecutor:
        made.append(InlineExecutor(limits, workers))
        return made[-1]

    with Sweeper([root], _options(tmp_path, "pool")) as pooled:
        pooled.run()
        by_pool = {k: r.evolve(ms=0) for k, r in pooled.records.items()}
    with Sweeper([root], _options(tmp_path, "inline", executor=factory)) as inline:
        inline.run()
        by_inline = {k: r.evolve(ms=0) for k, r in inline.records.items()}
        texts = {r.sha256: inline.store.read_text(r.sha256 or "") for r in by_inline.values()}
    assert by_inline == by_pool
    assert sorted(texts.values()) == ["alpha\n", "bravo\n"]
    # Small new files are read unhashed: the copy is read too (big copies are read once).
    assert made[0].submitted == 3
    assert made[0].closed  # the sweeper closes what it made


def test_a_broken_executor_keeps_records_and_is_replaced(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    events: list[Event] = []
    made: list[InlineExecutor] = []

    def factory(limits: Limits, workers: int) -> InlineExecutor:
        made.append(InlineExecutor(limits, workers, broken=len(made) == 1))
        return made[-1]

    with Sweeper([root], _options(tmp_path, "s", executor=factory), events.append) as sweeper:
        sweeper.run()
        key = (str(root), "a.txt")
        good = sweeper.records[key]
        sweeper.drop_executor()
        assert made[0].closed
        sweeper.run(force=[key])  # the second executor is broken
        kept = sweeper.records[key]
        assert kept.evolve(reused=False) == good and good.status == Status.OK
        assert made[1].closed
        notices = [e for e in events if isinstance(e, Notice)]
        assert [n.kind for n in notices] == ["machine-failure"]
        assert "the cluster is gone" in notices[0].message
        sweeper.run(force=[key])  # a third, working one
        assert len(made) == 3 and sweeper.records[key].why == "forced"


@pytest.mark.parametrize("module", ["engine.run", "engine.isolate", "engine.executor"])
def test_the_run_side_never_imports_the_sweeper(module: str) -> None:
    import importlib
    import subprocess
    import sys

    importlib.import_module(module)
    code = f"import sys, {module}; print('engine.sweep' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
