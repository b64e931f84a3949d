"""Where reads run: the local worker pool (the default) or a Dask cluster.

``--executor`` takes one of::

    local               the supervised local pool (engine.isolate.ReadPool)
    dask-local[:N]      a Dask LocalCluster of N worker processes on loopback (default: cores)
    dask://HOST:PORT    an existing Dask scheduler; its workers must see the roots and the
                        store at the same paths as this machine

dask and distributed are an optional extra (``pip install 'textquarry[dask]'``): nothing in
this package imports them until a Dask executor is asked for, and asking without them is a
:class:`~engine.errors.UsageError` that says how to install them.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass

from engine.errors import QuarryError, UsageError
from engine.executor import Executor, ExecutorFactory
from engine.limits import Limits
from engine.readers import registry
from engine.tools import ToolSet

INSTALL_HINT = "pip install 'textquarry[dask]'"
"""How to get the Dask executor's dependencies."""
_REMOTE = re.compile(r"^dask://(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\s]+):(?P<port>\d{1,5})/?$")
_LOCAL = re.compile(r"^dask-local(?::(?P<n>\d+))?$")


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """A parsed ``--executor`` value."""

    kind: str
    """``local``, ``dask-local`` or ``dask``."""
    workers: int = 0
    """``dask-local``: worker processes of the LocalCluster."""
    address: str = ""
    """``dask``: the scheduler's address, ``tcp://HOST:PORT``."""

    @property
    def is_dask(self) -> bool:
        """Whether reads run on Dask."""
        return self.kind != "local"

    def __str__(self) -> str:
        if self.kind == "dask-local":
            return f"dask-local:{self.workers}"
        if self.kind == "dask":
            return "dask://" + self.address.removeprefix("tcp://")
        return "local"


class ClusterRefused(QuarryError):
    """Raised when a cluster cannot take the sweep: no scheduler or workers answer, or a
    worker cannot see a root or the store. Nothing was read; the CLI exits 1."""


class ClusterLost(QuarryError):
    """Raised when the scheduler is lost mid-sweep: the run stops before anything is written,
    so the previous store stays as it was (and the lock is released on the way out)."""


LOCAL = ExecutorSpec("local")
"""The default: reads in the local supervised pool."""


def parse_executor(text: str) -> ExecutorSpec:
    """Parse an ``--executor`` value; a bad one is a UsageError naming the accepted forms."""
    text = text.strip()
    if text in ("", "local"):
        return LOCAL
    if m := _LOCAL.match(text):
        n = int(m["n"]) if m["n"] is not None else (os.cpu_count() or 1)
        if n < 1:
            raise UsageError("--executor dask-local:N needs N of at least 1")
        return ExecutorSpec("dask-local", workers=n)
    if m := _REMOTE.match(text):
        port = int(m["port"])
        if not 0 < port < 65536:
            raise UsageError(f"--executor {text}: port {port} is out of range")
        return ExecutorSpec("dask", address=f"tcp://{m['host']}:{port}")
    raise UsageError(f"--executor {text!r}: expected local, dask-local[:N] or dask://HOST:PORT")


def require_dask() -> None:
    """Import dask and distributed, or say how to install them (a UsageError)."""
    for name in ("dask", "distributed"):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise UsageError(
                f"the Dask executor needs the {name} package, which is not installed: "
                f"{INSTALL_HINT}"
            ) from exc


def dask_factory(
    spec: ExecutorSpec,
    *,
    no_external: bool = False,
    without: tuple[str, ...] = (),
    tools: ToolSet | None = None,
) -> ExecutorFactory:
    """What makes a :class:`~engine.executors.dask_client.DaskExecutor` for ``spec``.

    Imports dask here, once asked (a UsageError with the install command when it is missing).
    ``no_external`` and ``without`` shape each worker's own tool discovery; ``tools``, when
    given, is imposed on every worker instead (tests).
    """
    require_dask()
    from engine.executors.dask_client import DaskExecutor
    from engine.executors.dask_worker import WorkerSettings

    def make(_limits: Limits, _workers: int) -> Executor:
        # Bounds travel with each task; the cluster's size is the cluster's (or the spec's).
        settings = WorkerSettings(
            store_dir="",
            no_external=no_external,
            without=without,
            fixed_tools=tools,
            extra_readers=registry.extra(),
        )
        return DaskExecutor(spec, settings)

    return make
