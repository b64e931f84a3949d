"""The dashboard's full screens: Textual's ``Screen``, saying when a worker failed, and
repainting only what a change of focus concerns.

Textual repaints a whole screen each time the focus moves (its ``focused`` is a reactive that
repaints): ``/`` (the focus into the filter box) and its ``escape`` cost a full repaint each,
~22 KB at 160x50 on top of the box's own layout, although the widgets that gain and lose the
focus restyle and repaint themselves (their ``:focus`` and ``:focus-within`` rules) and the
footer follows the bindings, not the repaint.
"""

from __future__ import annotations

from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from tui.screens.failures import ReportsWorkerFailures


class FullScreen(Screen[None], ReportsWorkerFailures):
    """A screen of the dashboard that fills the terminal (not a modal question)."""

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """The focused widget (Textual's, without the repaint of the whole screen)."""
