"""Engine events -> the app, batched: many events from engine threads, few messages.

The engine calls :meth:`EventBridge.__call__` from its threads for every event. Events go
into a buffer; one flusher thread hands the whole buffer over every ``interval`` seconds with
a single ``post`` (the app's thread-safe ``post_message``). The engine never waits on the UI
and an event storm costs the UI one message per interval. No Textual import: ``post`` is any
callable taking a list of events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.events import Event

Post = Callable[[list[Event]], None]
"""Receives one batch of events; must be thread-safe and must not block."""


class EventBridge:
    """A listener for :class:`engine.session.Session` that batches events for the UI."""

    def __init__(self, post: Post, interval: float = 0.05) -> None:
        self._post = post
        self._interval = interval
        self._buffer: list[Event] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="quarry-ui-events", daemon=True)
        self._thread.start()

    def __call__(self, event: Event) -> None:
        """Called from engine threads: buffer the event and wake the flusher."""
        with self._lock:
            self._buffer.append(event)
        self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            if self._closed:
                break
            # collect what arrives during one interval into the same batch
            threading.Event().wait(self._interval)
            self._wake.clear()
            self.flush()
        self.flush()

    def flush(self) -> None:
        """Hand over whatever is buffered now."""
        with self._lock:
            batch, self._buffer = self._buffer, []
        if batch:
            self._post(batch)

    def close(self, timeout: float = 1.0) -> None:
        """Stop the flusher after one last flush."""
        self._closed = True
        self._wake.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
