"""The dashboard over a session whose ground moves: its watched folder goes and comes back (a
share unmounted and mounted again): the header says "folder gone" instead of "watching", the
rows stay, and once a folder is there again the header says "watching" and the rows are the
new folder's; its store's index fails under the first sweep: the rows are the store's."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
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


async def test_a_first_sweep_whose_index_failed_shows_what_the_store_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index failing mid first sweep (a full disk: SQLITE_FULL at its fifth batch) rolls
    back what it had not committed; the dashboard kept every row the sweep had told of (2,304
    ``ok`` on a 640 KiB tmpfs, with a store of none) under a "failed" header. Now it reads the
    store again and shows what it holds."""
    from engine import run as run_mod
    from engine.resume import Ledger
    from engine.store import Store
    from tests.engine.test_lean_sweep import _full_disk, failing_put

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(40):
        (root / f"f{i:02}.txt").write_text(f"file {i}\n")
    monkeypatch.setattr(run_mod.Run, "BATCH", 4)
    monkeypatch.setattr(Ledger, "COMMIT_S", 0.0)
    failing_put(monkeypatch, at=5, exc=_full_disk())
    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=tmp_path / "store")
    session = Session([root], opts, watch_options=options(False))
    try:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _until(pilot, "the failure", lambda: app.state_text == "failed")
            kept = {r.path for r in Store(tmp_path / "store").load_records()}
            assert len(kept) < 40  # (the batches before the fifth, at most)
            await _until(pilot, "the store's rows", lambda: len(app.model) == len(kept))
            await settle(pilot)
            assert set(visible_paths(app)) <= kept
    finally:
        session.close()
