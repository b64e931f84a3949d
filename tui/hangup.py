"""Noticing that the dashboard's terminal went away, when no SIGHUP says so.

A terminal window closed over a dashboard started under ``nohup``, in a session of its own
(``setsid``) or by a process manager sends no hang-up signal: the terminal is simply gone.
Textual's Linux driver then reads end-of-file from its input for ever (a busy loop: 95% of a
core, for days) and its output thread dies on the first write that fails, after which every
write blocks. :class:`HangupDriver` is that driver, plus a watcher thread that waits (in
``poll``, no CPU) for the kernel to report the terminal hung up, and an output that takes a
failed write as the same news instead of dying. Either posts :class:`TerminalGone` to the app
once, which then leaves as on ``q`` (the engine stopped, the store written) with exit 1.
"""

from __future__ import annotations

import contextlib
import select
import threading
from collections.abc import Callable
from typing import Any, TextIO

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from tui.escwait import QuickEscapeDriver

_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL
"""What ``poll`` reports, asked for nothing, once a terminal has hung up (or its fd closed)."""
WATCH_SECONDS = 0.5
"""How often the watcher looks up from its ``poll`` to see whether the app is leaving."""


class TerminalGone(Message):
    """The terminal the dashboard runs in is gone (posted once, from a thread)."""


class _Output:
    """The driver's output file: a write or flush that fails (EIO, EPIPE: the terminal is
    gone) is dropped and reported, so that Textual's writer thread lives on and nothing that
    writes to it ever blocks on its full queue."""

    def __init__(self, file: TextIO | None, gone: Callable[[], None]) -> None:
        assert file is not None, "a terminal dashboard has a standard error"
        self._file = file
        self._gone = gone

    def write(self, text: str) -> int:
        try:
            return self._file.write(text)
        except OSError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError:
            self._gone()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class HangupDriver(QuickEscapeDriver):
    """Textual's Linux driver (with a quick escape key: :mod:`tui.escwait`), which tells the app
    when its terminal is gone."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._told = threading.Event()
        self._stop_watch = threading.Event()
        self._output = _Output(self._file, self._gone)
        self._file = self._output  # type: ignore[assignment]

    def start_application_mode(self) -> None:
        """Start as Textual does, then watch the terminal."""
        super().start_application_mode()
        self._stop_watch.clear()
        threading.Thread(target=self._watch, name="quarry-hangup", daemon=True).start()

    def stop_application_mode(self) -> None:
        """Stop watching, then stop as Textual does (its writes may fail: dropped)."""
        self._stop_watch.set()
        super().stop_application_mode()

    def _watch(self) -> None:
        poller = select.poll()
        for fd in {self.fileno, self._output.fileno()}:
            with contextlib.suppress(OSError, ValueError):
                poller.register(fd, 0)  # no events asked: only hang-up and errors wake it
        while not self._stop_watch.is_set():
            try:
                ready = poller.poll(int(WATCH_SECONDS * 1000))
            except OSError:
                return
            if any(mask & _GONE for _fd, mask in ready):
                self._gone()
                return

    def _gone(self) -> None:
        if self._told.is_set():
            return
        self._told.set()
        with contextlib.suppress(RuntimeError):  # the app's loop already closed: it is leaving
            self._app.post_message(TerminalGone())


def driver_class(chosen: type[Driver]) -> type[Driver]:
    """The driver to use where Textual chose ``chosen``: ours in place of its Linux one."""
    return HangupDriver if chosen is LinuxDriver else chosen
