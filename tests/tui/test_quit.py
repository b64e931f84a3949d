"""Quitting a live dashboard stops the engine and really exits."""

from __future__ import annotations

from pathlib import Path

from engine.session import Session
from engine.store import Store
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from engine.watch import WatchOptions
from tests.tui.conftest import quit_with_q
from tui.app import QuarryApp
from tui.screens.records import RecordsScreen


async def test_q_with_a_live_session_stops_the_engine_and_exits(sample: Path) -> None:
    session = Session([sample], SweepOptions(tools=ToolSet.empty()), watch_options=WatchOptions())
    app = QuarryApp(session.store.out, session)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            for _ in range(300):  # bounded wait for the first sweep to land
                await pilot.pause(0.05)
                if session.store.exists():
                    break
            # the tools screen may have opened by itself: q there goes back, then q quits
            for _ in range(300):
                await pilot.pause(0.05)
                if app.state == "watching":
                    break
            await pilot.pause()
            while not isinstance(app.screen, RecordsScreen):
                await pilot.press("q")
            await quit_with_q(pilot)  # the engine stops first, then the app
    finally:
        session.close()
    assert app.return_code == 0
    assert session.watcher is None or not session.watcher.started
    with Store(session.store.out).writer():
        pass  # the lock was released: nothing of the engine is left running
