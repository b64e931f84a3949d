"""A line of markup that is laid out and repainted only when what it shows changes.

Textual's ``Static.update`` lays the screen out again and repaints the widget whatever it is
given: the triage screens, redrawing their title and the group's description as they are
shown again (and at each live refresh), asked for a layout and a repaint of lines that had not
changed, a frame more after the one the key asked for (issue 25).
"""

from __future__ import annotations

from textual.widgets import Static


class Line(Static):
    """``Static``, with :meth:`show`: an update only when the markup differs."""

    _markup: str | None = None

    def show(self, markup: str) -> None:
        """Show ``markup`` (nothing is done when it is what the line shows)."""
        if markup != self._markup:
            self._markup = markup
            self.update(markup)
