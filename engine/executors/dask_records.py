"""What the Dask client and its workers tell each other: plain records, no Dask in them.

:class:`WorkerSettings` travels with every task, :class:`Check` with the sweep's worker
plugin, :class:`WorkerInfo` back as a Dask event and :class:`BatchResult` as a task's answer.
They live apart from :mod:`engine.executors.dask_worker` (which subclasses Dask's worker
plugin, so importing it imports distributed) so that the engine can make its Dask executor
without distributed: it imports distributed in the background while it walks
(:meth:`engine.executors.dask_client.DaskExecutor.warm`), ~0.5 s of a cold sweep otherwise
spent before the walk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import __version__
from engine.extract import Outcome
from engine.isolate import MAX_READS
from engine.readers import registry
from engine.tools import Tool, ToolSet


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


def code_version() -> str:
    """What must match between the engine and a worker: textquarry's version and every
    reader's (a reader of another version would give records of another version)."""
    # Extra readers (the tests' fault reader) travel with the settings: not compared.
    readers = ",".join(sorted(f"{r.name}={r.version}" for r in registry.builtin_readers()))
    return f"textquarry {__version__} ({readers})"
