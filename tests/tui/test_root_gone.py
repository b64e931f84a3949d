"""The dashboard over a session whose watched folder goes and comes back (a share unmounted and
mounted again): the header says "folder gone" instead of "watching", the rows stay, and once a
folder is there again the header says "watching" and the rows are the new folder's."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from engine.session import Session
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import WAIT_S, options
from tests.tui.conftest import SIZE, settle, visible_paths
from tests.tui.triage_helpers import swept
from tui.app import QuarryApp


async def _until(pilot: Pilot[None], what: str, done: Callable[[], bool]) -> None:
    end = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def test_a_watched_folder_gone_is_said_in_the_header_until_it_is_there_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "share"
    root.mkdir()
    for name in ("a", "b"):
        (root / f"{name}.txt").write_text(f"{name} was there\n")
    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=tmp_path / "store")
    session = Session([root], opts, watch_options=options(False))
    try:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, "the first sweep", lambda: swept(app))
            await settle(pilot)
            if app.screen is not app.records_screen:
                await pilot.press("escape")
            await _until(pilot, "watching", lambda: app.state_text == "watching")
            shutil.rmtree(root)
            await _until(pilot, "the header to say so", lambda: app.state_text == "folder gone")
            assert visible_paths(app) == ["a.txt", "b.txt"]  # kept
            root.mkdir()
            (root / "c.txt").write_text("in the folder mounted again\n")
            await _until(pilot, "the new folder's rows", lambda: visible_paths(app) == ["c.txt"])
            await _until(pilot, "watching again", lambda: app.state_text == "watching")
    finally:
        session.close()
    assert session.not_current() is None
