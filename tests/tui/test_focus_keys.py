"""Focus is visible and keys work where it goes: Tab to the status tabs and back, G on every
grouped screen."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Tab

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.widgets.panels import CountTabs
from tui.widgets.record_table import RecordTable


async def test_tab_to_the_status_tabs_shows_it_and_j_comes_back(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.records_screen.table
        active = app.records_screen.query_one("#tab-all", Tab)
        blurred = active.styles.background
        await pilot.press("tab")
        assert isinstance(app.focused, CountTabs)
        assert active.styles.background != blurred  # where the keys went is seen
        await pilot.press("l")  # h/l as the arrows
        await wait_for(pilot, lambda: app.model.tab == "ok")
        assert isinstance(app.focused, CountTabs)
        for key in ("j", "down", "enter"):
            await pilot.press(key)
            assert isinstance(app.focused, RecordTable), key
            await pilot.press("tab")
            assert isinstance(app.focused, CountTabs)
        await pilot.press("j")
        before = table.cursor
        await pilot.press("j")
        assert table.cursor == before + 1


@pytest.mark.parametrize("key", ["x", "u", "t"])
async def test_G_goes_to_the_last_row_of_every_grouped_screen(store: Store, key: str) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.focused, DataTable))
        await settle(pilot)
        table = app.focused
        assert isinstance(table, DataTable) and table.row_count > 1
        assert table.cursor_row == 0
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
