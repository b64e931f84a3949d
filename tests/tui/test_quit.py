"""Quitting a live dashboard stops the engine and really exits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.session import Session
from engine.store import Store
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from engine.watch import WatchOptions
from tui.app import QuarryApp


async def test_q_with_a_live_session_stops_the_engine_and_exits(sample: Path) -> None:
    session = Session([sample], SweepOptions(tools=ToolSet.empty()), watch_options=WatchOptions())
    app = QuarryApp(session.store.out, session)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            for _ in range(300):  # bounded wait for the first sweep to land
                await pilot.pause(0.05)
                if session.store.exists():
                    break
            # The key goes the user's way (driver, bindings), but the test does not wait on the
            # pilot: a press waits for the animator, which stops with the app it is quitting.
            press = asyncio.create_task(pilot.press("q"))
            for _ in range(600):
                if not app.is_running:
                    break
                await asyncio.sleep(0.05)
            press.cancel()
            assert not app.is_running, "q must exit the app once the engine has stopped"
    finally:
        session.close()
    assert app.return_code == 0
    assert session.watcher is None or not session.watcher.started
    with Store(session.store.out).writer():
        pass  # the lock was released: nothing of the engine is left running
