"""``quarry ui --store S --since TIME``: the dashboard opens on the compare screen with the
store against itself as it was then (the history its index keeps); a time the history does
not reach, or no time at all, is one line and exit 1 before the terminal is touched."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from engine.sweep import SweepOptions, sweep
from tests.tui.conftest import wait_for
from tui.app import QuarryApp
from tui.screens.compare import CompareScreen


def _swept_twice(tmp_path: Path) -> tuple[Path, float]:
    """A folder swept, then one file edited and one removed and swept again; the time
    between the sweeps."""
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.txt").write_text("alpha bravo charlie delta echo\n")
    (root / "b.txt").write_text("one two three four\n")
    (root / "c.txt").write_text("kilo lima mike\n")
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    between = time.time()
    (root / "a.txt").write_text("alpha bravo charlie delta foxtrot golf\n")
    (root / "c.txt").unlink()
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    return root / ".quarry", between


async def test_the_dashboard_compares_the_store_with_itself_as_it_was(tmp_path: Path) -> None:
    store, between = _swept_twice(tmp_path)
    app = QuarryApp(store, None, read_only=True, since=between)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        groups = screen.query_one("#compare-groups", DataTable)
        await wait_for(pilot, lambda: groups.row_count == 2)
        rows = [" ".join(map(str, groups.get_row_at(i))) for i in range(groups.row_count)]
        assert any(r.startswith("text changed 1 a.txt") for r in rows), rows
        assert any(r.startswith("gone 1 c.txt") for r in rows), rows
        title = str(screen.query_one("#compare-title", Static).render())
        assert "as at" in title and "->  now" in title


def _ui(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", "ui", *args], capture_output=True, text=True, timeout=60,
        cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("since", "said"),
    [
        ("banana", "is no time"),
        ("1w", "the history"),  # before the first sweep finished: not kept
    ],
)
def test_a_since_the_history_cannot_answer_is_one_line_and_exit_1(
    tmp_path: Path, since: str, said: str
) -> None:
    store, _between = _swept_twice(tmp_path)
    proc = _ui("--store", str(store), "--since", since, cwd=tmp_path)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith("quarry: "), lines
    assert said in lines[0] and "Traceback" not in proc.stderr


def test_since_beside_compare_is_refused(tmp_path: Path) -> None:
    store, _between = _swept_twice(tmp_path)
    proc = _ui("--store", str(store), "--since", "1m", "--compare", str(store), cwd=tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1


async def test_after_a_retry_d_shows_what_each_file_was_and_is_now(sample: Path) -> None:
    """Issue 28: after ``r`` (or ``R`` on a group), ``D`` opens the compare screen with the
    store against itself as it was when the retry began: the repaired file got better."""
    from multiprocessing import resource_tracker

    from engine.session import Session
    from engine.sweep import SweepOptions as Options
    from engine.watch import WatchOptions
    from tests.tui.conftest import settle, visible_paths
    from tests.tui.triage_helpers import (
        NO_TOOLS,
        TriageApp,
        add_trouble,
        docx_bytes,
        swept_home,
        wait_until,
    )

    folder = add_trouble(sample, damaged=2)
    resource_tracker.ensure_running()  # (see tests.tui.triage_helpers.session_over)
    # The watcher would read the repaired file itself, before or after r: it is held off
    # for the test (an hour of debounce), so the change is the retry's alone.
    hold = WatchOptions(debounce_s=3600, batch_max_s=3600, settle_max_s=3600, rescan_s=3600)
    with contextlib.closing(
        Session([folder], Options(tools=NO_TOOLS, workers=1), watch_options=hold)
    ) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=(160, 50)) as pilot:
            await swept_home(pilot, app)
            (folder / "damaged" / "report00.docx").write_bytes(docx_bytes(damaged=False))
            app.records_screen.table.cursor = visible_paths(app).index("damaged/report00.docx")
            await pilot.pause()
            await pilot.press("r")
            await wait_until(pilot, lambda: not app.triage.retrying and not app.workers._workers)
            await settle(pilot)
            await pilot.press("D")
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
            groups = app.screen.query_one("#compare-groups", DataTable)
            await wait_for(pilot, lambda: groups.row_count >= 1)
            rows = [" ".join(map(str, groups.get_row_at(i))) for i in range(groups.row_count)]
            assert rows == [rows[0]] and rows[0].startswith("got better 1 damaged/report00.docx")
            assert "error" in rows[0] and "-> ok" in rows[0], rows
