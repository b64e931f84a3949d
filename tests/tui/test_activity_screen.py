"""Pilot tests of the activity screen: events with times, live, filterable."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Log

from engine.store import Store
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
from tui.screens.activity import INDENT, ActivityScreen


def _lines(screen: ActivityScreen) -> list[str]:
    """The events shown, one line each (a line wrapped on screen joined again)."""
    lines: list[str] = []
    for row in screen.query_one(Log).lines:
        if row.startswith(INDENT) and lines:
            lines[-1] += " " + row[len(INDENT) :]
        else:
            lines.append(row)
    return lines


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
            assert f"{len(app.triage.activity.lines):,} events" in screen_text(app)

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
            assert len(_lines(screen)) == len(app.triage.activity.lines)
            await pilot.press("f")
            assert "not following" in screen_text(app)


async def test_polling_fallback_and_new_groups_are_notified_once(store: Store) -> None:
    from engine.events import Notice, NoticeKind, RecordsChanged
    from engine.records import Record
    from tests.tui.triage_helpers import notes
    from tui.messages import EngineEvents

    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        polling = Notice(1.0, NoticeKind.POLLING, "native watching failed; polling every 2 s")
        bad = [
            Record("/fixtures", f"new/{i}.docx", 1, 0, "error", reason="corrupt",
                   error=f"Bad CRC-32 for file 'word/part{i}.xml'")
            for i in range(50)
        ]  # fmt: skip
        app.post_message(EngineEvents([polling, RecordsChanged(2.0, tuple(bad[:25]))]))
        app.post_message(EngineEvents([RecordsChanged(3.0, tuple(bad[25:]))]))
        await settle(pilot)
        # new groups are announced together, after a second: wait for it, bounded
        await wait_until(pilot, lambda: any("error group" in n for n in notes(app)))
        said = notes(app)
        assert any("watching by polling: native watching failed" in n for n in said)
        groups = [n for n in said if "error group" in n]
        # said with a real message (the group's key has placeholders), once
        assert groups == [
            "new error group: corrupt: Bad CRC-32 for file 'word/part0.xml' · x: errors"
        ]
        assert "polling" in app.triage.activity.lines[-51].text


async def test_a_line_wider_than_the_screen_wraps_under_its_text(store: Store) -> None:
    """At 80 columns the end of a long line (the tools found, a sweep's counts) was past the
    right edge; it wraps, indented under the text, and again at the width of a resize."""
    from engine.events import Notice, NoticeKind
    from tui.messages import EngineEvents

    words = " ".join(f"tool{n} 1.{n}.0" for n in range(30))
    app = TriageApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.post_message(EngineEvents([Notice(1.0, NoticeKind.POLLING, words)]))
        await settle(pilot)
        await pilot.press("at")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ActivityScreen)
        log = screen.query_one(Log)
        rows = list(log.lines)
        assert all(len(row) <= 80 for row in rows)
        shown = [line for line in _lines(screen) if "tool0 " in line]
        assert len(shown) == 1 and shown[0].endswith(words.rpartition(" ")[2])
        assert " ".join(shown[0].split()).endswith(words)  # every word, in order
        narrow = len(rows)
        await pilot.resize_terminal(160, 30)
        await settle(pilot)
        assert len(log.lines) < narrow and all(len(row) <= 160 for row in log.lines)
        assert " ".join(next(x for x in _lines(screen) if "tool0 " in x).split()).endswith(words)


async def test_following_holds_through_a_resize_and_pauses_while_scrolled_up(store: Store) -> None:
    """A resize of the terminal left the log short of its end: every line after it stayed
    below the screen while the title said "following". Anchored, it follows through resizes;
    scrolled up, it holds still and says so; back at the end, it follows again."""
    from engine.events import Notice, NoticeKind
    from tui.messages import EngineEvents

    def say(*words: str) -> None:
        app.post_message(EngineEvents([Notice(9.0, NoticeKind.POLLING, w) for w in words]))

    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        say(*(f"early {i}" for i in range(100)))
        await settle(pilot)
        await pilot.press("at")
        await settle(pilot)
        log = app.screen.query_one(Log)
        assert "early 99" in screen_text(app)
        for size in ((160, 30), (100, 45), (160, 40)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            say(f"after {size}")
            await settle(pilot)
            assert f"after {size}" in screen_text(app)
            assert "following" in screen_text(app) and "paused" not in screen_text(app)

        await pilot.press("pageup")
        await settle(pilot)
        top = log.scroll_y
        say("while scrolled up")
        await settle(pilot)
        assert log.scroll_y == top and "while scrolled up" not in screen_text(app)
        assert "paused: scrolled up" in screen_text(app)
        await pilot.press("end")
        await settle(pilot)
        say("back at the end")
        await settle(pilot)
        assert "back at the end" in screen_text(app) and "paused" not in screen_text(app)

        await pilot.press("f")
        await settle(pilot)
        say("not followed")
        await settle(pilot)
        assert "not followed" not in screen_text(app) and "not following" in screen_text(app)
        await pilot.press("f")
        await settle(pilot)
        assert "not followed" in screen_text(app) and "following" in screen_text(app)
