"""Runs reads in worker processes, never in the engine's (or the dashboard's) process.

A supervised pebble pool: workers are reused across files, recycled after ``max_tasks`` reads,
replaced when they die. Each read has a wall-time limit (the worker is killed past it) and
each worker an address-space limit (RLIMIT_AS). Whatever happens to a worker becomes an
:class:`engine.extract.Outcome` with a named reason: ``timeout``, ``memory`` or ``crashed``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import resource
import signal
from concurrent.futures import Future

import pebble

from engine.detect import detect
from engine.extract import Outcome, ReadTask, read_one
from engine.limits import Limits
from engine.records import Reason, Status

GRACE_S = 2.0
"""Time a worker gets past the read's own deadline (readers stop themselves first)."""


def _init_worker(memory_bytes: int) -> None:
    """Runs in each new worker: bound its memory, make it the OOM killer's first choice."""
    if memory_bytes > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("1000")
    # Ctrl-C goes to the whole process group; the engine decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class MachineFailure(Exception):
    """The pool itself failed (could not start, broke): not the file's fault."""


class ReadPool:
    """A pool of worker processes that read files under time and memory bounds."""

    def __init__(self, limits: Limits, workers: int = 0, max_tasks: int = 500) -> None:
        self.limits = limits
        self.workers = workers or os.cpu_count() or 1
        try:
            self._pool = pebble.ProcessPool(
                max_workers=self.workers,
                max_tasks=max_tasks,
                initializer=_init_worker,
                initargs=(limits.memory_bytes,),
                # Not fork: a forked worker would inherit the store's lock (so a killed engine's
                # orphans would lock out the next writer) and the engine's whole heap (which
                # counts against the worker's RLIMIT_AS).
                context=multiprocessing.get_context("forkserver"),
            )
        except OSError as exc:
            raise MachineFailure(f"cannot start worker processes: {exc}") from exc

    def submit(self, task: ReadTask) -> Future[Outcome]:
        """Schedule one read; the future's result is always an Outcome (see :func:`outcome_of`)."""
        try:
            fut: Future[Outcome] = self._pool.schedule(
                read_one, args=(task,), timeout=task.limits.timeout_s + GRACE_S
            )
        except RuntimeError as exc:
            raise MachineFailure(f"worker pool stopped: {exc}") from exc
        return fut

    def close(self) -> None:
        """Stop the workers (killing any read in flight)."""
        self._pool.stop()  # type: ignore[no-untyped-call]
        self._pool.join(timeout=10)


def outcome_of(fut: Future[Outcome], task: ReadTask) -> Outcome:
    """The Outcome of a finished future, turning a dead or killed worker into a verdict."""
    try:
        return fut.result()
    except concurrent.futures.TimeoutError:
        return _failed(task, Reason.TIMEOUT, f"read took longer than {task.limits.timeout_s:g} s")
    except pebble.ProcessExpired as exc:
        code = exc.exitcode
        if code == -signal.SIGKILL:
            # RLIMIT_AS usually surfaces as MemoryError in the worker; a SIGKILL is the kernel's
            # OOM killer (we set oom_score_adj=1000), so memory is the likeliest cause.
            return _failed(task, Reason.MEMORY, "worker was killed (out of memory)")
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return _failed(task, Reason.CRASHED, f"worker died while reading ({how})")
    except concurrent.futures.CancelledError:
        raise
    except Exception as exc:  # pickling or pool errors: still one record, never the sweep
        return _failed(task, Reason.CRASHED, f"worker failed: {type(exc).__name__}: {exc}"[:300])


def _failed(task: ReadTask, reason: str, message: str) -> Outcome:
    from pathlib import Path

    try:
        mime = detect(Path(task.path))
    except Exception:  # detection of a file that just killed a worker is best effort
        mime = "application/octet-stream"
    return Outcome(Status.ERROR, mime, reason, error=message)
