"""What the tools, errors and activity screens share: escape goes back, data refreshes live."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.binding import Binding
from textual.screen import Screen

if TYPE_CHECKING:
    from tui.app import QuarryApp


class TriageScreen(Screen[None]):
    """A screen over the records screen; ``t x @`` switch between them, escape goes back."""

    BINDINGS = [Binding("escape", "back", "Back")]

    ready = False
    """Set once mounted: live refreshes before that would find no widgets."""

    @property
    def quarry(self) -> QuarryApp:
        """The app, typed."""
        return cast("QuarryApp", self.app)

    def refresh_data(self) -> None:
        """The records or the tools changed: redraw (called by the app after live events)."""

    def action_back(self) -> None:
        """Back to the records."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
