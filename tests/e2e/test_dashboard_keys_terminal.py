"""End to end, issue 25: the keys a reader meets in the real ``quarry ui`` in a terminal.

Wrap keeps the page being read; ``q`` on a sub-screen goes back, only ``q`` on the records
quits.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.terminal import Terminal, quarry_command
from tests.tui.conftest import text_store

PAGED = "\f".join(
    "".join(f"page {p} line {i} " + "word " * 30 + "\n" for i in range(40)) for p in range(1, 99)
)


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    store = text_store(tmp_path / "store", {"paged.txt": PAGED}).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 80, 24, tmp_path)
    yield term
    term.close()


def footer(text: str) -> str:
    return text.splitlines()[-1]


def top_number(text: str) -> int:
    """The line number at the top of the text (right of the page list)."""
    match = re.search(r"▕\s*(\d+) ", text.splitlines()[1])
    assert match, text
    return int(match.group(1))


def test_wrap_keeps_the_page_and_q_goes_back_before_it_quits(term: Terminal) -> None:
    term.wait_for("following")
    term.press_and_wait("enter", r"\(1/98\)")
    for _ in range(11):
        term.press("]")
    term.wait_for(r"\(12/98\)")
    line = top_number(term.text())
    assert line > 400
    term.press_and_wait("w", "wrap on")
    text = term.wait_for(r"\(12/98\)")
    assert top_number(text) == line
    term.press_and_wait("w", "wrap off")
    assert top_number(term.wait_for(r"\(12/98\)")) == line

    term.press_and_wait("q", lambda t: "q Quit" in footer(t))  # back to the records
    for key, title in (("t", "External tools"), ("x", "Errors"), ("@", "Activity")):
        term.press_and_wait(key, title)
        term.press_and_wait("q", lambda t: "q Quit" in footer(t))
    assert term.proc.poll() is None  # still running: no q so far quit
    term.press("q")
    assert term.exit_code() == 0
    assert b"Traceback" not in term.raw


def test_an_unknown_query_field_is_said_on_screen(term: Terminal) -> None:
    term.wait_for("following")
    term.press("/")
    term.wait_for("field:value")
    term.press("sise:>10K")
    text = term.wait_for("no field sise: did you mean size:?")  # the list is cut at 80 columns
    assert "(path status reason mime extractor" in text, text
    assert "0 of 1 record" not in text and "1 of 1 record" in text
    term.press_and_wait("escape", lambda t: "no field" not in t)  # esc + q at once is alt+q
    term.press("q")
    assert term.exit_code() == 0


def test_a_filter_typed_in_one_go_goes_into_the_filter_box(tmp_path: Path) -> None:
    # "/" then the text in one write, as a fast typist or a paste sends it: the keys after
    # "/" went to the table before the box had the focus ("s" sorted it, "l" moved a tab).
    store = text_store(tmp_path / "store", {"a.txt": "one\n", "slow.txt": "two\n"}).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 80, 24, tmp_path)
    try:
        term.wait_for("following")
        term.press("/slow")
        # One predicate for the count and the box: a frame can be read half drawn, the count
        # already new and the box not yet (CI saw exactly that), so neither is waited alone.
        text = term.wait_for(
            lambda t: "1 of 2 records" in t and re.search(r"▊\s*slow\s", t) is not None
        )
        assert "path ▲" in text  # the sort is as it was
        term.press("/")  # in the box, a "/" is text (a path's)
        term.wait_for(lambda t: "0 of 2 records" in t and re.search(r"▊\s*slow/\s", t) is not None)
        term.press_and_wait("escape", lambda t: "of 2 records" not in t)
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_escape_goes_back_to_the_screen_before(term: Terminal) -> None:
    term.wait_for("following")
    term.press_and_wait("x", r"Errors \d")
    term.press_and_wait("u", r"Unsupported \d")
    term.press_and_wait("t", "External tools")
    term.press_and_wait("escape", lambda t: re.search(r"Unsupported \d", t) is not None)
    term.press_and_wait("escape", lambda t: re.search(r"Errors \d", t) is not None)
    term.press_and_wait("escape", lambda t: "q Quit" in footer(t))
    term.press("q")
    assert term.exit_code() == 0


def test_at_80_columns_the_footer_keeps_the_verbs_the_tool_is_for(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    term = Terminal([*quarry_command(), str(folder)], 80, 24, tmp_path)
    try:
        text = term.wait_for(lambda t: "watching" in t and "a.txt" in t)
        keys = footer(term.wait_for(lambda t: "Retry" in footer(t)))
        for verb in ("r Retry", "x Errors", "u Unsupported", "t Tools", "q Quit", "? Help"):
            assert verb in keys, (verb, text)
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_at_160_columns_the_path_column_has_room(tmp_path: Path) -> None:
    store = text_store(tmp_path / "store", {"paged.txt": "x\n"}).out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 160, 50, tmp_path)
    try:
        text = term.wait_for("following")
        header = next(line for line in text.splitlines() if line.startswith("path"))
        assert header.index("status") >= 38, header  # 26 cells once, beside 37 of MIME
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_G_goes_to_the_last_group_and_tab_then_j_moves_the_table(tmp_path: Path) -> None:
    from tui.sample import build_sample_store

    store = build_sample_store(tmp_path / "store").out
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 80, 24, tmp_path)
    try:
        term.wait_for("following")
        term.press_and_wait("x", r"Errors \d")
        first = term.wait_for("e.g. ")
        assert "e.g. pdf/truncated.pdf" in first  # the first group's example
        term.press_and_wait("G", "e.g. hostile/zipbomb.docx")  # the last group's
        term.press_and_wait("escape", lambda t: "q Quit" in footer(t))
        term.press("tab")  # to the status tabs, then j: the keys are the table's again
        term.press("j", "G")  # the last row, text/readme.md: it has a text
        term.press_and_wait("enter", r"\d lines")  # enter opens it: the table had the keys
        term.press_and_wait("q", lambda t: "q Quit" in footer(t))
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_a_sweep_shows_files_done_percent_rate_and_time_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.faultreader import ARGS, env, fixture

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(20):
        (folder / f"note{i:02d}.txt").write_text(f"note {i}\n")
    (folder / "zz-hangs.bin").write_bytes(fixture("hang"))  # holds the sweep at 20 of 21
    monkeypatch.setenv("PYTHONPATH", env()["PYTHONPATH"])  # (the quarry it runs imports it)
    argv = [*quarry_command(), str(folder), "--timeout", "300", *ARGS]
    term = Terminal(argv, 80, 24, tmp_path)
    try:
        text = term.wait_for(r"sweeping 20/21 files · 95% · [\d.,]+ files/s · \d+:\d\d left")
        assert "95 last event" not in text  # the percentage keeps its %
        term.press("q")
        assert term.exit_code(timeout=60) == 0
    finally:
        term.close()


def test_a_tool_left_out_is_shown_left_out(sample: Path, tmp_path: Path) -> None:
    argv = [*quarry_command(), str(sample), "--without", "tesseract"]
    term = Terminal(argv, 160, 50, tmp_path)
    try:
        # The tools screen opens by itself once the sweep is done when a tool is missing (a
        # machine without antiword, ...), and it has no header saying "watching".
        text = term.wait_for(lambda t: "watching" in t or "External tools" in t, timeout=100)
        if "External tools" not in text:
            term.press("t")
        text = term.wait_for(lambda t: re.search(r"tesseract\s+left out", t) is not None)
        assert not re.search(r"tesseract\s+missing", text)
        term.press("g")
        term.wait_for("left out on purpose: tesseract")
        term.press_and_wait("q", lambda t: "q Quit" in footer(t))
        term.press("q")
        assert term.exit_code() == 0
    finally:
        term.close()


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (state T in /proc)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] in "Tt"


def test_ctrl_z_suspends_to_the_shell_and_fg_draws_the_dashboard_again(term: Terminal) -> None:
    """As ``less`` and ``vim`` do. Back (SIGCONT, as ``fg`` sends), the screen was the
    shell's and nothing drew the dashboard again until a change came."""
    term.wait_for("following")
    term.wait_for("paged.txt")
    term.press("\x1a")
    end = time.monotonic() + 60
    while not _stopped(term.proc.pid):
        term.pump()
        assert time.monotonic() < end, f"ctrl+z did not suspend:\n{term.text()}"
    term.pump()
    term.screen.reset()  # (what the shell draws meanwhile)
    os.kill(term.proc.pid, signal.SIGCONT)
    term.wait_for(lambda text: "paged.txt" in text and "q Quit" in footer(text))
    term.press("q")
    assert term.exit_code() == 0
