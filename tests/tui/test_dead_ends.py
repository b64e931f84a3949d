"""Triage without dead ends: from an error group, an unsupported group or a tool's file list,
enter opens the record; escape comes back to the same place."""

from __future__ import annotations

from textual.widgets import DataTable

from engine.store import Store
from tests.tui.conftest import SIZE, settle, wait_for
from tests.tui.triage_helpers import notes, screen_text
from tui.app import QuarryApp
from tui.screens.detail import DetailScreen
from tui.screens.errors import ErrorsScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen
from tui.screens.unsupported import UnsupportedScreen


async def test_enter_on_a_grouped_file_opens_it_and_escape_returns_to_the_same_place(
    store: Store,
) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorsScreen))
        errors = app.screen
        assert isinstance(errors, ErrorsScreen)
        await pilot.press("down", "enter")  # the second group, into its files
        files = errors.query_one("#group-files", DataTable)
        assert files.has_focus
        group = errors.group
        assert group is not None
        await pilot.press("enter")  # the file: in full
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        shown = screen_text(app)
        assert group.example_path in shown and group.reason in shown
        await pilot.press("escape")
        assert app.screen is errors and files.has_focus and errors.group is group


async def test_unsupported_files_grouped_by_type_drill_open_and_back(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x", "u")  # from the errors screen (its footer lists u)
        await wait_for(pilot, lambda: isinstance(app.screen, UnsupportedScreen))
        screen = app.screen
        assert isinstance(screen, UnsupportedScreen)
        assert [(g.reason, g.mime, g.unlock) for g in screen.groups] == [
            ("needs_tool", "application/msword", "install antiword or catdoc"),
            ("needs_tool", "image/png", "install tesseract"),
            ("no_reader", "application/x-dosexec", "nothing: no reader for it yet"),
        ]
        text = screen_text(app)
        assert "Unsupported 3 in 3 groups" in text
        assert "1      needs_tool  image/png" in text and "install tesseract" in text
        # the highlighted group says how to install what it waits on, on this platform
        assert (
            "install antiword or catdoc · sudo apt install antiword; sudo apt install catdoc"
            in text
        )
        await pilot.press("down")
        assert "install tesseract · sudo apt install tesseract-ocr (t: tools)" in screen_text(app)
        await pilot.press("enter")  # the PNG group, into its files
        files = screen.query_one("#group-files", DataTable)
        assert files.has_focus and files.row_count == 1
        assert "enter: open the file · escape: back to the groups" in screen_text(app)
        assert "needs tesseract for OCR" in screen_text(app)
        await pilot.press("enter")  # the file: the record in full
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert "images/photo.png" in screen_text(app) and "tesseract" in screen_text(app)
        await pilot.press("escape")  # back to the same group and file
        assert app.screen is screen and files.has_focus
        assert screen.group is not None and screen.group.mime == "image/png"
        await pilot.press("escape", "escape")  # files -> groups -> the errors screen before
        assert isinstance(app.screen, ErrorsScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RecordsScreen)


async def test_enter_on_a_tools_file_opens_it_and_escape_returns(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ToolsScreen))
        tools = app.screen
        assert isinstance(tools, ToolsScreen)
        await pilot.press("down", "down")  # tesseract, waited on by images/photo.png
        assert tools.selected is not None and tools.selected.name == "tesseract"
        files = tools.query_one("#tool-files", DataTable)
        assert [str(files.get_row_at(i)[0]) for i in range(files.row_count)] == ["images/photo.png"]
        await pilot.press("enter")  # into its files
        assert files.has_focus and "enter: open the file" in screen_text(app)
        await pilot.press("enter")  # the file: the record in full
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert "images/photo.png" in screen_text(app)
        await pilot.press("escape")
        assert app.screen is tools and files.has_focus and tools.selected.name == "tesseract"
        await pilot.press("escape")  # files -> tools
        assert tools.query_one("#tool-table", DataTable).has_focus
        await pilot.press("down", "down", "down", "enter")  # a tool no file waits on
        assert tools.selected is not None and tools.selected.name != "tesseract"
        assert f"no file waits on {tools.selected.name}" in notes(app)[-1]
        assert tools.query_one("#tool-table", DataTable).has_focus
        await pilot.press("escape")
        assert isinstance(app.screen, RecordsScreen)
