"""The live header keeps the end of the folder's path when a sweep's progress takes the
room: at 80 columns it showed "/" alone, the path cut after its first character."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import ProgressBar

from tui.widgets.panels import BAR_FROM, FolderLabel, LiveHeader, fit_folder

FOLDER = "/home/operator/shares/department/fixtures"
SWEEPING = "sweeping 64/128 files · 210 files/s · 0:01 left"


class _Header(App[None]):
    def compose(self) -> ComposeResult:
        yield LiveHeader()


def _folder(app: _Header) -> str:
    return str(app.query_one(FolderLabel).render())


async def _until(pilot: Pilot[None], what: str, cond: Callable[[], bool]) -> None:
    """Wait, bounded, for the layout a change asked for (a loaded machine takes its time)."""
    for _ in range(500):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("width", [80, 100])
async def test_a_sweeping_header_keeps_the_folders_last_part(width: int) -> None:
    app = _Header()
    async with app.run_test(size=(width, 3)) as pilot:
        app.query_one(LiveHeader).show(FOLDER, SWEEPING, (64, 128), None)
        label = app.query_one(FolderLabel)
        await _until(pilot, "the folder cut", lambda: label.content_size.width < len(FOLDER))
        room = label.content_size.width
        shown = _folder(app)
        assert 1 < len(shown) <= room, (room, shown)
        if room >= len("…/fixtures"):  # the last part whole, the start cut
            assert shown.endswith("…/fixtures") and FOLDER.startswith(shown[: -len("…/fixtures")])
        else:  # the last part's start
            assert shown.endswith("…") and "fixtures".startswith(shown[:-1]), shown
        await pilot.resize_terminal(160, 3)
        await _until(pilot, "the whole folder", lambda: _folder(app) == FOLDER)


async def test_a_header_with_no_room_for_the_folder_shows_none_of_it() -> None:
    app = _Header()
    async with app.run_test(size=(60, 3)) as pilot:
        app.query_one(LiveHeader).show(FOLDER, SWEEPING, (64, 128), None)
        label = app.query_one(FolderLabel)
        await _until(pilot, "no room", lambda: label.content_size.width <= 1)
        assert _folder(app) == ""
        app.query_one(LiveHeader).show(FOLDER, "watching", None, None)
        # the sweep over, the room comes back
        await _until(pilot, "the room back", lambda: _folder(app).endswith("fixtures"))


@pytest.mark.parametrize(
    ("folder", "width", "shown"),
    [
        ("/a/fixtures", 20, "/a/fixtures"),
        ("/home/operator/fixtures", 16, "/home/…/fixtures"),
        ("/home/operator/fixtures", 10, "…/fixtures"),
        ("/home/operator/fixtures", 5, "fixt…"),
        ("/home/operator/fixtures", 1, ""),
        ("/", 1, "/"),
        ("/", 0, ""),
        ("fixtures_of_a_share", 9, "fixtures…"),
        ("/データ/日本語のフォルダ", 12, "日本語のフ…"),
        ("/データ/日本語のフォルダ", 22, "/デ…/日本語のフォルダ"),
    ],
)
def test_a_folder_is_fitted_keeping_its_last_part(folder: str, width: int, shown: str) -> None:
    assert fit_folder(folder, width) == shown and cell_len(shown) <= width


async def test_the_progress_bar_gives_its_room_to_the_folder_when_narrow() -> None:
    """The state's words say done/total and the percentage: under BAR_FROM columns the bar
    is left out and the folder has its room; wider, the bar is back while the sweep runs."""
    app = _Header()
    async with app.run_test(size=(BAR_FROM - 1, 3)) as pilot:
        header = app.query_one(LiveHeader)
        bar = app.query_one(ProgressBar)
        header.show("/srv/share", SWEEPING, (64, 128), None)
        await _until(pilot, "the folder", lambda: _folder(app) == "/srv/share")
        assert not bar.display
        await pilot.resize_terminal(BAR_FROM, 3)
        await _until(pilot, "the bar", lambda: bar.display and bar.size.width > 0)
        assert _folder(app) == "/srv/share"
        header.show("/srv/share", "watching", None, None)
        await _until(pilot, "the bar gone", lambda: not bar.display)
