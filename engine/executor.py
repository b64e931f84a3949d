"""The executor seam: what a sweep run needs from whatever runs its reads.

A :class:`~engine.run.Run` never reads a file itself. It hands :class:`~engine.extract.ReadTask`
objects to an :class:`Executor` and takes back one :class:`~engine.extract.Outcome` per task as
each finishes. Today's executor is :class:`engine.isolate.ReadPool` (local worker processes,
supervised without threads); a second one (Dask, issue 13) implements the same four methods.

The contract, for anyone writing an executor:

- **Cheap to make.** A sweeper makes its executor when a run first needs one; start processes,
  clusters or connections on the first :meth:`Executor.submit`, not in ``__init__``.
- **submit(tasks)** queues reads. Each task carries its own bounds (``task.limits``); the
  executor must enforce the wall time (``limits.timeout_s`` plus a short grace, then kill the
  read and everything it started) and run the read in a process that is not the engine's.
- **A run submits a stream.** ``tasks`` may be an iterator that plans each read as it is
  drawn (issues 26/27: 10 million files never become 10 million plans). Draw from it only
  inside :meth:`Executor.finished`, in the thread that iterates it, and only as there is room
  (a few thousand ahead of the reads in flight, never the whole of it): the run plans and
  hashes while the executor draws, and reads start with the first files planned. Drawing
  runs the run's code, which may raise (a stop): let that leave ``finished`` as it is. A
  list (a read sent again) may be queued whole.
- **finished(tick)** yields ``(task, outcome)`` exactly once for every submitted task, in any
  order, until nothing is pending (tasks submitted while iterating are included). It calls
  ``tick`` at least every :data:`TICK_S` seconds while reads run, even when none finishes,
  so the run can flush events and notice a stop request.
- **Verdicts stay the engine's.** A read that finished gives the Outcome that
  :func:`engine.extract.read_one` returned in the worker. A read the executor had to kill or
  lost is answered with :func:`engine.worker.failed` (``Reason.TIMEOUT`` for the wall time) or
  :func:`engine.worker.died` (from the process's exit code), which set ``lost_worker`` so the
  engine's quarantine counts it. Never blame a task that had not begun when its process died:
  send it again.
- **A failure of the executor itself** (workers cannot start, the cluster is gone) raises
  :class:`engine.errors.MachineFailure` from :meth:`Executor.finished`; outcomes yielded before
  it stand, and the run keeps the earlier records of everything else (never blaming a file).
  The sweeper then closes that executor and makes a new one for the next run.
- **cancel()** forgets queued tasks and stops those in flight; their outcomes never come, and
  none of them may reach a later ``finished``.
- **close()** cancels, then releases every process and connection. It may be called twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from engine.events import Listener
from engine.limits import Limits
from engine.tools import ToolSet

if TYPE_CHECKING:  # the reads' types only: a sweep with nothing to read imports no reader
    from engine.extract import Outcome, ReadTask

TICK_S = 0.2
"""Longest wait between calls of ``finished``'s ``tick`` while reads run."""


@runtime_checkable
class Executor(Protocol):
    """Runs bounded reads away from the engine's process; see the module docstring."""

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        """Queue ``tasks`` to be read (in any order, each under its own ``limits``); a
        stream is drawn from by :meth:`finished` as it has room, never whole."""
        ...

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        """Yield each submitted task with its Outcome as it finishes, until none is pending.

        Raises :class:`engine.errors.MachineFailure` when the executor itself fails.
        """
        ...

    def cancel(self) -> None:
        """Drop queued tasks and stop those in flight; their outcomes never come."""
        ...

    def close(self) -> None:
        """Cancel, then release every worker, process and connection."""
        ...


@runtime_checkable
class Announcing(Protocol):
    """An executor with news for the operator (a cluster's dashboard link, its workers)."""

    def listen(self, on_event: Listener) -> None:
        """Send the executor's :class:`~engine.events.Notice` events to ``on_event``."""
        ...


@runtime_checkable
class Warming(Protocol):
    """An executor that can start its slow part (a forkserver's imports, a cluster) now, in
    the background, so that it overlaps the walk and the plan of a sweep that reads everything."""

    def warm(self) -> None:
        """Begin starting, return at once; a failure is raised by the first run instead."""
        ...


@runtime_checkable
class Staffing(Protocol):
    """An executor that can have a worker ready before any read is asked of it (a watcher's
    first change then waits for no worker to start)."""

    def staff(self) -> None:
        """Have a worker ready for the next read (start one if none is)."""
        ...


@runtime_checkable
class Releasing(Protocol):
    """An executor whose workers take a while to let go (a cluster: a round of teardowns on
    every worker), which can begin that in the background once no run follows."""

    def release(self) -> None:
        """No run follows: begin letting the workers go now, in the background, and return at
        once; :meth:`Executor.close` waits for it. A run that comes after all starts afresh."""
        ...


@runtime_checkable
class Distributed(Protocol):
    """An executor whose reads run on other machines, each with a tool set of its own."""

    def worker_tools(self) -> Mapping[str, ToolSet]:
        """Each worker's tools (a name for the worker -> its tools), as last reported."""
        ...


@runtime_checkable
class Routing(Protocol):
    """A distributed executor that sends some kinds of file only to some workers."""

    def routed(self) -> Mapping[str, int]:
        """Kind of file (its reader's name) -> files of it the last run sent only to some of
        the workers (those with the tools it uses)."""
        ...


ON_THIS_MACHINE = "on_this_machine"
"""An executor with this attribute true has its workers on this machine, writing each text
into the store's folder themselves; any other (a cluster, a plug-in) has every text it
reports checked for in the store before its record is filed."""


def on_this_machine(executor: object) -> bool:
    """Whether ``executor`` says its workers write into this machine's store folder."""
    return getattr(executor, ON_THIS_MACHINE, False) is True


ExecutorFactory = Callable[[Limits, int], Executor]
"""Makes an executor from the run's default bounds and a worker count (0: one per core)."""
