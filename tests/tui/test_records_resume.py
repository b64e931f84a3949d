"""Back on the records screen (escape from errors, tools, help): one repaint, with what
changed meanwhile (issue 25).

The app tells the records screen of every change at once, on top or not; it redrew its
table, summary and header again as it resumed, and those redraws reached the screen after
its own repaint: every escape was drawn twice (23 KB, then 18 KB at 160x50), the next key
waiting behind the second.
"""

from __future__ import annotations

import time

import pytest

from engine.events import RecordsChanged
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import settle, visible_paths, wait_for
from tui.app import QuarryApp
from tui.sample import ROOT
from tui.screens.errors import ErrorsScreen
from tui.screens.records import RecordsScreen
from tui.widgets.record_table import RecordTable


async def test_escape_to_the_records_redraws_nothing_and_shows_what_changed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    reloads: list[int | None] = []
    reload = RecordTable.reload

    def counted(self: RecordTable, keep: int | None = None) -> None:
        reloads.append(keep)
        reload(self, keep)

    monkeypatch.setattr(RecordTable, "reload", counted)
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        await settle(pilot)
        # a record appears while the records screen is hidden: drawn at once, under it
        new = Record(ROOT, "aaa/new.txt", 10, 1, "ok", "cd" * 32, "text/plain", None)
        app.apply_events([RecordsChanged(time.time(), (new,))])
        await settle(pilot)
        assert "aaa/new.txt" in visible_paths(app)
        reloads.clear()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await settle(pilot)
        assert reloads == []  # nothing redrawn again
        table = app.screen.query_one(RecordTable)
        assert any("aaa/new.txt" in line for line in table_lines(table))


def table_lines(table: RecordTable) -> list[str]:
    return [strip.text for strip in table.render_lines(table.size.region)]
