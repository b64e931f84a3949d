"""Reads on a Dask cluster, as the engine sees them: :class:`DaskExecutor`.

The engine keeps everything that makes a sweep trustworthy: it walks, hashes and plans, holds
the store's lock, and writes ``extract.jsonl``. The cluster only reads. :meth:`read` cuts the
files into tasks sized to about :data:`TASK_S` of work each (small files together, one kind
of file and one route a task), keeps at most :attr:`DaskExecutor.window` tasks in flight (a
million files never become a million futures), and yields each file's Outcome as its task
comes back. On the workers, :func:`engine.executors.dask_worker.read_batch` reads each task
in a local read pool under the sweep's bounds, and renames the texts into the shared store
itself.

Who may read: the sweep registers a Dask worker plugin
(:class:`~engine.executors.dask_plugin.QuarryPlugin`) that checks every worker as it joins,
at the start or mid-sweep, and logs its verdict as a Dask event. Only the workers that passed
get reads (Dask worker restrictions, ``workers=``); a worker that failed is named once in a
warning. Among those, a file goes to the workers with most of the tools its kind uses (by its
name), and a read that came back from a worker with fewer of them than another has is sent
again to one of those (once).

Faults, and what becomes of them:

- a Dask worker lost mid-task: the scheduler runs the task again elsewhere (its
  ``allowed-failures`` rule); nothing to do here;
- ``KilledWorker`` (a task that kept killing workers): a task of several files is sent again
  one file per task, so that only the culprit is blamed; a single file becomes
  ``error/crashed`` with ``lost_worker`` set, so the engine's quarantine rule counts it;
- a worker that could not see some of its files: it gets no more reads, and those files go
  to the others (:data:`UNSEEN_TRIES` times at most, then a machine failure);
- a task that failed in Python (a read pool that cannot start on that worker): a machine
  failure for its files, which keep their earlier records;
- no worker left that may read, for :data:`WORKERS_TIMEOUT_S`: MachineFailure (the files not
  read keep their earlier records);
- the scheduler lost: :class:`~engine.executors.ClusterLost`, which ends the run before
  anything is written.

Importing this module does not import dask and distributed (~0.3 s): the connection does,
in :meth:`DaskExecutor.warm`'s thread, while the engine walks and plans.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import secrets
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine import worker as _w
from engine.detect import by_name, name_key
from engine.errors import MachineFailure
from engine.events import Level, Listener, Notice, NoticeKind, ignore
from engine.executor import TICK_S
from engine.executors import dask_worker
from engine.executors.dask_worker import (
    BatchResult,
    Check,
    WorkerInfo,
    WorkerSettings,
    code_version,
    read_batch,
)  # fmt: skip
from engine.executors.spec import INSTALL_HINT, ClusterLost, ClusterRefused, ExecutorSpec
from engine.extract import Outcome, ReadTask, machine_failure
from engine.isolate import BATCH_BYTES, BATCH_PATH_CHARS
from engine.mimes import OCTET
from engine.readers.registry import reader_for, reader_named
from engine.records import Reason
from engine.store import Store, folder_of, open_in
from engine.tools import ToolSet
from engine.words import count

CONNECT_TIMEOUT_S = 10.0
"""Time the scheduler has to answer."""
WORKERS_TIMEOUT_S = 60.0
"""Time the first worker has to join (a cluster being scaled up takes a while), and time the
sweep waits with no worker that may read before it gives up."""
CHECK_TIMEOUT_S = 30.0
"""Time the workers present at the start have to report their check."""
WINDOW_PER_THREAD = 2
"""Tasks in flight per worker thread: one running, one queued behind it on the worker."""
PROBE_FILES = 4
"""Files to read (from different folders) each worker must see to take part."""
TASK_S = 0.75
"""Seconds of work a task aims at: long enough that Dask's cost per task (a millisecond or
two on the scheduler, the pickled task and outcomes, a syncfs) is small beside it, short
enough that a lost task costs little and the last tasks end together."""
TAIL_TASK_S = 0.1
"""Seconds of work the last tasks of a run keep at least (while tasks shrink so that the last
ones end together): below that, a task's round trip through the scheduler (tens of
milliseconds on a busy machine) costs more than the evening out gains."""
FIRST_TASK_FILES = 32
"""Files a task takes before the sweep has timed one."""
TASK_FILES = 2048
"""Most files in one task."""
TASK_BYTES = BATCH_BYTES
"""Files go together into one task until their sizes add up to this (the read pool hands a
batch this big to its read child whole: one handoff a task)."""
REFRESH_S = 2.0
"""How often the worker list and the workers' checks are looked at again."""
UNSEEN_TRIES = 3
"""Workers a file may find unable to see it before it is a machine failure."""
FEED_FILES = 20_000
"""Files drawn ahead from what :meth:`DaskExecutor.submit` was given (a stream of reads, the
walk's as it goes): the executor never holds more than these beside the tasks in flight."""
DRAW_S = TICK_S
"""Longest a draw from a stream goes on (checked every :data:`DRAW_CHECK` files): the local
pool's bound (:data:`engine.isolate.DRAW_S`), so a slow stream (files hashed before they are
planned) never keeps the tasks that come back waiting, nor the workers without their next."""
DRAW_CHECK = 64
"""Files drawn between two looks at the clock."""
PROBE_SCAN = 10_000
"""Queued files looked through for the check's few files from different folders."""


@dataclass(slots=True)
class _Job:
    """A file to read, and where it may be read."""

    task: ReadTask
    tools: frozenset[str]
    """The tools its kind uses (by its name, or by what a first read found it to be)."""
    redone: bool = False
    """Sent again because the worker that read it lacked tools another worker has."""
    unseen: int = 0
    """Workers that could not see it so far."""
    losses: int = 0
    """Times its task was lost with the only workers it was sent to (Dask's own count of a
    task's lost workers stops there: the task waits on them, and is sent again)."""
    kind: str = ""
    """Its kind as its name says (:func:`~engine.detect.name_key`): what its read is
    expected to cost is learnt per kind."""


class DaskExecutor:
    """Runs the reads of a sweep on a Dask cluster: an :class:`~engine.executor.Executor`.

    Cheap to make: the cluster is reached (or the LocalCluster started) by the first
    :meth:`finished` that has work, and checked then.
    """

    def __init__(self, spec: ExecutorSpec, settings: WorkerSettings) -> None:
        self.spec = spec
        self._id = secrets.token_hex(6)
        self.settings = replace(settings, plugin=f"quarry-{self._id}")
        self.workers: dict[str, WorkerInfo] = {}
        """What each worker reported as it joined (address -> info), whether it passed."""
        self.dashboard: str | None = None
        """The scheduler's dashboard link, once connected."""
        self.tool_sets: Counter[tuple[str, str]] = Counter()
        """Reads of the current run by reader and the tools it uses that the read had
        (``name=version;...``): a reader counted under two of them is a mixed read."""
        self._routed: Counter[str] = Counter()
        self._wants: dict[tuple[str | None, str, tuple[str, ...]], frozenset[str]] = {}
        self._on_event: Listener = ignore
        self._cluster: Any = None
        self._client: Any = None
        self._threads = 1
        self._present: dict[str, int] = {}
        self._good: dict[str, frozenset[str]] = {}
        self._told: set[str] = set()
        self._events = 0
        self._started = False
        self._none_since: float | None = None
        self._refreshed = 0.0
        self._token = ""
        self._allowed = 3
        self._per_file: float | None = None
        self._cost: dict[str, float] = {}  # kind -> seconds a read of it takes
        self._read: dict[str, tuple[float, int]] = {}  # kind -> seconds and files read
        self._overhead = 0.0  # seconds a file of a task costs beyond its read
        self._todo: dict[frozenset[str], deque[_Job]] = {}
        self._kinds: Counter[str] = Counter()  # kind -> files of it in self._todo
        self._feeds: deque[Iterator[ReadTask]] = deque()  # streams given to submit()
        self._singles: deque[_Job] = deque()  # files of a task that killed workers
        self._ready: deque[tuple[ReadTask, Outcome]] = deque()  # decided here, not read
        self._flying: dict[Any, tuple[list[_Job], tuple[str, ...]]] = {}
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._again: set[Any] = set()  # in flight again: their result was lost with a worker
        self._warming: threading.Thread | None = None
        self._releasing: threading.Thread | None = None  # release(): the workers let go
        self._warm_error: BaseException | None = None
        self._prestarted = False

    def listen(self, on_event: Listener) -> None:
        """Send the executor's notices (the dashboard link, each worker's tools) there."""
        self._on_event = on_event

    def worker_tools(self) -> dict[str, ToolSet]:
        """Each worker's tools as it reported them, for the workers that take reads."""
        return {
            f"{addr} ({info.host})": info.tools
            for addr, info in self.workers.items()
            if addr in self._good
        }

    def routed(self) -> dict[str, int]:
        """Kind of file -> files of it the last run sent only to some of the workers that
        take reads (those with most of the tools it uses)."""
        return dict(self._routed)

    @property
    def window(self) -> int:
        """Most tasks in flight at once."""
        return max(2, WINDOW_PER_THREAD * self._threads)

    # -- connecting -----------------------------------------------------------------------

    def start(self, sample: Sequence[ReadTask]) -> None:
        """Connect (or start the LocalCluster), register the sweep's worker plugin and wait
        for the workers present to pass its check.

        Idempotent while connected. Raises ClusterRefused when no scheduler or worker
        answers, or when no worker passes the check.
        """
        if self._token:
            return
        _quiet_logs()
        try:
            self._joined()
            if self._client is None:
                self._connect()
            self._register(sample)
        except BaseException:
            self.close()
            raise

    def warm(self) -> None:
        """Reach the scheduler (or start the LocalCluster) now, in a thread, and return: a
        cold sweep's walk and plan then overlap the cluster's start (seconds for a
        LocalCluster: its processes, their imports, the read children's forkserver). The
        workers are checked later, by :meth:`start`, which also raises what this met."""
        if self._client is not None or self._warming is not None:
            return
        self._warming = threading.Thread(target=self._connect_early, name="quarry-dask-warm")
        self._warming.daemon = True
        self._warming.start()

    def _connect_early(self) -> None:
        try:
            self._connect()
        except BaseException as exc:  # raised again by start(), on the engine's thread
            self._warm_error = exc

    def _joined(self) -> None:
        """Wait for :meth:`warm`'s connection, and raise what it met."""
        thread, self._warming = self._warming, None
        if thread is not None:
            thread.join()
        error, self._warm_error = self._warm_error, None
        if error is not None:
            raise error

    def _connect(self) -> None:
        where = str(self.spec)
        try:
            import dask
            import distributed
        except ImportError as exc:  # installed (the factory looked) but broken
            raise ClusterRefused(
                f"cannot use the Dask cluster {where}: importing Dask failed ({_why(exc)}); "
                f"{INSTALL_HINT}"
            ) from exc
        _quiet_logs()  # (distributed's import sets its loggers' levels from its config)
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
        if self._cluster is None:  # (a LocalCluster's workers start theirs as they start)
            # The workers' read forkservers start now, while the engine walks and plans: the
            # check would start them only after, and the first tasks wait on their imports.
            with contextlib.suppress(Exception):  # the check says what is wrong with one
                self._client.run(dask_worker.prestart)  # returns before the imports end
                self._prestarted = True

    def _register(self, sample: Sequence[ReadTask]) -> None:
        """Register the plugin that checks each worker as it joins; refuse the sweep when
        none of the workers present passes."""
        self._token = f".probe-{self._id}"
        self._write_token()
        with contextlib.suppress(Exception):  # the scheduler's rule, not this machine's config
            self._allowed = int(
                self._client.run_on_scheduler(
                    lambda dask_scheduler: dask_scheduler.allowed_failures
                )
            )
        check = Check(
            self.settings, tuple(_spread(sample)), self._token, code_version(), self._topic
        )
        from engine.executors.dask_plugin import QuarryPlugin  # imports distributed: done

        self._client.register_plugin(QuarryPlugin(check), name=self.settings.plugin)
        # The verdicts travel as events, apart from the registration's answer: wait for each.
        end = time.monotonic() + CHECK_TIMEOUT_S
        while True:
            self._refresh(force=True)
            if set(self._present) <= set(self.workers) or time.monotonic() > end:
                break
            time.sleep(0.05)
        if not self._good:
            problems = [p for a, i in sorted(self.workers.items()) if (p := _problem(a, i))]
            raise ClusterRefused(
                "; ".join(problems or ["no Dask worker reported its check"]) + ". Every "
                "worker must see the roots and the store at the same paths as this machine "
                "(README.md, 'Many machines')"
            )
        self._announce()

    def _write_token(self) -> None:
        """The file a joining worker must read in the store's ``tmp/`` (written again by each
        run: a store opened anew empties its ``tmp/``)."""
        with folder_of(self.settings.store_dir, "tmp", make=True) as tmp:
            fd = open_in(tmp, self._token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            try:
                os.write(fd, self._token.encode())
            finally:
                os.close(fd)

    @property
    def _topic(self) -> str:
        return f"quarry-check-{self._id}"

    def _announce(self) -> None:
        now = time.time()
        n = len(self._good)
        self._on_event(
            Notice(
                now,
                NoticeKind.DASK,
                f"Dask {self.spec}: {count(n, 'worker')}, {count(self._threads, 'thread')}; "
                f"dashboard {self.dashboard or 'not available'}",
            )
        )
        for addr, info in sorted(self.workers.items()):
            if addr in self._good:
                self._on_event(Notice(now, NoticeKind.DASK_WORKER, _tools_line(addr, info)))
        self._started = True

    def _heard(self, info: WorkerInfo) -> None:
        """Take a worker's check: it may read, or it is named once and gets no reads."""
        addr = info.address
        if info.ok and not self._answered(info.answer):
            info = replace(info, store_ok=False)  # its tmp/ is not the engine's store's
        known = self.workers.get(addr)
        self.workers[addr] = info
        if info.ok:
            self._good[addr] = frozenset(info.tools.names)
            if known is None and self._started:  # joined mid-sweep
                self._on_event(Notice(time.time(), NoticeKind.DASK_WORKER, _tools_line(addr, info)))
            return
        self._good.pop(addr, None)
        if addr not in self._told:
            self._told.add(addr)
            problem = _problem(addr, info)
            self._on_event(
                Notice(
                    time.time(),
                    NoticeKind.DASK_REFUSED,
                    f"{problem}: it gets no reads of this sweep",
                    Level.WARNING,
                )
            )

    def _answered(self, answer: str) -> bool:
        """Whether the worker's answer to the token is in the engine's store's ``tmp/``."""
        if not answer:
            return False
        try:
            with folder_of(self.settings.store_dir, "tmp") as tmp:
                os.stat(answer, dir_fd=tmp, follow_symlinks=False)
        except OSError:
            return False
        return True

    # -- the Executor face ----------------------------------------------------------------

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        """Queue ``tasks``, which may be a stream (an iterator fed by the walk): they are
        drawn from it :data:`FEED_FILES` at a time as the tasks go out, so the executor holds
        no more than that of them however many there are. Nothing reaches the cluster before
        :meth:`finished` runs."""
        self._feeds.append(iter(tasks))

    def _fill(self) -> None:
        """Draw files from the streams given to :meth:`submit` while fewer than half of
        :data:`FEED_FILES` are queued, up to that many, for :data:`DRAW_S` at most (as the
        local pool draws): drawing runs the run's planning (hashes among it), and the tasks
        that come back and the workers' next tasks wait meanwhile. Each route's queue is then
        put heavy kinds first."""
        queued = sum(len(q) for q in self._todo.values())
        if not self._feeds or queued >= FEED_FILES // 2:
            return
        until = time.monotonic() + DRAW_S
        drawn = 0
        while self._feeds and queued < FEED_FILES:
            task = next(self._feeds[0], None)
            if task is None:  # that stream is spent
                self._feeds.popleft()
                continue
            key = name_key(task.path)
            self._queue(_Job(task, _kind_tools(task.path, key), kind=key))
            queued += 1
            drawn += 1
            if drawn % DRAW_CHECK == 0 and time.monotonic() > until:
                break
        for todo in self._todo.values():
            _heavy_first(todo)

    def _queue(self, job: _Job) -> None:
        if not job.kind:
            job.kind = name_key(job.task.path)
        self._todo.setdefault(job.tools, deque()).append(job)
        self._kinds[job.kind] += 1

    def _pending(self) -> bool:
        return bool(
            self._ready or self._singles or self._flying or self._feeds
            or any(self._todo.values())
        )  # fmt: skip

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        """Yield each submitted task with its Outcome as its task comes back.

        Raises ClusterRefused when the cluster cannot take the sweep and ClusterLost when the
        scheduler goes away: either ends the run before the store is written.
        """
        if self._releasing is not None:  # released, yet a run came: start afresh
            self.close()
        self.tool_sets = Counter()
        self._routed = Counter()
        try:
            self._fill()
            first = next((q[0] for q in self._todo.values() if q), None)
            if first is not None:
                self._settings_for(first.task)
                if not self._token:
                    queued = itertools.chain.from_iterable(self._todo.values())
                    self.start([j.task for j in itertools.islice(queued, PROBE_SCAN)])
                else:
                    self._write_token()
            while self._pending():
                while self._ready:
                    yield self._ready.popleft()
                self._send()
                self._recomputed()
                try:
                    fut = self._done.get(timeout=TICK_S)
                except queue.Empty:
                    self._alive()
                else:
                    if fut.status in _AGAIN and fut in self._flying:
                        self._again.add(fut)  # its result went with its worker: run again
                    else:
                        held = self._flying.pop(fut, None)
                        if held is not None:  # None: cancelled by an earlier run
                            yield from self._settle(fut, held[0])
                if tick is not None:
                    tick()
            self._refresh(force=True)  # a worker lost near the end is said by this run
            self._tell_tool_sets()
        except ClusterLost:
            self.close()  # the next run connects afresh (a restarted scheduler is picked up)
            raise
        finally:
            if self._pending():
                self.cancel()  # abandoned: its answers must not reach the next run

    def _recomputed(self) -> None:
        """Tasks whose result was lost with its worker before the engine took it (Dask runs
        them again; a future's done callback fires once): the ones done again come back."""
        for fut in [f for f in self._again if f.status not in _AGAIN or f not in self._flying]:
            self._again.discard(fut)
            if fut in self._flying:
                self._done.put(fut)

    def cancel(self) -> None:
        """Forget queued tasks; cancel the tasks in flight (their outcomes never come)."""
        self._again.clear()
        self._todo.clear()
        self._kinds.clear()
        self._feeds.clear()
        self._singles.clear()
        self._ready.clear()
        flying, self._flying = list(self._flying), {}
        self._done = queue.SimpleQueue()  # late callbacks land in the old queue
        if flying and self._client is not None:
            with contextlib.suppress(Exception):  # a lost scheduler cannot be told
                self._client.cancel(flying, reason="the sweep stopped")

    def _send(self) -> None:
        """Submit tasks until the window is full."""
        self._refresh()
        if not self._good:
            self._wait_for_workers()
            return
        self._none_since = None
        while len(self._flying) < self.window:
            if not (self._singles or any(self._todo.values())):
                self._fill()  # drawn when the queue is out: what is queued goes out first
                if not (self._singles or any(self._todo.values())):
                    break
            jobs = [self._singles.popleft()] if self._singles else self._take()
            where = self._route(jobs[0].tools)
            fut = self._client.submit(
                read_batch,
                [j.task for j in jobs],
                self.settings,
                pure=False,
                key=f"quarry-read-{_key()}",
                workers=list(where),
                allow_other_workers=False,
            )
            self._flying[fut] = (jobs, where)
            fut.add_done_callback(self._done.put)
            if len(where) < len(self._good):
                self._routed[_kind_name(jobs[0].task.path)] += len(jobs)
        self._fill()  # the workers have their tasks: draw the next files meanwhile

    def _wait_for_workers(self) -> None:
        """No worker may read: wait for one to join, for WORKERS_TIMEOUT_S at most."""
        now = time.monotonic()
        if self._none_since is None:
            self._none_since = now
        elif now - self._none_since > WORKERS_TIMEOUT_S:
            refused = [p for a, i in sorted(self.workers.items()) if (p := _problem(a, i))]
            raise MachineFailure(
                f"no Dask worker of {self.spec} may read for {WORKERS_TIMEOUT_S:.0f} s"
                + (f" ({'; '.join(refused)})" if refused else "")
            )

    def _route(self, tools: frozenset[str]) -> tuple[str, ...]:
        """The workers that may read a file whose kind uses ``tools``: of those that passed
        their check, the ones that have most of them."""
        best = max((len(tools & have) for have in self._good.values()), default=0)
        return tuple(sorted(a for a, have in self._good.items() if len(tools & have) == best))

    def _settings_for(self, task: ReadTask) -> None:
        """Point the workers at the store whose ``tmp/`` the task names, and mark it dirty."""
        store_dir = Path(task.tmp_dir).parent  # tmp/ is a folder of the store
        if self.settings.store_dir != str(store_dir):
            if self._token:
                self.close()  # the plugin checked the workers against another store
            self.settings = replace(self.settings, store_dir=str(store_dir))
        # Workers rename texts into extract/ as they finish: from the first one on, a crash
        # leaves texts that no record names, which the next full sweep collects.
        Store(store_dir).mark_dirty()

    def _take(self) -> list[_Job]:
        """The next task: files of one kind of route, as many as make about TASK_S of work
        (by what earlier reads of their kinds took), down to a share of the work left, and
        from the route whose next files cost most (the heavy files first: the last tasks are
        then the light ones, and the workers end together)."""
        todo = self._heaviest()
        left = sum(len(q) for q in self._todo.values())
        if self._feeds:  # more to come: no tail to even out yet
            left = max(left, FEED_FILES)
        first = self._pop(todo)
        batch, size, chars = [first], first.task.size, len(first.task.path)
        average = self._average()
        # Until a task whose read pool was running has come back, what a file costs beyond
        # its read is unknown: a few files, fewer of a kind known to be slow.
        most = FIRST_TASK_FILES if self._per_file is None else TASK_FILES
        if average is None:
            most, budget = max(1, min(most, left // (2 * self._threads))), float("inf")
        else:
            share = self._work_left(average, left) / (2 * self._threads)
            budget = max(TAIL_TASK_S, min(TASK_S, share)) * (1 + 1e-9)  # (float sums)
        spent = self._guess(first, average)
        while todo and len(batch) < most:
            nxt = todo[0].task
            spent += self._guess(todo[0], average)
            size += nxt.size
            chars += len(nxt.path)
            if size > TASK_BYTES or chars > BATCH_PATH_CHARS or spent > budget:
                break
            if (nxt.limits, nxt.tmp_dir, nxt.passwords) != (
                first.task.limits,
                first.task.tmp_dir,
                first.task.passwords,
            ):
                break
            batch.append(self._pop(todo))
        return batch

    def _pop(self, todo: deque[_Job]) -> _Job:
        job = todo.popleft()
        self._kinds[job.kind] -= 1
        if not self._kinds[job.kind]:
            del self._kinds[job.kind]  # (only the kinds queued are summed)
        return job

    def _work_left(self, average: float, left: int) -> float:
        """Seconds of reading the queued files (``left`` of them) are expected to take, each
        kind by its own reads so far: the share a task may take near the end. Sized by the
        average file instead, a task of a heavy kind's files near the end (the corpus's 69
        .docx, 0.79 s) ran on alone while the other worker had finished."""
        if self._feeds:  # more to come: as many files of the average
            return left * average
        return sum(n * self._guess_kind(kind, average) for kind, n in self._kinds.items())

    def _heaviest(self) -> deque[_Job]:
        """The queue to take the next task from: of the routes whose workers have room, the
        one whose next file is expected to cost most (the longest, while nothing is known)."""
        queues = [(tools, q) for tools, q in self._todo.items() if q]
        roomy = [(tools, q) for tools, q in queues if not self._full(self._route(tools))]
        average = self._average()
        _tools, todo = max(roomy or queues, key=lambda tq: (self._guess(tq[1][0], average),
                                                             len(tq[1])))  # fmt: skip
        return todo

    def _full(self, where: tuple[str, ...]) -> bool:
        """Whether the workers of a route have as many tasks in flight as they may: a route
        to some of the workers must not take the whole window while the others idle."""
        if len(where) >= len(self._good):
            return False
        room = WINDOW_PER_THREAD * sum(self._present.get(a, 1) for a in where)
        flying = sum(1 for _jobs, there in self._flying.values() if set(there) <= set(where))
        return flying >= room

    def _average(self) -> float | None:
        """Seconds a file of a task costs, over every kind read so far (None: none yet)."""
        if self._per_file is not None:
            return self._per_file
        if self._cost:
            return sum(self._cost.values()) / len(self._cost) + self._overhead
        return None

    def _guess(self, job: _Job, average: float | None) -> float:
        """Seconds ``job`` will cost in a task: its kind's reads so far, else the average."""
        return self._guess_kind(job.kind, average)

    def _guess_kind(self, kind: str, average: float | None) -> float:
        cost = self._cost.get(kind)
        if cost is not None:
            return cost + self._overhead
        return average or 0.0

    def _learn(self, jobs: list[_Job], result: BatchResult) -> None:
        """What a task says of its kinds' reads (each read's own time, the same whether the
        read pool started with the task or not) and, from a task whose pool was running, of
        what a file costs beyond its read (handing it over, the sync, the rename)."""
        reads: dict[str, list[float]] = {}
        total = 0.0
        for job, outcome in zip(jobs, result.outcomes, strict=True):
            total += outcome.ms / 1000
            acc = reads.setdefault(job.kind, [0.0, 0.0])
            acc[0] += outcome.ms / 1000
            acc[1] += 1
        for kind, (seconds, files) in reads.items():
            # Over every read of the kind, each file weighing the same: a worker's first read
            # of a kind carries its reader's imports (0.67 s for one .docx, then 10 ms), and
            # taken task by task, that one file halved the kind's next tasks for a while.
            was_s, was_n = self._read.get(kind, (0.0, 0))
            self._read[kind] = (was_s + seconds, was_n + int(files))
            self._cost[kind] = (was_s + seconds) / (was_n + files)
        if result.warm and jobs:  # a batch that started its read pool says little of reading
            took = result.seconds / len(jobs)
            was_f = self._per_file
            self._per_file = took if was_f is None else 0.7 * was_f + 0.3 * took
            self._overhead = max(0.0, (result.seconds - total) / len(jobs))

    def _settle(self, fut: Any, jobs: list[_Job]) -> Iterator[tuple[ReadTask, Outcome]]:
        """Turn one finished future into its files' outcomes (or into work to do again).

        Its result or error is fetched over the network: a connection that fails meanwhile
        (the scheduler killed, its worker gone) is the cluster's, never the store's (an
        OSError from here once read as "cannot write the store", exit 3): ClusterLost when
        the client has lost its scheduler, else its files are sent again."""
        if fut.status == "cancelled":
            raise self._lost()
        try:
            done = fut.result() if fut.status == "finished" else fut.exception()
        except OSError:
            self._alive()
            fut.release()
            for job in jobs:
                self._queue(job)
            return
        if fut.status == "finished":
            yield from self._results(jobs, done)
        else:
            from distributed import KilledWorker  # (imported by the connection)

            exc = done
            if isinstance(exc, KilledWorker):
                if len(jobs) > 1:
                    self._singles.extend(jobs)  # again one by one: only the culprit is blamed
                else:
                    yield jobs[0].task, _killed(jobs[0].task, str(exc))
            else:
                why = f"a Dask worker failed the batch: {type(exc).__name__}: {exc}"[:300]
                for job in jobs:
                    yield job.task, machine_failure(OCTET, why)
        fut.release()

    def _results(self, jobs: list[_Job], result: BatchResult) -> Iterator[tuple[ReadTask, Outcome]]:
        """A task's outcomes: each file's, or the file queued again where it reads better."""
        self._learn(jobs, result)
        if result.unseen:
            self._good.pop(result.worker, None)  # its own event says why, soon
        unseen = set(result.unseen)
        for i, (job, outcome) in enumerate(zip(jobs, result.outcomes, strict=True)):
            if i in unseen and job.unseen + 1 < UNSEEN_TRIES:
                job.unseen += 1
                self._queue(job)
                continue
            wanted: frozenset[str] = frozenset() if outcome.machine else self._wanted(outcome)
            if wanted and self._better_elsewhere(job, wanted, result):
                self._queue(_Job(job.task, wanted, redone=True, kind=job.kind))
            else:
                if wanted:
                    self.tool_sets[(outcome.reader or outcome.mime, _named(result, wanted))] += 1
                yield job.task, outcome

    def _wanted(self, outcome: Outcome) -> frozenset[str]:
        """The tools the read's reader uses, and those the outcome says it needed."""
        key = (outcome.reader, outcome.mime, outcome.needs)
        wanted = self._wants.get(key)
        if wanted is None:
            reader = reader_named(outcome.reader) if outcome.reader else reader_for(outcome.mime)
            wanted = frozenset(reader.tools if reader else ()) | frozenset(outcome.needs)
            self._wants[key] = wanted
        return wanted

    def _better_elsewhere(self, job: _Job, wanted: frozenset[str], result: BatchResult) -> bool:
        """Whether a worker with more of the tools this read uses (``wanted``) may read it
        (once)."""
        if job.redone:
            return False
        had = len(wanted & frozenset(result.tools.names))
        return any(len(wanted & have) > had for have in self._good.values())

    def _tell_tool_sets(self) -> None:
        """A kind read with different tools in one run: say so, with how many each had."""
        by_reader: dict[str, list[tuple[str, int]]] = {}
        for (reader, named), n in sorted(self.tool_sets.items()):
            by_reader.setdefault(reader, []).append((named, n))
        mixed = {r: sets for r, sets in by_reader.items() if len(sets) > 1}
        if not mixed:
            return
        parts = [
            f"{reader}: "
            + ", ".join(f"{n} with {_words(named)}" for named, n in sorted(sets, key=_most))
            for reader, sets in mixed.items()
        ]
        self._on_event(
            Notice(
                time.time(),
                NoticeKind.DASK_TOOLS,
                "reads of this sweep had different tools on different Dask workers, so their "
                "texts may differ from what one machine would give (" + "; ".join(parts) + ")",
                Level.WARNING,
            )
        )

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
        """Read the workers' new checks, note who left, and size the window."""
        now = time.monotonic()
        if not force and now - self._refreshed < REFRESH_S:
            return
        self._refreshed = now
        with contextlib.suppress(Exception):  # a lost scheduler is noticed by _alive
            self._present = dict(self._client.nthreads())
            events = self._client.get_events(self._topic)
            for _at, msg in events[self._events :]:
                self._heard(WorkerInfo.from_message(msg))
            self._events = len(events)
            for addr in list(self._good):
                if addr not in self._present:
                    del self._good[addr]
                    self._left(addr)
            self._threads = max(1, sum(self._present.get(a, 0) for a in self._good))
            self._reroute()

    def _left(self, addr: str) -> None:
        """A worker that took reads is gone (killed, or its machine lost): say so, once."""
        if not self._started:
            return
        info = self.workers.get(addr)
        on = f" on {info.host}" if info is not None else ""
        self._on_event(
            Notice(
                time.time(),
                NoticeKind.DASK_WORKER,
                f"Dask worker {addr}{on} left mid-sweep: the scheduler runs its tasks again "
                "on the others",
                Level.WARNING,
            )
        )

    def _reroute(self) -> None:
        """Tasks waiting on workers that have all gone, or been refused: send them again.

        A task restricted to workers that all died waits for them for ever (a restarted
        worker has a new address), so Dask never counts it to ``allowed-failures``; the count
        is kept here instead, and a task lost that many times is treated as ``KilledWorker``.
        """
        stuck = [
            f for f, (_jobs, where) in self._flying.items() if not set(where) & set(self._good)
        ]
        allowed = self._allowed
        for fut in stuck:
            if fut.status not in _AGAIN:
                continue  # its answer is in the queue already
            self._again.discard(fut)
            jobs, where = self._flying.pop(fut)
            with contextlib.suppress(Exception):
                self._client.cancel([fut], reason="its workers are gone")
            lost = not set(where) & set(self._present)
            for job in jobs:
                job.losses += 1 if lost else 0
                if job.losses <= allowed:
                    self._queue(job)
                elif len(jobs) > 1:  # again one by one: only the culprit is blamed
                    self._singles.append(
                        _Job(job.task, job.tools, job.redone, job.unseen, kind=job.kind)
                    )
                else:
                    workers = count(job.losses, "worker")
                    why = f"lost {workers} reading it (allowed-failures {allowed})"
                    self._ready.append((job.task, _killed(job.task, why)))

    # -- closing --------------------------------------------------------------------------

    def release(self) -> None:
        """No run follows (the sweeper's last run has read everything): begin letting the
        workers go now, in a thread (the plugin's teardown on every worker, ~0.1-0.45 s, then
        the client and a LocalCluster closed), while the engine writes the store; :meth:`close`
        waits for it. A run after all closes what is left and connects afresh."""
        if self._releasing is not None or (self._client is None and self._warming is None):
            return
        self._releasing = threading.Thread(
            target=self._disconnect, name="quarry-dask-release", daemon=True
        )
        self._releasing.start()

    def _released(self) -> None:
        """Wait for :meth:`release`'s thread, if one was started."""
        thread, self._releasing = self._releasing, None
        if thread is not None:
            thread.join()

    def close(self) -> None:
        """Stop the read processes on the workers (the plugin's teardown); close the client
        and a LocalCluster; remove the check's files from the store's ``tmp/``."""
        if self._releasing is not None:
            self._released()
        else:
            self._disconnect()
        self._good.clear()
        self._present.clear()
        self.workers.clear()
        self._told.clear()
        self._events = 0
        self._started = False
        if self._token:
            with contextlib.suppress(OSError), folder_of(self.settings.store_dir, "tmp") as tmp:
                for name in os.listdir(tmp):
                    if name == self._token or name.startswith(self._token + "."):
                        with contextlib.suppress(OSError):
                            os.unlink(name, dir_fd=tmp)
            self._token = ""

    def _disconnect(self) -> None:
        """What :meth:`close` asks of the cluster: the plugin's teardown (or, with nothing
        read, the forkservers prestart started stopped), then the client and a LocalCluster
        closed. Touches nothing the engine reads after a run (the workers' tools, the routes)."""
        with contextlib.suppress(BaseException):  # a cluster still starting is closed too
            self._joined()
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            # A LocalCluster's workers close with it, and a closing worker runs the plugin's
            # teardown itself: asking first costs a round of teardowns (~1 s) for nothing.
            if client.status == "running" and cluster is None:
                owned = False
                with contextlib.suppress(Exception):
                    if self._token:
                        client.unregister_worker_plugin(self.settings.plugin)
                        owned = True  # its teardown stopped what prestart started
                if self._prestarted and not owned:  # a sweep with nothing read, or refused
                    with contextlib.suppress(Exception):
                        client.run(dask_worker.stop_unowned)
            self._prestarted = False
            with contextlib.suppress(Exception):
                client.close(timeout=5)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=10)


_AGAIN = ("pending", "lost")
"""A Dask future's states before it is done: "lost" is a finished task whose result went with
its worker before the engine took it, which the scheduler runs again (its done callback has
fired already; taken as a failure, its files were machine failures, never read)."""


def _heavy_first(todo: deque[_Job]) -> None:
    """Put a queue's files of each kind together, kinds of bigger files (on average) first,
    as the local pool does (:func:`engine.isolate._by_kind`): a kind's first-use imports then
    happen on few workers, and the last tasks are of the light files."""
    if len(todo) < 2:
        return
    sums: dict[str, list[int]] = {}
    for job in todo:
        acc = sums.setdefault(job.kind, [0, 0])
        acc[0] += job.task.size
        acc[1] += 1
    if len(sums) < 2:
        return
    rank = {kind: (-size / files, kind) for kind, (size, files) in sums.items()}
    jobs = sorted(todo, key=lambda j: rank[j.kind])  # stable: a kind's order is kept
    todo.clear()
    todo.extend(jobs)


_KIND_TOOLS: dict[str, frozenset[str]] = {}


def _kind_tools(path: str, key: str | None = None) -> frozenset[str]:
    """The tools the reader of a file's kind (as its name says: ``key``, its
    :func:`~engine.detect.name_key` when known) can use."""
    key = name_key(path) if key is None else key
    tools = _KIND_TOOLS.get(key)
    if tools is None:
        mime = by_name(path)
        reader = reader_for(mime) if mime else None
        tools = _KIND_TOOLS[key] = frozenset(reader.tools if reader else ())
    return tools


_KIND_NAMES: dict[str, str] = {}


def _kind_name(path: str) -> str:
    """A file's kind as its name says: its reader's name, else its type, else its name's."""
    key = name_key(path)
    got = _KIND_NAMES.get(key)
    if got is None:
        mime = by_name(path)
        reader = reader_for(mime) if mime else None
        got = _KIND_NAMES[key] = reader.name if reader else (mime or key or OCTET)
    return got


def _named(result: BatchResult, wanted: frozenset[str]) -> str:
    """The tools of ``wanted`` the batch's worker had, with versions."""
    return ";".join(f"{t.name}={t.version}" for t in result.tools.found if t.name in wanted)


def _words(named: str) -> str:
    return named.replace(";", ", ").replace("=", " ") or "none of its tools"


def _most(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def _tools_line(addr: str, info: WorkerInfo) -> str:
    found = ", ".join(f"{t.name} {t.version}" for t in info.tools.found) or "none"
    missing = ", ".join(info.tools.missing) or "none"
    return f"Dask worker {addr} on {info.host}: tools {found}; missing {missing}"


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


def _killed(task: ReadTask, why: str) -> Outcome:
    """``error/crashed`` for a file whose task kept killing Dask workers."""
    # The worker died before it could say what it detected; the name of the type is lost.
    return _w.failed(task, None, Reason.CRASHED, f"killed Dask workers: {why}"[:300])


def _key() -> str:
    return secrets.token_hex(8)


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _quiet_logs() -> None:
    """distributed logs every reconnection attempt with a traceback; the engine reports the
    outcome itself (a Notice, or ClusterLost) in one line."""
    for name in ("distributed", "distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
