"""A box's keys take effect in the order typed, all of them arriving at once (issue 25).

Every key is posted to the app before it handles the first, as a paste or a loaded machine
delivers them; the box must end as if each had been handled before the next came. With
Textual's ``Input`` a letter overtook the backspace before it (``ab`` backspace ``c`` gave
``bc``... the backspace ran last and ate the ``c``).
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding

from tui.widgets.typed_input import TypedInput

EDITS = ("backspace", "delete", "left", "right", "home", "end")
"""Keys the box binds, each an edit or a move."""


class BoxApp(App[None]):
    """One box, and a key bound by the app (not by the box) that counts its runs."""

    BINDINGS = [Binding("f5", "count", "Count")]

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def compose(self) -> ComposeResult:
        yield TypedInput(id="box")

    def action_count(self) -> None:
        self.counted += 1


def expected(keys: list[str]) -> str:
    """What the box holds once ``keys`` were handled one after the other."""
    value, at = "", 0
    for key in keys:
        if key == "backspace" and at:
            value, at = value[: at - 1] + value[at:], at - 1
        elif key == "delete":
            value = value[:at] + value[at + 1 :]
        elif key in ("left", "right"):
            at = max(0, min(len(value), at + (1 if key == "right" else -1)))
        elif key in ("home", "end"):
            at = 0 if key == "home" else len(value)
        elif len(key) == 1:
            value, at = value[:at] + key + value[at:], at + 1
    return value


def typed(keys: list[str]) -> tuple[str, int]:
    """Post ``keys`` at once to a fresh app; the box's value and the app's f5 count after."""

    async def run() -> tuple[str, int]:
        app = BoxApp()
        async with app.run_test() as pilot:
            box = app.query_one(TypedInput)
            box.focus()
            await pilot.pause()
            for key in keys:
                app.post_message(events.Key(key, key if len(key) == 1 else None))
            for _ in range(10 * len(keys) + 10):  # each key takes a few turns of the loop
                await pilot.pause()
            return box.value, app.counted

    return asyncio.run(run())


def test_a_backspace_is_applied_before_the_letter_typed_after_it() -> None:
    assert typed(["a", "b", "backspace", "c"]) == ("ac", 0)


def test_a_key_the_app_binds_runs_once() -> None:
    assert typed(["a", "f5", "b"]) == ("ab", 1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["a", "b", "c", *EDITS]), max_size=12))
def test_any_keys_end_as_if_typed_one_at_a_time(keys: list[str]) -> None:
    assert typed(keys)[0] == expected(keys)
