"""A failed worker is said, never fatal: one handler for the app and for every screen.

Textual posts ``Worker.StateChanged`` to the node that started the worker and it does not
bubble, so the app and each screen that runs workers mix this in.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.dom import DOMNode
from textual.worker import Worker, WorkerState

from engine.names import shown


def worker_failure(event: Worker.StateChanged) -> str | None:
    """``Type: message`` of a worker that failed, or None when it did not."""
    if event.state != WorkerState.ERROR:
        return None
    error = event.worker.error
    return f"{type(error).__name__}: {error}"


def crash_report(error: BaseException) -> tuple[str, Path | None]:
    """The one line that says ``error`` (shown escaped) and the file its whole traceback was
    written to (None when it could not be written)."""
    import tempfile  # (only on a crash: not at start-up)
    import traceback

    line = shown(f"{type(error).__name__}: {error}")
    try:
        fd, name = tempfile.mkstemp(prefix="quarry-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write("".join(traceback.format_exception(error)))
    except OSError:
        return line, None
    return line, Path(name)


class ReportsWorkerFailures(DOMNode):
    """Notify the user of a worker of this node that raised; the app keeps running.

    Mix it in after the Textual class (``class S(Screen[None], ReportsWorkerFailures)``):
    Textual takes a class's CSS types from its first ``DOMNode`` base, and first, this hid
    ``Screen`` and ``Widget`` from every rule (the screens were transparent)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Say which task failed and why."""
        what = worker_failure(event)
        if what is not None:
            self.app.notify(what, title=f"{event.worker.name or 'a task'} failed", severity="error")
