"""The sweep's Dask worker plugin: :class:`QuarryPlugin`, apart from the rest of the worker's
side (:mod:`engine.executors.dask_worker`) because its base class is distributed's.

Only this module imports distributed at its top. The engine imports it once connected (in the
thread that connects, where distributed is imported already), and a Dask worker when it
unpickles a registered plugin; the engine's own modules, the Dask ones included, can then be
imported while distributed's import (~0.3 s) runs beside the walk.
"""

from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import replace
from typing import Any

import distributed

from engine.executors.dask_worker import (
    Check,
    Pools,
    WorkerInfo,
    dismiss,
    enlist,
    examine,
)  # fmt: skip
from engine.tools import ToolSet


class QuarryPlugin(distributed.WorkerPlugin):
    """The sweep's Dask worker plugin: checks each worker as it joins; owns its read pools.

    Registered under a name of the sweep's own, so two sweeps on one cluster keep apart.
    """

    def __init__(self, check: Check) -> None:
        self.check = check
        self.info: WorkerInfo | None = None
        self.pools = Pools()
        self._worker: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"check": self.check}  # the pools and the worker stay where they are

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["check"])  # type: ignore[misc]

    async def setup(self, worker: Any) -> None:
        """Check the worker (off its event loop: discovery runs tools) and say how it went."""
        self._worker = worker
        enlist(self)
        try:
            info = await asyncio.get_running_loop().run_in_executor(None, examine, self.check)
        except Exception as exc:  # a setup that raises fails the whole registration
            why = f"its check failed: {type(exc).__name__}: {exc}"[:300]
            info = WorkerInfo(socket.gethostname(), os.getpid(), ToolSet(), (), False, why)
        self.info = replace(info, address=str(worker.address))
        worker.log_event(self.check.topic, self.info.message())

    async def teardown(self, worker: Any) -> None:
        """Close the read pools (a pool waits up to a second for its children: off the loop)."""
        await asyncio.get_running_loop().run_in_executor(None, self._close)

    def _close(self) -> None:
        self.pools.close()
        dismiss(self)

    @property
    def address(self) -> str:
        """The Dask address of the worker it runs on ("" before setup)."""
        return str(self._worker.address) if self._worker is not None else ""

    def refuse(self, problem: str) -> None:
        """This worker failed a read the check could not foresee (a file it cannot see):
        tell the engine, which sends it no more reads."""
        if self.info is None or self.info.problem is not None or self._worker is None:
            return
        self.info = replace(self.info, problem=problem)
        self._worker.log_event(self.check.topic, self.info.message())
