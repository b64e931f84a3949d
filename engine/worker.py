"""The worker process: it bounds itself, then reads the batches of files the pool sends.

Runs in a child of the engine (started by :class:`engine.isolate.ReadPool`), never in the
engine's own process. The conversation over its pipe, each message a frozen dataclass of
this module (:data:`ToWorker`, :data:`ToPool`), pickled as it is::

    pool -> worker   Batch                      files to read in turn
                     Stop()                     leave now
    worker -> pool   Ready()                    bounds set, readers imported
                     Done((Outcome, ...))       the next files of the batch were read, in order
                     Bye()                      the worker leaves on its own (recycled)

Each side writes with one function and reads with one (:func:`to_worker` and
:func:`from_pool` on the worker's side of the pool; :func:`send` and :func:`from_worker` the
other way), and the reading function is where a message is told apart from anything else.

Outcomes travel a few dozen at a time (:data:`SEND_EVERY` files, or :data:`SEND_AFTER_S`),
not one message per file. Which file is being read is not a message at all: the worker writes
it into its :class:`Slot`, a small block of memory it shares with the pool (batch number, index
in the batch, reading or not, when the read began, and the MIME type once detected). The pool
looks at the slot only when the worker dies or is past its deadline, and blames a file only
when the slot says the worker died reading it; the files it had read but not yet reported, and
those after it, are sent again. A worker that dies before it began any file of its first batch
failed on its own (a machine failure), and its files are sent again.

A worker dies with the engine, whatever kills the engine: it closes the forkserver's liveness
pipe it inherits (else the forkserver, its parent, would outlive the engine for as long as the
worker lives), so the forkserver exits with the engine and the parent-death signal
(``PR_SET_PDEATHSIG``) kills the worker; its guard (a shell reading a pipe only the worker
holds, :func:`~engine.readers.base.guard_group`) then kills the tools it runs. It also
bounds each read itself: past :func:`own_bound` a SIGALRM ends it (the pool reads that exit as
``error/timeout``), so no read outlives its budget even when no engine is left to kill it.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import struct
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

from engine import scratch
from engine.extract import Ident, Outcome, ReadTask, read_one
from engine.limits import KILL_GRACE_S, Limits
from engine.passwords import NO_PASSWORDS, Passwords
from engine.readers import registry
from engine.readers.base import die_with_parent, guard_group
from engine.records import Reason, Status
from engine.store import folders_held
from engine.tools import ToolSet

MEMORY_EXIT = 86
"""Exit code of a worker whose MemoryError escaped a read (the pool records error/memory)."""
INIT_EXIT = 87
"""Exit code of a worker that could not set itself up (a machine failure, not a file's)."""
OWN_BOUND_EXTRA_S = 1.0
"""Seconds past the pool's own kill time at which a read ends itself (the pool acts first)."""


SEND_EVERY = 64
"""Outcomes a worker gathers before it sends them (the batch's end sends the rest)."""
SEND_AFTER_S = 0.05
"""Longest a finished outcome waits in the worker before it is sent."""
RECYCLE_RSS = 512 * 1024 * 1024
"""A worker whose peak resident memory passed this leaves after its read (a fresh one comes):
a big read leaves a heap that small reads would inherit."""
RSS_CHECK_BYTES = 1 << 20
"""Files at least this big are followed by a look at the worker's peak memory."""
RSS_CHECK_MS = 50
"""Reads at least this long are followed by a look at the worker's peak memory."""
SLOT_BYTES = 256
_HEAD = struct.Struct("<qqqd")  # batch number, index, reading (0/1), monotonic start
_MIME_AT = _HEAD.size


class Slot:
    """The worker's note of the file it is reading, in memory shared with its pool.

    Written by the worker before and after each read (no system call), read by the pool when
    the worker died or ran past its deadline. ``CLOCK_MONOTONIC`` is one clock for every
    process of the machine, so the start time means the same on both sides.
    """

    def __init__(self, buf: Any) -> None:
        self.buf = buf
        """A ``multiprocessing`` RawArray of :data:`SLOT_BYTES` bytes (picklable to a child)."""

    @classmethod
    def make(cls, ctx: Any) -> Slot:
        """A fresh slot from ``ctx``'s shared memory."""
        return cls(ctx.RawArray("B", SLOT_BYTES))

    def begin(self, batch: int, index: int) -> None:
        """The worker starts reading file ``index`` of batch ``batch``."""
        self.buf[_MIME_AT] = 0
        _HEAD.pack_into(self.buf, 0, batch, index, 1, time.monotonic())

    def mime(self, mime: str) -> None:
        """The file being read was detected as ``mime``."""
        raw = mime.encode("ascii", "replace")[: SLOT_BYTES - _MIME_AT - 1]
        self.buf[_MIME_AT + 1 : _MIME_AT + 1 + len(raw)] = raw
        self.buf[_MIME_AT] = len(raw)

    def end(self) -> None:
        """The read finished (its Outcome is the worker's to send)."""
        struct.pack_into("<q", self.buf, 16, 0)

    def batch(self) -> int:
        """The number of the last batch the worker began a file of (0: none yet)."""
        return int(_HEAD.unpack_from(self.buf, 0)[0])

    def reading(self) -> tuple[int, int, float, str | None] | None:
        """(batch, index, start, MIME or None) of the read under way; None between reads."""
        batch, index, busy, begun = _HEAD.unpack_from(self.buf, 0)
        if not busy:
            return None
        n = self.buf[_MIME_AT]
        raw = bytes(self.buf[_MIME_AT + 1 : _MIME_AT + 1 + n])
        return batch, index, begun, raw.decode("ascii", "replace") if n else None


def own_bound(limits: Limits) -> float:
    """Seconds after which a read ends its own worker (SIGALRM): after the pool's kill."""
    return limits.timeout_s + KILL_GRACE_S + OWN_BOUND_EXTRA_S


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """What a worker needs to start: fixed for its lifetime."""

    memory_bytes: int
    """RLIMIT_AS of the worker, bytes (0: no limit)."""
    extra_readers: tuple[str, ...]
    """The engine's extra readers (:func:`engine.readers.registry.extra`: the tests')."""
    max_reads: int
    """Reads after which the worker leaves, to be replaced by a fresh one."""
    slot: Any = None
    """The worker's :class:`Slot` buffer, shared with its pool (None: no one is told)."""
    scratch: str = ""
    """The temporary folder the pool made for this worker and removes once it is gone (see
    :mod:`engine.scratch`); empty: the system's."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Files for one worker to read in turn, sharing bounds, tools and the text folder."""

    limits: Limits
    """Bounds of each read."""
    tools: ToolSet
    """Tools the reads may use."""
    tmp_dir: str
    """Folder for finished texts."""
    items: tuple[tuple[str, str, int, Ident | None], ...]
    """(path, sha256, size, ident) of each file, as in its ReadTask."""
    number: int = 0
    """The pool's number for this batch (written in the slot while its files are read)."""
    store_dir: str = ""
    """The store whose ``extract/`` finished texts are renamed into (see ReadTask)."""
    passwords: Passwords = NO_PASSWORDS
    """Passwords for encrypted files (an operator's retry), as in each ReadTask; never shown."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Pool -> worker: leave now (the pool is closing)."""


@dataclass(frozen=True, slots=True)
class Ready:
    """Worker -> pool: bounds set, readers imported; batches may come."""


@dataclass(frozen=True, slots=True)
class Done:
    """Worker -> pool: the next files of its batches were read, in the order sent."""

    outcomes: tuple[Outcome, ...]
    """One Outcome per file, in the order the files were sent."""


@dataclass(frozen=True, slots=True)
class Bye:
    """Worker -> pool: the worker leaves on its own (recycled); it takes no more files."""


ToWorker = Batch | Stop
"""What the pool sends a worker."""
ToPool = Ready | Done | Bye
"""What a worker sends its pool."""


class PipeError(OSError):
    """Something came down a worker's pipe that is no message of the protocol."""


def to_worker(conn: Connection, msg: ToWorker) -> None:
    """The pool sends ``msg`` to a worker (a batch is small: one ``write``)."""
    conn.send(msg)


def from_pool(conn: Connection) -> ToWorker:
    """The worker's next message from its pool (blocks)."""
    msg = conn.recv()
    if not isinstance(msg, Batch | Stop):
        raise PipeError(f"not a pool's message: {type(msg).__name__}")
    return msg


def from_worker(conn: Connection) -> ToPool:
    """The pool's next message from a worker (call it when ``conn.poll()`` says one is there)."""
    msg = conn.recv()
    if not isinstance(msg, Ready | Done | Bye):
        raise PipeError(f"not a worker's message: {type(msg).__name__}")
    return msg


def main(conn: Connection, cfg: WorkerConfig) -> None:
    """The worker's entry point: set bounds, then serve batches until told to stop."""
    try:
        bound_self(cfg)
    except Exception:  # any set-up failure is the machine's; the exit code says so
        os._exit(INIT_EXIT)
    try:
        _serve(conn, cfg)
    except MemoryError:
        os._exit(MEMORY_EXIT)
    except (EOFError, OSError):  # the engine went away: nothing left to answer
        os._exit(0)


def bound_self(cfg: WorkerConfig) -> None:
    """Lead a process group, cap memory, die with the parent, keep quiet, load readers."""
    os.setpgid(0, 0)  # the pool kills the whole group: the worker and what it started
    release_forkserver()
    die_with_parent(INIT_EXIT)
    guard_group()  # before the OOM score below: the killer is to take a worker, not its guard
    if cfg.memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (cfg.memory_bytes, cfg.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("1000")  # the kernel's OOM killer takes a worker before the engine
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # own_bound: ends the worker even in C code
    if cfg.scratch:  # a read killed mid-way leaves its temporary files where the pool cleans
        scratch.adopt(cfg.scratch)
    _silence()
    registry.use_extra(cfg.extra_readers)
    registry.all_readers()


def release_forkserver() -> None:
    """Let the forkserver exit with the process that started it (the engine, a Dask worker).

    Every forkserver child inherits the write end of the forkserver's "alive" pipe, and the
    forkserver exits only once every holder has closed it. A worker starts no process through
    the forkserver, and holding that end would keep the forkserver, and so this worker (whose
    PDEATHSIG fires when the forkserver dies), alive after a SIGKILL of the pool's owner: a
    hung read would outlive it for good.
    """
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(fd, int):
        with contextlib.suppress(OSError):
            os.close(fd)
        setattr(server, "_forkserver_alive_fd", None)  # noqa: B010 (a private attribute)


def _silence() -> None:
    """Send the worker's stdout and stderr to /dev/null: a flood must not reach a terminal."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


_LENGTH = struct.Struct("!i")
"""The length header of a message on a ``multiprocessing`` pipe (what ``Connection.recv``
reads first)."""


def send(conn: Connection, msg: ToPool) -> None:
    """A worker sends ``msg`` to its pool: ``conn.send(msg)`` as one ``write`` of the header
    and the pickle together.

    ``Connection.send`` writes a message over 16 KiB as two: its length, then its bytes. A
    batch of outcomes is often that big, and a worker that loses its core between the two
    writes leaves the engine blocked in ``recv`` on the half it has (0.5-0.7 s of a cold
    sweep's wall). The engine reads the same bytes either way.
    """
    data = ForkingPickler.dumps(msg)
    if len(data) > 0x7FFFFFFF:  # the other framing (never a batch of outcomes)
        conn.send(msg)
        return
    view = memoryview(_LENGTH.pack(len(data)) + data)
    fd = conn.fileno()
    while view:
        view = view[os.write(fd, view) :]


def _serve(conn: Connection, cfg: WorkerConfig) -> None:
    slot = Slot(cfg.slot) if cfg.slot is not None else None
    started = slot.mime if slot is not None else None
    send(conn, Ready())
    reads = 0
    while reads < cfg.max_reads:
        batch = from_pool(conn)
        if isinstance(batch, Stop):
            return
        done: list[Outcome] = []
        sent = time.monotonic()
        with folders_held():  # a batch's texts go through folders opened once
            for index, (path, sha, size, ident) in enumerate(batch.items):
                task = ReadTask(
                    path,
                    sha,
                    batch.limits,
                    batch.tools,
                    batch.tmp_dir,
                    size,
                    ident,
                    batch.store_dir,
                    passwords=batch.passwords,
                )
                if slot is not None:
                    slot.begin(batch.number, index)
                signal.setitimer(signal.ITIMER_REAL, own_bound(batch.limits))
                outcome = read_one(task, started=started)
                signal.setitimer(signal.ITIMER_REAL, 0)
                if slot is not None:
                    slot.end()
                done.append(outcome)
                reads += 1
                # After a MemoryError the heap is not trusted; after max_reads, or a read that
                # grew the heap past RECYCLE_RSS, time to go.
                spent = reads >= cfg.max_reads
                if outcome.reason == Reason.MEMORY or spent or _grown(size, outcome):
                    send(conn, Done(tuple(done)))
                    send(conn, Bye())
                    return
                now = time.monotonic()
                if len(done) >= SEND_EVERY or now - sent >= SEND_AFTER_S:
                    send(conn, Done(tuple(done)))
                    done, sent = [], now
        if done:
            send(conn, Done(tuple(done)))
    send(conn, Bye())


def _grown(size: int, outcome: Outcome) -> bool:
    """Whether this worker's peak resident memory passed :data:`RECYCLE_RSS`.

    Asked only after a read that could have grown it (a big file, or a long read):
    ``getrusage`` costs a few hundred microseconds on some kernels, more than a small read.
    """
    if size < RSS_CHECK_BYTES and outcome.ms < RSS_CHECK_MS:
        return False
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 > RECYCLE_RSS


# -- what a worker's end means (the pool's side) ------------------------------------------


def died(task: ReadTask, mime: str | None, code: int | None) -> Outcome:
    """The Outcome of a read whose worker exited with ``code``."""
    if code == -signal.SIGALRM:  # the read's own bound (the engine was slow to kill it)
        took = f"read took longer than {task.limits.timeout_s:g} s"
        return failed(task, mime, Reason.TIMEOUT, took)
    if code == MEMORY_EXIT:
        limit = task.limits.memory_bytes
        return failed(task, mime, Reason.MEMORY, f"ran out of memory (limit {limit} bytes)")
    if code == -signal.SIGKILL:
        # Not our kill (that is a timeout): the kernel's OOM killer, which we aim at workers.
        return failed(task, mime, Reason.MEMORY, "worker was killed by the system (out of memory)")
    return failed(task, mime, Reason.CRASHED, f"worker died while reading ({how(code)})")


def failed(task: ReadTask, mime: str | None, reason: str, message: str) -> Outcome:
    """An error Outcome for a read that lost its worker, naming the reader it would use."""
    mime = mime or "application/octet-stream"
    reader = registry.reader_for(mime)
    name, version = (reader.name, reader.version) if reader is not None else (None, 0)
    return Outcome(
        Status.ERROR, mime, reason, reader=name, v=version, error=message, lost_worker=True
    )


def how(code: int | None) -> str:
    """A worker's exit code in words."""
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"exit code {code}"
