"""A sweep-then-watch run over roots into one store: the dashboard's handle on the engine.

The dashboard calls these from its thread workers; every method but :meth:`start_watch` and
:meth:`close` blocks while it works. Events reach ``on_event`` from engine threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

from engine.events import Listener, ToolsChanged, ignore
from engine.records import Reason, Record
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult
from engine.tools import ToolSet


class Session:
    """Owns a :class:`Sweeper` (and so the store's lock) and, once started, a watcher."""

    def __init__(
        self,
        roots: Sequence[Path],
        options: SweepOptions | None = None,
        on_event: Listener = ignore,
        *,
        watch_options: Any = None,
    ) -> None:
        self.on_event = on_event
        # The worker pool needs multiprocessing's resource tracker, which is started with
        # the process's stderr; an embedding app (Textual) replaces stderr while it runs, and
        # a tracker started then fails ("bad value(s) in fds_to_keep"). Start it now.
        resource_tracker.ensure_running()
        self._sweeper = Sweeper(roots, options or SweepOptions(), self._emit)
        self._sweeper.__enter__()
        self._lock = threading.RLock()
        self._watcher: Any = None
        self._watch_options = watch_options
        self._closed = False

    def _emit(self, event: Any) -> None:
        self.on_event(event)

    @property
    def store(self) -> Store:
        """The output store."""
        return self._sweeper.store

    @property
    def roots(self) -> list[Path]:
        """The swept roots."""
        return self._sweeper.roots

    @property
    def tools(self) -> ToolSet:
        """The tools in use."""
        return self._sweeper.tools

    @property
    def sweeper(self) -> Sweeper:
        """The underlying sweeper (the watcher shares it)."""
        return self._sweeper

    @property
    def lock(self) -> threading.RLock:
        """Held while a sweep, batch or retry runs: one at a time."""
        return self._lock

    def sweep(self) -> SweepResult:
        """A full sweep."""
        with self._lock:
            return self._sweeper.run()

    def retry(self, keys: Iterable[tuple[str, str]]) -> SweepResult:
        """Read the given (root, path) records again, whatever their verdict."""
        keys = list(keys)
        only: dict[str, list[str]] = {}
        for root, path in keys:
            only.setdefault(root, []).append(path)
        with self._lock:
            return self._sweeper.run(only=only, force=keys, full=False)

    def recheck_tools(self) -> ToolSet:
        """Look up tools again; a tool that appeared retries exactly the records it unlocks.

        A tool that went away changes nothing already extracted (files read from now on get
        ``needs_tool``); a version change alone reads nothing again.
        """
        with self._lock:
            before = set(self._sweeper.tools.names)
            tools = self._sweeper.rediscover_tools()
            after = set(tools.names)
            if before != after:
                appeared = tuple(sorted(after - before))
                self.on_event(
                    ToolsChanged(time.time(), tools.names, appeared, tuple(sorted(before - after)))
                )
                only = unlocked_by(self._sweeper.records.values(), appeared)
                if only:
                    self._sweeper.run(only=only, full=False)
            return tools

    def start_watch(self) -> None:
        """Start following the roots (non-blocking)."""
        from engine.watch import Watcher

        if self._watcher is None and not self._closed:
            self._watcher = Watcher(self, self._watch_options)
            self._watcher.start()

    def close(self) -> None:
        """Stop watching, finish the batch in flight, release the store."""
        if self._closed:
            return
        self._closed = True
        if self._watcher is not None:
            self._watcher.stop()
        with self._lock:
            self._sweeper.close()


def unlocked_by(records: Iterable[Record], appeared: Iterable[str]) -> dict[str, list[str]]:
    """Root -> paths of the records waiting for one of the tools in ``appeared``."""
    new = set(appeared)
    only: dict[str, list[str]] = {}
    for r in records:
        if r.reason in (Reason.NEEDS_TOOL, Reason.SCANNED) and new.intersection(r.needs):
            only.setdefault(r.root, []).append(r.path)
    return only
