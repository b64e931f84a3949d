"""The activity log keeps every error and warning, and folds reuse into the sweep's line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.events import (
    Level,
    Notice,
    NoticeKind,
    RecordsChanged,
    RunKind,
    SweepFinished,
    SweepStarted,
)
from engine.records import Record, Summary
from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import screen_text
from tui.app import QuarryApp
from tui.eventlog import ActivityLog, LogLine
from tui.messages import EngineEvents


@given(st.lists(st.booleans(), max_size=300), st.integers(1, 40))
def test_kept_lines_are_never_let_go_and_routine_ones_are_bounded(
    kept: list[bool], limit: int
) -> None:
    log = ActivityLog(limit=limit)
    added = [
        LogLine(float(i), "error" if k else "extracted", f"l{i}", k) for i, k in enumerate(kept)
    ]
    for i in range(0, len(added), 7):  # in batches, as events come
        log.extend(added[i : i + 7])
    assert [x for x in log.lines if x.kept] == [x for x in added if x.kept]
    assert sum(not x.kept for x in log.lines) <= limit
    assert [x.at for x in log.lines] == sorted(x.at for x in log.lines)  # in order
    assert log.dropped == len(added) - len(log.lines)
    if added and not added[-1].kept:
        assert log.lines[-1] is added[-1]  # the newest routine line stays


def _rescan(at: float, files: int) -> list[object]:
    reused = tuple(
        Record("/r", f"doc{i:04d}.txt", 1, 0, "ok", chars=3, reused=True) for i in range(files)
    )
    new = Record("/r", "new.txt", 1, 0, "ok", chars=5, why="new")
    summary = Summary(("/r",), files + 1, {"ok": files + 1}, reused=files)
    return [
        SweepStarted(at, ("/r",), files + 1, 0, full=False),
        RecordsChanged(at + 1, reused[: files // 2]),
        RecordsChanged(at + 2, (*reused[files // 2 :], new)),
        SweepFinished(at + 3, summary, 1, files, full=False),
    ]


def test_each_rescan_is_a_few_lines_not_one_per_reused_file() -> None:
    log = ActivityLog()
    for n in range(3):
        log.add(_rescan(100.0 * n, 789))  # type: ignore[arg-type]
    assert len(log.lines) == 9
    assert [x.kind for x in log.lines[:3]] == ["sweep", "extracted", "sweep"]
    assert "789 reused" in log.lines[2].text
    # outside a sweep, a reused record (a watched file touched, unchanged) is still said
    log.add([RecordsChanged(999.0, (Record("/r", "t.txt", 1, 0, "ok", reused=True),))])
    assert log.lines[-1].kind == "reused"


async def test_the_activity_screen_still_shows_the_first_errors_after_many_lines(
    store: Store,
) -> None:
    app = QuarryApp(store.out)
    app.triage.activity = ActivityLog(limit=40)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        bad = tuple(
            Record("/fixtures", f"broken{i}.pdf", 1, 0, "error", reason="corrupt",
                   error=f"broken {i}")
            for i in range(3)
        )  # fmt: skip
        warn = Notice(1.5, NoticeKind.STORE_INDEX, "disk full", Level.WARNING)
        app.post_message(EngineEvents([RecordsChanged(1.0, bad), warn]))
        await pilot.press("at")
        for batch in range(10):
            ok = tuple(
                Record("/fixtures", f"fine{batch}-{i}.txt", 1, 0, "ok", chars=1) for i in range(20)
            )
            app.post_message(EngineEvents([RecordsChanged(2.0 + batch, ok)]))
        await wait_for(pilot, lambda: "fine9-19.txt" in screen_text(app))
        text = screen_text(app)
        for i in range(3):
            assert f"broken{i}.pdf" in text
        assert "disk full" in text and "fine0-0.txt" not in text
        shown = app.screen.log_widget.lines  # type: ignore[attr-defined]
        assert len(shown) == len(app.triage.activity.lines) == len(set(shown))  # no line twice


def test_a_run_is_said_by_why_it_ran() -> None:
    """Every watch batch, retry and tool's run was said "rescan started" / "rescan
    finished"; a batch that only removed files said "rescan started: 0 files"."""
    summary = Summary(("/r",), 3, {"ok": 3})

    def said(kind: RunKind, files: int = 2, removed: int = 0) -> list[str]:
        full = kind == RunKind.SWEEP
        events = [
            SweepStarted(1.0, ("/r",), files, 9, full, kind),
            SweepFinished(2.0, summary, files, 0, full, kind, removed),
        ]
        return [line.text for line in ActivityLog().add(events)]  # type: ignore[arg-type]

    assert said(RunKind.SWEEP) == [
        "full sweep started: 2 files",
        "full sweep finished: 2 read, 0 reused (ok 3)",
    ]
    assert said(RunKind.RESCAN)[0] == "rescan started: 2 files"
    assert said(RunKind.CHANGES) == [
        "changes seen: 2 files",
        "changes applied: 2 read, 0 reused (ok 3)",
    ]
    assert said(RunKind.CHANGES, 0, removed=1) == ["changes applied: 1 removed (ok 3)"]
    assert (
        said(RunKind.CHANGES, 2, removed=1)[1]
        == "changes applied: 2 read, 0 reused, 1 removed (ok 3)"
    )
    assert said(RunKind.RETRY)[0] == "retry started: 2 files"
    assert said(RunKind.TOOLS)[1].startswith("read again for new tools: 2 read")
    # an event of before (not full, no kind) is a rescan's, as it was
    old = SweepStarted(1.0, ("/r",), 2, 9, full=False)
    assert ActivityLog().add([old])[0].text == "rescan started: 2 files"


def test_a_notice_that_begins_with_its_kind_does_not_say_it_twice() -> None:
    watching = Notice(1.0, NoticeKind.WATCHING, "watching 1 folder natively")
    polling = Notice(1.0, NoticeKind.POLLING, "native watching failed; polling every 2 s")
    lines = ActivityLog().add([watching, polling])
    assert [line.text for line in lines] == [
        "watching 1 folder natively",
        "polling: native watching failed; polling every 2 s",
    ]
