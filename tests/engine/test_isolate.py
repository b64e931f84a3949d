"""The worker pool under faults: each fault gets its name, the pool recovers, reads go on.

Drives :class:`engine.isolate.ReadPool` with the fault-injection reader
(``tests/faultreader.py``), enabled for these tests only.
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import hashlib
import os
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import isolate, procs
from engine import worker as worker_mod
from engine.errors import MachineFailure
from engine.extract import Outcome, ReadTask, read_one
from engine.isolate import ReadPool
from engine.limits import Limits, MiB
from engine.records import Reason, Status
from engine.tools import Tool, ToolSet
from tests.faultreader import MIME, fixture

pytestmark = pytest.mark.timeout(60)

LIMITS = Limits(timeout_s=1.0, memory_bytes=256 * MiB, max_chars=10_000)
TIMED = {"hang", "busy", "tool", "where"}
"""The faults the wall time is for. The others end on their own and get room: under load (CI)
an allocation of 256 MiB ran past 1 s and was named a timeout, not the memory limit."""
ROOMY = dataclasses.replace(LIMITS, timeout_s=30.0)


@pytest.fixture(autouse=True)
def faults(fault_reader: None) -> None:
    """Every test here uses the fault reader (tests/engine/conftest.py)."""


@pytest.fixture
def pool() -> Iterator[ReadPool]:
    p = ReadPool(LIMITS, workers=1)
    yield p
    p.close()


def make(tmp_path: Path, name: str, action: str, arg: str = "") -> ReadTask:
    """A fault fixture file and the task that reads it."""
    path = tmp_path / name
    path.write_bytes(fixture(action, arg))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    limits = LIMITS if action in TIMED else ROOMY
    return ReadTask(str(path), f"sha-{name}", limits, ToolSet.empty(), str(tmp_path / "tmp"), 20)


def read_all(pool: ReadPool, tasks: list[ReadTask]) -> dict[str, Outcome]:
    return {Path(t.path).name: o for t, o in pool.read(tasks)}


FAULTS = [
    ("hang", Status.ERROR, Reason.TIMEOUT, True),
    ("busy", Status.ERROR, Reason.TIMEOUT, True),
    ("alloc", Status.ERROR, Reason.MEMORY, False),
    ("oom", Status.ERROR, Reason.MEMORY, True),
    ("exit", Status.ERROR, Reason.CRASHED, True),
    ("segv", Status.ERROR, Reason.CRASHED, True),
    ("raise", Status.ERROR, Reason.CRASHED, False),
    ("flood", Status.OK, None, False),
]


@pytest.mark.parametrize(("action", "status", "reason", "lost"), FAULTS)
def test_fault_gets_its_name_and_the_next_file_is_read(
    pool: ReadPool, tmp_path: Path, action: str, status: str, reason: str | None, lost: bool
) -> None:
    tasks = [make(tmp_path, "a-fault", action), make(tmp_path, "b-clean", "ok")]
    out = read_all(pool, tasks)
    fault = out["a-fault"]
    assert (fault.status, fault.reason, fault.lost_worker) == (status, reason, lost)
    assert fault.mime == MIME and fault.reader == "fault"
    assert out["b-clean"].status == Status.OK
    assert out["b-clean"].text_file is not None


def test_a_text_with_utf16_halves_is_stored_whole_not_a_dead_worker(
    pool: ReadPool, tmp_path: Path
) -> None:
    (_, outcome), *_ = pool.read([make(tmp_path, "halves", "halves")])
    assert (outcome.status, outcome.lost_worker) == (Status.OK, False)
    assert outcome.text_file is not None
    stored = Path(outcome.text_file).read_bytes().decode("utf-8")  # (strict: valid UTF-8)
    assert stored == "Gothic \U00010330\U00010331 and a lone \ufffd half\n"


def test_flood_is_capped_and_never_reaches_the_engine(pool: ReadPool, tmp_path: Path) -> None:
    (_, outcome), *_ = pool.read([make(tmp_path, "flood", "flood")])
    assert outcome.text_file is not None
    text = Path(outcome.text_file).read_text()
    assert len(text) > LIMITS.max_chars
    assert text.endswith(f"max_chars cap: {LIMITS.max_chars} characters]\n")


def test_messages_of_the_killed_are_named(pool: ReadPool, tmp_path: Path) -> None:
    out = read_all(pool, [make(tmp_path, n, n) for n in ("hang", "segv", "exit", "alloc")])
    assert out["hang"].error == "read took longer than 1 s"
    assert out["segv"].error == "worker died while reading (signal SIGSEGV)"
    assert out["exit"].error == "worker died while reading (exit code 3)"
    assert out["alloc"].error == f"ran out of memory (limit {LIMITS.memory_bytes} bytes)"


def test_only_the_culprit_of_a_batch_is_blamed(tmp_path: Path) -> None:
    pool = ReadPool(LIMITS, workers=1)
    try:
        names = [f"ok{i:02}" for i in range(40)]
        tasks = [make(tmp_path, n, "ok") for n in names]
        tasks[5] = make(tmp_path, "segv", "segv")
        tasks[30] = make(tmp_path, "exit", "exit")
        out = read_all(pool, tasks)
    finally:
        pool.close()
    assert len(out) == 40
    bad = {n for n, o in out.items() if o.status != Status.OK}
    assert bad == {"segv", "exit"}


def test_workers_are_reused_and_recycled(tmp_path: Path) -> None:
    tasks = [make(tmp_path, f"ok{i:02}", "ok") for i in range(12)]
    reused = ReadPool(LIMITS, workers=1)
    recycled = ReadPool(LIMITS, workers=1, max_reads=5)
    try:
        assert all(o.status == Status.OK for _, o in reused.read(tasks))
        assert all(o.status == Status.OK for _, o in recycled.read(tasks))
        assert all(o.status == Status.OK for _, o in reused.read(tasks))
    finally:
        reused.close()
        recycled.close()
    assert reused.started == 1
    assert recycled.started == 3


def test_an_idle_worker_takes_a_single_read_before_another_is_started(tmp_path: Path) -> None:
    """A watch batch of one file with a worker staffed ahead and idle starts no process (a
    start was ~0.2 s of a one-file edit's way to the store); a queue longer than the idle
    workers still gets every worker there may be."""
    pool = ReadPool(LIMITS, workers=2)
    try:
        pool.staff()
        pool.staff()  # (one is enough: a second call starts none)
        assert pool.started == 1
        assert [o.status for _, o in pool.read([make(tmp_path, "one", "ok")])] == [Status.OK]
        assert pool.started == 1
        tasks = [make(tmp_path, f"ok{i:02}", "ok") for i in range(8)]
        assert all(o.status == Status.OK for _, o in pool.read(tasks))
        assert pool.started == 2
    finally:
        pool.close()


def test_a_worker_that_recycles_with_a_batch_waiting_in_its_pipe_loses_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that leaves at ``max_reads`` with a batch sent ahead still unread in its pipe:
    those files are read by the next worker, none blamed on the one that left.

    When the engine looks at a worker near the end of its batch depends on timing, so the
    test sends ahead whenever the worker holds a single batch (harsher than the pool: two
    batches may then wait in the pipe), which makes the leaving with a batch queued certain."""
    sent_ahead: list[int] = []

    def always(w: object) -> bool:
        tasks = w.tasks  # type: ignore[attr-defined]
        ahead = bool(tasks) and tasks[0][0] == tasks[-1][0]
        sent_ahead.append(ahead)
        return ahead

    monkeypatch.setattr(isolate, "_near_end", always)
    tasks = [make(tmp_path, f"ok{i:03}", "ok") for i in range(1200)]
    pool = ReadPool(LIMITS, workers=1, max_reads=240)  # batches of up to 256 files
    try:
        out = read_all(pool, tasks)
    finally:
        pool.close()
    assert any(sent_ahead), "no batch was sent ahead"
    assert len(out) == 1200
    assert {o.status for o in out.values()} == {Status.OK}
    assert pool.started >= 5


def test_a_killed_worker_takes_its_tool_with_it(pool: ReadPool, tmp_path: Path) -> None:
    pidfile = tmp_path / "tool.pid"
    (_, outcome), *_ = pool.read([make(tmp_path, "tool", "tool", str(pidfile))])
    assert outcome.reason == Reason.TIMEOUT
    pid = int(pidfile.read_text())
    assert _gone(pid), "the tool outlived its worker"


def _gone(pid: int, within: float = 3.0) -> bool:
    """The process has exited (a zombie waiting for init counts as gone)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat[stat.rfind(")") + 2] in "ZX":
            return True
        time.sleep(0.05)
    return False


def test_a_pool_that_cannot_fork_is_a_machine_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot(*_args: object) -> object:
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(procs, "start_process", cannot)
    pool = ReadPool(LIMITS, workers=1)
    with pytest.raises(MachineFailure, match="cannot start a worker process"):
        list(pool.read([make(tmp_path, "ok", "ok")]))
    pool.close()


def test_workers_that_die_at_start_are_a_machine_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = procs.start_process

    def doomed(ctx: Any, conn: Any, cfg: worker_mod.WorkerConfig) -> object:
        from dataclasses import replace

        return real(ctx, conn, replace(cfg, extra_readers=("no_such_module_for_quarry",)))

    monkeypatch.setattr(procs, "start_process", doomed)
    pool = ReadPool(LIMITS, workers=1)
    with pytest.raises(MachineFailure, match="cannot start"):
        list(pool.read([make(tmp_path, "ok", "ok")]))
    assert pool.started == isolate.START_FAILURES
    pool.close()


def test_a_worker_does_not_run_the_main_module_of_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """multiprocessing runs the parent's main module again in each child it starts: in a Dask
    worker, distributed's command line (~0.5 s of imports a read child, the first task of a
    sweep waiting on them). A read child needs none of it."""
    import types

    marker = tmp_path / "ran"
    script = tmp_path / "main_of_parent.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    pool = ReadPool(LIMITS, workers=1)
    try:
        [(_task, outcome)] = list(pool.read([make(tmp_path, "ok", "ok")]))
    finally:
        pool.close()
    assert outcome.status == Status.OK
    assert not marker.exists()
    assert sys.modules["__main__"] is main  # put back after the start


def _files_in(folder: Path) -> list[Path]:
    """Every file under ``folder`` (a worker writes its texts in a folder of its own there)."""
    return [p for p in folder.rglob("*") if not p.is_dir()]


def test_disk_full_in_the_worker_is_the_machines_fault(tmp_path: Path) -> None:
    task = make(tmp_path, "ok", "ok")
    gone = ReadTask(task.path, task.sha256, LIMITS, task.tools, str(tmp_path / "no-such-dir"))
    outcome = read_one(gone)
    assert outcome.machine and outcome.status == Status.ERROR
    assert outcome.error is not None and "cannot write the text" in outcome.error


def test_a_text_that_cannot_be_placed_in_the_store_is_the_machines_fault(
    tmp_path: Path,
) -> None:
    task = make(tmp_path, "ok", "ok")
    store = tmp_path / "store-without-extract"
    store.mkdir()
    placed = ReadTask(
        task.path, "", LIMITS, task.tools, task.tmp_dir, store_dir=str(store)
    )  # the worker hashes and renames the text into store/extract/<aa>/, which is not there
    outcome = read_one(placed)
    assert outcome.machine and outcome.status == Status.ERROR
    assert outcome.error is not None and "cannot write the text" in outcome.error
    assert _files_in(Path(task.tmp_dir)) == []  # no temporary text left behind


def test_a_worker_places_the_text_under_the_hash_of_what_it_read(tmp_path: Path) -> None:
    task = make(tmp_path, "ok", "ok")
    store = tmp_path / "store"
    real = hashlib.sha256(Path(task.path).read_bytes()).hexdigest()
    (store / "extract" / real[:2]).mkdir(parents=True)
    outcome = read_one(
        ReadTask(task.path, "", LIMITS, task.tools, task.tmp_dir, store_dir=str(store))
    )
    assert outcome.status == Status.OK and outcome.sha256 == real
    assert outcome.text_file == str(store / "extract" / real[:2] / f"{real}.txt")
    assert Path(outcome.text_file).is_file()
    assert _files_in(Path(task.tmp_dir)) == []


def test_a_tool_that_vanished_is_the_machines_fault(tmp_path: Path) -> None:
    exe = tmp_path / "quarry-fault-tool"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    tools = ToolSet((Tool("quarry-fault-tool", str(exe), "1"),))
    task = make(tmp_path, "vanish", "vanish", str(exe))
    outcome = read_one(ReadTask(task.path, task.sha256, LIMITS, tools, task.tmp_dir))
    assert outcome.machine, outcome
    assert outcome.error == f"quarry-fault-tool vanished during the sweep ({exe})"


def test_an_abandoned_read_leaves_no_stale_answers(pool: ReadPool, tmp_path: Path) -> None:
    reads = pool.read([make(tmp_path, f"ok{i}", "ok") for i in range(6)])
    assert isinstance(reads, Generator)
    next(reads)
    reads.close()
    out = read_all(pool, [make(tmp_path, "later", "ok")])
    assert list(out) == ["later"] and out["later"].status == Status.OK


def test_a_big_batch_of_outcomes_goes_down_the_pipe_in_one_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Connection.send writes a message over 16 KiB as two (its length, then its bytes): the
    # engine would sit in recv between them whenever the worker lost its core there.
    outcomes = [Outcome(Status.OK, "text/plain", error=f"{i:0>300}") for i in range(100)]
    msg = worker_mod.Done(tuple(outcomes))
    writes: list[int] = []
    real_write = os.write

    def counted(fd: int, data: Any) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    ours, theirs = procs.worker_context().Pipe()
    try:
        with monkeypatch.context() as m:
            m.setattr(os, "write", counted)
            worker_mod.send(theirs, msg)
        assert len(writes) == 1 and writes[0] > 16 * 1024
        assert worker_mod.from_worker(ours) == msg
    finally:
        ours.close()
        theirs.close()


def test_files_are_read_a_kind_at_a_time_kinds_of_bigger_files_first(tmp_path: Path) -> None:
    """The queue is grouped by name extension (any case; a dotted folder is no extension),
    kinds of bigger files on average first, the queued order kept within a kind: a kind's
    first-use imports happen in the worker that reads it, not in every one."""
    from dataclasses import replace

    (tmp_path / "sub.d").mkdir()
    named = [("a.txt", 10), ("b.PDF", 900), ("sub.d/c", 50), ("d.pdf", 100), ("e.txt", 30)]
    tasks = [replace(make(tmp_path, name, "ok"), size=size) for name, size in named]
    pool = ReadPool(LIMITS, workers=1)
    try:
        order = [Path(t.path).name for t, _o in pool.read(tasks)]
    finally:
        pool.close()
    assert order == ["b.PDF", "d.pdf", "c", "a.txt", "e.txt"]  # means 500, 50, 20


def test_a_batch_takes_a_small_share_of_the_queue(tmp_path: Path) -> None:
    """At most 1/BATCH_SHARE of a worker's share: a batch of one heavy kind cannot outlast
    what the other workers have left."""
    task = make(tmp_path, "one", "ok")
    pool = ReadPool(LIMITS, workers=2)
    queue = collections.deque([task] * 161)  # the first, then a share of the 160 after it
    assert len(pool._take(queue)) == 160 // (isolate.BATCH_SHARE * 2)
    assert len(pool._take(collections.deque([task] * 3))) == 1
