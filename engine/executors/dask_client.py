"""Reads on a Dask cluster, as the engine sees them: :class:`DaskExecutor`.

The engine keeps everything that makes a sweep trustworthy: it walks, hashes and plans, holds
the store's lock, and writes ``extract.jsonl``. The cluster only reads. :meth:`read` cuts the
files into batches (small files together, as the local pool does), keeps at most
:attr:`DaskExecutor.window` batches in flight (a million files never become a million
futures), and yields each file's Outcome as its batch comes back. On the workers,
:func:`engine.executors.dask_worker.read_batch` reads each batch in a local read pool under
the sweep's bounds, and renames the texts into the shared store itself.

Faults, and what becomes of them:

- a Dask worker lost mid-task: the scheduler runs the batch again elsewhere (its
  ``allowed-failures`` rule); nothing to do here;
- ``KilledWorker`` (a batch that kept killing workers): a batch of several files is sent
  again one file per task, so that only the culprit is blamed; a single file becomes
  ``error/crashed`` with ``lost_worker`` set, so the engine's quarantine rule counts it;
- a task that failed in Python (a read pool that cannot start on that worker): a machine
  failure for its files, which keep their earlier records;
- the scheduler lost: :class:`~engine.executors.ClusterLost`, which ends the run before
  anything is written.

Importing this module imports dask and distributed; the engine does so only when asked.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import dask
import distributed

from engine import worker as _w
from engine.events import Listener, Notice, ignore
from engine.executor import TICK_S
from engine.executors import ClusterLost, ClusterRefused, ExecutorSpec, dask_worker
from engine.executors.dask_worker import WorkerInfo, WorkerSettings, close_pools, probe, read_batch
from engine.extract import Outcome, ReadTask, machine_failure
from engine.mimes import OCTET
from engine.records import Reason
from engine.store import Store, folder_of, open_in
from engine.tools import ToolSet

CONNECT_TIMEOUT_S = 10.0
"""Time the scheduler has to answer."""
WORKERS_TIMEOUT_S = 60.0
"""Time the first worker has to join (a cluster being scaled up takes a while)."""
WINDOW_PER_THREAD = 2
"""Batches in flight per worker thread: one running, one queued behind it on the worker."""
PROBE_FILES = 4
"""Files to read (from different folders) each worker must see before the sweep starts."""
BATCH_FILES = 32
"""Most files in one Dask task (a lost task is sent again one file per task: kept small)."""
BATCH_BYTES = 1 << 20
"""Files go together into one task until their sizes add up to this."""
REFRESH_S = 2.0
"""How often the worker list is looked at again (joins, departures, the window's size)."""


class DaskExecutor:
    """Runs the reads of a sweep on a Dask cluster: an :class:`~engine.executor.Executor`.

    Cheap to make: the cluster is reached (or the LocalCluster started) by the first
    :meth:`finished` that has work, and checked then.
    """

    def __init__(self, spec: ExecutorSpec, settings: WorkerSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.workers: dict[str, WorkerInfo] = {}
        """What each worker reported when the executor started (address -> info)."""
        self.dashboard: str | None = None
        """The scheduler's dashboard link, once connected."""
        self._on_event: Listener = ignore
        self._cluster: Any = None
        self._client: Any = None
        self._threads = 1
        self._refreshed = 0.0
        self._todo: deque[ReadTask] = deque()
        self._singles: deque[ReadTask] = deque()  # files of a batch that killed workers
        self._flying: dict[Any, list[ReadTask]] = {}
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def listen(self, on_event: Listener) -> None:
        """Send the executor's notices (the dashboard link, each worker's tools) there."""
        self._on_event = on_event

    def worker_tools(self) -> dict[str, ToolSet]:
        """Each worker's tools as it reported them when the sweep started."""
        return {f"{addr} ({info.host})": info.tools for addr, info in self.workers.items()}

    @property
    def window(self) -> int:
        """Most batches in flight at once."""
        return max(2, WINDOW_PER_THREAD * self._threads)

    # -- connecting -----------------------------------------------------------------------

    def start(self, sample: Sequence[ReadTask]) -> None:
        """Connect (or start the LocalCluster) and check every worker against ``sample``.

        Idempotent while connected. Raises ClusterRefused when no scheduler or worker
        answers, or when a worker cannot see the sample's files or the store.
        """
        if self._client is not None:
            return
        _quiet_logs()
        try:
            self._connect()
            self._check_workers(sample)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> None:
        where = str(self.spec)
        try:
            if self.spec.kind == "dask-local":
                # Nanny-started workers are daemonic by default, and multiprocessing gives a
                # daemonic process no children; ours start read processes.
                with dask.config.set({"distributed.worker.daemon": False}):
                    # distributed ships no annotations for these constructors.
                    self._cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
                        n_workers=self.spec.workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address="127.0.0.1:0",
                        silence_logs=logging.CRITICAL,
                        preload=[dask_worker.__name__],  # dask_setup: Ctrl-C is ours
                    )
                self._client = distributed.Client(  # type: ignore[no-untyped-call]
                    self._cluster, timeout=CONNECT_TIMEOUT_S, set_as_default=False
                )
            else:
                self._client = distributed.Client(  # type: ignore[no-untyped-call]
                    self.spec.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False
                )
            self._client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except (OSError, TimeoutError, distributed.TimeoutError) as exc:
            raise ClusterRefused(f"cannot use the Dask cluster {where}: {_why(exc)}") from exc
        self.dashboard = self._client.dashboard_link
        self._refresh(force=True)

    def _check_workers(self, sample: Sequence[ReadTask]) -> None:
        """Every worker must see the files to read and the store as this machine does."""
        token = f".probe-{secrets.token_hex(8)}"
        with folder_of(self.settings.store_dir, "tmp", make=True) as tmp:
            fd = open_in(tmp, token, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                os.write(fd, token.encode())
            finally:
                os.close(fd)
            paths = _spread(sample)
            try:
                infos: dict[str, WorkerInfo] = self._client.run(probe, self.settings, paths, token)
            finally:
                for name in os.listdir(tmp):
                    if name.startswith(token):
                        with contextlib.suppress(OSError):
                            os.unlink(name, dir_fd=tmp)
        problems = [p for addr, info in sorted(infos.items()) if (p := _problem(addr, info))]
        if problems:
            raise ClusterRefused(
                "; ".join(problems) + ". Every worker must see the roots and the store at the "
                "same paths as this machine (README.md, 'Many machines')"
            )
        self.workers = infos
        self._announce()

    def _announce(self) -> None:
        now = time.time()
        n = len(self.workers)
        self._on_event(
            Notice(
                now,
                "dask",
                f"Dask {self.spec}: {n} worker(s), {self._threads} thread(s); "
                f"dashboard {self.dashboard or 'not available'}",
            )
        )
        for addr, info in sorted(self.workers.items()):
            found = ", ".join(f"{t.name} {t.version}" for t in info.tools.found) or "none"
            missing = ", ".join(info.tools.missing) or "none"
            self._on_event(
                Notice(
                    now,
                    "dask-worker",
                    f"Dask worker {addr} on {info.host}: tools {found}; missing {missing}",
                )
            )

    # -- the Executor face ----------------------------------------------------------------

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        """Queue ``tasks``; nothing reaches the cluster before :meth:`finished` runs."""
        self._todo.extend(tasks)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        """Yield each submitted task with its Outcome as its batch comes back.

        Raises ClusterRefused when the cluster cannot take the sweep and ClusterLost when the
        scheduler goes away: either ends the run before the store is written.
        """
        try:
            if self._todo:
                self._settings_for(self._todo[0])
                self.start(self._todo)
            while self._todo or self._singles or self._flying:
                self._send()
                try:
                    fut = self._done.get(timeout=TICK_S)
                except queue.Empty:
                    self._alive()
                else:
                    batch = self._flying.pop(fut, None)
                    if batch is not None:  # None: cancelled by an earlier run
                        yield from self._settle(fut, batch)
                if tick is not None:
                    tick()
        except ClusterLost:
            self.close()  # the next run connects afresh (a restarted scheduler is picked up)
            raise
        finally:
            if self._todo or self._singles or self._flying:
                self.cancel()  # abandoned: its answers must not reach the next run

    def cancel(self) -> None:
        """Forget queued tasks; cancel the batches in flight (their outcomes never come)."""
        self._todo.clear()
        self._singles.clear()
        flying, self._flying = list(self._flying), {}
        self._done = queue.SimpleQueue()  # late callbacks land in the old queue
        if flying and self._client is not None:
            with contextlib.suppress(Exception):  # a lost scheduler cannot be told
                self._client.cancel(flying, reason="the sweep stopped")

    def _send(self) -> None:
        """Submit batches until the window is full."""
        self._refresh()
        while len(self._flying) < self.window and (self._todo or self._singles):
            batch = [self._singles.popleft()] if self._singles else self._take(self._todo)
            fut = self._client.submit(
                read_batch, batch, self.settings, pure=False, key=f"quarry-read-{_key()}"
            )
            self._flying[fut] = batch
            fut.add_done_callback(self._done.put)

    def _settings_for(self, task: ReadTask) -> None:
        """Point the workers at the store whose ``tmp/`` the task names, and mark it dirty."""
        store_dir = Path(task.tmp_dir).parent  # tmp/ is a folder of the store
        if self.settings.store_dir != str(store_dir):
            self.settings = replace(self.settings, store_dir=str(store_dir))
        # Workers rename texts into extract/ as they finish: from the first one on, a crash
        # leaves texts that no record names, which the next full sweep collects.
        Store(store_dir).mark_dirty()

    def _take(self, todo: deque[ReadTask]) -> list[ReadTask]:
        """The next batch: small files together, up to a share of what is left."""
        first = todo.popleft()
        batch, size = [first], first.size
        most = max(1, min(BATCH_FILES, len(todo) // (2 * self._threads)))
        while todo and len(batch) < most and size + todo[0].size <= BATCH_BYTES:
            nxt = todo[0]
            if (nxt.limits, nxt.tmp_dir) != (first.limits, first.tmp_dir):
                break
            size += nxt.size
            batch.append(todo.popleft())
        return batch

    def _settle(self, fut: Any, batch: list[ReadTask]) -> Iterator[tuple[ReadTask, Outcome]]:
        """Turn one finished future into its files' outcomes (or into work to do again)."""
        if fut.status == "finished":
            outcomes: list[Outcome] = fut.result()
            yield from zip(batch, outcomes, strict=True)
        elif fut.status == "cancelled":
            raise self._lost()
        else:
            exc = fut.exception()
            if isinstance(exc, distributed.KilledWorker):
                if len(batch) > 1:
                    self._singles.extend(batch)  # again one by one: only the culprit is blamed
                else:
                    yield batch[0], _killed(batch[0], exc)
            else:
                why = f"a Dask worker failed the batch: {type(exc).__name__}: {exc}"[:300]
                for task in batch:
                    yield task, machine_failure(OCTET, why)
        fut.release()

    def _alive(self) -> None:
        """Raise ClusterLost once the client has lost its scheduler."""
        if self._client.status not in ("running", "newly-created"):
            raise self._lost()

    def _lost(self) -> ClusterLost:
        return ClusterLost(
            f"lost the Dask scheduler ({self.spec}); the sweep stopped and the store is as "
            "the previous sweep left it"
        )

    def _refresh(self, *, force: bool = False) -> None:
        """Size the window to the threads the cluster has now."""
        now = time.monotonic()
        if not force and now - self._refreshed < REFRESH_S:
            return
        self._refreshed = now
        with contextlib.suppress(Exception):  # a lost scheduler is noticed by _alive
            threads = sum(self._client.nthreads().values())
            self._threads = max(1, threads)

    # -- closing --------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the read processes on the workers; close the client and a LocalCluster."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            if client.status == "running" and cluster is None:
                with contextlib.suppress(Exception):
                    client.run(close_pools)  # a shared cluster's workers stay; our reads go
            with contextlib.suppress(Exception):
                client.close(timeout=5)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=10)


def _spread(sample: Sequence[ReadTask]) -> list[str]:
    """A few files to probe, from different folders where there are several."""
    picked: dict[str, str] = {}
    for task in sample:
        picked.setdefault(os.path.dirname(task.path), task.path)
        if len(picked) >= PROBE_FILES:
            break
    return list(picked.values())


def _problem(addr: str, info: WorkerInfo) -> str | None:
    if info.problem:
        return f"Dask worker {addr} on {info.host}: {info.problem}"
    if info.unseen:
        return f"Dask worker {addr} on {info.host} cannot see {', '.join(info.unseen)}"
    if not info.store_ok:
        return f"Dask worker {addr} on {info.host} cannot see or write the store's tmp/ folder"
    return None


def _killed(task: ReadTask, exc: BaseException) -> Outcome:
    """``error/crashed`` for a file whose task kept killing Dask workers."""
    # The worker died before it could say what it detected; the name of the type is lost.
    return _w.failed(task, None, Reason.CRASHED, f"killed Dask workers: {exc}"[:300])


def _key() -> str:
    return secrets.token_hex(8)


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _quiet_logs() -> None:
    """distributed logs every reconnection attempt with a traceback; the engine reports the
    outcome itself (a Notice, or ClusterLost) in one line."""
    for name in ("distributed", "distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
