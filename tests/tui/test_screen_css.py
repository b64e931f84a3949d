"""Every full screen gets the rules of Textual's ``Screen`` and the app's: it is opaque.

The screens mixed in their worker-failure handler (a ``DOMNode``) before ``Screen``, and
Textual takes a class's CSS types from its first ``DOMNode`` base: no ``Screen`` rule ever
applied to them, their background was transparent, and Textual drew each of them over a
full render of the screen below it (the records screen, rendered again with every frame of
the errors, unsupported and tools screens: issue 25's key latency).
"""

from __future__ import annotations

from textual.screen import Screen

from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tui.app import QuarryApp
from tui.screens.activity import ActivityScreen
from tui.screens.errors import ErrorsScreen
from tui.screens.inspector import InspectorScreen
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen
from tui.screens.unsupported import UnsupportedScreen


def opaque(screen: Screen[object]) -> bool:
    """Whether ``screen`` is drawn on its own background (Textual's Screen rules apply)."""
    return screen.styles.background.a == 1 and screen.styles.overflow_y == "auto"


async def test_every_full_screen_is_opaque(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen) and opaque(app.screen)
        for key, kind in [("x", ErrorsScreen), ("u", UnsupportedScreen), ("t", ToolsScreen),
                          ("at", ActivityScreen)]:  # fmt: skip
            await pilot.press(key)
            await wait_for(pilot, lambda kind=kind: isinstance(app.screen, kind))
            assert opaque(app.screen), kind.__name__
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("2", "enter")  # the first ok record's text
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert opaque(app.screen)
