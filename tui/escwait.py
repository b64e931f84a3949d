"""A lone escape key, answered in milliseconds instead of Textual's tenth of a second or more.

A terminal sends the escape key as one ESC byte, which is also how every other key's escape
sequence starts (an arrow is ESC [ A): a lone ESC is only the escape key once nothing has
followed it for a while. Textual waits 100 ms for that (``ESCDELAY``), and its Linux driver
only looks again when its input ``select`` returns: on new input, or after 0.1 s. Every
``escape`` (back, close, clear the filter: half the keys of a tour of the dashboard) so took
100-120 ms before any work began, most of the 150 ms a key may take (issue 25).

:class:`QuickEscapeDriver` waits :data:`ESCAPE_SECONDS` (25 ms, unless the user's ``ESCDELAY``
says otherwise, in milliseconds, as for curses programs) and looks again that soon after any
input. The bytes of one key's sequence are written together by the terminal and arrive
together (over SSH too: one key is one packet), so 25 ms is ample; a terminal speaking the
kitty keyboard protocol, which Textual asks for, sends escape unambiguously and never waits.
"""

from __future__ import annotations

import os
from codecs import getincrementaldecoder
from selectors import EVENT_READ, SelectorKey, SelectSelector

from textual import constants
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

ESCAPE_SECONDS = 0.025
"""How long a lone ESC waits for the rest of a sequence before it is the escape key."""
IDLE_SECONDS = 0.1
"""How long the input thread waits for input when none is pending (Textual's)."""


def escape_seconds(environ: dict[str, str] | os._Environ[str]) -> float:
    """The escape wait: ``ESCDELAY`` (milliseconds, at least 1) if set and valid, else ours."""
    try:
        return max(1, int(environ["ESCDELAY"])) / 1000
    except (KeyError, ValueError):
        return ESCAPE_SECONDS


def next_wait(had_input: bool, escape: float) -> float:
    """How long the next ``select`` may wait: after input, just past the escape wait (an ESC
    read may be waiting to become the escape key); else Textual's idle wait."""
    return escape + 0.002 if had_input else IDLE_SECONDS


class QuickEscapeDriver(LinuxDriver):
    """Textual's Linux driver with a short escape wait, and an input loop that honours it."""

    def start_application_mode(self) -> None:
        """Set the parser's escape wait, then start as Textual does."""
        # Textual's parser reads the constant at each ESC; its Final is for its own code.
        setattr(constants, "ESCAPE_DELAY", escape_seconds(os.environ))  # noqa: B010
        super().start_application_mode()  # type: ignore[no-untyped-call]

    def run_input_thread(self) -> None:
        """Textual's input loop (``LinuxDriver.run_input_thread``, Textual 8.2), with the
        ``select`` timeout of :func:`next_wait` in place of a fixed 0.1 s."""
        selector = SelectSelector()
        selector.register(self.fileno, EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        escape = constants.ESCAPE_DELAY

        def process(ready: list[tuple[SelectorKey, int]], final: bool = False) -> None:
            for i, (_key, mask) in enumerate(ready):
                if mask & EVENT_READ:
                    data = decode(
                        os.read(self.fileno, 1024 * 4), final=final and i == len(ready) - 1
                    )
                    if not data:  # a piped stdin at its end
                        break
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        wait = IDLE_SECONDS
        try:
            while not self.exit_event.is_set():
                ready = selector.select(wait)
                process(ready)
                wait = next_wait(bool(ready), escape)
            selector.unregister(self.fileno)
            process(selector.select(IDLE_SECONDS), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
