"""``quarry ui --store`` following a store another process watches: changes come from the
store's index (what changed after the counter the dashboard saw), never a re-read of the
whole store; without an index to trust, the whole store is read again as before."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.db import DB, RecordDB
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from tests.engine.watchkit import WAIT_S, Watched, watched
from tests.tui.conftest import SIZE, settle, visible_paths
from tui import link as link_module
from tui.app import QuarryApp
from tui.paged import PAGE, PagedModel
from tui.poll import StoreDiff


def _paths(app: QuarryApp) -> dict[str, int]:
    """Path -> chars of every record the dashboard shows."""
    out: dict[str, int] = {}
    for row in app.model.rows:
        if row is not None:
            out[row[1]] = row[7]
    return out


async def _until(pilot, what: str, cond: Callable[[], bool]) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + WAIT_S
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


@pytest.fixture
def rereads(monkeypatch: pytest.MonkeyPatch) -> list[StoreDiff]:
    """Every whole-store re-read the dashboard does."""
    done: list[StoreDiff] = []
    real = link_module.diff_store

    def counted(store: Store, model: object) -> StoreDiff:
        diff = real(store, model)  # type: ignore[arg-type]
        done.append(diff)
        return diff

    monkeypatch.setattr(link_module, "diff_store", counted)
    return done


@contextlib.contextmanager
def two_files_watched(tmp_path: Path) -> Iterator[tuple[Path, Watched]]:
    """A folder of ``a.txt`` and ``b.txt`` watched by a live session whose ``extract.jsonl``
    is left behind its index (it catches up only after an hour of quiet): a dashboard
    following the store must see every batch without it."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    with watched(root, False, records_quiet_s=3600.0, records_max_s=3600.0) as w:
        yield root, w


async def test_a_watched_store_is_followed_by_its_index_never_read_again(
    tmp_path: Path, rereads: list[StoreDiff]
) -> None:
    with two_files_watched(tmp_path) as (root, w):
        app = QuarryApp(w.session.store.out)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert _paths(app) == {"a.txt": 6, "b.txt": 6}
            (root / "c.txt").write_text("charlie\n")
            (root / "a.txt").write_text("alpha, longer now\n")
            await _until(
                pilot, "the new and the edited file", lambda: _paths(app).get("a.txt") == 18
            )
            await _until(pilot, "the new file", lambda: "c.txt" in _paths(app))
            (root / "b.txt").unlink()
            await _until(pilot, "the removal", lambda: "b.txt" not in _paths(app))
            assert _paths(app) == {"a.txt": 18, "c.txt": 8}
            assert app.model.tab_counts()["all"] == 2
            assert "store rewritten" in "\n".join(line.text for line in app.triage.activity.lines)
    assert rereads == []  # every change came from the index


async def test_a_followed_store_whose_writer_walked_past_the_threshold_is_paged_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quarry ui --store`` on a store whose first sweep, in another process, walked more
    files than BROWSE_FROM (lowered here): paged as soon as the writer's index says so,
    while it still holds few records, never holding a row each until it has them all (a
    first sweep of a million files held 1.6 GB of rows that way)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    out = root / ".quarry"
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 3)
    app = QuarryApp(out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not isinstance(app.model, PagedModel)  # two records, no sweep under way
        with RecordDB.open_writer(out / DB) as db:  # another sweep of it walks five files
            db.sweep_begins(time.time_ns(), 5)
        await _until(pilot, "the store paged", lambda: isinstance(app.model, PagedModel))
        await settle(pilot)
        assert visible_paths(app) == ["a.txt", "b.txt"]
        assert app.model.tab_counts()["all"] == 2
        # the sweep commits a batch of records: counted and paged, none handed an id (a key
        # held for the dashboard's life) but those drawn
        monkeypatch.setattr("tui.link.FLASHED", 10)
        with RecordDB.open_writer(out / DB) as db:
            db.put([Record(str(root), f"z{i:03}.txt", 5, 1, "unsupported") for i in range(900)])
            db.commit()
        await _until(pilot, "the batch counted", lambda: app.model.tab_counts()["all"] == 902)
        await settle(pilot)
        model = app.model
        assert [model.key_of(model.rid_at(i))[1] for i in range(3)] == [
            "a.txt",
            "b.txt",
            "z000.txt",
        ]
        assert len(model.keys) <= 2 * PAGE  # (the pages read to draw)


async def test_a_store_whose_index_goes_away_is_read_again_and_still_followed(
    tmp_path: Path, rereads: list[StoreDiff]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    with watched(root, False) as w:
        store = w.session.store
        app = QuarryApp(store.out)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            (store.out / DB).unlink()  # the watcher rebuilds it at its next batch
            (root / "b.txt").write_text("bravo\n")
            await _until(pilot, "the new file", lambda: "b.txt" in _paths(app))
            (root / "c.txt").write_text("charlie\n")
            await _until(pilot, "the next file", lambda: "c.txt" in _paths(app))
            assert set(_paths(app)) == {"a.txt", "b.txt", "c.txt"}


async def test_a_followed_store_that_grows_past_the_threshold_is_paged_and_still_followed(
    tmp_path: Path, rereads: list[StoreDiff], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quarry ui --store`` on a store another process grows: held while small, paged from
    its index once it passes BROWSE_FROM records (lowered here), and followed as before."""
    with two_files_watched(tmp_path) as (root, w):
        app = QuarryApp(w.session.store.out)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert not isinstance(app.model, PagedModel)
            monkeypatch.setattr("engine.browse.BROWSE_FROM", 3)
            (root / "c.txt").write_text("charlie\n")
            await _until(pilot, "the store paged", lambda: isinstance(app.model, PagedModel))
            await settle(pilot)
            assert app.screen is app.records_screen
            await _until(pilot, "c.txt shown", lambda: "c.txt" in visible_paths(app))
            (root / "d.txt").write_text("delta\n")
            (root / "a.txt").unlink()
            await _until(
                pilot,
                "the new file and the removal",
                lambda: visible_paths(app) == ["b.txt", "c.txt", "d.txt"],
            )
            assert app.model.tab_counts()["all"] == 3
    assert rereads == []  # every change came from the index
