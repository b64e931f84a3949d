"""Escape goes back to the screen it came from (a back stack), not to the records."""

from __future__ import annotations

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.screens.errors import ErrorsScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen
from tui.screens.unsupported import UnsupportedScreen


async def test_escape_walks_back_the_screens_visited(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)

        async def press(key: str, screen: type) -> None:
            await pilot.press(key)
            await wait_for(pilot, lambda: type(app.screen) is screen)

        await press("x", ErrorsScreen)
        await press("u", UnsupportedScreen)
        await press("t", ToolsScreen)
        await press("escape", UnsupportedScreen)
        await press("escape", ErrorsScreen)
        await press("escape", RecordsScreen)
        # a kind already in the stack is gone back to, as it was: the stack stays bounded
        await press("x", ErrorsScreen)
        errors = app.screen
        await press("u", UnsupportedScreen)
        await press("x", ErrorsScreen)
        assert app.screen is errors and len(app.screen_stack) == 2
        await press("escape", RecordsScreen)
