"""Failures of the machine and of the engine's own process, through real processes.

SIGTERM to ``quarry sweep`` (handled like Ctrl-C), an engine killed outright (its workers and
their tools die with it, a pipe reader sees EOF), a worker that bounds its own read when no
engine is left to, a recycled worker never blamed for the next file (the drain race), a store
on a full disk (a small tmpfs when this runs as root, else an injected ENOSPC), temp files of
a killed writer, and a root that vanished or became empty.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from multiprocessing import Pipe
from pathlib import Path

import pytest

from engine import isolate, procs
from engine.db import RecordDB
from engine.events import Event, Notice
from engine.extract import Outcome, ReadTask
from engine.isolate import ReadPool, _Worker
from engine.limits import Limits
from engine.records import Status
from engine.resume import Ledger
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, sweep
from engine.tools import ToolSet
from engine.worker import SLOT_BYTES, Bye, Done, Slot, own_bound
from tests import faultreader
from tests.faultreader import ARGS, fixture
from tests.waiting import alive, until

pytestmark = pytest.mark.timeout(120)

ENV = faultreader.env()


@pytest.fixture(autouse=True)
def faults(fault_reader: None) -> None:
    """The fault reader, in this process and in the engines and workers it starts."""


def _tool_script(tmp_path: Path) -> Path:
    """A stand-in for tesseract: writes its pid to $1, then runs for five minutes."""
    exe = tmp_path / "bin" / "quarry-fault-tool"
    exe.parent.mkdir()
    exe.write_text('#!/bin/sh\necho $$ > "$1"\nexec sleep 300\n')
    exe.chmod(0o755)
    return exe


# -- signals and deaths ---------------------------------------------------------------------


def _sigterm_while_reading(cmd: list[str], pidfile: Path) -> list[int]:
    """Run ``cmd``; once the tool writes ``pidfile`` (a read in flight), SIGTERM it. It must
    exit 130 with its one line and no traceback; returns the processes it had started."""
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        until(pidfile.exists, "the read in flight")
        family = [pid for pid, _ in procs.descendants(proc.pid)]
        proc.send_signal(signal.SIGTERM)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(OSError):
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "quarry: interrupted; the store keeps what was read so far" in stderr
    assert "Traceback" not in stderr
    return family


def test_sigterm_to_quarry_sweep_writes_the_store_and_exits_130(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(5):
        (root / f"a{i}.txt").write_text(f"text number {i}\n")
    pidfile = tmp_path / "tool.pid"
    (root / "z.bin").write_bytes(fixture("tool", str(pidfile)))  # in flight when SIGTERM comes
    out = tmp_path / "store"
    cmd = [sys.executable, "-m", "engine", "sweep", str(root), "--out", str(out), *ARGS]
    family = _sigterm_while_reading([*cmd, "--workers", "1", "--timeout", "100"], pidfile)
    records = {r.path: r for r in Store(out).load_records()}
    assert "z.bin" not in records  # never read: no verdict invented for it
    for r in records.values():
        assert r.status == Status.OK and Store(out).has_text(r.sha256 or "")
    until(lambda: not any(alive(p) for p in family), "the engine's processes to end")
    assert not alive(int(pidfile.read_text()))


def test_sigterm_to_quarry_retry_keeps_the_earlier_verdict_and_exits_130(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("text\n")
    pidfile = tmp_path / "tool.pid"
    (root / "z.bin").write_bytes(fixture("tool", str(pidfile)))
    out = tmp_path / "store"
    base = [sys.executable, "-m", "engine"]
    first = subprocess.run(
        [*base, "sweep", str(root), "--out", str(out), "--workers", "1", "--timeout", "1", *ARGS],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 2, first.stderr  # z.bin: error/timeout
    before = {r.path: r for r in Store(out).load_records()}
    pidfile.unlink()
    retry = [*base, "retry", str(root / "z.bin"), "--out", str(out), "--timeout", "100", *ARGS]
    family = _sigterm_while_reading(retry, pidfile)
    assert {r.path: r for r in Store(out).load_records()} == before  # nothing invented
    with Store(out).writer():
        pass  # the lock was released
    until(lambda: not any(alive(p) for p in family), "the retry's processes to end")
    assert not alive(int(pidfile.read_text()))


@pytest.mark.parametrize("kill", ["engine", "group"])
def test_an_engine_killed_outright_takes_workers_and_tools_with_it(
    tmp_path: Path, kill: str
) -> None:
    """SIGKILL to the engine alone (its forkserver sees it go and exits), or to its whole
    process group (the forkserver killed with it: only the workers' parent-death signal and
    their guards act)."""
    root = tmp_path / "docs"
    root.mkdir()
    pidfile = tmp_path / "tool.pid"
    (root / "slow.bin").write_bytes(fixture("runtool", str(pidfile)))
    (root / "hang.bin").write_bytes(fixture("hang"))
    exe = _tool_script(tmp_path)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from engine.sweep import Sweeper, SweepOptions\n"
        "from engine.limits import Limits\n"
        "from engine.tools import Tool, ToolSet\n"
        f"tools = ToolSet((Tool('quarry-fault-tool', {str(exe)!r}, '1'),))\n"
        "opts = SweepOptions(out=Path(sys.argv[2]), tools=tools, workers=2,\n"
        "                    limits=Limits(timeout_s=100, tool_timeout_s=300),\n"
        f"                    readers=({faultreader.SPEC!r},))\n"
        "print('engine up', flush=True)\n"
        "with Sweeper([Path(sys.argv[1])], opts) as s:\n"
        "    s.run()\n"
    )
    engine = subprocess.Popen(
        [sys.executable, "-c", script, str(root), str(tmp_path / "store")],
        env=ENV,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        until(pidfile.exists, "the tool to start")
        until(lambda: pidfile.read_text().strip() != "", "the tool's pid")
        tool = int(pidfile.read_text())
        family = [pid for pid, _ in procs.descendants(engine.pid)]
        assert tool in family
        if kill == "group":
            os.killpg(engine.pid, signal.SIGKILL)
        else:
            engine.kill()  # SIGKILL: no handler, no cleanup in the engine
        assert engine.stdout is not None
        started = time.monotonic()
        rest = engine.stdout.read()  # `quarry sweep ... | cat`: EOF must come now, not in 300 s
        assert rest == b"engine up\n" and time.monotonic() - started < 60
        until(lambda: not any(alive(p) for p in family), "workers and tools to die")
    finally:
        with contextlib.suppress(OSError):
            os.killpg(engine.pid, signal.SIGKILL)
        engine.wait(10)
        if engine.stdout is not None:
            engine.stdout.close()


def test_a_worker_ends_a_read_past_its_budget_when_no_engine_acts(tmp_path: Path) -> None:
    task = ReadTask(
        str(tmp_path / "hang.bin"), "sha", Limits(timeout_s=0.5), ToolSet.empty(), str(tmp_path)
    )
    Path(task.path).write_bytes(fixture("hang"))
    pool = ReadPool(Limits(timeout_s=0.5), workers=1)
    try:
        reads = pool.read([task])
        pool._staff(1)
        worker = pool._live[0]
        until(lambda: bool([*pool._drain(worker, pool._queue)]) or worker.ready, "ready")
        pool._dispatch(pool._queue)
        assert worker.tasks
        # The engine does nothing now (as if stopped or gone): only the worker's own bound acts.
        until(lambda: not worker.proc.is_alive(), "the worker's own bound", limit=30)
        assert worker.proc.exitcode == -signal.SIGALRM
        (_task, outcome), *_ = list(reads)
        assert (outcome.status, outcome.reason) == (Status.ERROR, "timeout")
    finally:
        pool.close()


def _ready_worker(pool: ReadPool) -> _Worker:
    pool._staff(1)
    worker = pool._live[0]
    until(lambda: bool([*pool._drain(worker, pool._queue)]) or worker.ready, "ready")
    return worker


def _send_batch(worker: _Worker, tasks: list[ReadTask], number: int) -> None:
    worker.tasks = deque((number, i, t) for i, t in enumerate(tasks))
    worker.conn.send(isolate._batch(tasks, number))


def _files(tmp_path: Path, actions: list[str], limits: Limits, tag: str) -> list[ReadTask]:
    tasks = []
    for i, action in enumerate(actions):
        path = tmp_path / f"{tag}{i}.bin"
        path.write_bytes(fixture(action, f"{tag}{i}"))
        tasks.append(ReadTask(str(path), "", limits, ToolSet.empty(), str(tmp_path)))
    return tasks


@pytest.mark.parametrize(("before", "after", "early"), [(70, 5, True), (1, 1, False)])
def test_a_worker_at_the_end_of_a_batch_of_small_files_is_sent_the_next_one(
    tmp_path: Path, before: int, after: int, early: bool
) -> None:
    # Its next batch waits in its pipe, so it never waits on the engine between batches; a
    # batch of a few files (big ones) is not followed early: another worker may be free first.
    limits = Limits(timeout_s=30)
    # A slow read before the hung one: the worker sends every outcome before it then,
    # however its earlier sends fell (by count or by time, which load decides).
    first = _files(tmp_path, ["ok"] * before + ["slow", "hang"] + ["ok"] * after, limits, "a")
    pool = ReadPool(limits, workers=1)
    try:
        worker = _ready_worker(pool)
        pool._batches = 1
        _send_batch(worker, first, 1)
        until(lambda: (worker.slot.reading() or (0, 0))[:2] == (1, before + 1), "the hung read")
        got: list[object] = []
        until(lambda: len(got.extend(pool._drain(worker, pool._queue)) or got) > before, "oks")
        pool._queue.extend(_files(tmp_path, ["ok"] * 40, limits, "b"))
        pool._dispatch(pool._queue)
        assert {number for number, _i, _t in worker.tasks} == ({1, 2} if early else {1})
    finally:
        pool.close()


def test_a_hung_read_after_quick_ones_of_its_batch_ends_by_the_workers_own_bound(
    tmp_path: Path,
) -> None:
    # The alarm is not armed anew for every read of a batch: the hung read must still get one.
    limits = Limits(timeout_s=0.5)
    tasks = _files(tmp_path, ["ok"] * 5 + ["hang"], limits, "")
    pool = ReadPool(limits, workers=1)
    try:
        worker = _ready_worker(pool)
        _send_batch(worker, tasks, 1)
        # The engine does nothing now (as if stopped or gone): only the worker's own bound acts.
        until(lambda: not worker.proc.is_alive(), "the worker's own bound", limit=30)
        assert worker.proc.exitcode == -signal.SIGALRM
        reading = worker.slot.reading()
        assert reading is not None and reading[:2] == (1, 5)  # it was reading the hung file
    finally:
        pool.close()


def test_a_worker_waiting_for_its_next_batch_is_not_ended_by_its_own_bound(
    tmp_path: Path,
) -> None:
    limits = Limits(timeout_s=0.1)
    tasks = _files(tmp_path, ["ok"] * 3, limits, "")
    pool = ReadPool(limits, workers=1)
    try:
        worker = _ready_worker(pool)
        _send_batch(worker, tasks[:2], 1)
        got: list[object] = []
        until(lambda: len(got.extend(pool._drain(worker, pool._queue)) or got) == 2, "2 reads")
        # Idle past its own bound (an alarm left armed after the batch would end it now).
        time.sleep(own_bound(limits) + 0.5)
        assert worker.proc.is_alive()
        _send_batch(worker, tasks[2:], 2)
        until(lambda: len(got.extend(pool._drain(worker, pool._queue)) or got) == 3, "3rd read")
        assert worker.proc.is_alive()
    finally:
        pool.close()


class _Exited:
    """A worker process that has already exited, with ``code``."""

    def __init__(self, code: int) -> None:
        self.exitcode = code
        self.pid = None
        self.sentinel = -1

    def is_alive(self) -> bool:
        return False

    def join(self, _timeout: float | None = None) -> None:
        return None


def test_a_recycled_worker_is_never_blamed_for_the_next_file(tmp_path: Path) -> None:
    """The drain race, made deterministic: the pool learns of the worker's exit having read
    its last Done but not yet its Bye; the next file of its batch must not be blamed."""
    pool = ReadPool(Limits(), workers=1)
    ours, theirs = Pipe()
    first, second = (
        ReadTask(str(tmp_path / n), n, Limits(), ToolSet.empty(), str(tmp_path)) for n in "ab"
    )
    done = Outcome(Status.OK, "text/plain", chars=3)
    theirs.send(Done((done,)))
    theirs.send(Bye())
    theirs.close()
    slot = Slot(bytearray(SLOT_BYTES))
    slot.begin(1, 0)
    slot.end()  # as the worker leaves it: the first file read, the second not begun
    tasks = deque([(1, 0, first), (1, 1, second)])
    w = _Worker(_Exited(0), ours, slot, ready=True, began=True, tasks=tasks)  # type: ignore[arg-type]
    pool._live.append(w)
    queue: deque[ReadTask] = deque()
    got = list(pool._dead(w, queue))
    assert got == [(first, done)]
    assert list(queue) == [second]  # sent again, not blamed


def test_a_worker_that_dies_mid_batch_is_blamed_for_the_file_its_slot_names(
    tmp_path: Path,
) -> None:
    """Outcomes travel a few at a time: a worker can die having read files it had not yet
    reported. Only the file its slot says it was reading is blamed, with the MIME it noted;
    the others are sent again."""
    pool = ReadPool(Limits(), workers=1)
    ours, theirs = Pipe()
    a, b, c = (
        ReadTask(str(tmp_path / n), n, Limits(), ToolSet.empty(), str(tmp_path)) for n in "abc"
    )
    theirs.close()  # it died before sending anything
    slot = Slot(bytearray(SLOT_BYTES))
    slot.begin(7, 1)
    slot.mime("application/pdf")
    tasks = deque([(7, 0, a), (7, 1, b), (7, 2, c)])
    w = _Worker(_Exited(-11), ours, slot, ready=True, tasks=tasks)  # type: ignore[arg-type]
    pool._live.append(w)
    queue: deque[ReadTask] = deque()
    (task, outcome), *rest = list(pool._dead(w, queue))
    assert not rest
    assert task is b
    assert (outcome.status, outcome.reason, outcome.mime) == (
        Status.ERROR,
        "crashed",
        "application/pdf",
    )
    assert outcome.error == "worker died while reading (signal SIGSEGV)"
    assert list(queue) == [a, c]  # read but not reported, and not begun: sent again


def test_a_worker_that_dies_between_reads_unreported_is_no_failure_to_start(
    tmp_path: Path,
) -> None:
    """It had read files it had not reported yet, then died between two reads: nothing is
    blamed, every file is sent again, and it does not count towards "workers cannot start"."""
    pool = ReadPool(Limits(), workers=1)
    ours, theirs = Pipe()
    a, b = (ReadTask(str(tmp_path / n), n, Limits(), ToolSet.empty(), str(tmp_path)) for n in "ab")
    theirs.close()
    slot = Slot(bytearray(SLOT_BYTES))
    slot.begin(3, 0)
    slot.end()
    w = _Worker(_Exited(-9), ours, slot, ready=True, tasks=deque([(3, 0, a), (3, 1, b)]))  # type: ignore[arg-type]
    pool._live.append(w)
    queue: deque[ReadTask] = deque()
    assert list(pool._dead(w, queue)) == []
    assert list(queue) == [a, b]
    assert pool._start_failures == 0


# -- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 640 KiB tmpfs (needs root); skipped otherwise (the injected tests below still run)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=640k", "tmpfs", str(mnt)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("a real full disk needs root to mount a tmpfs; injected ENOSPC below")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _texts(out: Path) -> set[str]:
    return {p.stem for p in (out / "extract").glob("*/*.txt")}


@pytest.mark.parametrize("json", [False, True])
def test_a_full_disk_is_a_machine_failure_in_every_output_mode(
    tmp_path: Path, small_disk: Path, json: bool
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "first.txt").write_text("the first text\n")
    out = small_disk / "store"
    cmd = [sys.executable, "-m", "engine", "sweep", str(root), "--out", str(out), "--workers", "1"]
    cmd += ["--json"] if json else []
    assert subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    before = {r.path: r for r in Store(out).load_records()}
    for i in range(120):  # 120 distinct texts of a 4 KiB page each: more than the disk holds
        (root / f"big{i:03}.txt").write_text(f"{i} " + "words " * 700 + "\n")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "No space left on device" in proc.stderr and "Traceback" not in proc.stderr
    records = {r.path: r for r in Store(out).load_records()}
    # earlier records kept (whether the records were written, marking it reused, depends on
    # where the disk filled: the index's files, dropped on a full disk, free some of it)
    assert records["first.txt"].evolve(reused=False) == before["first.txt"]
    named = {r.sha256 for r in records.values() if r.has_text}
    assert _texts(out) == named  # no orphan text fills the disk
    assert list((out / "tmp").iterdir()) == []
    assert not list(out.glob(".extract.*.tmp"))


def test_a_disk_that_fills_under_a_first_sweep_s_index_fails_it_as_the_machine_s(
    tmp_path: Path, small_disk: Path
) -> None:
    """A first sweep whose index outgrows the disk (3,000 files of one text: one 4 KiB text
    file, a record each) stops there and exits 3 saying the disk is full (`quarry watch`: 1,
    the store not up to date). It said "interrupted" and exited 130 as if Ctrl-C had stopped
    it (`quarry watch`: 0, "stopped during the first sweep"). Given room, the next sweep
    completes the store."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3000):
        (root / f"f{i:04}.txt").write_text("the same words in every file\n")
    out = small_disk / "store"
    # `quarry watch` stops there (no signal needed), saying the store is not up to date
    watch = [sys.executable, "-m", "engine", "watch", str(root), "--out", str(out)]
    watched = subprocess.run(watch, capture_output=True, text=True, timeout=120)
    assert watched.returncode == 1, watched.stderr
    said = f"stopped; the store is NOT up to date: cannot write the store {out}: No space left"
    assert said in watched.stderr and "Traceback" not in watched.stderr, watched.stderr
    shutil.rmtree(out)
    cmd = [sys.executable, "-m", "engine", "sweep", str(root), "--out", str(out), "--workers", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert f"quarry: cannot write the store {out}: No space left on device" in proc.stderr
    assert "interrupted" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    records = Store(out).load_records()
    assert len(records) == 3000 and {r.status for r in records} == {Status.OK}
    assert _texts(out) == {records[0].sha256}  # one text, and no orphan left by the first


def test_a_store_write_that_fails_keeps_the_old_records_and_no_orphan_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Injected ENOSPC on the extract.jsonl write (the texts of the run were already in)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    opts = SweepOptions(out=tmp_path / "store", tools=ToolSet.empty(), workers=1)
    with Sweeper([root], opts) as s:
        s.run()
    before = (tmp_path / "store" / "extract.jsonl").read_bytes()
    (root / "b.txt").write_text("bravo\n")

    def full(self: Store, records: object, before_write: object = None) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Store, "write_records", full)
    monkeypatch.setattr(Store, "write_lines", full)  # (the index writes it)
    with Sweeper([root], opts) as s:
        with pytest.raises(OSError, match="No space left on device"):
            s.run()
        assert set(s.records) == {(str(root), "a.txt")}  # back to what is on disk
    assert (tmp_path / "store" / "extract.jsonl").read_bytes() == before
    assert _texts(tmp_path / "store") == {Store(tmp_path / "store").load_records()[0].sha256}


def _disk_full() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL
    return exc


def test_an_index_that_fails_as_the_file_is_written_from_it_fails_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep its index serves (``quarry sweep`` after the first): the disk fills as
    ``extract.jsonl`` is written from the index, which fails and is dropped. What the run
    decided went with it: the sweep fails as a full disk, the store is the one before it,
    no text is left unnamed, and the next sweep reads what this one lost (once seen as a
    traceback: the records asked of the index it had just dropped)."""
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    opts = SweepOptions(out=out, tools=ToolSet.empty(), workers=1)
    sweep([root], opts)
    before = (out / "extract.jsonl").read_bytes()
    (root / "b.txt").write_text("bravo\n")

    def failing(self: Ledger, expected: object, before_replace: object) -> bool:
        self._fail(_disk_full())
        return False

    monkeypatch.setattr(Ledger, "write_jsonl", failing)
    with pytest.raises(OSError, match="No space left on device"):
        sweep([root], opts)
    monkeypatch.undo()
    assert (out / "extract.jsonl").read_bytes() == before
    assert _texts(out) == {Store(out).load_records()[0].sha256}
    assert sweep([root], opts).extracted == 1
    assert {r.path for r in Store(out).load_records()} == {"a.txt", "b.txt"}


def test_an_index_that_fails_as_a_sweep_concludes_leaves_the_store_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills as the index commits the end of a sweep it served, after
    ``extract.jsonl`` was written: the records are the file's, the sweep ends as it should,
    and the index is rebuilt by the next one."""
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    opts = SweepOptions(out=out, tools=ToolSet.empty(), workers=1)
    sweep([root], opts)
    (root / "b.txt").write_text("bravo\n")

    def failing(self: RecordDB, *args: object, **kwargs: object) -> None:
        raise _disk_full()

    monkeypatch.setattr(RecordDB, "in_step", failing)
    notices: list[Event] = []
    result = sweep([root], opts, notices.append)
    monkeypatch.undo()
    assert result.extracted == 1 and result.summary.files == 2
    assert any(isinstance(n, Notice) and "the index failed" in n.message for n in notices)
    records = Store(out).load_records()
    assert {r.path for r in records} == {"a.txt", "b.txt"}
    assert _texts(out) == {r.sha256 for r in records}
    assert sweep([root], opts).extracted == 0
    assert (out / "extract.db").exists()


def test_temp_files_of_a_killed_writer_do_not_survive_the_next_sweep(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    out = tmp_path / "store"
    opts = SweepOptions(out=out, tools=ToolSet.empty(), workers=1)
    with Sweeper([root], opts) as s:
        s.run()
    (out / ".extract.jsonl.abc123.tmp").write_bytes(b"x" * 1000)
    (out / ".extract.summary.json.def456.tmp").write_bytes(b"{")
    (out / "tmp" / "deadbeef.123.456.txt").write_text("a worker's text")
    with Sweeper([root], opts) as s:
        s.run()
    assert not list(out.glob(".extract.*.tmp")) and list((out / "tmp").iterdir()) == []


# -- a root that vanished or became empty ------------------------------------------------------


def test_a_root_that_became_empty_keeps_its_records_unless_told(tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    for name in ("a.txt", "b.txt"):
        (root / name).write_text(f"{name}\n")
    out = tmp_path / "store"
    cmd = [sys.executable, "-m", "engine", "sweep", str(root), "--out", str(out), "--quiet"]
    assert subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    jsonl = (out / "extract.jsonl").read_bytes()
    texts = _texts(out)
    for name in ("a.txt", "b.txt"):
        (root / name).unlink()  # an unmounted share: the mount point is an empty folder
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"{root} is empty but the store holds 2 records of it: kept" in proc.stderr
    assert (out / "extract.jsonl").read_bytes() == jsonl and _texts(out) == texts
    # (the history keeps the records dropped, and their texts, unless told to keep none)
    forget = [*cmd, "--forget-missing"]
    env = {**os.environ, "QUARRY_HISTORY_VERSIONS": "0"}
    proc = subprocess.run(forget, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert Store(out).load_records() == [] and _texts(out) == set()


def test_a_root_that_vanished_while_held_open_keeps_its_records(tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    events: list[Event] = []
    opts = SweepOptions(out=tmp_path / "store", tools=ToolSet.empty(), workers=1)
    with Sweeper([root], opts, events.append) as s:
        s.run()
        (root / "a.txt").unlink()
        root.rmdir()
        result = s.run()
        assert result.held_roots == (str(root),) and len(s.records) == 1
    notes = [e.message for e in events if isinstance(e, Notice) and e.kind == "root-missing"]
    assert notes == [f"{root} is gone but the store holds 1 record of it: kept "
                     "(--forget-missing drops them)"]  # fmt: skip
