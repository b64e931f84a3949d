"""Moving the focus repaints what it concerns, not the whole screen (``tui.screens.full``).

Textual repainted the whole screen on each focus change: ``/`` into the filter box and the
``escape`` out of it each wrote a full frame (~22 KB at 160x50) beside their own changes.
What the frames are is seen where the app hands them to the terminal: a full repaint is a
``LayoutUpdate``, a partial one a ``ChopsUpdate``.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.screens.records import RecordsScreen
from tui.widgets.record_table import RecordTable


async def test_the_filter_box_takes_the_focus_without_a_full_repaint(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = QuarryApp(store.out)
    frames: list[str] = []
    display = QuarryApp._display

    def recording(self: QuarryApp, screen: Any, renderable: Any) -> None:
        if renderable is not None:
            frames.append(type(renderable).__name__)
        display(self, screen, renderable)

    monkeypatch.setattr(QuarryApp, "_display", recording)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen)
        box = app.screen.query_one("#filter", Input)
        frames.clear()
        await pilot.press("slash")
        await wait_for(pilot, lambda: box.has_focus)
        await settle(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.query_one(RecordTable).has_focus)
        await settle(pilot)
        assert frames, "nothing was drawn"
        assert "LayoutUpdate" not in frames, frames
