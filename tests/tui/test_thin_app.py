"""The App class fits on a screen or two (issue 30): QuarryApp makes the dashboard's parts and
hands each message its workers post to the router; the keys are GlobalKeys', the routing the
router's. Every message posted to the app is a Fed, the one kind its one handler takes."""

from __future__ import annotations

import inspect

from textual.message import Message

import tui.messages
from tui.app import QuarryApp
from tui.messages import Fed, ModelChanged

MOST_LINES = 120


def test_the_app_class_fits_on_a_screen_or_two() -> None:
    lines = inspect.getsource(QuarryApp).splitlines()
    assert len(lines) <= MOST_LINES, f"QuarryApp is {len(lines)} lines"


def test_every_message_for_the_app_is_one_its_route_takes() -> None:
    # A message of another kind posted to the app would find no handler, and be dropped.
    messages = [
        m
        for m in vars(tui.messages).values()
        if isinstance(m, type) and issubclass(m, Message) and m.__module__ == tui.messages.__name__
    ]
    assert {m for m in messages if not issubclass(m, Fed)} == {ModelChanged}
    assert len(messages) > 3
