"""A lone escape key is answered after a short wait, not Textual's 0.1 s and a select's 0.1 s.

The driver's input loop is run on a pipe: the escape byte written to it must come out as the
escape key, and the loop must look again within the escape wait after reading it (Textual's
loop always waited 0.1 s, and the key waited for that). No clock is asserted: what is checked
is the timeout the loop asks ``select`` for.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from selectors import SelectSelector
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual import constants, events
from textual.message import Message

from tui import escwait
from tui.escwait import ESCAPE_SECONDS, IDLE_SECONDS, QuickEscapeDriver, escape_seconds, next_wait


class Recording(QuickEscapeDriver):
    """The driver, keeping the events it would send to the app."""

    def __init__(self, fd: int) -> None:
        super().__init__(None)  # type: ignore[arg-type]  # no app: the events stay here
        self.fileno = fd
        self.got: list[Message] = []

    def process_message(self, message: Message) -> None:
        self.got.append(message)


@pytest.fixture
def signals() -> Iterator[None]:
    """The driver installs its own SIGTSTP and SIGCONT handlers: put pytest's back."""
    before = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


async def test_a_lone_escape_is_the_escape_key_after_the_short_wait(
    monkeypatch: pytest.MonkeyPatch, signals: None
) -> None:
    waits: list[float | None] = []

    class Selector(SelectSelector):
        def select(self, timeout: float | None = None) -> Any:
            waits.append(timeout)
            return super().select(timeout)

    monkeypatch.setattr(escwait, "SelectSelector", Selector)
    monkeypatch.setattr(constants, "ESCAPE_DELAY", ESCAPE_SECONDS)
    read_end, write_end = os.pipe()
    driver = Recording(read_end)
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        os.write(write_end, b"\x1b")
        end = time.monotonic() + 30
        while not any(isinstance(m, events.Key) for m in driver.got):
            assert time.monotonic() < end, "the escape byte never became a key"
            time.sleep(0.01)
    finally:
        driver.exit_event.set()
        thread.join(10)
        os.close(write_end)
        os.close(read_end)
    keys = [m.key for m in driver.got if isinstance(m, events.Key)]
    assert keys == ["escape"]
    # after the byte was read the loop looked again within the escape wait, not 0.1 s later
    assert min(w for w in waits if w is not None) == next_wait(True, ESCAPE_SECONDS)
    assert next_wait(True, ESCAPE_SECONDS) < IDLE_SECONDS


def test_the_wait_is_ours_unless_escdelay_says_otherwise() -> None:
    assert escape_seconds({}) == ESCAPE_SECONDS
    assert escape_seconds({"ESCDELAY": "200"}) == 0.2
    assert escape_seconds({"ESCDELAY": "0"}) == 0.001  # at least a millisecond, as Textual
    assert escape_seconds({"ESCDELAY": "soon"}) == ESCAPE_SECONDS


@given(st.text(max_size=8))
def test_any_escdelay_gives_a_positive_wait(value: str) -> None:
    assert escape_seconds({"ESCDELAY": value}) > 0


def test_the_loop_looks_again_after_input_within_the_escape_wait() -> None:
    assert next_wait(False, ESCAPE_SECONDS) == IDLE_SECONDS
    assert ESCAPE_SECONDS < next_wait(True, ESCAPE_SECONDS) < IDLE_SECONDS
