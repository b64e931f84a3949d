"""The records screen's footer is rebuilt only when the keys it shows change (issue 25).

Each rebuild is a frame after the one a key asked for, and the next key waits behind it:
``?`` and its ``escape`` rebuilt the records' footer twice while the help covered it (the
app's keys change under it and come back as they were), and a focus change that only moved
hidden keys (the filter box's backspace, the tab digits) rebuilt it too.
"""

from __future__ import annotations

import pytest

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.screens.detail import DetailScreen
from tui.screens.help import HelpScreen
from tui.screens.records import RecordsScreen
from tui.widgets.footer import FittingFooter
from tui.widgets.typed_input import TypedInput


async def test_the_help_over_the_records_rebuilds_no_footer_of_theirs(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilt: list[str] = []
    recompose = FittingFooter.recompose

    async def counted(self: FittingFooter) -> None:
        rebuilt.append(type(self.screen).__name__)
        await recompose(self)

    monkeypatch.setattr(FittingFooter, "recompose", counted)
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        for _ in range(2):  # the first help is made; the second is the one kept
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await settle(pilot)
            rebuilt.clear()
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
            await settle(pilot)
            await pilot.pause(0.2)
            assert "RecordsScreen" not in rebuilt
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        await pilot.pause(0.2)
        assert "RecordsScreen" not in rebuilt


async def test_leaving_the_filter_box_rebuilds_the_footer_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The "/ Filter" key comes back: one rebuild. A signal while the old keys were being
    # removed made a second one of the same keys.
    rebuilt: list[str] = []
    recompose = FittingFooter.recompose

    async def counted(self: FittingFooter) -> None:
        rebuilt.append(type(self.screen).__name__)
        await recompose(self)

    monkeypatch.setattr(FittingFooter, "recompose", counted)
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        for _ in range(2):
            await pilot.press("slash")
            await wait_for(pilot, lambda: isinstance(app.focused, TypedInput))
            await settle(pilot)
            await pilot.pause(0.2)
            rebuilt.clear()
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.focused, TypedInput))
            await settle(pilot)
            await pilot.pause(0.2)
            assert rebuilt == ["RecordsScreen"]


async def test_a_rebuild_that_comes_round_after_its_screen_closed_does_nothing(
    store: Store,
) -> None:
    # CI, session 23: escape from a record's detail closed the screen while its footer's
    # rebuild waited for the next refresh; the rebuild asked the closed screen for its keys
    # (NoScreen) and took the dashboard down.
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        record = app.model.record(next(iter(app.model.ids.values())))
        assert record is not None
        app.push_screen(DetailScreen(record, set()))
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        footer = app.screen.query_one(FittingFooter)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await wait_for(pilot, lambda: not footer.is_attached)
        await footer.recompose()
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, RecordsScreen)
