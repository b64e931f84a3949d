"""A screen under an opaque one keeps its changes to itself (``tui.screens.full.covered``).

Textual counts the screen just under the top one as a background that may show through, even
under an opaque screen, and repaints the top screen wherever the covered one changed:
``push_screen`` repaints the screen it covers, so ``x``, ``u`` and ``t`` each wrote their
screen two or three times (13 KB, 12 KB, 13 KB at 160x50, issue 25), and every live change of
the records under a triage screen repainted the triage screen. A triage screen shown again
then drew itself twice more: its widgets' changes (started over once on top) and Textual's
restyle of its tables reached it after its own repaint.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from textual import events
from textual.screen import Screen

from engine.events import RecordsChanged
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.sample import ROOT
from tui.screens.errors import ErrorsScreen
from tui.screens.help import HelpScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen
from tui.screens.unsupported import UnsupportedScreen
from tui.widgets.record_table import RecordTable


def record_frames(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(screen, kind of frame) of every frame the app hands to the terminal from now on."""
    frames: list[tuple[str, str]] = []
    display = QuarryApp._display

    def recording(self: QuarryApp, screen: Any, renderable: Any) -> None:
        if renderable is not None:
            frames.append((type(screen).__name__, type(renderable).__name__))
        display(self, screen, renderable)

    monkeypatch.setattr(QuarryApp, "_display", recording)
    return frames


async def test_changes_under_an_opaque_screen_do_not_repaint_it(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames = record_frames(monkeypatch)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        await settle(pilot)
        await pilot.pause(0.1)
        frames.clear()
        records = app.records_screen
        records.refresh()  # as push_screen does to the screen it covers
        records.query_one(RecordTable).refresh()
        await settle(pilot)
        await pilot.pause(0.1)
        assert frames == []


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("x", ErrorsScreen),
        ("u", UnsupportedScreen),
        ("t", ToolsScreen),
        ("question_mark", HelpScreen),
    ],
)
async def test_a_kept_screen_shown_again_is_one_frame(
    store: Store, monkeypatch: pytest.MonkeyPatch, key: str, kind: type[Screen[Any]]
) -> None:
    """Shown again, a triage screen (or the help) starts over before it is on top, is not
    restyled (the app's styles did not change), and draws none of what it holds twice: one
    frame."""
    frames = record_frames(monkeypatch)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press(key)  # made (its first frames are the compose's)
        await wait_for(pilot, lambda: isinstance(app.screen, kind))
        await settle(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await settle(pilot)
        await pilot.pause(0.2)
        frames.clear()
        await pilot.press(key)  # shown again
        await wait_for(pilot, lambda: isinstance(app.screen, kind))
        await settle(pilot)
        await pilot.pause(0.2)
        assert frames == [(kind.__name__, "LayoutUpdate")]


async def test_records_changed_under_a_triage_screen_show_once_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        await settle(pilot)
        new = Record(ROOT, "aaa/covered.txt", 10, 1, "ok", "ce" * 32, "text/plain", None)
        app.apply_events([RecordsChanged(time.time(), (new,))])
        await settle(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await settle(pilot)
        table = app.screen.query_one(RecordTable)
        lines = [s.text for s in table.render_lines(table.size.region)]
        assert any("aaa/covered.txt" in line for line in lines)


async def test_a_screen_shown_again_after_a_theme_change_has_the_new_theme(
    store: Store,
) -> None:
    """Not restyled as it is shown again, unless the app's styles changed meanwhile."""
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        await settle(pilot)
        screen = app.screen
        before = screen.styles.background
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: app.screen is screen)
        await settle(pilot)
        assert screen.styles.background != before
        assert screen.styles.background == app.screen_stack[0].styles.background


async def test_a_screen_shown_again_after_another_screens_css_was_read_is_restyled(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another screen's CSS, read since, applies to every screen: the one shown again is
    restyled once then (Textual restyles only the screens mounted when it reads it)."""
    restyled: list[bool] = []
    resume = Screen._on_screen_resume

    def seen(self: Screen[Any], event: events.ScreenResume) -> None:
        if isinstance(self, ToolsScreen):
            restyled.append(event.refresh_styles)
        resume(self, event)

    monkeypatch.setattr(Screen, "_on_screen_resume", seen)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        for key, kind in [("t", ToolsScreen), ("x", ErrorsScreen), ("t", ToolsScreen)] * 2:
            await pilot.press(key)
            await wait_for(pilot, lambda kind=kind: isinstance(app.screen, kind))
            await settle(pilot)
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
            await settle(pilot)
        # made; shown again after errors.tcss was read; shown again with nothing new (x2)
        assert restyled == [True, True, False, False]
