"""Live updates: engine events from a thread, a store rewritten by another process, pause."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from engine.events import Progress, RecordsChanged, SweepFinished, SweepStarted
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import SIZE, screen_lines, settle, visible_paths
from tui.app import QuarryApp
from tui.messages import EngineEvents
from tui.sample import ROOT, sample_records, sample_summary
from tui.widgets import record_table
from tui.widgets.record_table import RecordTable


def changed_record(path: str, **changes: object) -> Record:
    """A sample record with ``changes``."""
    rec = next(r for r in sample_records() if r.path == path)
    return rec.evolve(**changes)


async def wait_until(pilot, condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Pause until ``condition()`` holds (events cross threads)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


async def test_events_from_a_thread_change_the_row_in_place(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the highlight lasts 1.5 s; under load the wait below may take longer than that
    monkeypatch.setattr(record_table, "FLASH_SECONDS", 600.0)
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", "p", "d", "f", "enter", "down", "down")  # on pdf/scanned.pdf
        table = app.query_one(RecordTable)
        cursor_key = app.model.key(table.rid)  # type: ignore[arg-type]
        bridge = app.engine_listener  # what the session calls, from its threads
        fixed = changed_record("pdf/truncated.pdf", status="ok", reason=None, error=None, chars=99)
        new = Record(ROOT, "pdf/new.pdf", 10, 1, "error", "ab" * 32, "application/pdf", "corrupt")

        def engine() -> None:  # what a sweep thread does, one event at a time
            now = time.time()
            bridge(SweepStarted(now, (ROOT,), 2, 10, full=False))
            bridge(RecordsChanged(now, (fixed,)))
            bridge(RecordsChanged(now, (new,), removed=((ROOT, "pdf/encrypted.pdf"),)))
            bridge(Progress(now, 2, 2, 10, 10, "pdf/new.pdf"))

        thread = threading.Thread(target=engine)
        thread.start()
        thread.join()
        # a row shown changes at once; a new one waits for the sweep's end (tui.hold)
        await wait_until(pilot, lambda: "pdf/encrypted.pdf" not in visible_paths(app))
        assert "pdf/new.pdf" not in visible_paths(app) and "updating" in app.state_text
        summary = sample_summary(sample_records())
        bridge(SweepFinished(time.time(), summary, 2, 0, full=False))
        await wait_until(pilot, lambda: "pdf/new.pdf" in visible_paths(app))
        assert visible_paths(app) == [
            "pdf/new.pdf",
            "pdf/report.pdf",
            "pdf/scanned.pdf",
            "pdf/truncated.pdf",
        ]
        assert app.model.key(table.rid) == cursor_key  # the cursor stayed on its record
        row = next(line for line in screen_lines(table) if line.startswith("pdf/truncated.pdf"))
        assert " ok " in row and "99" in row
        assert app.model.tab_counts()["error"] == 2  # 3 - encrypted - truncated + new
        assert app.model.query.text == "pdf"
        assert table.flash  # changed rows are highlighted for a moment


async def test_pause_holds_events_back_until_resumed(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        assert app.paused
        fixed = changed_record("pdf/encrypted.pdf", status="ok", reason=None, error=None)
        app.post_message(EngineEvents([RecordsChanged(time.time(), (fixed,))]))
        await pilot.pause()
        assert app.model.tab_counts()["error"] == 3 and "1 pending" in app.state_text
        await pilot.press("p")
        assert app.model.tab_counts()["error"] == 2 and not app.pending
        summary = sample_summary(sample_records())
        app.post_message(EngineEvents([SweepFinished(time.time(), summary, 1, 0, full=False)]))
        await pilot.pause()
        assert app.state == "idle" and app.link.progress is None


async def test_store_rewritten_by_another_process_is_followed(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("5", "end")  # cursor on pdf/truncated.pdf
        table = app.query_one(RecordTable)
        records = [
            r.evolve(error="startxref missing (re-read)") if r.path == "pdf/truncated.pdf" else r
            for r in sample_records()
            if r.path != "pdf/encrypted.pdf"
        ]
        await asyncio.sleep(0.01)  # a new mtime
        with store.writer():
            store.write_records(records)
        await wait_until(pilot, lambda: len(app.model) == 15)
        assert visible_paths(app) == ["hostile/zipbomb.docx", "pdf/truncated.pdf"]
        assert app.model.key(table.rid) == (ROOT, "pdf/truncated.pdf")
        assert table.flash == {app.model.ids[(ROOT, "pdf/truncated.pdf")]: table.flash[table.rid]}  # type: ignore[index]
        rec = app.model.record(table.rid)  # type: ignore[arg-type]
        assert rec is not None and rec.error == "startxref missing (re-read)"


async def test_the_header_never_says_watching_while_the_store_lags(store: Store) -> None:
    from engine.events import StoreHealth, StoreState

    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.link.watching = True  # as after SessionStage(Live.WATCHING)
        now = time.time()
        trouble = "changes not stored: cannot write the store: No space left on device"
        app.post_message(EngineEvents([StoreHealth(now, StoreState.TROUBLE, trouble)]))
        await wait_until(
            pilot, lambda: app.state_text.removeprefix("read-only · ") == "not stored: retrying"
        )
        summary = sample_summary(sample_records())
        # Another batch finishing meanwhile does not make the header claim "watching".
        app.post_message(EngineEvents([SweepFinished(now, summary, 0, 0, full=False)]))
        await pilot.pause(0.1)
        assert app.state_text.removeprefix("read-only · ") == "not stored: retrying"
        app.post_message(
            EngineEvents([StoreHealth(now, StoreState.OK, "the store takes changes again")])
        )
        await wait_until(pilot, lambda: app.state_text.removeprefix("read-only · ") == "watching")
        lost = "the store's folder was removed (/s): stopped watching; the store is not up to date"
        app.post_message(EngineEvents([StoreHealth(now, StoreState.LOST, lost)]))
        await wait_until(
            pilot, lambda: app.state_text.removeprefix("read-only · ") == "stopped: store lost"
        )
        app.post_message(EngineEvents([SweepFinished(now, summary, 0, 0, full=False)]))
        await pilot.pause(0.1)
        assert app.state_text.removeprefix("read-only · ") == "stopped: store lost"


async def test_the_cursor_stays_on_top_while_a_sweep_fills_the_table(store: Store) -> None:
    """Until the user moves it, the cursor is the top row's, not the first file decided's;
    once moved, live rows arriving above it leave it on the same record."""
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one(RecordTable)
        bridge = app.engine_listener

        def arrive(*paths: str) -> None:
            now = time.time()
            for path in paths:  # sorted by path: each lands above the rows already shown
                rec = Record(ROOT, path, 1, 1, "ok", "cd" * 32, "text/plain", None)
                bridge(RecordsChanged(now, (rec,)))

        arrive("aaa/3.txt")
        await wait_until(pilot, lambda: (ROOT, "aaa/3.txt") in app.model.ids)
        arrive("aaa/2.txt", "aaa/1.txt")
        await wait_until(pilot, lambda: (ROOT, "aaa/1.txt") in app.model.ids)
        await settle(pilot)
        assert table.cursor == 0 and app.model.key(table.rid) == (ROOT, "aaa/1.txt")  # type: ignore[arg-type]

        await pilot.press("down")  # the user chooses a record: it stays under the cursor
        chosen = app.model.key(table.rid)  # type: ignore[arg-type]
        arrive("aaa/0.txt")
        await wait_until(pilot, lambda: (ROOT, "aaa/0.txt") in app.model.ids)
        await settle(pilot)
        assert app.model.key(table.rid) == chosen and table.cursor == 2  # type: ignore[arg-type]


def test_events_that_come_before_the_records_screen_is_up_are_applied(store: Store) -> None:
    # A live session reports from its first moment, before the records screen is mounted
    # (under load the window is long): the model takes the change, the screen draws it later.
    app = QuarryApp(store.out)
    fixed = changed_record("pdf/encrypted.pdf", status="ok", reason=None, error=None)
    app.apply_events([RecordsChanged(time.time(), (fixed,))])
    assert app.records_screen.kept_rid is None
    assert app.model.record(app.model.ids[(ROOT, "pdf/encrypted.pdf")]) == fixed


async def test_events_that_come_once_the_app_has_left_end_nothing(store: Store) -> None:
    # A retry or sweep still reporting as the app closes: its screens are gone.
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    fixed = changed_record("pdf/encrypted.pdf", status="ok", reason=None, error=None)
    app.router.take(EngineEvents([RecordsChanged(time.time(), (fixed,))]))
    assert not app.is_running


def test_a_first_sweep_that_could_not_write_its_store_is_a_failure_not_watching() -> None:
    """``quarry`` on a disk that fills under its first sweep: the sweep stops, nothing is
    watched, and the dashboard said "watching" all the same."""
    from engine.sweep import SweepResult
    from tui import feed
    from tui.link import Live
    from tui.messages import SessionStage

    why = "cannot write the store /s: No space left on device; the files this sweep decided..."

    class Full:
        def sweep_then_watch(self) -> SweepResult:
            return SweepResult(sample_summary(sample_records()), interrupted=True, failed=why)

    posted: list[object] = []
    feed.run_session(Full(), lambda: False, posted.append)  # type: ignore[arg-type]
    assert [(m.stage, m.detail) for m in posted if isinstance(m, SessionStage)] == [
        (Live.FAILED, why)
    ]
