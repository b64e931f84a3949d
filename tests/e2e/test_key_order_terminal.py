"""End to end, issue 25: keys typed into a box are applied in the order they were typed.

Textual's ``Input`` inserts a letter in its own key handler, as the key reaches it, but runs
its bindings (backspace, the arrows, home, ...) only once the key has bubbled up to the app;
a letter typed right behind a backspace overtook it whenever both were waiting at once
(``/abcdK``, two backspaces, ``xyz`` left ``abcdKx`` in 4 runs of 6 under load). Here the
keys after the first word go in one write, as a fast typist, a paste or a loaded machine
delivers them, with two busy loops beside the dashboard.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.terminal import KEYS, Terminal, quarry_command
from tests.tui.conftest import text_store

BOX = re.compile(r"^▊ +(\S*) *▎$", re.MULTILINE)
"""The filter box's middle line on screen: what it holds between its borders."""


@pytest.fixture
def busy() -> Iterator[None]:
    """Two processes spinning beside the dashboard (a loaded two-core machine)."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for loop in loops:
        loop.kill()
        loop.wait()


def box(text: str) -> str | None:
    """What the filter box holds as drawn, or None while it is not on screen."""
    match = BOX.search(text)
    return match.group(1) if match else None


@pytest.mark.usefixtures("busy")
def test_a_backspace_is_applied_before_the_letters_typed_after_it(tmp_path: Path) -> None:
    store = text_store(tmp_path / "store", {"abcxyz.txt": "one\n", "other.txt": "two\n"}).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 80, 24, tmp_path)
    try:
        term.wait_for("following")
        term.press("/abcdK")
        term.wait_for(lambda t: box(t) == "abcdK")
        # Both backspaces and the letters in one write: they reach the dashboard together.
        typed = KEYS["backspace"] * 2 + "xyz"
        term.press(typed)
        # Six characters is where either order ends ("abcxyz" or the overtaken "abcdKx");
        # in order, no state before the last has six.
        text = term.wait_for(lambda t: len(box(t) or "") == 6)
        assert box(text) == "abcxyz", text
        # The filter applied what the box holds (a frame read half-drawn may show the count
        # before the rows: the whole of it is awaited, at stop 34 under load it was not).
        term.wait_for(
            lambda t: "1 of 2 records" in t and "abcxyz.txt" in t and "other.txt" not in t
        )
        # The arrows are bindings too: home, then a letter, lands at the front.
        term.press(KEYS["home"] + "Q")
        text = term.wait_for(lambda t: len(box(t) or "") == 7)
        assert box(text) == "Qabcxyz", text
        term.press_and_wait("escape", lambda t: "of 2 records" not in t)
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw
    finally:
        term.close()
