"""What the load made is out of the garbage collector's passes while the dashboard runs
(``tui.feed.Collector``), and back in them once it has gone.

Each full pass of the collector walked every object of the process, the loaded model and
Textual's widgets alike: 25-60 ms of CPU on the fixtures' store, several a minute as keys
are pressed, inside whichever key was then being answered (issue 25).
"""

from __future__ import annotations

import gc

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.screens.records import RecordsScreen


async def test_the_loaded_dashboard_is_frozen_until_it_leaves(store: Store) -> None:
    assert gc.get_freeze_count() == 0
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, gc.isenabled)  # resumed after the frame that shows the load
        assert isinstance(app.screen, RecordsScreen)
        assert gc.get_freeze_count() > 10_000  # the app, its screens, the model: all of it
        # what comes after is collected as before
        gc.collect()
        assert gc.get_freeze_count() > 10_000
    assert gc.get_freeze_count() == 0 and gc.isenabled()
