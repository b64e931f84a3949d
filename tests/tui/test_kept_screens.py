"""The errors, unsupported, tools and activity screens and the help are made once and shown
again: ``x esc x`` is the same screen, started over (first row, keys on the groups), with
what changed while it was hidden (only the screen on top hears of live changes).

Made anew for each key, a screen cost its compose, a restyle of every widget and two full
repaints, and its removal one more of the screen below: most of a key's time at load
(issue 25; ``tests/bench/bench_keys.py``).
"""

from __future__ import annotations

import time

from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static

from engine.events import RecordsChanged
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import settle, static_text, wait_for
from tui.app import QuarryApp
from tui.sample import ROOT
from tui.screens.activity import ActivityScreen
from tui.screens.errors import ErrorsScreen
from tui.screens.help import HelpScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen
from tui.screens.unsupported import UnsupportedScreen


async def test_a_screen_shown_again_is_the_same_started_over_with_what_changed(
    store: Store,
) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)

        async def show(key: str, kind: type) -> None:
            await pilot.press(key)
            await wait_for(pilot, lambda: type(app.screen) is kind)

        await show("x", ErrorsScreen)
        errors = app.screen
        assert isinstance(errors, ErrorsScreen)
        groups = errors.query_one("#groups", DataTable)
        assert groups.row_count > 1
        await pilot.press("down", "enter")  # into the second group's files
        await wait_for(pilot, lambda: errors.in_files)
        await show("escape", ErrorsScreen)  # the files back to the groups
        await show("escape", RecordsScreen)
        # a new error group appears while the errors screen is hidden
        new = Record(ROOT, "new/odd.bin", 10, 1, "error", "ab" * 32, "application/x-odd",
                     "corrupt", error="a message no sample record has")  # fmt: skip
        app.apply_events([RecordsChanged(time.time(), (new,))])
        before = groups.row_count
        await show("x", ErrorsScreen)
        assert app.screen is errors  # the same screen, not a new one
        await wait_for(pilot, lambda: groups.row_count == before + 1)
        assert groups.cursor_row == 0 and groups.has_focus  # started over
        title = static_text(errors.query_one(f"#{errors.TITLE_ID}", Static))
        assert f"Errors {len(app.model.rids_with_status('error')):,} in" in title
        await show("escape", RecordsScreen)

        for key, kind in [("u", UnsupportedScreen), ("t", ToolsScreen), ("at", ActivityScreen)]:
            await show(key, kind)
            first = app.screen
            await show("escape", RecordsScreen)
            await show(key, kind)
            assert app.screen is first, kind.__name__
            await show("escape", RecordsScreen)


async def test_the_activity_screen_shown_again_has_no_filter(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("at")
        await wait_for(pilot, lambda: isinstance(app.screen, ActivityScreen))
        activity = app.screen
        assert isinstance(activity, ActivityScreen)
        await pilot.press("slash", "z", "z", "z", "enter", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        assert activity.query_text.text == "zzz"
        await pilot.press("at")
        await wait_for(pilot, lambda: app.screen is activity and activity.query_text.text == "")
        assert activity.query_one("#activity-filter", Input).value == ""
        assert activity.log_widget.has_focus


async def test_the_help_shown_again_is_the_same_from_the_top(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        box = help_screen.query_one("#help", VerticalScroll)
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: box.scroll_y > 0)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is help_screen and box.scroll_y == 0)


async def test_the_same_groups_redrawn_keep_their_tables(store: Store) -> None:
    """A live change that leaves the groups as they were (most of a sweep's, on the errors
    screen: it redraws every 0.3 s while records come) rebuilds neither table: a rebuilt
    table is repainted whole."""
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        errors = app.screen
        assert isinstance(errors, ErrorsScreen)
        groups = errors.query_one("#groups", DataTable)
        files = errors.query_one("#group-files", DataTable)
        await pilot.press("down")
        await wait_for(pilot, lambda: groups.cursor_row == 1)
        rows, file_rows = list(groups.rows), list(files.rows)
        errors.refresh_data()
        await settle(pilot)
        assert list(groups.rows) == rows and list(files.rows) == file_rows
        assert groups.cursor_row == 1


async def test_a_redraw_due_on_a_screen_gone_back_from_or_quitting_draws_nothing(
    store: Store,
) -> None:
    """A live change arms a redraw 0.3 s later; by then the screen may be hidden (it starts
    over when shown again) or taken down as the dashboard quits, its tables removed: the
    redraw then found no ``#tool-table`` and took the dashboard down (CI, stop 34). The
    timer's callback is called here at each of those moments."""
    app = QuarryApp(store.out)
    drawn: list[bool] = []
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await wait_for(pilot, lambda: type(app.screen) is ToolsScreen)
        tools = app.screen
        assert isinstance(tools, ToolsScreen)
        real = tools.refresh_data
        tools.refresh_data = lambda: (drawn.append(True), real())[1]  # type: ignore[method-assign]
        tools._refresh_now()
        assert drawn == [True]  # on top: redrawn
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        drawn.clear()
        tools._refresh_now()
        assert drawn == []  # hidden: started over when shown again
        await pilot.press("t")
        await wait_for(pilot, lambda: app.screen is tools and drawn == [True])
        drawn.clear()
    tools._refresh_now()  # the dashboard has quit: its screens are pruned
    assert drawn == []
