"""SVG snapshots of the compare screen: the groups, and a file's two texts (unified at 80
columns, side by side at 160). Deterministic: hand-written stores, named relative to the
test's folder. Update with ``pytest tests/tui/test_compare_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.conftest import settle, wait_for
from tests.tui.test_compare_screen import Host, stores
from tui.widgets.diff_view import DiffView

SIZES = [(80, 24), (160, 50)]


def make_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Host:
    monkeypatch.chdir(tmp_path)  # the title names the stores A and B
    app = Host(*stores(tmp_path))
    app.animation_level = "none"
    return app


async def groups_shown(pilot: Pilot[None]) -> None:
    table = pilot.app.screen.query_one("#compare-groups", DataTable)
    await wait_for(pilot, lambda: table.row_count > 0)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_compare_groups(snap_compare, tmp_path: Path, monkeypatch, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = make_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=size, run_before=groups_shown)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_compare_a_files_texts(
    snap_compare, tmp_path: Path, monkeypatch, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    async def texts_shown(pilot: Pilot[None]) -> None:
        await groups_shown(pilot)
        await pilot.press("enter", "enter")
        view = pilot.app.screen.query_one(DiffView)
        await wait_for(pilot, lambda: view.display and view.row_count > 0)
        await pilot.press("n")  # the second change, highlighted
        await settle(pilot)

    app = make_app(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=size, run_before=texts_shown)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_compare_nothing_changed(
    snap_compare, tmp_path: Path, monkeypatch, size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    """Two stores that hold the same: a line that says so, no empty table under it."""
    from tests.tui.test_compare_screen import hand_store

    monkeypatch.chdir(tmp_path)
    same = {"a.txt": "alpha\n", "b.txt": "bravo\n"}
    app = Host(hand_store(tmp_path / "A", same), hand_store(tmp_path / "B", same))
    app.animation_level = "none"

    async def said(pilot: Pilot[None]) -> None:
        from tests.tui.conftest import static_text

        status = pilot.app.screen.query_one("#compare-status")
        await wait_for(pilot, lambda: "nothing changed" in static_text(status))  # type: ignore[arg-type]
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=said)
