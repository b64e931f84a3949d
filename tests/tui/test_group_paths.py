"""The triage screens' file lists at 80 columns: a long path is cut in its folders, the file's
name and its verdict kept on screen (they were cut at the right edge, the names past it)."""

from __future__ import annotations

from pathlib import Path

from engine.records import Record
from engine.store import Store
from tests.tui.conftest import records_store, settle, wait_for
from tests.tui.triage_helpers import screen_text
from tui.app import QuarryApp
from tui.screens.errors import ErrorsScreen
from tui.screens.tools import ToolsScreen

ROOT = "/srv/share"
DEEP = "department/finance/archive/2019/quarterly-reports/scanned-originals/"
"""A folder as a share has them: its path alone is wider than the files' column."""
LOCKED = [f"{DEEP}locked-statement-{n}.pdf" for n in range(3)]
SCANS = [f"{DEEP}receipt-scan-{n}.png" for n in range(2)]


def _store(out: Path) -> Store:
    records = [
        Record(ROOT, path, 1_000, 0, "error", None, "application/pdf", "encrypted",
               error="needs a password", why="new")
        for path in LOCKED
    ] + [
        Record(ROOT, path, 1_000, 0, "unsupported", None, "image/png", "needs_tool", None,
               "image", 1, error="needs tesseract for OCR", needs=("tesseract",), why="new")
        for path in SCANS
    ]  # fmt: skip
    return records_store(out, records)


async def test_file_names_and_verdicts_stay_on_an_80_column_screen(tmp_path: Path) -> None:
    app = QuarryApp(_store(tmp_path / "store").out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        await settle(pilot)
        await pilot.press("enter")  # the encrypted group's files
        await settle(pilot)
        lines = screen_text(app).splitlines()
        for path in LOCKED:
            name = path.rpartition("/")[2]
            row = next((ln for ln in lines if f"…/{name}" in ln), None)
            assert row is not None, (name, lines)
            assert "department/" in row and "needs a password" in row, row
        await pilot.press("escape", "escape", "t")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolsScreen))
        await settle(pilot)
        text = screen_text(app)
        for path in SCANS:  # tesseract's files, in the left half of the screen
            assert f"…/{path.rpartition('/')[2]}" in text, text
