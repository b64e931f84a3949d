"""Pilot tests of the text inspector: pages, jump list, search, wrap, back."""

from __future__ import annotations

from textual.widgets import Input, OptionList, Static

from engine.store import Store
from tests.tui.conftest import SIZE, screen_lines, settle, static_text
from tui.app import QuarryApp
from tui.model import R_PATH
from tui.screens.inspector import InspectorScreen
from tui.widgets.text_view import TextView


async def open_path(pilot, path: str) -> InspectorScreen:  # type: ignore[no-untyped-def]
    """Move the cursor to ``path`` and press enter."""
    app: QuarryApp = pilot.app
    await settle(pilot)
    await pilot.press("2")
    while app.model.rows[app.query_one("#table").rid][R_PATH] != path:  # type: ignore[attr-defined,index]
        await pilot.press("down")
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, InspectorScreen)
    return app.screen


def status(screen: InspectorScreen) -> str:
    return static_text(screen.query_one("#status", Static))


async def test_pages_from_form_feeds_and_jump_list(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_path(pilot, "pdf/report.pdf")
        lines = screen_lines(screen.query_one(TextView))
        assert lines[0].split() == ["1", "Quarterly", "report"]
        assert "page 1 (1/3)" in status(screen)
        await pilot.press("right_square_bracket")
        assert "page 2 (2/3)" in status(screen)
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert "page 3 (3/3)" in status(screen)
        await pilot.press("left_square_bracket")
        assert "page 2 (2/3)" in status(screen)
        options = screen.query_one("#pages", OptionList)
        assert [str(options.get_option_at_index(i).prompt) for i in range(3)] == [
            "page 1",
            "page 2",
            "page 3",
        ]
        await pilot.press("l")  # focus the jump list, choose page 3
        await pilot.press("down", "enter")
        assert "page 3 (3/3)" in status(screen)
        await pilot.press("escape")
        assert not isinstance(app.screen, InspectorScreen)


async def test_slides_search_and_match_navigation(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_path(pilot, "office/deck.pptx")
        assert "slide 1 (1/3)" in status(screen)
        await pilot.press("slash")
        screen.query_one("#search", Input).value = "s"
        await pilot.press("enter")
        view = screen.query_one(TextView)
        assert len(view.matches) == 6 and view.current == 0
        assert '"s": 6 matches (1/6)'.replace('"', "“", 1).replace('"', "”", 1) in status(screen)
        await pilot.press("n", "n")
        assert view.current == 2
        await pilot.press("N", "N", "N")
        assert view.current == 5  # wraps around
        assert "slide 3" in status(screen)


async def test_wrap_toggle_and_long_lines_capped(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_path(pilot, "text/readme.md")
        view = screen.query_one(TextView)
        assert "1 line cut at 2,000 characters" in status(screen) and "wrap off" in status(screen)
        before = screen_lines(view)
        await pilot.press("w")
        assert view.wrap and "wrap on" in status(screen)
        after = screen_lines(view)
        assert after != before and after[3].split()[:3] == ["4", "A", "very"]
        assert after[4][: view.number_width].strip() == ""  # a continuation row has no line number


async def test_a_match_shown_as_the_app_leaves_draws_nothing(store: Store) -> None:
    """A match is gone to after the next frame; by then a leaving app may have removed the
    screen's widgets, last composed first: the late callback does nothing."""
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_path(pilot, "office/deck.pptx")
        screen.search("s")
        await settle(pilot)
        for gone in ("#status", "#text"):
            await screen.query_one(gone).remove()
            screen._show_match(1)  # raised NoMatches at app exit before
        assert not screen.query(TextView)
