"""End to end, issue 28: the real ``quarry ui --store B --compare A`` in a terminal, at 80x24
(unified texts) and 160x50 (side by side): the groups, a group's files, a file's texts, ``n``
to the next change, escape back to the same row, escape to the records, q quits with 0."""

from __future__ import annotations

from pathlib import Path

import pyte
import pytest

from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.test_compare_screen import stores


def background(term: Terminal, needle: str) -> str:
    """The background colour of the first screen line holding ``needle`` (at its start)."""
    for y, line in enumerate(term.screen.display):
        x = line.find(needle)
        if x >= 0:
            char: pyte.screens.Char = term.screen.buffer[y][x]
            return str(char.bg)
    raise AssertionError(f"{needle!r} is not on the screen:\n{term.text()}")


def plain(term: Terminal) -> str:
    """The files table's own background: the line under its last row (b.txt), a row without
    the cursor drawn the same. Read from the same frame as the rows, never kept: the table
    tints its background while it has the focus, and a frame drawn before the focus arrived
    has the untinted one (a colour kept from it is never drawn again)."""
    for y, line in enumerate(term.screen.display):
        if "b.txt" in line and y + 1 < len(term.screen.display):
            return str(term.screen.buffer[y + 1][0].bg)
    raise AssertionError(f"no b.txt row on the screen:\n{term.text()}")


@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (160, 50)])
def test_groups_files_a_diff_and_back_to_the_same_row(tmp_path: Path, cols: int, rows: int) -> None:
    stores(tmp_path)  # A and B
    argv = [*quarry_command(), "ui", "--store", "B", "--compare", "A"]
    term = Terminal(argv, cols, rows, tmp_path)
    try:
        # the groups, largest first, each with its count and an example
        text = term.wait_for(r"(?s)text changed +2 +a\.txt.*got worse +1 +broken\.txt.*new +1")
        assert "compare  A  ->  B" in text
        assert "4 files before, 5 after: 4 changed, 1 unchanged; something got worse" in text
        term.press("enter")  # into "text changed": a.txt and b.txt
        term.wait_for(r"(?s)text changed: 2 files.*a\.txt +similarity.*b\.txt +similarity")
        term.wait_for(lambda _t: background(term, "a.txt") != background(term, "b.txt"))
        term.press("down")  # the cursor from a.txt to b.txt
        term.wait_for(
            lambda _t: background(term, "a.txt") == plain(term) != background(term, "b.txt")
        )
        term.press("enter")  # b.txt's texts
        text = term.wait_for("three four")
        if cols >= 160:  # side by side: both lines on one screen line
            assert any(
                "three" in ln and "three four" in ln and "│" in ln for ln in text.split("\n")
            )
        else:  # unified: the removed line and the added one
            assert "-three" in text.replace(" ", "") and "+threefour" in text.replace(" ", "")
        term.press("n")  # one change only: n stays on it, nothing breaks
        term.wait_for("three four")
        term.press("escape")  # back to the files, b.txt still the highlighted row
        term.wait_for(lambda t: "a.txt" in t and "three four" not in t)
        term.wait_for(
            lambda _t: background(term, "a.txt") == plain(term) != background(term, "b.txt")
        )
        term.press("escape")  # back to the groups
        term.wait_for(lambda t: "got worse" in t and "2 files" not in t)
        term.press("up", "enter")  # into "text changed" again, then a.txt's two changes
        term.wait_for(r"(?s)text changed: 2 files.*a\.txt +similarity.*b\.txt +similarity")
        term.press("enter")
        text = term.wait_for("line three was changed here")
        term.press("n")  # the second change, line 20
        term.wait_for("pwned")
        assert "\x1b" not in term.text()
        for _ in range(3):  # files, groups, then the records screen
            before_screen = term.text()
            term.press("escape")
            term.wait_for(lambda t, s=before_screen: t != s)  # type: ignore[misc]
        term.wait_for("following")
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw
    finally:
        term.close()


@pytest.mark.parametrize(("cols", "rows"), [(80, 24), (160, 50)])
def test_the_screen_retries_inspects_and_says_when_nothing_changed(
    tmp_path: Path, cols: int, rows: int
) -> None:
    """The keys the compare screen adds, in the real command: R on a group and r on a file
    go to the dashboard's retry (a store another process writes: it says why not), i opens
    the inspector on the file's text now; --since a sweep with nothing changed since is a
    line saying so."""
    from engine.sweep import SweepOptions, sweep

    stores(tmp_path)  # A and B
    argv = [*quarry_command(), "ui", "--store", "B", "--compare", "A"]
    term = Terminal(argv, cols, rows, tmp_path)
    try:
        term.wait_for(r"(?s)text changed +2 +a\.txt.*got worse +1")
        term.wait_for("R Retry all")  # offered with the groups
        term.press("R")
        term.wait_for("cannot retry")
        term.press("enter")  # into "text changed"
        term.wait_for(r"text changed: 2 files")
        term.press("i")  # a.txt's text as it is now, in the inspector
        # the inspector's title and text may come in two frames: the whole screen is awaited
        term.wait_for(
            lambda t: all(s in t for s in ("line three was changed here", "a.txt", "(/data)"))
        )
        term.press("escape")
        term.wait_for(r"text changed: 2 files")
        term.press("enter")  # a.txt's two texts
        term.wait_for("@@" if cols < 160 else "│")
        term.press("enter")  # enter on the texts: the inspector, as on the records
        term.wait_for(lambda t: "(/data)" in t and "@@" not in t)
        for _ in range(4):  # the texts, the files, the groups, then the records screen
            before_screen = term.text()
            term.press("escape")
            term.wait_for(lambda t, s=before_screen: t != s)  # type: ignore[misc]
        term.wait_for("following")
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw
    finally:
        term.close()
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.txt").write_text("alpha bravo\n")
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    argv = [*quarry_command(), "ui", "--store", str(root / ".quarry"), "--since", "last"]
    term = Terminal(argv, cols, rows, tmp_path)
    try:
        text = term.wait_for(lambda t: "nothing changed since" in t and "1 file as they were" in t)
        assert "changes  " not in text
        term.press("q")
        term.wait_for("following")  # escape-like: q leaves the screen for the records
        term.press("q")
        assert term.exit_code() == 0
        assert b"Traceback" not in term.raw
    finally:
        term.close()
