"""``quarry ui --store B --compare A``: the dashboard opens on the compare screen (A before,
B after), escape leaves it for the records; wrong input is one line and exit 1 before any
terminal is touched; a file's text and source open from the screen through the dashboard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.tui.conftest import wait_for
from tests.tui.test_compare_screen import stores
from tui.app import QuarryApp
from tui.screens.compare import CompareScreen
from tui.screens.records import RecordsScreen


def quarry(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


@pytest.mark.parametrize(
    ("other", "said"),
    [
        ("nowhere", "no such folder"),
        ("plain", "no store at"),
        ("file.txt", "it is a file"),
        ("B", "names the store shown"),
        (".", "names the store shown"),  # B's parent folder, whose .quarry B is
    ],
)
def test_wrong_compare_input_is_one_line_and_exit_1(tmp_path: Path, other: str, said: str) -> None:
    stores(tmp_path)
    (tmp_path / "plain").mkdir()
    (tmp_path / "file.txt").write_text("x")
    shown_store = tmp_path / "B"
    if other == ".":  # the store as a swept folder's .quarry
        shown_store.rename(tmp_path / ".quarry")
        shown_store = tmp_path / ".quarry"
    proc = quarry("ui", "--store", str(shown_store), "--compare", other, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and said in lines[0] and lines[0].startswith("quarry: "), lines
    assert "Traceback" not in proc.stderr and proc.stdout == ""


async def test_the_dashboard_opens_on_the_compare_screen_and_escape_leaves_it(
    tmp_path: Path,
) -> None:
    before, after = stores(tmp_path)
    app = QuarryApp(after.out, None, read_only=True, compare=before)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert (screen.before.out, screen.after.out) == (before.out, after.out)
        groups = screen.query_one("#compare-groups", DataTable)
        await wait_for(pilot, lambda: groups.row_count == 3)
        assert not screen.check_action("edit_text", ())  # no file at the groups' level
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))


async def test_a_files_text_and_source_open_through_the_dashboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = stores(tmp_path)
    app = QuarryApp(after.out, None, read_only=True, compare=before)
    handed: list[list[str]] = []

    def run_outside(command: list[str]) -> int:
        handed.append(command)
        return 0

    monkeypatch.setattr(app, "run_outside", run_outside)
    monkeypatch.setenv("EDITOR", "myeditor")
    notes: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: notes.append(str(message)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        groups = screen.query_one("#compare-groups", DataTable)
        await wait_for(pilot, lambda: groups.row_count == 3)
        await pilot.press("down", "enter")  # got worse: broken.txt, no text after
        files = screen.query_one("#compare-files", DataTable)
        await wait_for(pilot, lambda: files.display and files.row_count == 1)
        await pilot.press("e")  # the text before, as the file has none after
        await wait_for(pilot, lambda: len(handed) == 1)
        assert handed[0][0] == "myeditor"
        assert Path(handed[0][-1]).read_text() == "it was fine"
        await pilot.press("escape", "up", "enter", "down", "enter")  # text changed: b.txt
        await wait_for(pilot, lambda: screen.change is not None and screen.change.path == "b.txt")
        await pilot.press("e")
        await wait_for(pilot, lambda: len(handed) == 2)
        assert Path(handed[1][-1]).read_text() == "one two\nthree four"  # after's text
        await pilot.press("o")  # the source is /data/b.txt, not on this machine
        await wait_for(pilot, lambda: any("no longer on disk" in n for n in notes))
        assert len(handed) == 2
