"""A records row is drawn as one segment per run of cells in one style, not one per cell.

A terminal is sent each segment's colours anew (~25 bytes): the records screen's full frame
at 160x50 was 41 KB with a segment per cell, 33 KB with a segment per run (issue 25's keys;
every ``escape`` back to the records draws one).
"""

from __future__ import annotations

from itertools import pairwise

from engine.store import Store
from tests.tui.conftest import SIZE, settle
from tui.app import QuarryApp
from tui.widgets.record_table import RecordTable


async def test_no_two_neighbouring_segments_of_a_row_share_a_style(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RecordTable)
        rows = min(len(app.model.view), table.size.height - 1)
        assert rows > 3
        for y in range(1, rows + 1):  # line 0 is the header
            segments = list(table.render_line(y))
            styles = [s.style for s in segments]
            assert all(a != b for a, b in pairwise(styles)), y
            assert len(segments) <= 3, y  # the cells before the status, the status, after
