"""Triage without dead ends: from an error group, enter opens the record; escape comes back."""

from __future__ import annotations

from textual.widgets import DataTable

from engine.store import Store
from tests.tui.conftest import SIZE, settle, wait_for
from tests.tui.triage_helpers import screen_text
from tui.app import QuarryApp
from tui.screens.detail import DetailScreen
from tui.screens.errors import ErrorsScreen


async def test_enter_on_a_grouped_file_opens_it_and_escape_returns_to_the_same_place(
    store: Store,
) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        errors = app.screen
        assert isinstance(errors, ErrorsScreen)
        await pilot.press("down", "enter")  # the second group, into its files
        files = errors.query_one("#group-files", DataTable)
        assert files.has_focus
        group = errors.group
        assert group is not None
        await pilot.press("enter")  # the file: in full
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        shown = screen_text(app)
        assert group.example_path in shown and group.reason in shown
        await pilot.press("escape")
        assert app.screen is errors and files.has_focus and errors.group is group
