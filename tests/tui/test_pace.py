"""The header during a sweep: files done of the total, %, files/s, time left."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.events import Progress, SweepStarted
from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import screen_text
from tui.app import QuarryApp
from tui.messages import EngineEvents
from tui.pace import WINDOW, Pace, describe, duration


def test_rate_and_time_left_over_the_window() -> None:
    pace = Pace()
    pace.start(100.0)
    assert describe(0, 100, pace) == "0/100 files · 0%"
    for i in range(1, 11):
        pace.add(100.0 + i, 5 * i)
    assert pace.rate() == 5.0
    assert describe(50, 100, pace) == "50/100 files · 50% · 5.0 files/s · 0:10 left"
    pace.add(100.0 + 10 + WINDOW + 10, 60)  # then slow: 10 files in 40 s
    assert pace.rate() is not None and pace.rate() < 1.0  # type: ignore[operator]
    assert duration(3 * 3600 + 2 * 60 + 10) == "3:02:10" and duration(42) == "0:42"


@given(st.lists(st.tuples(st.floats(0.01, 100), st.integers(0, 50)), max_size=60))
def test_the_rate_is_never_negative_and_the_words_always_say_percent(
    steps: list[tuple[float, int]],
) -> None:
    pace = Pace()
    pace.start(0.0)
    at, done = 0.0, 0
    for dt, more in steps:
        at, done = at + dt, done + more
        pace.add(at, done)
        rate = pace.rate()
        assert rate is None or rate >= 0
    total = done + 7
    words = describe(done, total, pace)
    assert words.startswith(f"{done:,}/{total:,} files · ") and "%" in words


async def test_the_header_shows_rate_and_time_left_at_80(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        events = [SweepStarted(1000.0, ("/fixtures",), 100, 10_000)]
        events += [Progress(1000.0 + i, 5 * i, 100, 500 * i, 10_000, f"f{i}") for i in range(11)]
        app.post_message(EngineEvents(events))
        want = "sweeping 50/100 files · 50% · 5.0 files/s · 0:10 left"
        await wait_for(pilot, lambda: want in screen_text(app))
