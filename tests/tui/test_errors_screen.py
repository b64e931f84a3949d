"""Pilot tests of the errors screen: groups, drilling into a group, retrying it (confirmed)."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.widgets import DataTable

from tests.tui.conftest import SIZE, settle
from tests.tui.triage_helpers import (
    NO_TOOLS,
    TriageApp,
    add_trouble,
    docx_bytes,
    notes,
    screen_text,
    session_over,
    swept,
    wait_until,
)
from tui.screens.confirm import ConfirmScreen
from tui.screens.detail import DetailScreen
from tui.screens.errors import ErrorsScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen

CRC_GROUP = "zip member '…' is damaged: Bad CRC-32 for file '…'"


def _idle(app: TriageApp) -> bool:
    return not app.triage.retrying and not [w for w in app.workers if w.group == "retry"]


async def _errors(pilot, app: TriageApp) -> ErrorsScreen:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: swept(app))
    await settle(pilot)
    await pilot.press("x")
    await settle(pilot)
    assert isinstance(app.screen, ErrorsScreen)
    return app.screen


async def test_groups_largest_first_drill_down_and_retry_a_group(sample: Path) -> None:
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            # New groups are announced a second after they are seen (a timer), and not on the
            # errors screen, which shows them: wait for it before going there, bounded.
            await wait_until(pilot, lambda: any("new error groups" in n for n in notes(app)))
            screen = await _errors(pilot, app)
            top = screen.groups[0]
            assert (top.count, top.reason, top.message) == (3, "corrupt", CRC_GROUP)
            # error groups largest first; the suspect-text groups (issue 15) follow them
            errors = [g.count for g in screen.groups if g.reason not in ("suspect", "garbled")]
            assert errors == sorted(errors, reverse=True)
            text = screen_text(app)
            # the table shows a real example's words, not the grouping key
            assert "3      corrupt    zip member 'word/document.xml' is damaged" in text
            assert CRC_GROUP not in text
            assert "e.g. damaged/report00.docx: zip member 'word/document.xml' is damaged" in text
            await pilot.press("enter")  # into the group's files
            files = screen.query_one("#group-files", DataTable)
            assert files.has_focus and files.row_count == 3
            assert [str(files.get_row_at(i)[0]) for i in range(3)] == [
                f"damaged/report{i:02d}.docx" for i in range(3)
            ]
            for i in range(3):  # the operator repairs the files, then retries the group
                (folder / "damaged" / f"report{i:02d}.docx").write_bytes(docx_bytes(damaged=False))
            await pilot.press("R")
            await wait_until(pilot, lambda: _idle(app))
            await settle(pilot)
            for i in range(3):
                rid = app.model.ids[(str(folder), f"damaged/report{i:02d}.docx")]
                record = app.model.record(rid)
                assert record is not None and record.status == "ok" and record.why == "forced"
            # the screen redraws on a timer after live changes: wait for it, bounded
            await wait_until(pilot, lambda: CRC_GROUP not in {g.message for g in screen.groups})
            await wait_until(
                pilot, lambda: any("retried group corrupt" in n and "ok 3" in n for n in notes(app))
            )
            await pilot.press("escape", "escape")  # files, groups; then the screens before
            while not isinstance(app.screen, RecordsScreen):  # the tools screen, if it opened
                assert isinstance(app.screen, ToolsScreen)
                await pilot.press("escape")


async def test_retry_of_a_vanished_file_says_so(sample: Path) -> None:
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await _errors(pilot, app)
            await pilot.press("enter", "down")
            assert screen.file_key == (str(folder), "damaged/report01.docx")
            (folder / "damaged" / "report01.docx").unlink()
            await pilot.press("r")
            await wait_until(pilot, lambda: _idle(app))
            await settle(pilot)
            await wait_until(pilot, lambda: any("vanished" in n for n in notes(app)))
            said = [n for n in notes(app) if "vanished" in n]
            assert any("no longer on disk: damaged/report01.docx" in n for n in said)
            assert (str(folder), "damaged/report01.docx") not in app.model.ids
            await wait_until(pilot, lambda: screen.groups[0].count == 2)  # redrawn on a timer


async def test_a_big_group_asks_first(sample: Path) -> None:
    folder = add_trouble(sample, damaged=22)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            screen = await _errors(pilot, app)
            assert screen.groups[0].count == 22
            await pilot.press("R")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            assert "Retry 22 records" in screen_text(app)
            await pilot.press("n")
            await pilot.pause()
            assert app.screen is screen and not app.triage.retrying
            await pilot.press("R")
            await pilot.pause()
            await pilot.click("#yes")
            await pilot.pause()
            assert app.screen is screen
            await wait_until(pilot, lambda: _idle(app))
            await settle(pilot)
            await wait_until(pilot, lambda: any("error 22" in n for n in notes(app)))
            assert screen.groups[0].count == 22  # still damaged: same verdict, read again


async def test_home_and_end_go_to_the_first_and_last_group_and_file(sample: Path) -> None:
    """Textual's DataTable scrolls sideways on home/end; on a list of groups or files the
    operator means the first and the last row, as on the records screen."""
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await _errors(pilot, app)
            groups = screen.query_one("#groups", DataTable)
            assert groups.has_focus and groups.row_count > 2
            await pilot.press("end")
            assert groups.cursor_row == groups.row_count - 1 and groups.scroll_x == 0
            await pilot.press("home")
            assert groups.cursor_row == 0 and groups.scroll_x == 0
            await pilot.press("j", "j", "k")
            assert groups.cursor_row == 1
            await pilot.press("home", "enter")  # the largest group: three damaged files
            files = screen.query_one("#group-files", DataTable)
            assert files.has_focus and files.row_count == 3
            await pilot.press("end")
            assert files.cursor_row == 2 and files.scroll_x == 0
            await pilot.press("home")
            assert files.cursor_row == 0


async def test_two_enters_typed_together_open_the_groups_first_file(sample: Path) -> None:
    """Both keys of a fast (or pasted) enter-enter reach the app before the first is handled:
    the second must open the group's first file, not be lost on the groups table."""
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _errors(pilot, app)
            driver = app._driver
            assert driver is not None
            for _ in range(2):  # as a terminal delivers them: one read, no wait between
                key = events.Key("enter", None)
                key.set_sender(app)
                driver.send_message(key)
            await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
            await settle(pilot)
            assert "damaged/report00.docx" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, ErrorsScreen)
            assert app.screen.query_one("#group-files", DataTable).has_focus
