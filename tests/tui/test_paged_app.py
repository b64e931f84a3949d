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

from engine.records import Record, Status
from engine.store import Store
from engine.tallies import Kind
from tests.engine.watchkit import WAIT_S
from tests.tui.conftest import (
    SIZE,
    first_difference,
    screen_lines,
    settle,
    steady,
    visible_paths,
)
from tests.tui.test_follow_index import two_files_watched
from tests.tui.test_paged_model import _write
from tui.app import QuarryApp
from tui.paged import PagedModel
from tui.screens.triage_base import TriageScreen
from tui.widgets.record_table import RecordTable

KEYS = ["5", "s", "s", "S", "1", "down", "down", "end", "home", "slash", *"txt", "enter"]
TRIAGE_KEYS = ["escape", "x", "down", "enter", "down", "escape", "escape", "u", "escape", "t"]


async def _screens(store: Store, keys: list[str]) -> list[list[str]]:
    """What the records table and the tabs show after each key, and the triage screens
    (each as it is once the app settled: a paged store counts in workers)."""
    app = QuarryApp(store.out)
    seen: list[list[str]] = []

    def records() -> list[str]:
        tabs = [str(t.label) for t in app.screen.query(Tab)]
        return [*tabs, *screen_lines(app.screen.query_one(RecordTable))]

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            seen.append(await steady(pilot, records))
        for key in TRIAGE_KEYS:
            await pilot.press(key)
            seen.append(await steady(pilot, lambda: [type(app.screen).__name__, *_drawn(app)]))
        paged = isinstance(app.model, PagedModel)
    seen.append([f"paged {paged}"])
    return seen


def _drawn(app: QuarryApp) -> list[str]:
    """What the triage screen's titles, lines and tables show."""
    if not isinstance(app.screen, TriageScreen):
        return []
    return [line for w in app.screen.query("DataTable, Line") for line in screen_lines(w)]


async def test_the_paged_dashboard_draws_what_the_held_one_draws(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = await _screens(store, KEYS)
    assert held[-1] == ["paged False"]
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    paged = await _screens(store, KEYS)
    assert paged[-1] == ["paged True"]
    assert paged[:-1] == held[:-1], first_difference(KEYS + TRIAGE_KEYS, held, paged)


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


@pytest.mark.parametrize("trees", [True, False])
async def test_a_paged_stores_groups_count_every_record_and_list_the_first_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trees: bool
) -> None:
    """A paged store's errors are counted by the index, every one; a group lists its first
    files (:data:`tui.triage.FILES_READ`) and says so: read as it is shown through the
    triage tree, or, without it, every group's by the counting worker's one walk."""
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    monkeypatch.setattr("tui.screens.groups.FILES_READ", 2)
    recs = [
        Record(root="/r", path=f"f{i}.pdf", size=i, mtime_ns=0, status=Status.ERROR,
               reason="corrupt", error=f"bad xref at {i * 100}", mime="application/pdf")
        for i in range(5)
    ]  # fmt: skip
    store = _write(tmp_path / "store", recs, trees=trees)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert isinstance(app.model, PagedModel)
        await pilot.press("x")
        await settle(pilot)
        title = str(app.screen.query_one("#errors-title").render())
        assert title.startswith("Errors 5 in 1 group")
        detail = str(app.screen.query_one("#group-detail").render())
        assert "corrupt · 5 files, the first 2 listed · application/pdf" in detail
        files = screen_lines(app.screen.query_one("#group-files"))
        assert [line.split()[0] for line in files if ".pdf" in line] == ["f0.pdf", "f1.pdf"]


async def test_a_paged_stores_groups_are_counted_off_the_drawing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index counts the groups in a worker (without its triage tree, a walk of the whole
    table: 45 s at ten million): the screen says it counts, and the keys keep working."""
    import threading

    import tui.paged

    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    recs = [
        Record(root="/r", path=f"f{i}.pdf", size=i, mtime_ns=0, status=Status.ERROR,
               reason="corrupt", error="bad", mime="application/pdf", needs=("tesseract",))
        for i in range(3)
    ]  # fmt: skip
    store = _write(tmp_path / "store", recs, trees=False)
    go = threading.Event()
    real = tui.paged.tallies

    asked: list[object] = []

    def held_back(index: Path, kind: object) -> object:
        asked.append(kind)
        assert go.wait(WAIT_S)
        return real(index, kind)  # type: ignore[arg-type]

    monkeypatch.setattr("tui.paged.tallies", held_back)
    app = QuarryApp(store.out)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        title = app.screen.query_one("#errors-title")
        assert str(title.render()).startswith("Errors counting…")
        end = time.monotonic() + WAIT_S
        while not asked and time.monotonic() < end:  # (its worker thread started, bounded)
            await pilot.pause(0.01)
        for _ in range(3):  # (live changes while it counts: one count at a time, then again)
            app.screen.refresh_data()  # type: ignore[attr-defined]
        await pilot.pause()
        assert asked == [Kind.ERRORS]
        go.set()
        await settle(pilot)
        assert asked == [Kind.ERRORS, Kind.SUSPECT] * 2  # (once more, for the changes)
        assert str(title.render()).startswith("Errors 3 in 1 group")
        go.clear()
        await pilot.press("t")  # (the tools screen counts the files waiting the same way)
        await pilot.pause()
        assert "counting the files waiting" in str(app.screen.query_one("#tools-title").render())
        await pilot.press("escape", "x")  # (the keys work while the index counts)
        await pilot.pause()
        assert str(app.screen.query_one("#errors-title").render()).startswith("Errors 3 in")
        go.set()
        await settle(pilot)
        await pilot.press("escape", "t")
        await settle(pilot)
        assert "3 files waiting on a missing tool" in str(
            app.screen.query_one("#tools-title").render()
        )


async def _exported(store: Store, keys: list[str], out: Path) -> tuple[bool, int, bytes]:
    """What ``E`` writes after ``keys``: whether paged, how many the box said, the file."""
    from textual.widgets import Input

    from tui.screens.export import ExportScreen

    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        box = app.screen
        assert isinstance(box, ExportScreen)
        said = box.count
        box.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        paged = isinstance(app.model, PagedModel)
    return paged, said, out.read_bytes()


@pytest.mark.parametrize(
    "keys",
    [[], ["5"], ["s", "s", "S"], ["slash", *"txt", "enter", "s"], ["4", "slash", *"!pdf", "enter"]],
)
async def test_a_paged_view_exports_what_the_held_one_exports(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: list[str]
) -> None:
    """``E`` on a paged store streams the view's records from the index in its order (never
    its keys held first, nor its records read one by one): the same file as held."""
    held = await _exported(store, keys, tmp_path / "held.jsonl")
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    paged = await _exported(store, keys, tmp_path / "paged.jsonl")
    assert (held[0], paged[0]) == (False, True)
    assert paged[1] == held[1] == len(held[2].splitlines())
    assert paged[2] == held[2]
