"""The real ``quarry`` command in a terminal: a pty read through pyte, driven by keys.

CI needs no tmux: the command runs on a pseudo-terminal of a fixed size, its output goes
through pyte (a VT100 emulator), and a test reads the screen a user would see. Every wait is
a poll on that screen with a bound, never a sleep.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pyte

KEYS = {
    "enter": "\r", "escape": "\x1b", "tab": "\t", "backspace": "\x7f",
    "up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
    "home": "\x1b[H", "end": "\x1b[F", "pageup": "\x1b[5~", "pagedown": "\x1b[6~",
}  # fmt: skip
"""What a terminal sends for each named key."""

QUERY_SYNC = b"\x1b[?2026$p"
"""Textual's question: does the terminal support synchronized output (DECRQM 2026)?"""
ANSWER_SYNC = b"\x1b[?2026;2$y"
"""The answer "supported, now off", so Textual brackets each frame with the two below."""
SYNC_START = b"\x1b[?2026h"
SYNC_END = b"\x1b[?2026l"


def quarry_command() -> list[str]:
    """The installed ``quarry`` script beside this Python, else ``python -m tui``."""
    script = Path(sys.executable).with_name("quarry")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui"]


class Terminal:
    """One process on a pty of ``cols`` x ``rows``, its screen kept by pyte."""

    def __init__(self, argv: Sequence[str], cols: int, rows: int, cwd: Path) -> None:
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.pending = bytearray()
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
        env.pop("TEXTUAL", None)
        self.proc = subprocess.Popen(
            list(argv), stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.fd = master
        os.set_blocking(master, False)

    def pump(self, wait: float = 0.05) -> None:
        """Feed whatever the process wrote (waiting up to ``wait`` s for something)."""
        ready, _, _ = select.select([self.fd], [], [], wait)
        while ready:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.raw += data
            self._feed(data)
            ready, _, _ = select.select([self.fd], [], [], 0)

    def _feed(self, data: bytes) -> None:
        """Give pyte whole frames only: a screen read half drawn is a flaky test.

        Textual asks whether the terminal supports synchronized output (mode 2026); this
        terminal says it does, so every frame comes between SYNC_START and SYNC_END, and the
        bytes of a frame not yet ended wait in ``pending`` until its end arrives.
        """
        if QUERY_SYNC in self.raw[-(len(data) + len(QUERY_SYNC) - 1) :]:  # ends in this read
            os.write(self.fd, ANSWER_SYNC)
        self.pending += data
        start = self.pending.rfind(SYNC_START)
        if start >= 0 and self.pending.find(SYNC_END, start) < 0:
            whole, self.pending = self.pending[:start], self.pending[start:]
        else:
            whole, self.pending = self.pending, bytearray()
        if whole:
            self.stream.feed(bytes(whole))

    def text(self) -> str:
        """The screen as lines of text."""
        return "\n".join(self.screen.display)

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = 60.0) -> str:
        """Poll the screen until it shows ``what`` (a regex or a predicate); return it."""
        test = what if callable(what) else (lambda text: re.search(what, text) is not None)
        end = time.monotonic() + timeout
        while True:
            self.pump()
            text = self.text()
            if test(text):
                return text
            if self.proc.poll() is not None:
                self.pump()
                raise AssertionError(f"quarry exited {self.proc.returncode} waiting for {what!r}:\n"
                                     f"{self.text()}\n{self.tail()}")  # fmt: skip
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what!r}; the screen:\n{text}")

    def press(self, *keys: str) -> None:
        """Send keys (names from :data:`KEYS`, or text typed as is)."""
        for key in keys:
            os.write(self.fd, KEYS.get(key, key).encode())
            self.pump(0.01)

    def press_and_wait(self, key: str, what: str | Callable[[str], bool]) -> str:
        """Press ``key``, then wait for the screen to show ``what``."""
        self.press(key)
        return self.wait_for(what)

    def tail(self) -> str:
        """The last bytes the process wrote, decoded loosely (for failure messages)."""
        return bytes(self.raw[-2000:]).decode("utf-8", "replace")

    def exit_code(self, timeout: float = 60.0) -> int:
        """Wait for the process to end (reading its output meanwhile); its exit code."""
        end = time.monotonic() + timeout
        while self.proc.poll() is None:
            self.pump()
            if time.monotonic() > end:
                self.kill()
                raise AssertionError(f"quarry did not exit within {timeout} s:\n{self.text()}")
        self.pump()
        if self.proc.returncode:  # (pytest shows what a failed test printed: the traceback)
            print(f"quarry exited {self.proc.returncode}; its last output:\n{self.tail()}")
        return self.proc.returncode

    def kill(self) -> None:
        """Stop the process group (a test that failed midway)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        """Kill if still running and let the pty go."""
        self.kill()
        os.close(self.fd)
