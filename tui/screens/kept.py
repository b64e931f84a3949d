"""The screens made once and shown anew: the triage screens (tools, errors, unsupported,
activity, a new one) and the help, over a back stack that holds each kind once.

The desk owns one :class:`KeptScreens`; the app's ``show_*`` actions (:mod:`tui.globalkeys`)
come here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from tui.screens.triage_base import TriageScreen

if TYPE_CHECKING:  # imported when first asked for, after the first frame
    from tui.screens.help import HelpScreen


class KeptScreens:
    """One screen of each kind for the app's life, and the rule for showing one."""

    def __init__(self, app: App[None], make: Callable[[type[TriageScreen]], TriageScreen]) -> None:
        self.app = app
        self.make = make
        """Builds a screen of a kind the first time it is shown (with the app's model...)."""
        self._kept: dict[type[TriageScreen], TriageScreen] = {}
        self._help: HelpScreen | None = None

    def _top(self) -> Screen[object] | None:
        stack = self.app.screen_stack
        return stack[-1] if stack else None

    def show(self, kind: type[TriageScreen]) -> None:
        """Show the screen of ``kind`` over the one on top: escape comes back to where it was
        opened from (a back stack, as in k9s: ``x u t esc`` is on the unsupported screen
        again). A screen of that kind already in the stack is gone back to instead, as it was
        left: the stack holds each kind once."""
        top = self._top()
        if top is None or type(top) is kind:
            return
        stack = self.app.screen_stack
        earlier = next((i for i, s in enumerate(stack) if type(s) is kind), None)
        if earlier is None:
            self.app.push_screen(self._screen(kind))
            return
        for _ in stack[earlier + 1 :]:
            self.app.pop_screen()

    def _screen(self, kind: type[TriageScreen]) -> TriageScreen:
        """The one screen of ``kind``: made and installed the first time it is shown, shown
        anew (as a new one would be, with the records as they are) every later time.

        A screen made for each key cost its compose, a restyle of every widget, two full
        repaints (Textual lays a new screen out, then repaints it whole again) and, on
        escape, a third of the screen below once it was removed: at load, most of a key's
        150 ms (issue 25)."""
        screen = self._kept.get(kind)
        if screen is None:
            screen = self._kept[kind] = self.make(kind)
            self.app.install_screen(screen, name=f"kept-{kind.__name__}")
        else:
            screen.show_anew()
        return screen

    def help(self, keys: Sequence[Binding], *, read_only: bool) -> None:
        """Show every key (``keys``: the app's own); made once, its text is the same all
        session."""
        from tui.screens.help import HelpScreen

        if isinstance(self._top(), HelpScreen | None):
            return
        if self._help is None:
            self._help = HelpScreen(list(keys), read_only=read_only)
            self.app.install_screen(self._help, name="kept-help")
        else:
            self._help.show_anew()
        self.app.push_screen(self._help)

    def forget(self) -> None:
        """Let every triage screen made go (none may be in the stack): each is made anew,
        with the app's model as it is then, the next time it is shown (the help stays)."""
        kept, self._kept = list(self._kept.values()), {}
        for screen in kept:
            self.app.uninstall_screen(screen)
            screen.remove()
