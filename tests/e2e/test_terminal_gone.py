"""End to end: a dashboard whose terminal goes away without a SIGHUP ends, and cleanly.

Started under ``nohup``, ``setsid`` or a process manager, the dashboard gets no hang-up signal
when its terminal window is closed. Here the real ``quarry`` runs on a pty in a session of its
own (the pty is not its controlling terminal) with SIGHUP ignored, as ``nohup`` leaves it; the
test closes the pty's master side, as a closed terminal window does, and waits (bounded, on
the condition) for the process to end: exit 1, the store whole, no process left behind.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.store import Store
from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.conftest import text_store

_NOHUP = (
    "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""Run the rest of argv with SIGHUP ignored (an ignored signal stays ignored across exec)."""
EXIT_WITHIN = 60.0
"""Generous: a loaded machine is slow to start Python, not to notice a closed terminal."""


@pytest.fixture
def opened() -> Iterator[list[Terminal]]:
    terms: list[Terminal] = []
    yield terms
    for term in terms:
        term.kill()  # the master may be closed already: only the process is ours to end


def nohup_quarry(terms: list[Terminal], args: list[str], cwd: Path) -> Terminal:
    command = quarry_command()
    if len(command) == 1:
        argv = [sys.executable, "-c", _NOHUP, command[0], *args]
    else:  # python -m tui
        argv = [sys.executable, "-c", _NOHUP, command[0], *command[1:], *args]
    term = Terminal(argv, 80, 24, cwd)
    terms.append(term)
    return term


def close_terminal_and_wait(term: Terminal) -> int:
    """Close the pty's master side (the window goes) and wait for the process to end."""
    os.close(term.fd)
    end = time.monotonic() + EXIT_WITHIN
    while term.proc.poll() is None:
        if time.monotonic() > end:
            raise AssertionError(
                f"quarry still running {EXIT_WITHIN:.0f} s after its terminal went"
            )
        time.sleep(0.1)
    return term.proc.returncode


def test_the_dashboard_on_a_store_ends_when_its_terminal_goes(
    tmp_path: Path, opened: list[Terminal]
) -> None:
    store = text_store(tmp_path / "store", {"a.txt": "alpha\n", "b.txt": "beta\n"})
    before = store.jsonl_path.read_bytes()
    term = nohup_quarry(opened, ["ui", "--store", str(store.out)], tmp_path)
    term.wait_for(r"all 2")
    assert close_terminal_and_wait(term) == 1
    assert store.jsonl_path.read_bytes() == before


def test_quarry_dir_stops_its_watch_and_keeps_its_store_when_its_terminal_goes(
    tmp_path: Path, opened: list[Terminal]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    (folder / "b.md").write_text("# beta\n")
    term = nohup_quarry(opened, [str(folder)], tmp_path)
    term.wait_for(r"watching")
    assert close_terminal_and_wait(term) == 1
    loaded = Store(folder / ".quarry").load()
    assert sorted(r.path for r in loaded.records) == ["a.txt", "b.md"] and not loaded.bad
    with Store(folder / ".quarry").writer():  # the lock was let go: no writer is left
        pass
