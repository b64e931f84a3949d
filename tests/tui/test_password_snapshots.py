"""SVG snapshots of the password screen (``P``) over the errors screen, at both sizes.

Update with ``pytest tests/tui/test_password_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import settle
from tests.tui.test_triage_snapshots import SIZES, make_app
from tui.screens.password import PasswordScreen


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x50"])
def test_password_screen(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        pilot.app.push_screen(PasswordScreen("2 encrypted files (group encrypted)", held=1))
        await settle(pilot)
        await pilot.press(*"secret")  # shown as dots
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
