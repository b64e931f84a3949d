"""A tool left out on purpose (``--without``) is shown as left out, not as missing."""

from __future__ import annotations

from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from engine.session import Session
from engine.sweep import SweepOptions
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import add_trouble, fake_tool, notes, screen_text, swept
from tui.app import QuarryApp
from tui.screens.tools import ToolsScreen, tool_detail
from tui.screens.unsupported import UnsupportedScreen
from tui.words import count


@pytest.fixture
def without_tesseract(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Session]:
    """A session over the sample with trouble added, tesseract installed (a fake on PATH)
    and left out all the same (``--without tesseract``)."""
    folder = add_trouble(sample)
    bin_dir = tmp_path / "bin"
    fake_tool(bin_dir)
    monkeypatch.setenv("PATH", str(bin_dir))
    resource_tracker.ensure_running()
    session = Session([folder], SweepOptions(workers=1, without=("tesseract",)))
    try:
        yield session
    finally:
        session.close()


async def test_without_tesseract_it_is_left_out_with_no_install_hint(
    without_tesseract: Session,
) -> None:
    session = without_tesseract
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


async def test_the_unsupported_screen_says_left_out_not_install(
    without_tesseract: Session,
) -> None:
    """The images wait on tesseract left out on purpose: their group says so, and offers no
    command to install a tool that is installed (as the tools screen does)."""
    session = without_tesseract
    app = QuarryApp(session.store.out, session)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: swept(app))
        await settle(pilot)
        if isinstance(app.screen, ToolsScreen):  # it opens by itself for antiword
            await pilot.press("escape")
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, UnsupportedScreen))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, UnsupportedScreen)
        png = next(g for g in screen.groups if g.mime == "image/png")
        assert png.unlock == "install tesseract"  # (what it says with nothing left out)
        for _ in screen.groups:  # down to the PNG group
            if screen.group is not None and screen.group.ident == png.ident:
                break
            await pilot.press("down")
            await settle(pilot)
        text = screen_text(app)
        assert "image/png" in text and "tesseract, left out" in text
        assert "install tesseract" not in text and "tesseract-ocr" not in text
        assert "on purpose (--without or --no-external; t: tools)" in text
        # a tool missing beside it keeps its hint
        doc = next(g for g in screen.groups if g.mime == "application/msword")
        assert "antiword" in screen._unlock(doc) and "left out" not in screen._unlock(doc)
