"""Counts never overshoot: a sweep's new rows wait for its removals (a folder moved within a
watched root counted twice until the sweep's end)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.events import Event, Progress, RecordsChanged, SweepFinished, SweepStarted
from engine.records import Record, Summary
from tests.tui.conftest import settle, text_store
from tui.app import QuarryApp
from tui.hold import SweepHold
from tui.model import RecordModel

ROOT = "/texts"


def _moved(n: int) -> tuple[list[Record], list[Record]]:
    old = [Record(ROOT, f"a/f{i:04d}.txt", 1, 0, "ok", chars=1) for i in range(n)]
    return old, [r.evolve(path="b/" + r.path[2:], reused=True) for r in old]


def move_events(old: list[Record], new: list[Record], batch: int) -> list[Event]:
    """What a rescan after ``a/`` was moved to ``b/`` sends: the new records as read, in
    batches with progress, the removals at the end, then the finish."""
    total = len(new)
    events: list[Event] = [SweepStarted(1.0, (ROOT,), total, total)]
    for i in range(0, total, batch):
        events.append(RecordsChanged(2.0 + i, tuple(new[i : i + batch])))
        events.append(Progress(2.0 + i, min(i + batch, total), total, 0, total, ""))
    events.append(RecordsChanged(9e3, (), tuple(r.key for r in old)))
    summary = Summary((ROOT,), total + 1, {"ok": total + 1}, reused=total)
    events.append(SweepFinished(9e3 + 1, summary, 0, total, full=False))
    return events


async def test_a_moved_folder_is_never_counted_twice(tmp_path: Path) -> None:
    store = text_store(tmp_path / "s", {"keep.txt": "x\n"})
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        old, new = _moved(300)
        app.apply_events([RecordsChanged(0.5, tuple(old))])  # a/ shown before the move
        assert app.model.tab_counts()["ok"] == 301
        seen = []
        for event in move_events(old, new, 37):  # one event at a time, as they may come
            app.apply_events([event])
            seen.append(app.model.tab_counts()["ok"])
        assert max(seen) == 301 and seen[-1] == 301, seen
        assert all(key in app.model.ids for key in (r.key for r in new))
        assert not any(r.key in app.model.ids for r in old)


def test_the_first_sweep_of_an_empty_store_shows_rows_as_read() -> None:
    model, hold = RecordModel(), SweepHold()
    hold.start(len(model) > 0)
    records = {r.key: r for r in _moved(5)[0]}
    hold.take(records, [], model.ids)
    assert len(records) == 5 and not hold.held


@settings(deadline=None, max_examples=40)
@given(st.integers(1, 60), st.integers(1, 25), st.integers(0, 5))
def test_counts_stay_within_before_and_after(n: int, batch: int, extra: int) -> None:
    """A move plus ``extra`` files truly new: the count never passes the larger of the
    count before and the count after."""
    model, hold = RecordModel(), SweepHold()
    old, new = _moved(n)
    new += [Record(ROOT, f"c/new{i}.txt", 1, 0, "ok") for i in range(extra)]
    model.apply(old)
    peak = len(model)
    for event in move_events(old, new, batch):
        records: dict[tuple[str, str], Record] = {}
        removed: list[tuple[str, str]] = []
        if isinstance(event, SweepStarted):
            hold.start(len(model) > 0)
        elif isinstance(event, SweepFinished):
            records.update((r.key, r) for r in hold.release())
        elif isinstance(event, RecordsChanged):
            records = {r.key: r for r in event.records}
            removed = list(event.removed)
            hold.take(records, removed, model.ids)
        model.apply(records.values(), removed)
        peak = max(peak, len(model))
    assert len(model) == n + extra
    assert peak <= max(n, n + extra)
