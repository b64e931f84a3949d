"""Starting worker processes, and killing one together with everything it started.

Workers start from a forkserver whose server has imported the engine's readers: they start
fast and small, and never copy the engine's threads or memory (which RLIMIT_AS would count).
A worker imports nothing of the process that starts it beyond the engine: not even its main
module, which multiprocessing would run again in every child (see :func:`start_process`).

A worker leads its own process group; the tools it runs (``ReadContext.run_tool``) start in
sessions of their own, so killing the worker's group alone would leave a ``pdftotext`` or a
``tesseract`` running. :func:`kill_tree` finds the worker's descendants first
(:mod:`engine.ptree`), kills each one's process group, then the worker's.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pkgutil
import signal
import sys
import sysconfig
import threading
import types
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING

from engine.ptree import descendants

if TYPE_CHECKING:  # the worker (and every reader it imports) only where a worker starts
    from engine import worker

LAZY_READER_DEPS = (
    "email.policy", "email.parser", "email.utils", "engine.readers._htmltext", "tarfile",
)  # fmt: skip
"""Libraries a reader imports only when it reads (to keep the engine's start small): the
forkserver imports them once, so that no worker pays for them on its first file.

Not python-pptx: its 60 ms were on the path of every cold sweep's first read (the forkserver
forks no worker before its imports are done; 20,000 small files on tmpfs, 5 runs each: the
first text at 0.25 s against 0.31 s). A worker that meets a presentation imports it then,
while the other reads on."""


def kill_tree(pid: int | None) -> None:
    """SIGKILL ``pid``, its process group and the groups of all its descendants.

    ``pid`` and its group go first, in one signal (a worker and the tools it runs in its group
    die together), and its descendants found before it: a worker that outlived its tool by a
    moment would see the tool killed and report a failed tool, where the pool killed a read
    that ran out of time (under load, this was seen)."""
    if pid is None or pid <= 0:
        return
    found = list(descendants(pid))  # (once it is dead, its children are another's)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    for child, pgid in found:
        with contextlib.suppress(OSError):
            if pgid not in (pid, os.getpgrp()):
                os.killpg(pgid, signal.SIGKILL)
            os.kill(child, signal.SIGKILL)


def worker_context() -> BaseContext:
    """A forkserver context whose server has the engine's readers imported already."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    short_socket_folder()
    safe_imports()
    import engine.readers as pkg

    mods = pkgutil.iter_modules(pkg.__path__)
    readers = [f"engine.readers.{m.name}" for m in mods if not m.name.startswith("_")]
    preload = ["engine.worker", *readers, *LAZY_READER_DEPS, "engine.quality_preload"]
    preload.append("engine.preloaded")  # last: freezes what the others imported
    ctx.set_forkserver_preload(preload)  # a module that fails to import is skipped
    return ctx


def safe_imports() -> None:
    """Make the Python processes this one starts import nothing from their current folder.

    The forkserver runs ``python -c``, which puts the current folder first on ``sys.path``
    (Python 3.11's forkserver does not apply the parent's ``sys.path``), and its preload
    imports ``engine.*``: run from inside a received folder holding an ``engine/`` package,
    every read worker ran that folder's code. ``PYTHONSAFEPATH`` (``-P``) keeps the current
    folder off the path of every child, and the folder this engine was imported from goes on
    ``PYTHONPATH`` when no installed copy would be found without it (a source checkout).
    """
    os.environ["PYTHONSAFEPATH"] = "1"
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = {os.path.abspath(p) for p in sysconfig.get_paths().values()}
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if home not in installed and home not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([home, *paths])


SOCKET_PATH_MAX = 107
"""The bytes a Unix socket's path may take (``sun_path`` less its NUL)."""
_SOCKET_TAIL = len("/pymp-xxxxxxxx/listener-xxxxxxxx")
"""What multiprocessing adds to the temporary folder for its forkserver's socket."""


def short_socket_folder() -> None:
    """Give multiprocessing a folder of a short path for its sockets when ``$TMPDIR``'s is too
    long: the forkserver makes its socket there, and past 107 bytes of path every worker fails
    to start ("AF_UNIX path too long", a machine failure for every file). As Python 3.13 does
    by itself, such a folder is replaced, for multiprocessing alone, by one in ``/tmp``."""
    import sys
    import tempfile

    config = getattr(multiprocessing.current_process(), "_config", None)
    if sys.version_info >= (3, 13) or not isinstance(config, dict) or config.get("tempdir"):
        return
    if len(os.fsencode(tempfile.gettempdir())) + _SOCKET_TAIL <= SOCKET_PATH_MAX:
        return
    import shutil
    from multiprocessing import util

    for base in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
            folder = tempfile.mkdtemp(prefix="pymp-", dir=base)
            # removed at exit, as multiprocessing removes the folder it makes itself
            util.Finalize(None, shutil.rmtree, args=(folder, True), exitpriority=-100)
            config["tempdir"] = folder
            return


def start_forkserver(ctx: BaseContext) -> None:
    """Start ``ctx``'s forkserver now, if it is one, and return at once: its imports (every
    reader, ~0.2 s) then overlap whatever comes next instead of delaying the first read. A
    forkserver already running is left as it is."""
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    with contextlib.suppress(OSError, ValueError):
        forkserver.ensure_running()


def start_process(ctx: BaseContext, conn: Connection, cfg: worker.WorkerConfig) -> BaseProcess:
    """Start one worker process (tests replace this to simulate a machine that cannot)."""
    from engine import worker

    proc: BaseProcess = ctx.Process(  # type: ignore[attr-defined]
        target=worker.main, args=(conn, cfg), name="quarry-worker", daemon=True
    )
    with _main_hidden():
        proc.start()
    return proc


_main_lock = threading.Lock()


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Keep this process's main module out of what a starting worker is told to prepare.

    multiprocessing runs the parent's main module again in every child it starts (a forkserver
    child too) unless it is a package's ``__main__``; a worker needs none of it, as its target
    is :func:`engine.worker.main`. In a Dask worker started by ``dask worker`` that module is
    distributed's command line: every read child imported distributed (~0.5 s each, the first
    task of a sweep waiting on it). For as long as :meth:`Process.start` takes, the main
    module is a bare one (a lock keeps two starts from swapping it at once).
    """
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if main is None or name == "__main__" or (name or "").endswith(".__main__"):
        yield  # nothing a child would run (``python -m engine``: engine.__main__)
        return
    if name is None and getattr(main, "__file__", None) is None:
        yield  # an interactive session: nothing to run either
        return
    with _main_lock:
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            sys.modules["__main__"] = main
