"""SVG snapshots of the tools, errors and activity screens.

Deterministic: the fixed sample store (fixed root, times, hashes), fixed events at fixed times
for the activity log, a fixed size, UTC, no animations. Update with
``pytest tests/tui/test_triage_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from engine.events import (
    Notice,
    NoticeKind,
    RecordsChanged,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from tests.tui.conftest import settle
from tests.tui.triage_helpers import TriageApp
from tui.sample import ROOT, build_sample_store, sample_records, sample_summary

SIZES = [(80, 24), (160, 50)]
"""Every screen at the smallest size it must work at and at a large one."""
T0 = 1_750_000_000.0
"""2025-06-15 15:06:40 UTC: the fixed clock of the activity log."""


def make_app(tmp_path: Path) -> TriageApp:
    """The dashboard over the sample store, animations off."""
    app = TriageApp(build_sample_store(tmp_path / "store").out)
    app.animation_level = "none"
    return app


def sample_events() -> list[object]:
    """A sweep of the sample store, a tool found and the watcher falling back to polling."""
    records = sample_records()
    return [
        SweepStarted(T0, (ROOT,), len(records), 1_000_000),
        RecordsChanged(T0 + 1, tuple(records)),
        SweepFinished(T0 + 4, sample_summary(records), 13, 3),
        ToolsChanged(T0 + 60, ("pdftotext", "tesseract"), ("tesseract",), ()),
        Notice(
            T0 + 61, NoticeKind.POLLING, "native watching failed (inotify limit); polling every 2 s"
        ),
        RecordsChanged(T0 + 62, (records[0].evolve(why="forced"),), (("/fixtures", "old.txt"),)),
    ]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_tools_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("t", "down", "down")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_errors_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("x", "down", "enter")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_activity_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path)

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        app.triage.activity.add(sample_events())  # type: ignore[arg-type]
        await pilot.press("at")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_record_detail_from_an_error_group(
    snap_compare, tmp_path: Path, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("x", "enter", "enter")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_unsupported_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("u", "down", "enter")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


def test_tools_screen_narrow(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """60x20: the tools keep their names, states and counts; the files list below them."""

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("t", "down", "down", "enter")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=(60, 20), run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_export_asks_where(
    snap_compare, tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    import tui.actions

    here = Path("/tmp/quarry-snapshots")  # a fixed current folder: the box shows it
    here.mkdir(exist_ok=True)
    monkeypatch.chdir(here)
    real = tui.actions.export_path
    monkeypatch.setattr(  # a fixed clock for the default name
        tui.actions, "export_path", lambda folder, fmt, label: real(folder, fmt, label, now=T0)
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("5", "E")
        await settle(pilot)

    app = make_app(tmp_path)
    assert snap_compare(app, terminal_size=size, run_before=run_before)
