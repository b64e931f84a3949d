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

from engine.executor import Executor, ExecutorFactory
from engine.executors.spec import (
    INSTALL_HINT,
    LOCAL,
    ClusterLost,
    ClusterRefused,
    ExecutorSpec,
    parse_executor,
    require_dask,
)
from engine.limits import Limits
from engine.readers import registry
from engine.tools import ToolSet


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


__all__ = [
    "INSTALL_HINT",
    "LOCAL",
    "ClusterLost",
    "ClusterRefused",
    "ExecutorSpec",
    "dask_factory",
    "parse_executor",
    "require_dask",
]
