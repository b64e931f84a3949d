"""A Dask cluster you can trust (issue 27): workers are checked as they join, reads go where
the tools are, a record never comes without its text, nothing is left running.

Every cluster here has worker processes of its own (a LocalCluster's, or ``dask worker``
processes joining its scheduler with a ``PATH`` or a mount namespace of their own). Waits are
bounded polls on what is awaited; nothing asserts a time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import Event, Notice
from engine.executor import Executor
from engine.executors import ExecutorSpec, dask_factory, parse_executor
from engine.extract import Outcome, ReadTask
from engine.limits import Limits, MiB
from engine.records import Status
from engine.store import Store, text_dest
from engine.sweep import Sweeper, SweepOptions, SweepResult
from engine.tools import Tool, ToolSet, discover
from tests.engine import daskkit
from tests.engine.daskkit import (
    distributed,
    extra_worker,
    local_cluster,
    psutil,
    read_processes,
    store_lines,
    texts,
    wait_for,
)  # fmt: skip
from tests.faultreader import fixture

pytestmark = pytest.mark.timeout(240)

LIMITS = Limits(timeout_s=5.0, memory_bytes=512 * MiB, max_chars=100_000)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def remote(cluster: Any) -> ExecutorSpec:
    return parse_executor("dask://" + cluster.scheduler_address.removeprefix("tcp://"))


def options(
    out: Path,
    spec: ExecutorSpec | None,
    tools: ToolSet | None = None,
    engine: ToolSet | None = None,
) -> SweepOptions:
    """A sweep into ``out``: locally, or on Dask with each worker's own tools (``tools``
    None) or ``tools`` imposed on every worker; ``engine``: the engine machine's tools."""
    engine_tools = engine or tools or ToolSet.empty()
    factory = dask_factory(spec, tools=tools) if spec is not None else None
    return SweepOptions(out=out, limits=LIMITS, workers=2, tools=engine_tools, executor=factory)


def texts_of(root: Path, n: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"t{i:03}.txt").write_text(f"plain text number {i}\n")


def notices(events: list[Event], kind: str) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and e.kind == kind]


def every_text_is_there(store: Path, records: Iterable[Any]) -> None:
    for r in records:
        if r.status == Status.OK:
            assert Path(text_dest(str(store), r.sha256)).is_file(), r


# -- nothing left running -------------------------------------------------------------------


def test_no_read_process_is_left_on_any_worker_after_a_sweep(sample: Path, tmp_path: Path) -> None:
    with (
        local_cluster(2) as c,
        distributed.Client(c, set_as_default=False) as client,
    ):
        with Sweeper([sample], options(tmp_path / "s", remote(c), ToolSet.empty())) as s:
            s.run()
            during = read_processes(client)
        assert sum(during.values()) >= 2, during  # a read child and its forkserver at least
        # The cluster stays (it is shared); the sweep's read processes go with the sweep.
        wait_for(
            "every read process on the workers gone",
            lambda: not any(read_processes(client).values()),
        )
        assert len(read_processes(client)) == 2  # both workers still there, idle


def test_a_released_executor_lets_the_workers_go_and_a_later_run_starts_afresh(
    tmp_path: Path,
) -> None:
    """release() (no run follows) runs the plugin's teardown in the background, before close;
    a run that comes all the same reconnects and checks the workers again."""
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    root = tmp_path / "docs"
    texts_of(root, 3)
    (tmp_path / "store" / "tmp").mkdir(parents=True)
    tasks = [
        ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(tmp_path / "store" / "tmp"), 20)
        for p in sorted(root.iterdir())
    ]
    with (
        local_cluster(2) as c,
        distributed.Client(c, set_as_default=False) as client,
    ):
        ex = DaskExecutor(remote(c), WorkerSettings("", fixed_tools=ToolSet.empty()))
        try:
            ex.submit(tasks)
            assert len(list(ex.finished())) == 3
            assert any(read_processes(client).values())
            ex.release()
            wait_for(
                "the read processes gone before close",
                lambda: not any(read_processes(client).values()),
            )
            ex.submit(tasks)  # a run after all: connected and checked afresh
            assert sorted(o.status for _t, o in ex.finished()) == [Status.OK] * 3
        finally:
            ex.close()
        wait_for("every read process gone", lambda: not any(read_processes(client).values()))
        assert len(read_processes(client)) == 2  # both workers still there, idle


def test_a_once_sweeper_releases_its_executor_before_it_writes_the_store(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``sweep`` command's sweeper (one run, then closed) lets a cluster's workers go
    while it writes the store, not after; a sweeper that may run again does not."""
    from engine.isolate import ReadPool

    said: list[str] = []

    class Releasing(ReadPool):
        def release(self) -> None:
            said.append("release")

        def close(self) -> None:
            said.append("close")
            super().close()

    write = Sweeper._write

    def writing(self: Sweeper, *args: Any, **kwargs: Any) -> Any:
        said.append("write")
        return write(self, *args, **kwargs)

    monkeypatch.setattr(Sweeper, "_write", writing)

    def make(limits: Limits, workers: int) -> Executor:
        return Releasing(limits, workers)

    for once, out in ((True, "once"), (False, "again")):
        said.clear()
        opts = replace(options(tmp_path / out, None), executor=make)
        with Sweeper([sample], opts, once=once) as s:
            s.run()
        assert said == (["release", "write", "close"] if once else ["write", "close"])


def test_a_task_is_handed_to_the_read_child_whole(tmp_path: Path) -> None:
    from engine.executors import dask_worker

    (tmp_path / "tmp").mkdir()
    tasks = []
    for i in range(32):
        p = tmp_path / f"t{i:02}.txt"
        p.write_text(f"text {i}\n")
        tasks.append(ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 8))
    settings = dask_worker.WorkerSettings(str(tmp_path), fixed_tools=ToolSet.empty())
    try:
        got = dask_worker.read_batch(tasks, settings)
        pools = [pool for _key, pool in dask_worker._loose._pools.values()]
        assert len(pools) == 1
        assert pools[0]._batches == 1  # one handoff for the whole task
    finally:
        dask_worker.close_pools()
    assert [o.status for o in got.outcomes] == [Status.OK] * 32


# -- tools ----------------------------------------------------------------------------------


def _tool_dir(where: Path, names: Iterable[str]) -> Path:
    """A folder for ``PATH`` holding links to the named tools (and nothing else)."""
    where.mkdir()
    for name in names:
        found = shutil.which(name)
        assert found is not None
        (where / name).symlink_to(found)
    return where


@pytest.mark.tools
def test_a_worker_without_pdftotext_gets_no_pdfs_and_texts_equal_a_local_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("pdftotext") is None:
        pytest.skip("needs pdftotext on PATH (poppler-utils) for one of the workers")
    root = tmp_path / "docs"
    texts_of(root, 40)
    pdfs = sorted((FIXTURES / "pdf").glob("*.pdf"))
    assert pdfs
    for n, pdf in enumerate(pdfs):
        shutil.copy(pdf, root / pdf.name)
        shutil.copy(pdf, root / f"named_otherwise_{n}.bin")  # a PDF its name does not tell
    with_tool = _tool_dir(tmp_path / "with", ["pdftotext"])
    without = _tool_dir(tmp_path / "without", [])
    monkeypatch.setenv("PATH", str(with_tool))  # the local sweep: the same one tool
    local_tools = discover()
    assert local_tools.names == ("pdftotext",)
    events: list[Event] = []
    with (
        local_cluster(0) as c,
        extra_worker(c.scheduler_address, {"PATH": str(with_tool)}),
        extra_worker(c.scheduler_address, {"PATH": str(without)}),
        distributed.Client(c, set_as_default=False) as client,
    ):
        client.wait_for_workers(2, timeout=120)
        with Sweeper(
            [root], options(tmp_path / "dask", remote(c), engine=local_tools), events.append
        ) as s:
            s.run()
            workers = s.worker_tools()
    assert sorted(ts.names for ts in workers.values()) == [(), ("pdftotext",)]
    with Sweeper([root], options(tmp_path / "local", None, local_tools)) as s:
        s.run()
    assert store_lines(tmp_path / "dask") == store_lines(tmp_path / "local")
    assert texts(tmp_path / "dask") == texts(tmp_path / "local")
    pdf_records = [r for r in store_lines(tmp_path / "dask") if r["reader"] == "pdf"]
    assert len(pdf_records) == 2 * len(pdfs)
    assert notices(events, "dask-tools") == []  # every PDF was read with pdftotext
    summary = Store(tmp_path / "dask").load_summary()
    assert summary is not None
    assert (summary.cluster_workers, summary.cluster_tools["pdftotext"]) == (2, 1)
    assert summary.cluster_routed["pdf"] >= len(pdfs)  # named .pdf: only where pdftotext is


def _executor_with(good: dict[str, tuple[str, ...]]) -> Any:
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    ex = DaskExecutor(parse_executor("dask-local:1"), WorkerSettings(""))
    ex._good = {addr: frozenset(names) for addr, names in good.items()}
    return ex


def _result(worker: str, tools: ToolSet, outcomes: list[Outcome]) -> Any:
    from engine.executors.dask_worker import BatchResult

    return BatchResult(tuple(outcomes), worker, tools, 0.01)


PDFTOTEXT = ToolSet((Tool("pdftotext", "/usr/bin/pdftotext", "24.02.0"),))
PYPDF_READ = Outcome(Status.OK, "application/pdf", reader="pdf", v=2, extractor="pypdf")


def test_a_read_made_without_the_tools_another_worker_has_is_read_again_there() -> None:
    from engine.executors.dask_client import _Job

    ex = _executor_with({"tcp://a": ("pdftotext",), "tcp://b": ()})
    task = ReadTask("/x/report.bin", "", LIMITS, ToolSet.empty(), "/s/tmp", 10)
    job = _Job(task, frozenset())  # its name did not say PDF: it went anywhere
    got = list(ex._results([job], _result("tcp://b", ToolSet.empty(), [PYPDF_READ])))
    assert got == []  # not filed: queued again
    (again,) = [j for q in ex._todo.values() for j in q]
    assert again.redone and again.task is task
    assert ex._route(again.tools) == ("tcp://a",)
    # Read again where pdftotext is, it is filed; a second poor read would be filed too.
    done = Outcome(Status.OK, "application/pdf", reader="pdf", v=2, extractor="pdftotext")
    assert list(ex._results([again], _result("tcp://a", PDFTOTEXT, [done]))) == [(task, done)]


def test_a_kind_read_with_different_tools_is_said_once() -> None:
    from engine.executors.dask_client import _Job

    ex = _executor_with({"tcp://a": ("pdftotext",), "tcp://b": ()})
    events: list[Event] = []
    ex.listen(events.append)
    task = ReadTask("/x/a.pdf", "", LIMITS, ToolSet.empty(), "/s/tmp", 10)
    text = Outcome(Status.OK, "text/plain", reader="text", v=1, extractor="text:utf-8")
    ex._good = {"tcp://b": frozenset()}  # the worker with pdftotext left before a redo
    list(ex._results([_Job(task, frozenset()), _Job(task, frozenset())],
                     _result("tcp://b", ToolSet.empty(), [PYPDF_READ, text])))  # fmt: skip
    list(ex._results([_Job(task, frozenset({"pdftotext"}))],
                     _result("tcp://a", PDFTOTEXT, [PYPDF_READ])))  # fmt: skip
    ex._tell_tool_sets()
    (said,) = notices(events, "dask-tools")
    assert "pdf: 1 with none of its tools, 1 with pdftotext 24.02.0" in said
    assert "text:" not in said  # a kind that uses no tool is never mixed
    events.clear()
    ex.tool_sets.clear()
    list(ex._results([_Job(task, frozenset())], _result("tcp://a", PDFTOTEXT, [PYPDF_READ])))
    ex._tell_tool_sets()
    assert notices(events, "dask-tools") == []


# -- workers that must not read -------------------------------------------------------------


def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, timeout=30
    )
    return probe.returncode == 0


def _hold_until_heard(monkeypatch: pytest.MonkeyPatch, workers: int) -> threading.Event:
    """Make the executor, once its first tasks are in flight, wait (bounded) until ``workers``
    workers have reported their check: the joiner then joins mid-sweep, with files left."""
    from engine.executors.dask_client import DaskExecutor

    send = DaskExecutor._send
    flying = threading.Event()

    def held(self: DaskExecutor) -> None:
        send(self)
        if self._flying and not flying.is_set():
            flying.set()
            wait_for(
                f"{workers} workers heard",
                lambda: self._refresh(force=True) or len(self.workers) >= workers,
                timeout=120,
            )

    monkeypatch.setattr(DaskExecutor, "_send", held)
    return flying


def test_a_worker_running_another_textquarry_fails_its_check_and_is_named(
    tmp_path: Path,
) -> None:
    """The check compares the worker's textquarry and reader versions with the engine's: a
    worker of another version would file records of another version."""
    from engine.executors.dask_worker import Check, WorkerSettings, code_version, examine

    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / ".probe-x").write_text(".probe-x")
    doc = tmp_path / "a.txt"
    doc.write_text("a text\n")
    settings = WorkerSettings(str(tmp_path), fixed_tools=ToolSet.empty())
    same = examine(Check(settings, (str(doc),), ".probe-x", code_version(), "t"))
    assert same.ok, same
    other = "textquarry 0.0.1 (text=1)"
    info = examine(Check(settings, (str(doc),), ".probe-x", other, "t"))
    assert not info.ok and info.store_ok and not info.unseen
    assert info.problem == f"runs {code_version()}, not the engine's {other}"
    ex = _executor_with({})
    ex.settings = settings
    events: list[Event] = []
    ex.listen(events.append)
    ex._heard(replace(info, address="tcp://w:1"))
    ex._heard(replace(info, address="tcp://w:1"))  # its check heard again: said once
    assert ex._good == {}
    (said,) = notices(events, "dask-refused")
    assert said.startswith("Dask worker tcp://w:1 on ") and other in said


@pytest.mark.parametrize("fault", ["cannot see the roots", "has a store folder of its own"])
def test_a_worker_joining_mid_sweep_that_fails_its_check_gets_no_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    if not _can_mount():
        pytest.skip("needs unshare and mount (root, or user namespaces) to hide a folder")
    root, out = tmp_path / "docs", tmp_path / "store"
    texts_of(root, 400)
    out.mkdir()
    if fault == "cannot see the roots":
        setup = f"mount -t tmpfs none '{root}'"
    else:  # a copy of the store, token and all, mounted over it: its writes stay its own
        setup = f"cp -a '{out}' '{tmp_path}/private' && mount --bind '{tmp_path}/private' '{out}'"
    wrap = ["unshare", "-m", "sh", "-c", f'{setup} && exec "$0" "$@"']
    flying = _hold_until_heard(monkeypatch, 2)
    events: list[Event] = []
    result: list[SweepResult] = []
    with local_cluster(1) as c, Sweeper([root], options(out, remote(c)), events.append) as s:
        t = threading.Thread(target=lambda: result.append(s.run()))
        t.start()
        try:
            wait_for("the first tasks in flight", flying.is_set)
            with extra_worker(c.scheduler_address, wrap=wrap):
                t.join(200)
        finally:
            t.join(200)
        records = dict(s.records)
    assert result and result[0].machine_failures == 0
    assert len(records) == 400
    assert {r.status for r in records.values()} == {Status.OK}
    every_text_is_there(out, records.values())
    (refused,) = notices(events, "dask-refused")  # said once
    said = "cannot see" if fault == "cannot see the roots" else "store's tmp/ folder"
    assert said in refused and refused.endswith("it gets no reads of this sweep")
    assert notices(events, "machine-failure") == []


def test_a_worker_killed_mid_task_leaves_every_file_its_record_and_text(
    tmp_path: Path, fault_reader: None
) -> None:
    from tests.engine.daskkit import kill_busy_worker

    root, out = tmp_path / "docs", tmp_path / "store"
    texts_of(root, 120)
    (root / "hang.bin").write_bytes(fixture("hang"))  # keeps a worker busy to be killed
    result: list[SweepResult] = []
    events: list[Event] = []
    with (
        local_cluster(2) as c,
        distributed.Client(c, set_as_default=False) as client,
        Sweeper([root], options(out, remote(c), ToolSet.empty()), events.append) as s,
    ):
        t = threading.Thread(target=lambda: result.append(s.run()))
        t.start()
        try:
            kill_busy_worker(client)
        finally:
            t.join(200)
        records = dict(s.records)
    assert result and result[0].machine_failures == 0
    assert len(records) == 121
    oks = [r for r in records.values() if r.status == Status.OK]
    assert len(oks) == 120
    every_text_is_there(out, oks)
    assert records[(str(root), "hang.bin")].status == Status.ERROR
    # What happened is said: the worker that left, once (its restart joins as a new one).
    (left,) = [m for m in notices(events, "dask-worker") if "left mid-sweep" in m]
    assert left.endswith("the scheduler runs its tasks again on the others")


# -- the engine's side ----------------------------------------------------------------------


class _Elsewhere:
    """An executor whose worker says it wrote the text into the store, and did not (it wrote
    into a store folder of its own, at the same path on its machine)."""

    def __init__(self) -> None:
        self._tasks: list[ReadTask] = []

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self._tasks.extend(tasks)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            data = Path(task.path).read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            dest = text_dest(task.store_dir, sha)
            yield task, Outcome(Status.OK, "text/plain", reader="text", v=1,
                                extractor="text:utf-8", chars=len(data), text_file=dest,
                                sha256=sha, size=len(data))  # fmt: skip

    def cancel(self) -> None:
        self._tasks = []

    def close(self) -> None:
        self.cancel()


def test_a_record_whose_text_is_not_in_the_store_is_a_machine_failure(tmp_path: Path) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    (root / "kept.txt").write_text("the first version\n")

    def elsewhere(_limits: Limits, _workers: int) -> Executor:
        return _Elsewhere()

    with Sweeper([root], options(out, None)) as s:
        s.run()
        before = s.records[(str(root), "kept.txt")]
    assert before.status == Status.OK
    (root / "kept.txt").write_text("the second version, longer\n")
    (root / "new.txt").write_text("a new file\n")
    events: list[Event] = []
    opts = SweepOptions(out=out, limits=LIMITS, tools=ToolSet.empty(), executor=elsewhere)
    with Sweeper([root], opts, events.append) as s:
        result = s.run()
        records = dict(s.records)
    assert result.machine_failures == 2
    assert records[(str(root), "kept.txt")].sha256 == before.sha256  # its earlier record
    assert (str(root), "new.txt") not in records  # read again by the next sweep
    every_text_is_there(out, records.values())
    (said,) = notices(events, "machine-failure")
    assert "the text its worker wrote is not in the store" in said


# -- cutting the files into tasks -----------------------------------------------------------


@given(
    sizes=st.lists(st.integers(0, 3 << 20), min_size=1, max_size=300),
    names=st.integers(1, 300),
    per_file=st.one_of(st.none(), st.floats(1e-5, 5.0)),
    costs=st.dictionaries(st.sampled_from([".pdf", ".txt", ".doc", ""]), st.floats(0, 5.0)),
    overhead=st.floats(0, 0.01),
    threads=st.integers(1, 64),
)
@settings(max_examples=60, deadline=None)
def test_tasks_take_every_file_once_within_their_bounds(
    sizes: list[int],
    names: int,
    per_file: float | None,
    costs: dict[str, float],
    overhead: float,
    threads: int,
) -> None:
    from engine.executors import dask_client
    from engine.executors.dask_client import _Job

    ex = _executor_with({"tcp://a": ()})
    ex._per_file, ex._threads = per_file, threads
    ex._cost, ex._overhead = dict(costs), overhead
    kinds = [".pdf", ".txt", ".doc", ".odt", ""]
    jobs = [
        _Job(ReadTask(f"/r/{'d' * (i % names)}/f{i}{kinds[i % 5]}", "", LIMITS, ToolSet.empty(),
                      "/s/tmp", n),
             frozenset({"pdftotext"} if i % 3 == 0 else ()))
        for i, n in enumerate(sizes)
    ]  # fmt: skip
    for job in jobs:
        ex._queue(job)
    if per_file is not None:
        average: float | None = per_file
    elif costs:
        average = sum(costs.values()) / len(costs) + overhead
    else:
        average = None

    def guess(job: _Job) -> float:
        return costs[job.kind] + overhead if job.kind in costs else (average or 0.0)

    taken: list[Any] = []
    while any(ex._todo.values()):
        left = sum(len(q) for q in ex._todo.values())
        work = sum(guess(j) for q in ex._todo.values() for j in q)
        task = ex._take()
        assert task and len({j.tools for j in task}) == 1  # one route a task
        if len(task) > 1:
            assert sum(j.task.size for j in task) <= dask_client.TASK_BYTES
            assert sum(len(j.task.path) for j in task) <= dask_client.BATCH_PATH_CHARS
            first = dask_client.FIRST_TASK_FILES
            assert len(task) <= (first if per_file is None else dask_client.TASK_FILES)
            if average is None:  # nothing known: a few files, a share of what is left
                assert len(task) <= max(1, left // (2 * threads))
            else:  # about TASK_S of work, the work left shared out down to TAIL_TASK_S
                share = work / (2 * threads)
                budget = max(dask_client.TAIL_TASK_S, min(dask_client.TASK_S, share))
                assert sum(guess(j) for j in task) <= budget * (1 + 1e-6)
        taken.extend(task)
    assert sorted(id(j) for j in taken) == sorted(id(j) for j in jobs)


def test_a_file_that_kills_the_only_worker_it_may_go_to_is_crashed_not_read_for_ever(
    tmp_path: Path, fault_reader: None
) -> None:
    """Sent to one worker only (the cluster's one), a task whose worker dies waits for it for
    ever in Dask (the restarted worker has a new address) and never counts to Dask's
    ``allowed-failures``: the executor counts, and gives the file's verdict."""
    from tests.engine.daskkit import kill_busy_worker

    root = tmp_path / "docs"
    root.mkdir()
    (root / "hang.bin").write_bytes(fixture("hang"))  # a read that lasts until killed
    slow = Limits(timeout_s=120.0, memory_bytes=512 * MiB)
    config = {"distributed.scheduler.allowed-failures": 1}
    with (
        local_cluster(1, **config) as c,
        distributed.Client(c, set_as_default=False) as client,
    ):
        opts = SweepOptions(out=tmp_path / "s", limits=slow, tools=ToolSet.empty(),
                            executor=dask_factory(remote(c), tools=ToolSet.empty()))  # fmt: skip
        with Sweeper([root], opts) as s:
            t = threading.Thread(target=s.run)
            t.start()
            try:
                for _ in range(2):  # the first loss is allowed; the second is one too many
                    kill_busy_worker(client)
            finally:
                t.join(200)
            assert not t.is_alive()
            rec = s.records[(str(root), "hang.bin")]
    assert (rec.status, rec.reason, rec.crashes) == (Status.ERROR, "crashed", 1), rec
    assert rec.error is not None and "lost 2 workers reading it" in rec.error


# -- flow: task sizes, the cluster started early --------------------------------------------


def _jobs(n: int, suffix: str = ".txt") -> list[Any]:
    from engine.executors.dask_client import _Job

    return [
        _Job(
            ReadTask(f"/x/f{i:05}{suffix}", "", LIMITS, ToolSet.empty(), "/s/tmp", 10), frozenset()
        )
        for i in range(n)
    ]


def test_a_batch_that_started_its_read_pool_does_not_size_the_next_tasks() -> None:
    from engine.executors.dask_client import FIRST_TASK_FILES, TASK_S
    from engine.executors.dask_worker import BatchResult

    ex = _executor_with({"tcp://a": ()})
    ok = Outcome(Status.OK, "text/plain", reader="text", v=1, extractor="text:utf-8")
    first = _jobs(32)
    # 1.5 s for 32 tiny files: the read child and the forkserver's imports, not the reading.
    cold = BatchResult((ok,) * 32, "tcp://a", ToolSet.empty(), 1.5, warm=False)
    list(ex._results(first, cold))
    for job in _jobs(5000):
        ex._queue(job)
    assert len(ex._take()) == FIRST_TASK_FILES  # still unknown: not 0.75 s / 47 ms = 16
    warm = BatchResult((ok,) * 32, "tcp://a", ToolSet.empty(), 0.032, warm=True)
    list(ex._results(first, warm))  # 1 ms a file
    assert len(ex._take()) == int(TASK_S / (0.032 / 32))


def test_the_last_tasks_keep_a_tenth_of_a_second_of_work() -> None:
    from engine.executors.dask_client import TAIL_TASK_S

    ex = _executor_with({"tcp://a": ()})
    ex._per_file = 0.001
    for job in _jobs(150):
        ex._queue(job)
    sizes = []
    while any(ex._todo.values()):
        sizes.append(len(ex._take()))
    # Shrinking to the end would make tasks of 37, 18, 9, ... 1 file, each a round trip.
    assert sizes == [int(TAIL_TASK_S / 0.001), 50]


def test_the_last_tasks_share_the_work_left_by_what_each_kind_costs() -> None:
    """Near a run's end a task takes at most its share of the reading left. Counted as so
    many files of the average (10 ms, the heavy kinds read first), 69 .docx of 11 ms and 300
    light texts made 0.9 s a thread: a task of 68 .docx went out, and ran on alone for 0.8 s
    after the other worker had read the texts and stopped."""
    from engine.executors.dask_client import _Job

    ex = _executor_with({"tcp://a": (), "tcp://b": ()})
    ex._threads, ex._per_file = 2, 0.010
    ex._cost = {".docx": 0.011, ".txt": 0.0005}
    docx = [_Job(ReadTask(f"/x/d{i:03}.docx", "", LIMITS, ToolSet.empty(), "/s/tmp", 9000),
                 frozenset()) for i in range(69)]  # fmt: skip
    for job in docx + _jobs(300):
        ex._queue(job)
    share = (69 * 0.011 + 300 * 0.0005) / (2 * 2)
    first = ex._take()
    assert {j.kind for j in first} == {".docx"}
    assert len(first) == int(share / 0.011)  # 20, not 68
    taken = [first]
    while any(ex._todo.values()):
        taken.append(ex._take())
    assert sum(map(len, taken)) == 369 and not ex._kinds  # every file once, none counted


def test_a_kind_whose_reads_are_slow_goes_in_smaller_tasks_and_first() -> None:
    """The corpus's PDFs took ~60 ms a read where its other files took a few: sized by the
    average of every file, a task of PDFs lasted 3 s and the last ones ran alone at the end."""
    from engine.executors.dask_client import TASK_S, _Job
    from engine.executors.dask_worker import BatchResult

    ex = _executor_with({"tcp://a": ("pdftotext",), "tcp://b": ("pdftotext",)})
    ex._threads = 2
    pdfs = [
        _Job(ReadTask(f"/x/p{i:03}.pdf", "", LIMITS, ToolSet.empty(), "/s/tmp", 9000),
             frozenset({"pdftotext"}))
        for i in range(24)
    ]  # fmt: skip
    txts = _jobs(4000)
    ok = Outcome(Status.OK, "text/plain", reader="text", v=1, extractor="text:utf-8", ms=1)
    pdf = Outcome(Status.OK, "application/pdf", reader="pdf", v=2, extractor="pdftotext", ms=60)
    for job in pdfs + txts:
        ex._queue(job)
    # One warm task of both kinds: 2 ms a file overall, of which 1 ms (a text) or 60 ms (a
    # PDF) was the read.
    sample = [pdfs[0], *txts[:59]]
    outcomes = (pdf,) + (ok,) * 59
    list(ex._results(sample, BatchResult(outcomes, "tcp://a", PDFTOTEXT, 0.12, warm=True)))
    first = ex._take()
    assert {j.kind for j in first} == {".pdf"}  # the slow kind first, though fewer
    assert len(first) == int(TASK_S / 0.06)  # ~0.75 s of PDFs, not 0.75 s / 2 ms of them
    second = ex._take()
    assert {j.kind for j in second} == {".pdf"}
    rest = [ex._take() for _ in range(3)]
    assert {j.kind for task in rest for j in task} == {".txt"}
    assert all(len(task) > 100 for task in rest)  # the light kind in tasks of many


def test_a_kind_s_one_slow_first_read_does_not_shrink_its_tasks() -> None:
    """A worker's first .docx carries python-docx's import (0.67 s, then ~10 ms a file):
    weighed as much as a task of 32 files, it cut the next .docx tasks to one or two files."""
    from engine.executors.dask_client import TASK_S, _Job
    from engine.executors.dask_worker import BatchResult

    ex = _executor_with({"tcp://a": ()})
    ex._threads = 2

    def docx(n: int) -> list[_Job]:
        return [_Job(ReadTask(f"/x/d{i:04}.docx", "", LIMITS, ToolSet.empty(), "/s/tmp", 900),
                     frozenset(), kind=".docx") for i in range(n)]  # fmt: skip

    slow = Outcome(Status.OK, "text/plain", reader="docx", v=1, extractor="docx", ms=670)
    quick = replace(slow, ms=10)
    list(ex._results(docx(1), BatchResult((slow,), "tcp://a", ToolSet.empty(), 0.67)))
    list(ex._results(docx(32), BatchResult((quick,) * 32, "tcp://a", ToolSet.empty(), 0.32)))
    for job in docx(5000):
        ex._queue(job)
    assert len(ex._take()) == int(TASK_S / ((0.67 + 32 * 0.01) / 33))  # 25, not 2


def test_a_queue_is_read_a_kind_at_a_time_bigger_files_first() -> None:
    from engine.executors.dask_client import _heavy_first, _Job

    def job(name: str, size: int) -> _Job:
        return _Job(ReadTask(name, "", LIMITS, ToolSet.empty(), "/s/tmp", size), frozenset(),
                    kind=name[name.rfind("."):])  # fmt: skip

    todo = deque([job("/a.txt", 10), job("/b.doc", 500), job("/c.txt", 30), job("/d.doc", 100)])
    _heavy_first(todo)
    assert [j.task.path for j in todo] == ["/b.doc", "/d.doc", "/a.txt", "/c.txt"]


def test_a_route_to_some_workers_leaves_room_for_the_others() -> None:
    """A thousand PDFs for the one worker with pdftotext, a hundred texts for any: the window
    was filled with PDF tasks by their number, and the other worker waited."""
    ex = _executor_with({"tcp://a": ("pdftotext",), "tcp://b": ()})
    ex._client = _Client()
    ex._per_file = 0.01
    ex.submit([j.task for j in _jobs(1000, ".pdf") + _jobs(100, ".txt")])
    ex._send()
    routes = [tuple(where) for _n, where in ex._client.sent]
    assert len(routes) == ex.window == 4
    assert routes.count(("tcp://a",)) == 2  # its window: two tasks for its one thread
    assert routes.count(("tcp://a", "tcp://b")) == 2


def test_a_batch_says_whether_its_read_pool_was_running(tmp_path: Path) -> None:
    from engine.executors import dask_worker

    (tmp_path / "tmp").mkdir()
    p = tmp_path / "a.txt"
    p.write_text("a text\n")
    task = ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 7)
    settings = dask_worker.WorkerSettings(str(tmp_path), fixed_tools=ToolSet.empty())
    try:
        first = dask_worker.read_batch([task], settings)
        second = dask_worker.read_batch([task], settings)
    finally:
        dask_worker.close_pools()
    assert (first.warm, second.warm) == (False, True)
    assert [o.status for o in first.outcomes + second.outcomes] == [Status.OK] * 2


def test_a_cluster_warmed_during_the_walk_is_the_one_that_reads(tmp_path: Path) -> None:
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    root = tmp_path / "docs"
    texts_of(root, 5)
    store = tmp_path / "store"
    (store / "tmp").mkdir(parents=True)
    ex = DaskExecutor(
        parse_executor("dask-local:1"), WorkerSettings("", fixed_tools=ToolSet.empty())
    )
    try:
        ex.warm()
        ex.warm()  # once
        wait_for(
            "the warm connection",
            lambda: ex._warming is None or not ex._warming.is_alive(),
            timeout=120,
        )
        client = ex._client
        assert client is not None and ex._token == ""  # connected, no worker checked yet
        tasks = [
            ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(store / "tmp"), p.stat().st_size)
            for p in sorted(root.iterdir())
        ]
        ex.submit(tasks)
        got = list(ex.finished())
        assert ex._client is client  # the reads went through the warmed connection
    finally:
        ex.close()
    assert sorted(t.path for t, _o in got) == sorted(t.path for t in tasks)
    assert {o.status for _t, o in got} == {Status.OK}


def test_a_cluster_s_read_forkservers_start_with_the_connection_and_never_outlive_it(
    tmp_path: Path,
) -> None:
    """Started by the check, after the walk and plan, the forkservers' imports (a second or
    more on a busy machine) delayed the first tasks; started once connected, a sweep that then
    reads nothing (or is refused) must stop them itself, as no plugin's teardown will."""
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    with (
        local_cluster(2) as c,
        distributed.Client(c, set_as_default=False) as client,
    ):
        assert not any(read_processes(client).values())  # no preload here: nothing yet
        ex = DaskExecutor(remote(c), WorkerSettings("", fixed_tools=ToolSet.empty()))
        try:
            ex.warm()
            wait_for(
                "a read forkserver on every worker, before any check",
                lambda: all(n >= 1 for n in read_processes(client).values()),
                timeout=120,
            )
            assert ex._token == ""
        finally:
            ex.close()
        wait_for(
            "every read process on the workers gone",
            lambda: not any(read_processes(client).values()),
        )
        assert len(read_processes(client)) == 2  # both workers still there, idle


def test_a_warm_connection_that_fails_is_said_by_the_run(tmp_path: Path) -> None:
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings
    from engine.executors.spec import ClusterRefused

    (tmp_path / "tmp").mkdir()
    p = tmp_path / "a.txt"
    p.write_text("a text\n")
    ex = DaskExecutor(parse_executor("dask://127.0.0.1:9"), WorkerSettings(""))
    ex.warm()
    ex.submit([ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 7)])
    with pytest.raises(ClusterRefused, match="cannot use the Dask cluster"):
        list(ex.finished())
    ex.close()
    assert ex._client is None and ex._warming is None


class _Future:
    def add_done_callback(self, _fn: Callable[[Any], None]) -> None:
        pass


class _Client:
    """Takes tasks and runs none (only where each was sent matters here)."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, list[str]]] = []

    def submit(self, _fn: Any, tasks: list[ReadTask], *_a: Any, **kw: Any) -> _Future:
        self.sent.append((len(tasks), kw["workers"]))
        return _Future()

    def nthreads(self) -> dict[str, int]:
        return {"tcp://a": 1, "tcp://b": 1}

    def get_events(self, _topic: str) -> tuple[()]:
        return ()


class _LostThenDone:
    """A task that finished, then lost its result with its worker before the engine took it
    (Dask's "lost"); done again once the engine has seen it lost (the scheduler reran it)."""

    def __init__(self, ex: Any, tasks: list[ReadTask]) -> None:
        self.ex, self.tasks = ex, tasks
        self.again = False

    @property
    def status(self) -> str:
        self.again = self.again or self in getattr(self.ex, "_again", ())
        return "finished" if self.again else "lost"

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        fn(self)  # its first finish: the callback fires once, whatever comes after

    def result(self) -> Any:
        from engine.executors.dask_worker import BatchResult

        ok = Outcome(Status.OK, "text/plain", reader="text", v=1, extractor="text:utf-8")
        return BatchResult((ok,) * len(self.tasks), "tcp://a", ToolSet.empty(), 0.01)

    def exception(self) -> None:
        return None  # what a lost future's exception() gives once it is done again

    def release(self) -> None:
        pass


def test_a_task_whose_result_was_lost_with_its_worker_is_waited_for_again(tmp_path: Path) -> None:
    """A worker killed after its task finished, before the engine took the result: Dask runs
    the task again, but its done callback had fired, and the engine took the lost task for a
    failed one: its files were machine failures, left without a record."""
    (tmp_path / "tmp").mkdir()
    ex = _executor_with({"tcp://a": (), "tcp://b": ()})
    ex.settings = replace(ex.settings, store_dir=str(tmp_path))
    ex._token = ".probe-test"  # connected and checked already

    class Client(_Client):
        status = "running"

        def submit(self, _fn: Any, tasks: list[ReadTask], *_a: Any, **kw: Any) -> Any:
            self.sent.append((len(tasks), kw["workers"]))
            return _LostThenDone(ex, tasks)

    ex._client = Client()
    tasks = [
        ReadTask(f"/x/t{i}.txt", "", LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 9)
        for i in range(5)
    ]
    ex.submit(tasks)
    got = list(ex.finished())
    assert sorted(t.path for t, _o in got) == sorted(t.path for t in tasks)
    assert all(o.status == Status.OK and not o.machine for _t, o in got), got


def test_kinds_sent_only_to_the_workers_with_their_tools_are_counted() -> None:
    ex = _executor_with({"tcp://a": ("pdftotext",), "tcp://b": ()})
    ex._client = _Client()
    ex._per_file = 0.001  # a task takes a kind's files whole
    ex.submit([j.task for j in _jobs(3, ".pdf") + _jobs(4, ".txt")])
    ex._send()
    assert sorted(ex._client.sent) == [(3, ["tcp://a"]), (4, ["tcp://a", "tcp://b"])]
    assert ex.routed() == {"pdf": 3}  # the text files could go anywhere


def test_reads_given_as_a_stream_are_drawn_as_the_tasks_go_out() -> None:
    """The walk's reads may come as they are found: the executor holds FEED_FILES of them at
    most beside its tasks in flight, never the whole stream (10 million files never become
    10 million jobs), and it takes every one of them once."""
    from engine.executors.dask_client import FEED_FILES

    ex = _executor_with({"tcp://a": (), "tcp://b": ()})
    ex._client = _Client()
    ex._per_file = 0.001
    drawn = 0
    total = 3 * FEED_FILES + 7

    def walk() -> Iterator[ReadTask]:
        nonlocal drawn
        for job in _jobs(total):
            drawn += 1
            yield job.task

    ex.submit(walk())
    assert drawn == 0  # nothing drawn before the reads begin
    ex._send()
    sent = sum(n for n, _where in ex._client.sent)
    assert drawn <= sent + FEED_FILES
    assert ex._pending()  # the rest of the stream is still to come
    while ex._pending():
        ex._flying.clear()  # as if every task in flight had come back
        ex._send()
        sent = sum(n for n, _where in ex._client.sent)
        assert drawn <= sent + FEED_FILES
    assert sum(n for n, _where in ex._client.sent) == drawn == total


def test_a_slow_stream_is_drawn_a_while_then_the_workers_get_their_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream slow to give its reads (files hashed before they are planned) was drawn
    FEED_FILES at a time before a task went out, the workers idle all along; a draw now ends
    after DRAW_S (here: past it at once), looked at every 64 files, as the local pool's."""
    from engine.executors import dask_client

    monkeypatch.setattr(dask_client, "DRAW_S", -1.0)
    ex = _executor_with({"tcp://a": (), "tcp://b": ()})
    ex._client = _Client()
    ex._per_file = 0.001
    drawn = 0
    before_a_task: list[int] = []

    def walk() -> Iterator[ReadTask]:
        nonlocal drawn
        for job in _jobs(dask_client.FEED_FILES):
            if ex._client.sent and not before_a_task:
                before_a_task.append(drawn)
            drawn += 1
            yield job.task

    ex.submit(walk())
    ex._send()
    assert before_a_task == [dask_client.DRAW_CHECK]
    while ex._pending():
        ex._flying.clear()  # as if every task in flight had come back
        ex._send()
    assert sum(n for n, _where in ex._client.sent) == drawn == dask_client.FEED_FILES


def test_a_local_cluster_closes_with_its_read_processes_without_a_teardown_round(
    tmp_path: Path,
) -> None:
    """Its workers close with it and run the plugin's teardown themselves."""
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    root = tmp_path / "docs"
    texts_of(root, 3)
    (tmp_path / "store" / "tmp").mkdir(parents=True)
    ex = DaskExecutor(
        parse_executor("dask-local:1"), WorkerSettings("", fixed_tools=ToolSet.empty())
    )
    tasks = [
        ReadTask(str(p), "", LIMITS, ToolSet.empty(), str(tmp_path / "store" / "tmp"), 20)
        for p in sorted(root.iterdir())
    ]
    try:
        ex.submit(tasks)
        assert len(list(ex.finished())) == 3
        pids = list(ex._client.run(os.getpid).values())
        kids = [k for pid in pids for k in psutil.Process(pid).children(recursive=True)]
        assert kids  # the read child and its forkserver at least
        asked: list[str] = []
        ex._client.unregister_worker_plugin = asked.append
    finally:
        ex.close()
    assert asked == []
    wait_for("the cluster's processes gone", lambda: not any(daskkit._alive(k) for k in kids))


class _LocalClaim(_Elsewhere):
    """An executor on this machine whose worker says it placed a text it never wrote."""

    on_this_machine = True


def test_a_local_worker_s_text_that_is_not_there_is_a_machine_failure_too(tmp_path: Path) -> None:
    """This machine's pool is trusted to have renamed its texts into the store: still, one
    ``lstat`` of the place it names, and a text not there files no record."""
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    (root / "new.txt").write_text("a new file\n")

    def local(_limits: Limits, _workers: int) -> Executor:
        return _LocalClaim()

    events: list[Event] = []
    opts = SweepOptions(out=out, limits=LIMITS, tools=ToolSet.empty(), executor=local)
    with Sweeper([root], opts, events.append) as s:
        result = s.run()
        records = dict(s.records)
    assert result.machine_failures == 1 and (str(root), "new.txt") not in records
    (said,) = notices(events, "machine-failure")
    assert "the text its worker wrote is not in the store" in said


class _Gone:
    """A finished future whose result cannot be fetched: the connection was reset."""

    status = "finished"

    def __init__(self) -> None:
        self.released = False

    def result(self) -> Any:
        raise ConnectionResetError(104, "Connection reset by peer")

    def release(self) -> None:
        self.released = True


class _Connection:
    """A client of a given status, and nothing else."""

    def __init__(self, status: str) -> None:
        self.status = status


def test_a_result_lost_with_the_scheduler_is_the_cluster_lost_not_the_store() -> None:
    """The scheduler killed as a result was fetched: the OSError is the cluster's (it once
    ended the sweep as "cannot write the store", exit 3, not as a lost scheduler, exit 1)."""
    from engine.executors.dask_client import _Job
    from engine.executors.spec import ClusterLost

    ex = _executor_with({"tcp://a": ()})
    ex._client = _Connection("closed")
    task = ReadTask("/x/a.txt", "", LIMITS, ToolSet.empty(), "/s/tmp", 10)
    with pytest.raises(ClusterLost, match="lost the Dask scheduler"):
        list(ex._settle(_Gone(), [_Job(task, frozenset())]))


def test_a_result_lost_with_its_worker_is_read_again() -> None:
    from engine.executors.dask_client import _Job

    ex = _executor_with({"tcp://a": ()})
    ex._client = _Connection("running")
    task = ReadTask("/x/a.txt", "", LIMITS, ToolSet.empty(), "/s/tmp", 10)
    fut = _Gone()
    assert list(ex._settle(fut, [_Job(task, frozenset())])) == []
    assert [j.task for q in ex._todo.values() for j in q] == [task] and fut.released
