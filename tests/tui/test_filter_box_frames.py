"""The filter box shows and hides with one repaint of the records table (issue 25).

When ``/`` shows the box (and ``escape`` hides it) the table and the detail pane change
height. Textual, having laid them out and drawn them at their new height, laid the screen out
again for their new virtual size and repainted the table's whole area: a second frame of
~20 KB at 160x50 behind each of those keys (``tui.widgets.panels.resized_without_layout``).
"""

from __future__ import annotations

from typing import Any

import pytest
from textual._compositor import Compositor
from textual.geometry import Region
from textual.widgets import Input

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.widgets.record_table import RecordTable


def record_repaints(monkeypatch: pytest.MonkeyPatch) -> list[list[Region]]:
    """The regions of every partial frame from now on."""
    frames: list[list[Region]] = []
    partial = Compositor.render_partial_update

    def recording(self: Compositor) -> Any:
        regions = list(self._dirty_regions)
        update = partial(self)
        if update is not None:
            frames.append(regions)
        return update

    monkeypatch.setattr(Compositor, "render_partial_update", recording)
    return frames


@pytest.mark.parametrize(("key", "typed"), [("slash", ""), ("escape", ""), ("escape", "aaa")])
async def test_the_table_is_repainted_once_as_the_filter_box_shows_or_hides(
    store: Store, monkeypatch: pytest.MonkeyPatch, key: str, typed: str
) -> None:
    """Escaping a filter typed redraws the table once too: the box's own "changed" message
    filtered again, a message later, and drew the table, summary and tabs a second time."""
    frames = record_repaints(monkeypatch)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#filter", Input)
        table = app.screen.query_one(RecordTable)
        if key == "escape":
            await pilot.press("slash", *typed)
            await wait_for(pilot, lambda: box.has_focus and box.value == typed)
            await settle(pilot)
            await pilot.pause(0.2)
        frames.clear()
        await pilot.press(key)
        await wait_for(pilot, lambda: box.has_focus is (key == "slash"))
        await settle(pilot)
        await pilot.pause(0.2)
        middle = Region(table.region.x + 1, table.region.y + 10, 1, 1)  # a cell of a row
        touching = [f for f in frames if any(r.overlaps(middle) for r in f)]
        assert len(touching) == 1, frames
