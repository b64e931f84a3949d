"""Issue 28: the compare screen acts as the records screen does (``r``/``R`` retry, ``i`` or
enter on a file's texts open the inspector); after ``R`` on a group the files retried are
shown as they were and as they are now; a retry or a sweep that changed records offers ``D``
(a pop-up naming the key, never a screen opened unasked); a comparison with nothing changed
says so in a line instead of an empty table."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from textual.widgets import DataTable, Static

from engine.events import RecordsChanged, SweepFinished, SweepStarted
from engine.records import Record, Summary
from engine.sweep import SweepOptions, sweep
from tests.tui.conftest import settle, static_text, visible_paths, wait_for
from tui.app import QuarryApp
from tui.link import Link
from tui.model import RecordModel
from tui.screens.compare import CompareScreen
from tui.screens.detail import DetailScreen
from tui.screens.records import RecordsScreen
from tui.state import TriageState


def _rows(table: DataTable[object]) -> list[str]:
    return [" ".join(map(str, table.get_row_at(i))) for i in range(table.row_count)]


async def test_nothing_changed_is_a_line_not_an_empty_table(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.txt").write_text("alpha bravo\n")
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    then = time.time()  # (the history starts as the sweep ends)
    app = QuarryApp(root / ".quarry", None, read_only=True, since=then)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        status = screen.query_one("#compare-status", Static)
        await wait_for(pilot, lambda: "nothing changed" in static_text(status))
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(then))
        assert static_text(status) == f"nothing changed since {at}: 1 file as they were"
        assert not screen.query_one("#compare-groups", DataTable).display
        assert not screen.check_action("retry_many", ())  # nothing to retry either


async def test_the_compare_screen_retries_a_group_and_shows_each_file_was_and_is(
    sample: Path,
) -> None:
    from multiprocessing import resource_tracker

    from engine.session import Session
    from engine.sweep import SweepOptions as Options
    from engine.watch import WatchOptions
    from tests.tui.triage_helpers import (
        NO_TOOLS,
        TriageApp,
        add_trouble,
        docx_bytes,
        notes,
        swept_home,
        wait_until,
    )

    folder = add_trouble(sample, damaged=2)
    resource_tracker.ensure_running()  # (see tests.tui.triage_helpers.session_over)
    hold = WatchOptions(debounce_s=3600, batch_max_s=3600, settle_max_s=3600, rescan_s=3600)
    damaged = folder / "damaged" / "report00.docx"
    with contextlib.closing(
        Session([folder], Options(tools=NO_TOOLS, workers=1), watch_options=hold)
    ) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=(160, 50)) as pilot:
            await swept_home(pilot, app)
            damaged.write_bytes(docx_bytes(damaged=False))
            app.records_screen.table.cursor = visible_paths(app).index("damaged/report00.docx")
            await pilot.pause()
            await pilot.press("r")
            await wait_until(pilot, lambda: not app.triage.retrying and not app.workers._workers)
            await settle(pilot)
            # the retry changed a record: D is offered, the compare screen not opened unasked
            assert any("D: what changed" in n for n in notes(app)), notes(app)
            assert isinstance(app.screen, RecordsScreen)
            await pilot.press("D")
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
            first = app.screen
            groups = first.query_one("#compare-groups", DataTable)
            await wait_for(pilot, lambda: groups.row_count == 1)
            assert _rows(groups)[0].startswith("got better 1 damaged/report00.docx")
            # the file breaks again; R on the group reads it again, and the screen that
            # follows shows what it was when the retry began and what it is now
            damaged.write_bytes(docx_bytes(damaged=True))
            await pilot.press("R")
            await wait_for(pilot, lambda: app.screen is not first, timeout=60)
            after = app.screen
            assert isinstance(after, CompareScreen)
            now = after.query_one("#compare-groups", DataTable)
            await wait_for(pilot, lambda: now.row_count == 1)
            row = _rows(now)[0]
            assert row.startswith("got worse 1 damaged/report00.docx") and "ok -> error" in row
            # into the group, then i: the inspector's view of a record without text (detail)
            await pilot.press("enter")
            files = after.query_one("#compare-files", DataTable)
            await wait_for(pilot, lambda: files.display and files.row_count == 1)
            await pilot.press("i")
            await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is after)
            await pilot.press("escape", "escape")  # files, groups: back to the first
            await wait_for(pilot, lambda: app.screen is first)


def _record(path: str, chars: int) -> Record:
    return Record("/r", path, 10, 1, "ok", sha256="a" * 64, chars=chars, ms=1)


def test_a_sweep_that_changed_shown_records_offers_d_and_one_that_did_not_is_quiet() -> None:
    link = Link(RecordModel(), TriageState(), sweeping=True)
    summary = Summary(["/r"], 2)
    first = [_record("a.txt", 5), _record("b.txt", 6)]
    cold = link.apply(
        [SweepStarted(1.0, ("/r",), 2, 20, True), RecordsChanged(1.0, tuple(first), ()),
         SweepFinished(2.0, summary, 2, 0, True)],
        None,
    )  # fmt: skip
    assert not any("D shows" in s.message for s in cold.say)  # a first sweep is no news
    same = [r.evolve(reused=True, ms=9) for r in first]  # read again to the same verdicts
    quiet = link.apply(
        [SweepStarted(3.0, ("/r",), 2, 20, True), RecordsChanged(3.0, tuple(same), ()),
         SweepFinished(4.0, summary, 0, 2, True)],
        None,
    )  # fmt: skip
    assert not any("D shows" in s.message for s in quiet.say)
    changed = link.apply(
        [SweepStarted(5.0, ("/r",), 2, 20, True),
         RecordsChanged(5.0, (first[0].evolve(chars=7),), (("/r", "b.txt"),)),
         SweepFinished(6.0, summary, 1, 1, True)],
        None,
    )  # fmt: skip
    assert [s.message for s in changed.say if "D shows" in s.message] == [
        "2 files changed: D shows what changed"
    ]
    assert link.sweep_began == 5.0
