"""The Dask side of a distributed sweep: what runs inside a Dask worker process.

A Dask task never reads a document itself. :func:`read_batch` hands its batch, whole (one
handoff a task), to a :class:`~engine.isolate.ReadPool` that lives in the Dask worker (one per
worker thread), so a read on a cluster runs exactly as a local one does: in a forkserver child
under the same wall time and address-space bounds, with the same verdicts (``error/timeout``,
``error/memory``, ``error/crashed``) and culprit-only blame. A segfaulting reader costs a read
child, never the Dask worker.

:class:`~engine.executors.dask_plugin.QuarryPlugin` is the sweep's Dask worker plugin
(``distributed.WorkerPlugin``). Dask runs its ``setup`` on every worker of the cluster when the
sweep starts and on every worker that joins later, and its ``teardown`` when the sweep ends (or
the worker closes). ``setup`` checks the worker (:func:`examine`: it sees the roots and the
store, runs the engine's textquarry, and which tools it has) and logs the verdict as a Dask
event the engine reads; the plugin owns the worker's read pools, and ``teardown`` closes them,
whichever thread asks.

What differs from a local read:

- the tool set is the worker's own (discovered on its ``PATH``, minus ``--without``, empty
  with ``--no-external``), re-checked every :data:`TOOLS_TTL_S` seconds; every Outcome names
  it (``Outcome.tools``) and so does the :class:`BatchResult`, so the engine can route a
  kind's reads to workers that have its tools and read again what a worker without them read;
- each finished text is renamed into the shared store's ``extract/<aa>/<sha256>.txt`` by the
  read child that extracted it, as locally (atomic, so two workers writing one hash are
  harmless), and one ``syncfs`` of the store's file system per batch makes the batch's texts
  durable before it answers: the engine's own sync covers only its own machine. The Outcome
  names the final path.

This module does not import distributed (the plugin's module does, for its base class): the
engine imports it before it connects, and distributed's own import (~0.3 s) then overlaps the
walk. The functions and classes are pickled by reference, so every worker needs the same
textquarry installed.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from engine import __version__, procs
from engine.extract import Outcome, ReadTask, machine_failure
from engine.isolate import MAX_READS, ReadPool
from engine.limits import Limits
from engine.mimes import OCTET
from engine.readers import registry
from engine.store import folder_of, open_in, read_in
from engine.tools import Tool, ToolSet, discover

TOOLS_TTL_S = 60.0
"""Seconds a worker trusts its tool discovery (the watcher re-checks tools every minute)."""


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """What every task of one sweep tells the Dask worker, beside its files."""

    store_dir: str
    """The shared store folder; finished texts are renamed into its ``extract/``."""
    no_external: bool = False
    """``--no-external``: built-in readers only."""
    without: tuple[str, ...] = ()
    """``--without``: tools to act as if missing."""
    fixed_tools: ToolSet | None = None
    """A tool set imposed on every worker (tests); None: each worker discovers its own."""
    extra_readers: tuple[str, ...] = ()
    """The engine's extra readers (:func:`engine.readers.registry.extra`: the tests')."""
    max_reads: int = MAX_READS
    """Reads after which a read child is replaced."""
    plugin: str = ""
    """The name of the sweep's :class:`QuarryPlugin`, which owns the read pools ("": none)."""


@dataclass(frozen=True, slots=True)
class Check:
    """What a worker must show as it joins a sweep (see :func:`examine`)."""

    settings: WorkerSettings
    paths: tuple[str, ...]
    """A few of the files to read, from different folders."""
    token: str
    """The name of a file the engine wrote in the store's ``tmp/``, holding its own name."""
    version: str
    """The engine's textquarry version and reader versions (:func:`code_version`)."""
    topic: str
    """The Dask event topic the verdict is logged under."""


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What a Dask worker reports about itself as it joins a sweep."""

    host: str
    """Host name of the machine the worker runs on."""
    pid: int
    """Process id of the Dask worker."""
    tools: ToolSet
    """The tools its reads will use."""
    unseen: tuple[str, ...]
    """Files to read that it cannot see (a root not mounted, or mounted elsewhere)."""
    store_ok: bool
    """Whether it sees the engine's store: it read the engine's token and wrote its own."""
    problem: str | None = None
    """Why it cannot take part, in words (None: it can)."""
    address: str = ""
    """Its Dask address."""
    answer: str = ""
    """The file it wrote beside the engine's token (the engine checks that it sees it)."""

    @property
    def ok(self) -> bool:
        """Whether it may take reads."""
        return self.problem is None and not self.unseen and self.store_ok

    def message(self) -> dict[str, Any]:
        """The verdict as a Dask event (msgpack: plain values only)."""
        tools = [[t.name, t.path, t.version] for t in self.tools.found]
        return {
            "host": self.host, "pid": self.pid, "tools": tools, "unseen": list(self.unseen),
            "store_ok": self.store_ok, "problem": self.problem, "address": self.address,
            "answer": self.answer,
        }  # fmt: skip

    @classmethod
    def from_message(cls, msg: dict[str, Any]) -> WorkerInfo:
        """The inverse of :meth:`message`."""
        tools = ToolSet(tuple(Tool(str(n), str(p), str(v)) for n, p, v in msg["tools"]))
        return cls(
            str(msg["host"]), int(msg["pid"]), tools, tuple(msg["unseen"]),
            bool(msg["store_ok"]), msg["problem"], str(msg["address"]), str(msg["answer"]),
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one Dask task gives back: an Outcome per file, and who read them with what."""

    outcomes: tuple[Outcome, ...]
    """One per task of the batch, in order."""
    worker: str
    """The Dask address of the worker that read them ("" outside a worker)."""
    tools: ToolSet
    """The tools the reads had."""
    seconds: float
    """Wall time the batch took on the worker (the engine sizes later tasks by it)."""
    unseen: tuple[int, ...] = ()
    """Files (indexes) this worker could not see: the engine reads them elsewhere."""
    warm: bool = True
    """Whether the read pool was running before the batch: a batch that started it (a read
    child, the forkserver's imports) took longer than its files' reading, and the engine does
    not size later tasks by it."""


@runtime_checkable
class Owner(Protocol):
    """What a task asks of the sweep's plugin on its worker
    (:class:`~engine.executors.dask_plugin.QuarryPlugin`, which imports distributed)."""

    pools: Pools

    @property
    def address(self) -> str:
        """The worker's Dask address."""

    def refuse(self, problem: str) -> None:
        """Tell the engine this worker must get no more reads."""


class Pools:
    """A read pool per Dask worker thread (a thread runs one task at a time), closable from
    any thread: Dask runs a plugin's teardown on its event loop, not on the task threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[int, tuple[tuple[Limits, tuple[str, ...], int], ReadPool]] = {}

    def get(self, limits: Limits, settings: WorkerSettings) -> ReadPool:
        """This thread's pool for ``limits``: one read child, handed whole batches."""
        key = (limits, settings.extra_readers, settings.max_reads)
        me = threading.get_ident()
        with self._lock:
            held = self._pools.pop(me, None)
        if held is not None and held[0] == key:
            pool = held[1]
        else:
            if held is not None:
                held[1].close()
            # The pool hands this process's extra readers to its children.
            registry.use_extra(settings.extra_readers)
            pool = ReadPool(limits, workers=1, max_reads=settings.max_reads, share=0)
        with self._lock:
            self._pools[me] = (key, pool)
        return pool

    def running(self, limits: Limits, settings: WorkerSettings) -> bool:
        """Whether this thread's pool for ``limits`` has read before (its child is up)."""
        key = (limits, settings.extra_readers, settings.max_reads)
        with self._lock:
            held = self._pools.get(threading.get_ident())
        return held is not None and held[0] == key

    def close(self) -> None:
        """Stop every thread's read pool (their read children and scratch folders go)."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for _key, pool in pools:
            pool.close()

    def __len__(self) -> int:
        with self._lock:
            return len(self._pools)


_plugins_lock = threading.Lock()
_plugins: set[object] = set()
"""The plugins set up in this worker process: the last one to go stops the forkserver."""
_loose = Pools()
"""The pools of reads run outside a plugin (a direct call, as the unit tests make)."""
_tools_lock = threading.Lock()
_tools: dict[tuple[bool, tuple[str, ...]], tuple[float, ToolSet]] = {}


def enlist(plugin: object) -> None:
    """Count a sweep's plugin set up in this worker process (it owns read pools)."""
    with _plugins_lock:
        _plugins.add(plugin)


def dismiss(plugin: object) -> None:
    """A plugin's pools are closed: the last one to go stops the read forkserver."""
    with _plugins_lock:
        _plugins.discard(plugin)
        last = not _plugins and not len(_loose)
    if last:
        _stop_forkserver()


def code_version() -> str:
    """What must match between the engine and a worker: textquarry's version and every
    reader's (a reader of another version would give records of another version)."""
    # Extra readers (the tests' fault reader) travel with the settings: not compared.
    readers = ",".join(sorted(f"{r.name}={r.version}" for r in registry.builtin_readers()))
    return f"textquarry {__version__} ({readers})"


def read_batch(tasks: list[ReadTask], settings: WorkerSettings) -> BatchResult:
    """Read ``tasks`` in this worker's read pool, handed over whole; one Outcome per task.

    A file this worker cannot see (its share not mounted here) is the machine's failure,
    never the file's; the batch names it in ``unseen`` and the engine reads it elsewhere, and
    the worker is refused further reads (``QuarryPlugin.refuse``).
    """
    began = time.monotonic()
    _allow_children()
    plugin = _plugin(settings.plugin) if settings.plugin else None
    pools = plugin.pools if plugin is not None else _loose
    tools = worker_tools(settings)
    out: list[Outcome | None] = [None] * len(tasks)
    mine: list[ReadTask] = []
    unseen: list[int] = []
    for i, t in enumerate(tasks):
        if os.path.lexists(t.path):
            mine.append(replace(t, tools=tools))
        else:
            unseen.append(i)
            out[i] = machine_failure(OCTET, f"{socket.gethostname()} cannot see {t.path}")
    if unseen and plugin is not None:
        plugin.refuse(f"cannot see {tasks[unseen[0]].path}")
    slots = _seen(out)
    index = {id(t): i for i, t in zip(slots, mine, strict=True)}
    warm = bool(mine) and pools.running(mine[0].limits, settings)
    if mine:
        for task, outcome in pools.get(mine[0].limits, settings).read(mine):
            out[index[id(task)]] = outcome
        # The read child renamed each text into the store's extract/ itself, under the hash
        # of what it read (as in the local pool); a task without a store left its text in
        # tmp/ for the engine (one to compare with the stored text, verify, or one that may
        # replace a text kept records had). Durable before the engine files a record naming
        # any of them: the batch answers only once they are synced.
        if any(o is not None and o.text_file for o in out):
            _sync(settings.store_dir)
    named = tools.named
    outcomes = tuple(replace(o, tools=named) for o in out if o is not None)
    assert len(outcomes) == len(tasks), "the pool answered every task"
    worker = plugin.address if plugin is not None else ""
    took = time.monotonic() - began
    return BatchResult(outcomes, worker, tools, took, tuple(unseen), warm)


def _plugin(name: str) -> Owner | None:
    """The sweep's plugin on this Dask worker (None: not in a worker, or not registered)."""
    import distributed  # (loaded already in a worker)

    try:
        worker = distributed.get_worker()
    except ValueError:
        return None
    plugin = worker.plugins.get(name)
    return plugin if isinstance(plugin, Owner) else None


def _sync(store_dir: str) -> None:
    """Make this machine's writes to the store's file system durable: one call per batch.

    ``syncfs`` flushes one file system, where an fsync per small text would cost a disk
    round trip each; without it (not Linux) the texts are flushed one by one.
    """
    try:
        fd = os.open(store_dir, os.O_RDONLY)
    except OSError:
        return  # the renames below fail too, and say so
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if getattr(libc, "syncfs", None) is None or libc.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def _seen(out: list[Outcome | None]) -> list[int]:
    """Indexes of the tasks still to read (those without an answer yet)."""
    return [i for i, o in enumerate(out) if o is None]


def worker_tools(settings: WorkerSettings) -> ToolSet:
    """The tools this worker's reads use (discovered here, cached for a minute)."""
    if settings.fixed_tools is not None:
        return settings.fixed_tools
    key = (settings.no_external, settings.without)
    now = time.monotonic()
    with _tools_lock:
        held = _tools.get(key)
        if held is None or now - held[0] > TOOLS_TTL_S:
            held = _tools[key] = (now, discover(no_external=key[0], without=key[1]))
    return held[1]


def examine(check: Check) -> WorkerInfo:
    """Check that this worker can take the sweep's reads, as the engine would read them.

    ``check.paths`` are a few of the files to read: where a share is not mounted, a worker
    sees an empty folder (or none) at its path. ``check.token`` names a file the engine wrote
    in the store's ``tmp/``; the worker answers with a file of its own there, which the engine
    looks for: a private folder of the same name (a copy of the store) cannot do both. The
    worker must run the engine's textquarry (:func:`code_version`) and may start read
    processes. Its tools are reported, whatever they are.
    """
    settings = check.settings
    unseen = tuple(p for p in check.paths if not os.path.lexists(p))
    store_ok, answer = False, ""
    with contextlib.suppress(OSError), folder_of(settings.store_dir, "tmp") as tmp:
        if read_in(tmp, check.token) == check.token.encode():
            answer = f"{check.token}.{socket.gethostname()}.{os.getpid()}"
            fd = open_in(tmp, answer, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            try:
                os.write(fd, check.token.encode())
            finally:
                os.close(fd)
            store_ok = True
    problem = None
    try:
        _allow_children()
        # The read children's forkserver imports every reader (~0.5 s): started now, it is
        # ready by the first task instead of delaying it.
        procs.start_forkserver(procs.worker_context())
    except RuntimeError as exc:
        problem = str(exc)
    mine = code_version()
    if mine != check.version:
        problem = f"runs {mine}, not the engine's {check.version}"
    return WorkerInfo(
        socket.gethostname(),
        os.getpid(),
        worker_tools(settings),
        unseen,
        store_ok,
        problem,
        answer=answer,
    )


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run as each worker of a LocalCluster starts.

    A LocalCluster's workers share the engine's terminal, so a Ctrl-C reaches them too; the
    engine handles it (it stops the sweep and closes the cluster), and a worker must neither
    die of it mid-read nor print a traceback. The read children's forkserver starts here too,
    so that its imports overlap the engine connecting and checking the workers.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(RuntimeError):  # a daemonic worker: its check will say so
        _allow_children()
        procs.start_forkserver(procs.worker_context())


def prestart() -> None:
    """Start this worker's read forkserver now, ahead of the sweep's check: its imports (every
    reader, a second or more on a busy machine) then overlap the engine's walk, plan and check
    instead of delaying the first task. Run by the engine (``Client.run``) once connected."""
    with contextlib.suppress(RuntimeError):  # a daemonic worker: its check will say so
        _allow_children()
        procs.start_forkserver(procs.worker_context())


def stop_unowned() -> None:
    """Stop the forkserver :func:`prestart` started if no sweep's plugin came to own it (a
    sweep that had nothing to read, or was refused before its check)."""
    with _plugins_lock:
        owned = bool(_plugins) or bool(len(_loose))
    if not owned:
        _stop_forkserver()


def _stop_forkserver() -> None:
    """Stop the forkserver the read children came from (it holds every reader's imports, the
    bulk of a read pool's memory); the next pool starts it again. multiprocessing offers no
    public way: ``_stop`` is what its own tests use."""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if callable(stop):
        with contextlib.suppress(Exception):
            stop()


def close_pools() -> None:
    """Stop the read pools of reads run outside a plugin (direct calls: the unit tests)."""
    _loose.close()


def _allow_children() -> None:
    """Let this Dask worker start read children even when its nanny made it daemonic.

    multiprocessing refuses children to daemonic processes because they would outlive a
    terminated parent. Ours cannot: a read child dies with its forkserver (PR_SET_PDEATHSIG),
    which exits with this worker, and the pool kills every child's process group itself.
    """
    proc = multiprocessing.current_process()
    if proc.daemon:
        config = getattr(proc, "_config", None)
        if not isinstance(config, dict):
            raise RuntimeError(
                "this Dask worker is daemonic and cannot start read processes: "
                "start it with DASK_DISTRIBUTED__WORKER__DAEMON=False"
            )
        config["daemon"] = False
