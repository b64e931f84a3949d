"""Pilot tests of the activity screen: events with times, live, filterable."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Log

from tests.tui.conftest import SIZE, settle
from tests.tui.triage_helpers import (
    NO_TOOLS,
    TriageApp,
    add_trouble,
    screen_text,
    session_over,
    swept,
    wait_until,
)
from tui.screens.activity import ActivityScreen


def _lines(screen: ActivityScreen) -> list[str]:
    return list(screen.query_one(Log).lines)


async def test_events_listed_filtered_and_followed_live(sample: Path) -> None:
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: swept(app))
            await settle(pilot)
            await pilot.press("at")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ActivityScreen)
            lines = _lines(screen)
            assert "full sweep started" in lines[0]
            assert any("sweep     full sweep finished: " in line for line in lines)
            assert any("error     damaged/report00.docx → error/corrupt" in line for line in lines)
            assert any("extracted office/" in line for line in lines)
            assert lines[0][2] == ":" and lines[0][5] == ":"  # HH:MM:SS first
            assert f"{len(app.activity.lines):,} events" in screen_text(app)

            await pilot.press("slash", *"damaged", "enter")
            filtered = _lines(screen)
            assert len(filtered) == 3 and all("damaged/" in line for line in filtered)
            assert "3 match damaged" in screen_text(app)

            key = (str(folder), "damaged/report00.docx")
            app.retry([key], "damaged/report00.docx")  # lines arrive while the screen is up
            await wait_until(pilot, lambda: len(_lines(screen)) > 3)
            await settle(pilot)
            assert "[forced]" in _lines(screen)[-1]

            await pilot.press("slash")
            for _ in "damaged":
                await pilot.press("backspace")
            await pilot.press("enter")
            assert len(_lines(screen)) == len(app.activity.lines)
            await pilot.press("f")
            assert "not following" in screen_text(app)
