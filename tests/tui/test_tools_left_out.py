"""A tool left out on purpose (``--without``) is shown as left out, not as missing."""

from __future__ import annotations

from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from engine.session import Session
from engine.sweep import SweepOptions
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import add_trouble, fake_tool, notes, screen_text, swept
from tui.app import QuarryApp
from tui.screens.tools import ToolsScreen, tool_detail
from tui.words import count


async def test_without_tesseract_it_is_left_out_with_no_install_hint(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = add_trouble(sample)
    bin_dir = tmp_path / "bin"
    fake_tool(bin_dir)  # installed, and left out all the same
    monkeypatch.setenv("PATH", str(bin_dir))
    resource_tracker.ensure_running()
    session = Session([folder], SweepOptions(workers=1, without=("tesseract",)))
    try:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_for(pilot, lambda: swept(app))
            await settle(pilot)
            rows = {r.name: r for r in app.tool_rows()}
            tess = rows["tesseract"]
            assert tess.state == "left out" and tess.files and not tess.install
            assert "how to install" not in tool_detail(tess)
            assert rows["antiword"].state == "missing" and rows["antiword"].install
            if not isinstance(app.screen, ToolsScreen):  # it opens by itself for antiword
                await pilot.press("t")
            await wait_for(pilot, lambda: isinstance(app.screen, ToolsScreen))
            await settle(pilot)
            text = screen_text(app)
            assert "left out" in text and "tesseract  missing" not in text
            # the file that waits on tesseract does not wait on a missing tool
            waits = {k for r in rows.values() if r.state == "missing" for k in r.files}
            left = set(tess.files) - waits
            assert left  # (the sample has images only OCR reads)
            line = f"{count(len(waits), 'file')} waiting on a missing tool · "
            assert line + f"{count(len(left), 'file')} waiting on a tool left out" in text
            await pilot.press("g")
            await wait_for(pilot, lambda: any("no new tool" in n for n in notes(app)))
            said = [n for n in notes(app) if "no new tool" in n]
            await settle(pilot)
            said = [n for n in notes(app) if "no new tool" in n]
            assert said == ["tools: no new tool on PATH; left out on purpose: tesseract"]  # once
    finally:
        session.close()
