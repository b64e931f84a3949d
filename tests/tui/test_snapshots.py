"""SVG snapshots of the records screen, the detail pane, the inspector and help.

Deterministic: a fixed store (fixed root, times, hashes), a fixed size, UTC, no animations,
no blinking cursors. Update with ``pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import settle
from tui.app import QuarryApp
from tui.sample import build_sample_store

SIZES = [(80, 24), (160, 50)]
"""Every screen at the smallest size it must work at and at a large one."""


def make_app(tmp_path: Path) -> QuarryApp:
    """The dashboard over the sample store, animations off."""
    app = QuarryApp(build_sample_store(tmp_path / "store").out)
    app.animation_level = "none"
    return app


async def loaded(pilot: Pilot[None]) -> None:
    """Wait until the store is on screen."""
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_records_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=loaded)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_detail_of_an_unsupported_record(
    snap_compare, tmp_path: Path, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(tmp_path),
        press=["4", "down", *(["d"] if size[0] < 120 else [])],  # narrow: d shows the pane
        terminal_size=size,
        run_before=loaded,
    )


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_filtered_error_tab(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(tmp_path),
        press=["slash", "p", "d", "f", "enter", "5", "end"],
        terminal_size=size,
        run_before=loaded,
    )


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_inspector_with_search(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def open_report(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("2", "down", "down", "down", "enter")
        await settle(pilot)
        await pilot.press("slash", *"costs", "enter", "right_square_bracket")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=open_report)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_help(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(tmp_path), press=["question_mark"], terminal_size=size, run_before=loaded
    )
