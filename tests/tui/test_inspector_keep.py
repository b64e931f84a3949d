"""The inspector keeps the reader's place: wrap keeps the page, q goes back, never quits."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from tests.tui.conftest import settle, static_text, text_store, wait_for
from tui.app import QuarryApp
from tui.screens.inspector import InspectorScreen
from tui.screens.records import RecordsScreen
from tui.widgets.text_view import TextView

PAGED = "\f".join(
    "".join(f"page {p} line {i} " + "word " * 30 + "\n" for i in range(40)) for p in range(1, 99)
)


async def open_paged(pilot, app: QuarryApp) -> InspectorScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    rid = app.model.ids[("/texts", "paged.txt")]
    app.records_screen.table.cursor = app.model.position(rid) or 0
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
    screen = app.screen
    assert isinstance(screen, InspectorScreen)
    await wait_for(pilot, lambda: "lines" in static_text(screen.query_one("#status", Static)))
    return screen


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_wrap_keeps_the_page_being_read(tmp_path: Path, size: tuple[int, int]) -> None:
    app = QuarryApp(text_store(tmp_path / "s", {"paged.txt": PAGED}).out)
    async with app.run_test(size=size) as pilot:
        screen = await open_paged(pilot, app)
        view = screen.query_one(TextView)
        await pilot.press(*["right_square_bracket"] * 11)
        await pilot.press("down", "down", "down")
        await pilot.pause()
        status = screen.query_one("#status", Static)
        assert "(12/98)" in static_text(status)
        line = view.top_line
        assert line > 400
        for wrapped in (True, False, True):
            await pilot.press("w")
            await pilot.pause()
            assert view.wrap is wrapped
            assert view.top_line == line, (wrapped, view.top_line, line)
            assert "(12/98)" in static_text(status)


async def test_q_in_the_inspector_goes_back_and_q_on_records_quits(tmp_path: Path) -> None:
    app = QuarryApp(text_store(tmp_path / "s", {"paged.txt": PAGED}).out)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_paged(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, RecordsScreen)


async def test_q_on_every_sub_screen_goes_back_first(tmp_path: Path) -> None:
    app = QuarryApp(text_store(tmp_path / "s", {"paged.txt": PAGED}).out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in ("x", "u", "t", "at"):
            await pilot.press(key)
            await wait_for(pilot, lambda: not isinstance(app.screen, RecordsScreen))
            await pilot.press("q")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
            assert app.is_running, key
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running)
