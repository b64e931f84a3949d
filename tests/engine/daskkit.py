"""Dask clusters for the tests: always on loopback, always closed, never left running.

:func:`local_cluster` is a LocalCluster of worker processes in this process (the scheduler
too); :func:`external_cluster` starts ``dask scheduler`` and ``dask worker`` as processes of
their own, for the tests that kill the scheduler or hide a folder from the workers.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.ptree import parents

dask = pytest.importorskip("dask", reason="the Dask executor's tests need textquarry[dask]")
distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

LOOPBACK = ("127.0.0.1", "::1")
WAIT_S = 60.0


@contextlib.contextmanager
def local_cluster(workers: int = 2, **config: object) -> Iterator[Any]:
    """A LocalCluster of ``workers`` single-threaded processes on 127.0.0.1."""
    settings = {"distributed.worker.daemon": False, **config}
    with dask.config.set(settings):
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.CRITICAL,
        )
    try:
        yield cluster
    finally:
        spawned = cluster_processes(cluster)
        cluster.close(timeout=20)
        assert_gone(spawned)


def cluster_processes(cluster: Any) -> list[Any]:
    """The worker processes of ``cluster``, and everything they started."""
    out: list[Any] = []
    for nanny in cluster.workers.values():
        pid = nanny.process.pid if nanny.process is not None else None
        if pid is None:  # a worker being restarted: psutil.Process(None) is this very process
            continue
        with contextlib.suppress(psutil.Error, TypeError, ValueError):
            proc = psutil.Process(pid)
            out.extend([proc, *proc.children(recursive=True)])
    return out


def assert_gone(procs: list[Any]) -> None:
    """Every process in ``procs`` has exited (bounded poll)."""
    end = time.monotonic() + 20
    left = procs
    while time.monotonic() < end:
        left = [p for p in left if _alive(p)]
        if not left:
            return
        time.sleep(0.05)
    raise AssertionError(f"processes left running: {[(p.pid, _cmdline(p)) for p in left]}")


def _cmdline(p: Any) -> str:
    try:
        return " ".join(p.cmdline())[:160]
    except psutil.Error:
        return "?"


def _alive(p: Any) -> bool:
    try:
        return bool(p.is_running() and p.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def listening(pids: Sequence[int]) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the processes ``pids`` listen on."""
    out: list[tuple[str, int]] = []
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            for c in psutil.Process(pid).net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    out.append((c.laddr.ip, c.laddr.port))
    return out


def worker_pids(client: Any) -> dict[str, int]:
    """Dask worker address -> process id."""
    return dict(client.run(os.getpid))


def kill_busy_worker(client: Any, key_prefix: str = "quarry-read-") -> list[Any]:
    """SIGKILL a Dask worker while one of our tasks reads in it; return what it had started."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        busy = [
            addr
            for addr, keys in client.processing().items()
            if any(str(k).startswith(key_prefix) for k in keys)
        ]
        try:
            pid = worker_pids(client).get(min(busy)) if busy else None
        except OSError:  # a worker (re)starting as we asked: ask again
            time.sleep(0.05)
            continue
        started = psutil.Process(pid).children(recursive=True) if pid is not None else []
        if pid is not None and len(started) >= 2:  # its forkserver and a read child in it
            os.kill(pid, signal.SIGKILL)
            return list(started)
        time.sleep(0.05)
    raise AssertionError("no Dask worker ever ran a read task")


@dataclass
class External:
    """A scheduler and workers running as processes of their own."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        """The ``--executor`` value that reaches it."""
        return "dask://" + self.address.removeprefix("tcp://")


@contextlib.contextmanager
def external_cluster(
    tmp: Path,
    workers: int = 2,
    wrap: Sequence[str] = (),
    env: dict[str, str] | None = None,
    python: str = sys.executable,
    cwd: Path | None = None,
) -> Iterator[External]:
    """``dask scheduler`` and ``dask worker --nworkers N`` on 127.0.0.1.

    ``wrap`` prefixes the worker command (``unshare -m sh -c ...`` hides a folder from them);
    ``python`` and ``cwd``: the interpreter they run and their folder (another checkout and its
    venv: ``python -m`` puts the current folder first on the path, so both must be its).
    """
    py = python
    sfile = tmp / "scheduler.json"
    quiet = subprocess.DEVNULL
    run_env = {**os.environ, **(env or {})}  # workers daemonic, as `dask worker` makes them
    scheduler = subprocess.Popen(
        [py, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(sfile)],
        stdout=quiet, stderr=quiet, env=run_env, start_new_session=True, cwd=cwd,
    )  # fmt: skip
    procs = [scheduler]
    try:
        end = time.monotonic() + WAIT_S
        while not sfile.exists() or not sfile.read_text().strip():
            assert time.monotonic() < end, "the scheduler did not start"
            assert scheduler.poll() is None, "the scheduler exited"
            time.sleep(0.05)
        address = json.loads(sfile.read_text())["address"]
        cmd = [py, "-m", "distributed.cli.dask_worker", address, "--nworkers", str(workers),
               "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"]  # fmt: skip
        if wrap:
            cmd = [*wrap, *cmd]
        worker = subprocess.Popen(
            cmd, stdout=quiet, stderr=quiet, env=run_env, start_new_session=True, cwd=cwd
        )
        procs.append(worker)
        with distributed.Client(address, timeout=30, set_as_default=False) as c:
            c.wait_for_workers(workers, timeout=WAIT_S)
        yield External(address, scheduler, worker)
    finally:
        for p in procs:
            left = semaphores(p.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)  # the group: nannies and their workers
            p.wait(timeout=30)
            for name in left:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)


def semaphores(group: int) -> set[str]:
    """The named semaphores (``/dev/shm/sem.*``) the processes of ``group`` have open.

    multiprocessing's resource tracker unlinks those its processes leave, but it is in their
    group and dies with them: each run of the tests that start a cluster left six a worker
    in /dev/shm for good. A cluster's group is a session of its own, so no other process
    shares them; they go once it is killed.
    """
    found: set[str] = set()
    for pid, (_ppid, pgid) in parents().items():
        if pgid != group:
            continue
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
                name = line.partition("/dev/shm/")[2]
                if name.startswith("sem.") and not name.endswith(" (deleted)"):
                    found.add("/dev/shm/" + name)
    return found


def store_lines(store: Path) -> list[dict[str, object]]:
    """The records of ``store/extract.jsonl`` without ``ms`` (the one field allowed to differ)."""
    out = []
    for line in (store / "extract.jsonl").read_bytes().splitlines():
        rec = json.loads(line)
        rec.pop("ms", None)
        out.append(rec)
    return out


def texts(store: Path) -> dict[str, bytes]:
    """Every stored text by its file name."""
    return {p.name: p.read_bytes() for p in sorted((store / "extract").rglob("*.txt"))}


@contextlib.contextmanager
def extra_worker(
    address: str, env: dict[str, str] | None = None, wrap: Sequence[str] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """One more ``dask worker`` process (one thread) joining the scheduler at ``address``,
    with an environment (``PATH``) and a wrapper (``unshare ...``) of its own; killed, with
    everything it started, on leaving."""
    cmd = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
           "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard", "--no-nanny"]  # fmt: skip
    proc = subprocess.Popen(
        [*wrap, *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def wait_for(what: str, cond: Any, timeout: float = WAIT_S) -> None:
    """Poll ``cond()`` until it is true (bounded)."""
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.05)


def read_processes(client: Any) -> dict[str, int]:
    """Dask worker address -> how many processes it has started that are still alive
    (read children, their forkserver, tools), multiprocessing's resource tracker aside."""
    out: dict[str, int] = {}
    for addr, pid in worker_pids(client).items():
        try:
            kids = psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            continue
        out[addr] = sum(1 for k in kids if _alive(k) and "resource_tracker" not in _cmdline(k))
    return out
