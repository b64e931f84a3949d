"""The inspector on texts longer and stranger than one screen: scroll, page, jump, search, wrap.

Every key a reader uses on a long text, at two sizes, on texts of thousands of lines, a very
wide line, form feeds, control characters (escape sequences included), RTL and CJK. The
dashboard once crashed on the first scroll of any text longer than the screen; these tests
drive what a user does and check what the screen shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.tui.conftest import screen_lines, settle, static_text, text_store, wait_for
from tui.app import QuarryApp
from tui.screens.inspector import InspectorScreen
from tui.widgets.text_view import TextView

LONG = "".join(
    f"line {i} with a needle here\n" if i == 1500 else f"line {i} of a long text\n"
    for i in range(3000)
)
WIDE = "start\n" + "wide " * 20_000 + "END\nafter\n"
ODD = (
    "\x1b[31mred?\x1b[0m and a bell\x07 and NUL-free\n"
    "tab\there\tthere\n"
    "שלום עולם · مرحبا بالعالم\n"
    + "日本語のテキスト" * 120
    + "\n"
    + "line\u2028separator \u202eevil\u202c\n"
    + "\fsecond page\n" * 3
    + "\n".join(f"filler {i}" for i in range(200))
)
TEXTS = {"long.txt": LONG, "wide.txt": WIDE, "odd.txt": ODD}


async def open_text(pilot, app: QuarryApp, path: str) -> InspectorScreen:  # type: ignore[no-untyped-def]
    await settle(pilot)
    rid = app.model.ids[("/texts", path)]
    table = app.records_screen.table
    table.cursor = app.model.position(rid) or 0
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
    screen = app.screen
    assert isinstance(screen, InspectorScreen)
    await wait_for(pilot, lambda: "lines" in static_text(screen.query_one("#status", Static)))
    return screen


def shown(screen: InspectorScreen) -> list[str]:
    return screen_lines(screen.query_one(TextView))


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_scroll_page_jump_and_search_a_long_text(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = QuarryApp(text_store(tmp_path / "s", TEXTS).out)
    async with app.run_test(size=size) as pilot:
        screen = await open_text(pilot, app, "long.txt")
        view = screen.query_one(TextView)
        await pilot.press("pagedown")
        assert view.top_line > 0
        await pilot.press(*["down"] * 40)
        await pilot.press("end")
        await pilot.pause()
        assert any("line 2999 of a long text" in line for line in shown(screen))
        await pilot.press("home")
        await pilot.pause()
        assert shown(screen)[0].split()[:2] == ["1", "line"]
        await pilot.press("right_square_bracket", "left_square_bracket")  # no pages: nothing
        await pilot.press("slash")
        screen.query_one("#search", Input).value = "needle"
        await pilot.press("enter")
        await pilot.pause()
        assert any("line 1500 with a needle" in line for line in shown(screen))
        assert "1 match (1/1)" in static_text(screen.query_one("#status", Static))
        await pilot.press("n", "N", "w", "pagedown", "end", "w", "pageup")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, InspectorScreen)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_a_very_wide_line_scrolls_sideways_and_wraps(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = QuarryApp(text_store(tmp_path / "s", TEXTS).out)
    async with app.run_test(size=size) as pilot:
        screen = await open_text(pilot, app, "wide.txt")
        view = screen.query_one(TextView)
        assert "1 line cut at 2,000 characters" in static_text(screen.query_one("#status", Static))
        await pilot.press(*["right"] * 30, "end", "home")
        await pilot.press("w")
        await pilot.pause()
        rows = shown(screen)
        assert all(len(r) <= size[0] for r in rows)
        assert rows[1].split()[:2] == ["2", "wide"] and not rows[2][: view.number_width].strip()
        await pilot.press("end")
        await pilot.pause()
        assert "after" in "".join(shown(screen))
        assert view.wrap


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_control_characters_rtl_cjk_and_form_feeds(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = QuarryApp(text_store(tmp_path / "s", TEXTS).out)
    async with app.run_test(size=size) as pilot:
        screen = await open_text(pilot, app, "odd.txt")
        rows = shown(screen)
        assert "␛[31mred?␛[0m" in rows[0] and "\x1b" not in "".join(rows)
        assert "tab here" in rows[1]
        assert "page 1 (1/4)" in static_text(screen.query_one("#status", Static))
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert "page 3 (3/4)" in static_text(screen.query_one("#status", Static))
        await pilot.press("w", "home")
        await pilot.pause()
        for row in shown(screen):
            assert len(row) <= size[0]
        await pilot.press("end", "w", *["right"] * 20, "end")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
