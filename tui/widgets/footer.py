"""A footer that never cuts a key in half: keys that do not fit are left out whole.

The keys come in the order Textual gives (the focused widget's, then the screen's, then the
app's), so a narrow terminal keeps a screen's own verbs and drops the app-wide ones first;
``?`` lists every key of every screen.
"""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittingFooter(Footer):
    """:class:`~textual.widgets.Footer`, trimmed to the keys that fit whole."""

    async def recompose(self) -> None:
        """Rebuild the keys, then trim them once they are laid out."""
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        """A new width: every key again, then trim."""
        self.call_after_refresh(self.recompose)

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        right = self.region.right - sum(k.outer_size.width for k in palette)
        overflowing = False
        for key in keys:
            if key in palette:
                continue
            overflowing = overflowing or key.region.right > right
            if overflowing:
                key.display = False
