"""The Dask side of a distributed sweep: what runs inside a Dask worker process.

A Dask task never reads a document itself. :func:`read_batch` hands its batch to a
:class:`~engine.isolate.ReadPool` that lives in the Dask worker (one per worker thread), so a
read on a cluster runs exactly as a local one does: in a forkserver child under the same wall
time and address-space bounds, with the same verdicts (``error/timeout``, ``error/memory``,
``error/crashed``) and culprit-only blame. A segfaulting reader costs a read child, never the
Dask worker.

What differs from a local read:

- the tool set is the worker's own (discovered on its ``PATH``, minus ``--without``, empty
  with ``--no-external``), re-checked every :data:`TOOLS_TTL_S` seconds, so a worker without
  tesseract gives ``unsupported/needs_tool`` for a scan another worker would OCR;
- each finished text is renamed into the shared store's ``extract/<aa>/<sha256>.txt`` by the
  worker that extracted it (atomic, so two workers writing one hash are harmless), after one
  ``syncfs`` of the store's file system per batch has made the batch's texts durable: the
  engine's own sync covers only its own machine. The Outcome then names the final path.

Nothing here imports dask: these are plain functions that Dask pickles by reference, so every
worker needs the same textquarry installed.
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

from engine.extract import Outcome, ReadTask, machine_failure
from engine.isolate import MAX_READS, ReadPool
from engine.limits import Limits
from engine.mimes import OCTET
from engine.readers import registry
from engine.store import folder_of, open_in, place_text, read_in
from engine.tools import ToolSet, discover

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
    extra_readers: str = ""
    """The engine's ``QUARRY_EXTRA_READERS`` (the fault reader in tests)."""
    max_reads: int = MAX_READS
    """Reads after which a read child is replaced."""


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What a Dask worker reports about itself when a sweep starts."""

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


class _State(threading.local):
    """Per Dask worker thread: a read pool and the tools, made on first use."""

    pool: ReadPool | None = None
    pool_key: tuple[Limits, str, int] | None = None
    tools: ToolSet | None = None
    tools_key: tuple[bool, tuple[str, ...]] | None = None
    tools_at: float = 0.0


_state = _State()


def read_batch(tasks: list[ReadTask], settings: WorkerSettings) -> list[Outcome]:
    """Read ``tasks`` in this worker's read pool; one Outcome per task, in order.

    A file this worker cannot see is the machine's failure (its share is not mounted here),
    never the file's: the engine keeps its earlier record.
    """
    _allow_children()
    tools = worker_tools(settings)
    out: list[Outcome | None] = [None] * len(tasks)
    mine: list[ReadTask] = []
    for i, t in enumerate(tasks):
        if os.path.lexists(t.path):
            mine.append(replace(t, tools=tools))
        else:
            out[i] = machine_failure(OCTET, f"{socket.gethostname()} cannot see {t.path}")
    slots = _seen(out)
    index = {id(t): i for i, t in zip(slots, mine, strict=True)}
    if mine:
        for task, outcome in _pool(mine[0].limits, settings).read(mine):
            out[index[id(task)]] = outcome
        if any(o is not None and o.text_file for o in out):
            _sync(settings.store_dir)
        for i, task in zip(slots, mine, strict=True):
            done = out[i]
            assert done is not None
            # Filed under the hash of what was read (the task's may be empty: not hashed yet).
            out[i] = _placed(done, done.sha256 or task.sha256, settings.store_dir)
    assert all(o is not None for o in out), "the pool answered every task"
    return [o for o in out if o is not None]


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
    if _state.tools is None or _state.tools_key != key or now - _state.tools_at > TOOLS_TTL_S:
        _state.tools = discover(no_external=settings.no_external, without=settings.without)
        _state.tools_key, _state.tools_at = key, now
    return _state.tools


def probe(settings: WorkerSettings, paths: list[str], token: str) -> WorkerInfo:
    """Check that this worker sees the files to read and the store as the engine does.

    ``paths`` are a few of the files to read: where a share is not mounted, a worker sees an
    empty folder (or none) at its path. ``token`` names a file the engine wrote in the store's
    ``tmp/``; the worker answers with a file of its own there, which proves one shared folder
    rather than a local one of the same name.
    """
    unseen = tuple(p for p in paths if not os.path.lexists(p))
    store_ok = False
    with contextlib.suppress(OSError), folder_of(settings.store_dir, "tmp") as tmp:
        if read_in(tmp, token) == token.encode():
            answer = f"{token}.{socket.gethostname()}.{os.getpid()}"
            fd = open_in(tmp, answer, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                os.write(fd, token.encode())
            finally:
                os.close(fd)
            store_ok = True
    problem = None
    try:
        _allow_children()
    except RuntimeError as exc:
        problem = str(exc)
    return WorkerInfo(
        socket.gethostname(), os.getpid(), worker_tools(settings), unseen, store_ok, problem
    )


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run as each worker of a LocalCluster starts.

    A LocalCluster's workers share the engine's terminal, so a Ctrl-C reaches them too; the
    engine handles it (it stops the sweep and closes the cluster), and a worker must neither
    die of it mid-read nor print a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def close_pools() -> None:
    """Stop this thread's read pool (the executor calls it on every worker when it closes)."""
    if _state.pool is not None:
        _state.pool.close()
        _state.pool = None


def _pool(limits: Limits, settings: WorkerSettings) -> ReadPool:
    """This thread's read pool: one read child, since a Dask thread runs one task at a time."""
    key = (limits, settings.extra_readers, settings.max_reads)
    if _state.pool is None or _state.pool_key != key:
        close_pools()
        # The pool hands QUARRY_EXTRA_READERS to its children from this environment.
        if settings.extra_readers:
            os.environ[registry.EXTRA_ENV] = settings.extra_readers
        else:
            os.environ.pop(registry.EXTRA_ENV, None)
        _state.pool = ReadPool(limits, workers=1, max_reads=settings.max_reads)
        _state.pool_key = key
    return _state.pool


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


def _placed(outcome: Outcome, sha256: str, store_dir: str) -> Outcome:
    """Move a finished text into the shared store; the Outcome then names its final place."""
    if outcome.text_file is None:
        return outcome
    tmp = outcome.text_file
    try:
        dest = place_text(store_dir, tmp, sha256, make=True)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return replace(
            outcome,
            text_file=None,
            machine=True,
            error=f"cannot write the text into the shared store: {exc.strerror or exc}",
        )
    return replace(outcome, text_file=dest)
