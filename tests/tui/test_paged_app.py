"""The dashboard over a store browsed from its index shows what it shows of the store held.

A store of at least :data:`engine.browse.BROWSE_FROM` records that no session sweeps is paged
from its index (:class:`tui.paged.PagedModel`); the threshold is lowered here so the sample
store is one. The same keys pressed on the same store, held and paged, must draw the same
records table, tabs and triage screens; a store another process watches is followed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Tab

from engine.store import Store
from tests.engine.watchkit import WAIT_S
from tests.tui.conftest import SIZE, screen_lines, settle, visible_paths
from tests.tui.test_follow_index import two_files_watched
from tui.app import QuarryApp
from tui.paged import PagedModel
from tui.widgets.record_table import RecordTable

KEYS = ["5", "s", "s", "S", "1", "down", "down", "end", "home", "slash", *"txt", "enter"]


async def _screens(store: Store, keys: list[str]) -> list[list[str]]:
    """What the records table and the tabs show after each key, and the triage screens."""
    app = QuarryApp(store.out)
    seen: list[list[str]] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
            tabs = [str(t.label) for t in app.screen.query(Tab)]
            seen.append([*tabs, *screen_lines(app.screen.query_one(RecordTable))])
        for key in ("escape", "x", "escape", "u", "escape", "t"):
            await pilot.press(key)
            await settle(pilot)
            seen.append([type(app.screen).__name__])
        paged = isinstance(app.model, PagedModel)
    seen.append([f"paged {paged}"])
    return seen


async def test_the_paged_dashboard_draws_what_the_held_one_draws(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = await _screens(store, KEYS)
    assert held[-1] == ["paged False"]
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    paged = await _screens(store, KEYS)
    assert paged[-1] == ["paged True"]
    assert paged[:-1] == held[:-1]


async def test_a_watched_big_store_is_followed_page_by_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    with two_files_watched(tmp_path) as (root, w):
        app = QuarryApp(w.session.store.out)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.model, PagedModel)
            assert visible_paths(app) == ["a.txt", "b.txt"]
            app.records_screen.set_filter("txt")  # (counted in a worker, as each change is)
            await settle(pilot)
            assert visible_paths(app) == ["a.txt", "b.txt"]
            (root / "c.txt").write_text("charlie\n")
            (root / "b.txt").unlink()
            end = time.monotonic() + WAIT_S
            while visible_paths(app) != ["a.txt", "c.txt"] or app.model.view_counts()["ok"] != 2:
                assert time.monotonic() < end, f"still showing {visible_paths(app)}"
                await pilot.pause(0.05)
            assert app.model.tab_counts()["all"] == 2


async def test_an_index_made_anew_is_browsed_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index deleted and built again (another history): what it holds now is shown."""
    from engine.db import DB
    from engine.records import Record, Status
    from tests.tui.test_paged_model import _write

    def recs(names: str) -> list[Record]:
        return [Record("/r", f"{n}.txt", 1, 0, Status.OK) for n in names]

    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    out = tmp_path / "store"
    store = _write(out, recs("abc"), trees=True)
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.model, PagedModel)
        assert visible_paths(app) == ["a.txt", "b.txt", "c.txt"]
        for name in (DB, DB + "-wal", DB + "-shm"):
            (out / name).unlink(missing_ok=True)
        _write(out, recs("wxyz"), trees=True)
        end = time.monotonic() + WAIT_S
        while visible_paths(app) != ["w.txt", "x.txt", "y.txt", "z.txt"]:
            assert time.monotonic() < end, f"still showing {visible_paths(app)}"
            await pilot.pause(0.05)
        rid = app.model.ids["/r", "z.txt"]
        record = app.model.record(rid)
        assert record is not None and record.path == "z.txt"  # looked up in the new index


async def test_the_triage_screens_of_a_paged_store_say_they_read_the_first_records(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paged store's triage screens read the first records of a kind, and say so."""
    from engine.readindex import reading_index

    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    monkeypatch.setattr("tui.paged.TRIAGE_READ", 1)
    assert reading_index(store) is not None  # (its index, in the user's cache: browsable)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert isinstance(app.model, PagedModel)
        errors = app.model.counts["error"]
        assert errors > 1
        await pilot.press("x")
        await settle(pilot)
        title = app.screen.query_one("#errors-title").render()
        assert f"Errors {errors:,}, the first 1 in 1 group" in str(title)
