"""What ``--executor`` names (:class:`ExecutorSpec`, :func:`parse_executor`) and the errors a
cluster gives: what both the package (:mod:`engine.executors`) and the Dask client
(:mod:`engine.executors.dask_client`) use, kept below both (the client never imports the
package that imports it).
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass

from engine.errors import QuarryError, UsageError

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
    """Say how to install dask and distributed when either is missing (a UsageError).

    Looks them up without importing them: the executor imports them as it connects, in a
    thread, beside the walk (an install that is there but broken is refused then).
    """
    for name in ("dask", "distributed"):
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package broken, or no spec
            found = False
        if not found:
            raise UsageError(
                f"the Dask executor needs the {name} package, which is not installed: "
                f"{INSTALL_HINT}"
            )
