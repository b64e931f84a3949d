"""End to end: ``quarry sweep`` on a terminal shows its progress in files (done of total),
files/s and a time left, never raw byte counts, then a summary whose read, reused and the rest
add up to the files. Read on a pty through pyte; every frame the bar drew is in the raw output
(the bar is transient: the last screen holds the summary)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.terminal import Terminal, quarry_command

FILES = 300


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(FILES):
        (root / f"note{i:03d}.txt").write_text(f"note number {i}, some words to read\n" * 3)
    (root / "empty.txt").write_bytes(b"")
    return root


@pytest.fixture
def terms() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for term in opened:
        term.close()


def _frames(term: Terminal) -> str:
    """Everything the command wrote, escape sequences dropped."""
    raw = bytes(term.raw).decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", " ", raw)


def test_sweep_progress_is_files_of_total_with_a_rate_and_time_left(
    folder: Path, terms: list[Terminal], tmp_path: Path
) -> None:
    total = FILES + 1
    bytes_total = sum(p.stat().st_size for p in folder.iterdir())
    argv = [*quarry_command(), "sweep", str(folder), "--no-external", "--workers", "1"]
    term = Terminal(argv, 120, 30, tmp_path)
    terms.append(term)
    assert term.exit_code(timeout=300) == 0, term.tail()
    frames = _frames(term)
    drawn = re.findall(rf"([\d,]+)/{total} files\s+(\S+) files/s\s+(\S+) left", frames)
    assert drawn, frames[-3000:]
    assert all(int(done.replace(",", "")) <= total for done, _rate, _left in drawn)
    assert f"/{bytes_total:,}" not in frames and f"/{bytes_total}" not in frames
    screen = term.text()
    assert f"quarry: {total} files" in screen
    assert f"read {FILES}, reused 0, 1 not read (empty, skipped)" in screen
