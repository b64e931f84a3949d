"""A file whose hash hangs in the engine (a stalled network share, a file a hierarchical
store keeps offline until it is recalled): the sweep neither waits for it for ever nor
ignores a stop meanwhile. The engine hashes in threads no bound can stop; after
``HASH_PATIENCE`` seconds with no file of a chunk hashed, its files are read unhashed by
workers, whose reads are bounded and can be killed."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

import engine.run as run_mod
from engine.extract import Outcome, ReadTask, read_one
from engine.records import Reason, Status
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult, sweep
from engine.tools import ToolSet
from engine.walk import Entry

NO_TOOLS = SweepOptions(tools=ToolSet(()))


@pytest.fixture
def hanging(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], threading.Event]]:
    """The engine's hash of ``copy1.txt`` hangs until the test ends (its thread, a daemon,
    then returns); the files that hung are listed."""
    release = threading.Event()
    hung: list[str] = []
    real = run_mod._hash_file

    def hash_file(e: Entry) -> object:
        if e.path == "copy1.txt":
            hung.append(e.path)
            release.wait(300)  # (bounded: the test's end sets it)
        return real(e)

    monkeypatch.setattr(run_mod, "DEDUP_BYTES", 1)  # every file of a shared size is hashed
    monkeypatch.setattr(run_mod, "_hash_file", hash_file)
    try:
        yield hung, release
    finally:
        release.set()


def _docs(root: Path) -> dict[str, str]:
    root.mkdir()
    texts = {f"copy{i}.txt": f"words of file number {i}\n" for i in range(3)}  # one size
    for name, text in texts.items():
        (root / name).write_text(text)
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in texts.items()}


def test_a_file_whose_hash_hangs_is_read_unhashed_and_the_sweep_ends(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hanging: tuple[list[str], threading.Event],
) -> None:
    monkeypatch.setattr(run_mod, "HASH_PATIENCE", 0.2, raising=False)
    root = tmp_path / "docs"
    shas = _docs(root)

    sweep([root], NO_TOOLS)

    assert hanging[0] == ["copy1.txt"]
    records = Store(root / ".quarry").load_records()
    assert {r.path: (r.status, r.sha256) for r in records} == {
        name: ("ok", sha) for name, sha in shas.items()
    }


def test_a_sweep_asked_to_stop_while_a_hash_hangs_stops(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hanging: tuple[list[str], threading.Event],
) -> None:
    """Ctrl-C set the stop, but the planning waited on the hung hash without looking at it,
    and the pool's shutdown (and the interpreter's exit) waited for the hung thread."""
    monkeypatch.setattr(
        run_mod, "HASH_PATIENCE", 10**6, raising=False
    )  # never given up: only the stop
    root = tmp_path / "docs"
    _docs(root)
    results: list[SweepResult] = []
    with Sweeper([root], NO_TOOLS) as sweeper:
        running = threading.Thread(target=lambda: results.append(sweeper.run()), daemon=True)
        running.start()
        waited = threading.Event()
        for _ in range(1200):  # (a bounded poll: the hash has begun)
            if hanging[0] or not running.is_alive():
                break
            waited.wait(0.05)
        assert hanging[0] == ["copy1.txt"]
        sweeper.stop.set()
        running.join(120)
        assert not running.is_alive(), "the sweep did not stop"
    assert results and results[0].interrupted


class _LostOnHung:
    """Reads in this process, but the read of ``copy1.txt`` comes back as a worker lost to its
    time running out: no hash of what it read (the engine then hashes the file itself)."""

    def __init__(self) -> None:
        self.tasks: list[ReadTask] = []

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self.tasks.extend(tasks)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        while self.tasks:
            task = self.tasks.pop(0)
            if task.path.endswith("copy1.txt"):
                yield task, Outcome(Status.ERROR, "text/plain", Reason.TIMEOUT, error="timed out")
            else:
                yield task, read_one(task)

    def cancel(self) -> None:
        self.tasks.clear()

    def close(self) -> None:
        pass


def test_a_file_whose_read_and_hash_both_hang_is_unreadable_and_the_sweep_ends(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hanging: tuple[list[str], threading.Event],
) -> None:
    """A worker lost to a read that hung sends no hash; the engine hashed the file itself,
    in its own thread, and hung for ever on the very read that had hung the worker."""
    monkeypatch.setattr(run_mod, "HASH_PATIENCE", 0.2)
    monkeypatch.setattr(run_mod, "DEDUP_BYTES", 10**9)  # (read unhashed: the worker hashes)
    root = tmp_path / "docs"
    shas = _docs(root)
    lost = _LostOnHung()
    options = SweepOptions(tools=ToolSet(()), executor=lambda _limits, _workers: lost)

    sweep([root], options)

    assert hanging[0] == ["copy1.txt"]
    got = {r.path: r for r in Store(root / ".quarry").load_records()}
    assert (got["copy1.txt"].status, got["copy1.txt"].reason) == ("skipped", "unreadable")
    assert "hung" in (got["copy1.txt"].error or "")
    assert got["copy0.txt"].sha256 == shas["copy0.txt"] and got["copy0.txt"].status == "ok"
