"""The dashboard's full screens: Textual's ``Screen``, saying when a worker failed, and
repainting only what a change of focus concerns.

Textual repaints a whole screen each time the focus moves (its ``focused`` is a reactive that
repaints): ``/`` (the focus into the filter box) and its ``escape`` cost a full repaint each,
~22 KB at 160x50 on top of the box's own layout, although the widgets that gain and lose the
focus restyle and repaint themselves (their ``:focus`` and ``:focus-within`` rules) and the
footer follows the bindings, not the repaint.

Textual also counts the screen just under the top one as a background that may show through,
even when the top screen is opaque (every full screen here is): whatever changed on the
covered screen (the records screen is told of every live change at once, and ``push_screen``
itself repaints the screen it covers) is repainted on the top screen, which shows none of it.
``x``, ``u`` and ``t`` each wrote their screen two or three times (13 KB, 12 KB, 13 KB at
160x50), and the key after waited behind the copies (issue 25). A covered screen now keeps its
changes to itself: it is repainted whole when it is on top again (Textual's resume).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from textual import events
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from tui.screens.failures import ReportsWorkerFailures


class FullScreen(Screen[None], ReportsWorkerFailures):
    """A screen of the dashboard that fills the terminal (not a modal question)."""

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """The focused widget (Textual's, without the repaint of the whole screen)."""

    def _compositor_refresh(self) -> None:
        """Textual's, but for two frames that showed nothing new.

        Under an opaque screen nothing of this one shows: its changes are not repainted on
        the screen on top (this screen is repainted whole as it resumes). And a part of the
        screen is not drawn when the whole of it is about to be: Textual lays a screen out
        (drawing what moved) and then, in the same tick, repaints it whole when that was
        asked too (a screen shown again asks both)."""
        if covered(self):
            self._compositor._dirty_regions.clear()
            self._dirty_widgets.clear()
            return
        if self._repaint_required and self is self.app.screen:
            return  # the whole screen follows (its dirty regions are drawn with it)
        super()._compositor_refresh()

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """On top again: restyled only when the app's styles changed (:func:`restyle_if_new`;
        runs before Textual's own handler, which reads the event)."""
        restyle_if_new(self, event)


def restyle_if_new(screen: Screen[Any], event: events.ScreenResume) -> None:
    """Have ``screen`` restyled as it resumes only when the app's styles changed since it was
    last styled.

    Textual restyles every widget of a screen each time it is pushed (10-25 ms at 160x50 for
    a triage screen), and each table and scroll bar then repaints itself after the screen's
    own repaint: a second frame. A screen made once and shown again (``x esc x``, ``? esc ?``)
    has the styles it had, unless the app's CSS changed since: a theme or a reload (Textual
    counts those, and restyles the screens in the stack itself), or another screen's CSS
    read since (its rules apply to every screen, and Textual restyles only those mounted)."""
    app = screen.app
    now = (app._css_update_count, len(app.stylesheet.source))
    if _STYLED_FOR.get(screen) == now:
        event.refresh_styles = False
    _STYLED_FOR[screen] = now


_STYLED_FOR: WeakKeyDictionary[Screen[Any], tuple[int, int]] = WeakKeyDictionary()
"""The app's styles (its CSS count, the CSS sources read) each screen was last styled for."""


def covered(screen: Screen[Any]) -> bool:
    """Whether ``screen`` is under an opaque screen: the top one hides it whole (a screen
    fills the terminal; Textual lets one below show only through a background's alpha)."""
    app = screen.app
    stack = app.screen_stack
    if not stack or stack[-1] is screen or screen not in stack:
        return False
    above = stack[stack.index(screen) + 1 :]
    return any(s.styles.background.a == 1 for s in above)
