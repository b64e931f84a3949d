"""A session over a big store pages it from its own index, as the sweep commits it.

``quarry DIR`` on a folder whose store already holds :data:`engine.browse.BROWSE_FROM`
records (a share swept before) shows it through a :class:`tui.paged.PagedModel`: the rows
are read from the index the session's engine writes, never held. The threshold is lowered
here so a small folder is such a store. What the dashboard shows must be what the held one
shows, and every change the session makes (a file edited, added, removed, a retry, an index
deleted under it) must reach the screen with nothing held for each record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from engine.db import DB
from engine.session import Session
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import WAIT_S, options
from tests.tui.conftest import (
    SIZE,
    first_difference,
    screen_lines,
    settle,
    steady,
    visible_paths,
)
from tests.tui.triage_helpers import notes, swept
from tui.app import QuarryApp
from tui.paged import PagedModel
from tui.widgets.record_table import RecordTable

OPTS = SweepOptions(tools=ToolSet.empty(), workers=1)


def _folder(tmp_path: Path, names: str) -> Path:
    """A folder of small text files named by the letters of ``names``, swept once."""
    root = tmp_path / "root"
    root.mkdir()
    for n in names:
        (root / f"{n}.txt").write_text(f"{n} " * (ord(n) - 96) + "\n")
    (root / "z.bin").write_bytes(b"\x00\x01" * 40)
    with Sweeper([root], OPTS) as sweeper:
        sweeper.run()
    return root


@contextmanager
def _session(root: Path) -> Iterator[Session]:
    session = Session([root], OPTS, watch_options=options(False))
    try:
        yield session
    finally:
        session.close()


async def _until(pilot: Pilot[None], what: str, done: Callable[[], bool]) -> None:
    """Wait (bounded) until ``done()``: the session's threads and the index's polls."""
    end = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def _home_after_sweep(pilot: Pilot[None], app: QuarryApp) -> None:
    """Wait for the session's first sweep; then the records screen (the tools screen it may
    offer closed)."""
    await _until(pilot, "the first sweep", lambda: swept(app))
    await settle(pilot)
    if app.screen is not app.records_screen:
        await pilot.press("escape")
        await settle(pilot)


async def _drawn(root: Path, keys: list[str], *, first: bool = False) -> list[list[str]]:
    """What the records table and its tabs show after each key, in a session over ``root``
    (``first``: the session's first sweep makes its store: held from the start, and once
    paged its summary bar has the sweep's totals)."""
    seen: list[list[str]] = []
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            assert not (first and isinstance(app.model, PagedModel))  # (no store yet: held)
            await _home_after_sweep(pilot, app)
            summary = app.link.summary
            if first and isinstance(app.model, PagedModel):
                assert summary is not None and summary.chars > 0
                assert app.model.totals() == (summary.reused, summary.chars)

            def look() -> list[str]:
                table = app.screen.query_one(RecordTable)
                return [str(len(app.model)), *screen_lines(table)]

            for key in keys:
                await pilot.press(key)
                seen.append(await steady(pilot, look))
            seen.append([f"paged {isinstance(app.model, PagedModel)}"])
    return seen


async def test_a_session_over_a_big_store_draws_what_a_held_one_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _folder(tmp_path, "abcdefg")
    keys = ["s", "s", "S", "down", "end", "home", "slash", *"txt", "enter", "2", "1"]
    held = await _drawn(root, keys)
    assert held[-1] == ["paged False"]
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    paged = await _drawn(root, keys)
    assert paged[-1] == ["paged True"]
    assert paged[:-1] == held[:-1], first_difference(keys, held, paged)


@pytest.fixture
def big_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder swept once, whose store the threshold lowered makes a big one."""
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 1)
    return _folder(tmp_path, "abc")


async def test_a_paged_session_shows_each_change_it_makes(big_root: Path) -> None:
    root = big_root
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            model = app.model
            assert isinstance(model, PagedModel)
            await _home_after_sweep(pilot, app)
            assert visible_paths(app) == ["a.txt", "b.txt", "c.txt", "z.bin"]
            (root / "d.txt").write_text("delta\n")
            (root / "b.txt").unlink()
            (root / "a.txt").write_text("alpha, longer now\n")

            def chars_of_a() -> int | None:
                record = model.record_of((str(root.resolve()), "a.txt"))
                return record.chars if record is not None else None

            await _until(
                pilot,
                "the watcher's batch",
                lambda: (
                    visible_paths(app) == ["a.txt", "c.txt", "d.txt", "z.bin"]
                    and chars_of_a() == 18
                ),
            )
            assert model.tab_counts()["all"] == 4
            assert len(model.keys) <= 6  # (ids only for the rows read and the records changed)


async def test_an_index_deleted_under_a_paged_session_is_paged_again_once_rebuilt(
    big_root: Path,
) -> None:
    root = big_root
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.model, PagedModel)
            await _home_after_sweep(pilot, app)
            before = app.model.point
            for name in (DB, DB + "-wal", DB + "-shm"):
                (session.store.out / name).unlink(missing_ok=True)
            (root / "e.txt").write_text("echo\n")
            assert before is not None

            def rebuilt() -> bool:  # (the batch may reach the deleted file first: still open)
                now = app.model.point
                return now is not None and now.index != before.index

            await _until(
                pilot,
                "the rebuilt index",
                lambda: (
                    rebuilt()
                    and visible_paths(app) == ["a.txt", "b.txt", "c.txt", "e.txt", "z.bin"]
                ),
            )


def test_a_mass_sweep_hands_a_paged_store_no_id_per_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of more than :data:`tui.link.FLASHED` records is not flashed: its rows are read
    as they are drawn, no key held for each (a million of them at a store's first sweep); a
    small batch's rows are flashed, and their error records announced either way."""
    from engine.events import RecordsChanged, SweepFinished, SweepStarted
    from engine.records import Record, Status, Summary
    from tests.tui.test_paged_model import _write
    from tui import link as link_module
    from tui.link import Link
    from tui.state import TriageState

    recs = [Record("/r", f"{i:03d}.txt", 1, 0, Status.OK) for i in range(40)]
    store = _write(tmp_path / "s", recs, trees=True)
    model = PagedModel(store.out / DB)
    model.attach(model.index)
    link = Link(model, TriageState(), sweeping=True)
    monkeypatch.setattr(link_module, "FLASHED", 10)
    now = time.time()
    start = SweepStarted(now, ("/r",), 40, 40, full=True)
    broken = recs[0].evolve(status=Status.ERROR, reason="corrupt")
    big = RecordsChanged(now, (broken, *recs[1:20]))
    applied = link.apply([start, big], None)
    assert applied.change.rows == frozenset() and model.keys == []
    assert broken in applied.seen  # (its error group may be new)
    small = RecordsChanged(now, tuple(recs[20:25]))
    applied = link.apply([small], None)
    assert len(applied.change.rows) == 5 and len(model.keys) == 5
    done = SweepFinished(now, Summary(("/r",), 40), 40, 0)
    assert link.apply([done], None).change.rows == frozenset()


def _unswept(base: Path, names: str) -> Path:
    """A folder of small text files named by the letters of ``names``, never swept."""
    root = base / "root"
    root.mkdir(parents=True)
    for n in names:
        (root / f"{n}.txt").write_text(f"{n} " * (ord(n) - 96) + "\n")
    return root


async def test_a_first_sweep_past_the_threshold_pages_the_store_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sweep of a big share in the dashboard: held until the store passes
    BROWSE_FROM records, paged from the session's index from then on, drawn as held."""
    keys = ["s", "S", "down", "end", "slash", *"txt", "enter", "2", "1"]
    held = await _drawn(_unswept(tmp_path / "one", "abcdefgh"), keys, first=True)
    assert held[-1] == ["paged False"]
    monkeypatch.setattr("engine.browse.BROWSE_FROM", 5)
    paged = await _drawn(_unswept(tmp_path / "two", "abcdefgh"), keys, first=True)
    assert paged[-1] == ["paged True"]
    assert paged[:-1] == held[:-1], first_difference(keys, held, paged)


async def _until_paged(pilot: Pilot[None], app: QuarryApp, root: Path, name: str) -> None:
    """Write ``name`` in ``root`` (a watch batch), then wait until the store is paged."""
    (root / name).write_text(f"{name}\n")
    await _until(pilot, f"the batch of {name}, paged", lambda: isinstance(app.model, PagedModel))
    await settle(pilot)


async def test_a_store_paged_mid_session_keeps_its_tab_sort_query_and_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _unswept(tmp_path, "abcdef")
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _home_after_sweep(pilot, app)
            for key in ["space", "S", "slash", *"txt", "enter", "2"]:
                await pilot.press(key)
                await settle(pilot)
            held = app.model
            before = (held.tab, held.sort_column, held.sort_reverse, held.query.text)
            marks = set(app.triage.marks)
            assert before[1:] == ("path", True, "txt") and len(marks) == 1
            old_home = app.records_screen
            monkeypatch.setattr("engine.browse.BROWSE_FROM", 3)
            await _until_paged(pilot, app, root, "g.txt")
            model = app.model
            assert isinstance(model, PagedModel)
            assert (model.tab, model.sort_column, model.sort_reverse, model.query.text) == before
            assert app.triage.marks == marks
            assert app.screen is app.records_screen is not old_home
            assert app.records_screen.query_one("#filter").value == "txt"
            await _until(
                pilot,
                "g.txt on the paged screen",
                lambda: "g.txt" in visible_paths(app),
            )
            assert visible_paths(app) == sorted(visible_paths(app), reverse=True)
            assert held is not model and not old_home.is_attached


async def test_a_store_is_not_paged_from_under_another_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the errors screen the store stays held (the screen reads the held model); back on
    the records screen it is paged within a second, no batch needed (a quiet folder), and
    the errors screen is made anew over the paged model when next shown."""
    root = _unswept(tmp_path, "abc")
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _home_after_sweep(pilot, app)
            await pilot.press("x")
            await settle(pilot)
            errors = app.screen
            assert errors is not app.records_screen
            monkeypatch.setattr("engine.browse.BROWSE_FROM", 3)
            (root / "d.txt").write_text("delta\n")
            key = (str(root.resolve()), "d.txt")
            await _until(pilot, "the batch of d.txt", lambda: key in app.model.ids)
            await settle(pilot)
            assert not isinstance(app.model, PagedModel) and app.screen is errors
            await pilot.press("escape")
            await _until(pilot, "the store paged", lambda: isinstance(app.model, PagedModel))
            await settle(pilot)
            await pilot.press("x")
            await settle(pilot)
            assert app.screen is not errors and app.screen.model is app.model


async def test_a_sweep_that_will_make_a_big_store_pages_it_before_its_rows_pile_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk counts a big share's files long before they are read: a sweep whose files
    pass the threshold pages the store at once (its index holding a record), not once the
    held rows are that many."""
    from engine.events import Progress

    root = _unswept(tmp_path, "abc")
    with _session(root) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await _home_after_sweep(pilot, app)
            monkeypatch.setattr("engine.browse.BROWSE_FROM", 100)
            assert not isinstance(app.model, PagedModel) and len(app.model) == 3
            app.apply_events([Progress(time.time(), 3, 150, 0, 0, "c.txt")])
            assert isinstance(app.model, PagedModel)
            await settle(pilot)
            assert visible_paths(app) == ["a.txt", "b.txt", "c.txt"]
            assert any("150 files" in note for note in notes(app))
