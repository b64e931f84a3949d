"""A footer that never cuts a key in half: keys that do not fit are left out whole, the least
important first.

The keys stay in the order Textual gives (the focused widget's, then the screen's, then the
app's); when they do not all fit, those whose action ranks lowest in :data:`IMPORTANCE` are
left out until the rest fit. At 80 columns the records screen once kept sort and detail and
dropped retry, errors, unsupported and tools: the verbs the tool exists for. ``?`` lists every
key of every screen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.binding import Binding
    from textual.screen import Screen


IMPORTANCE: tuple[str, ...] = (
    "back", "quit", "help", "open", "retry_one", "retry_group", "retry_file",
    "show_errors", "show_unsupported", "show_tools", "check",
    "retry_many", "retry_with_password", "filter",
    "page(1)", "page(-1)", "search", "toggle_wrap",
)  # fmt: skip
"""Actions whose keys the footer keeps first, most important first; keys of other actions
come after these, and of those :data:`LEAST` go first."""
LEAST: tuple[str, ...] = ("show_activity", "toggle_detail", "cycle_sort")
"""Actions whose keys are left out before any other (the last one first)."""


def rank(action: str) -> int:
    """Lower is more important (kept longer)."""
    if action in IMPORTANCE:
        return IMPORTANCE.index(action)
    if action in LEAST:
        return 1000 + LEAST.index(action)
    return len(IMPORTANCE)


class FittingFooter(Footer):
    """:class:`~textual.widgets.Footer`, trimmed to the keys that fit whole.

    Rebuilds are fewer than Textual's footer makes (one per signal that the bindings may
    have changed, and one per resize), each tens of milliseconds on the way to the first
    frame: signals before a pending rebuild are one rebuild; a signal whose shown bindings
    are those already shown (mounting the keys sends one; the filter box's focus changes
    only hidden ones but ``/``) is none, and so is one while another screen is on top; a new
    width shows every key again and trims anew, without a rebuild. The keys drawn are the
    same.
    """

    _rebuild_pending = False
    _shown: list[tuple[str, Binding, bool, str]] | None = None
    """The bindings the keys were last built from."""

    def _bindings_now(self) -> list[tuple[str, Binding, bool, str]]:
        """The bindings the keys are built from: those shown (and the palette's key)."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return [
            (k, b, on, tip)
            for k, (_node, b, on, tip) in self.screen.active_bindings.items()
            if b.show or k == palette
        ]

    def compose(self) -> ComposeResult:
        """Textual's keys, noting the bindings they are built from."""
        self._shown = self._bindings_now() if self._bindings_ready else None
        yield from super().compose()

    async def recompose(self) -> None:
        """Rebuild the keys, then trim them once they are laid out.

        Pending until the keys are built: a signal while the old keys are removed (the
        focus settling) came before the new ones noted their bindings, and made a second
        rebuild of the same keys (``escape`` from the filter box drew the footer twice)."""
        await super().recompose()
        self._rebuild_pending = False
        if not self.is_attached:  # its screen was closed before the rebuild came round
            return
        self.call_after_refresh(self._fit)
        if self._bindings_now() != self._shown:  # changed while they were built
            self._rebuild_soon()

    def bindings_changed(self, screen: Screen[object]) -> None:
        """The bindings may have changed: one rebuild after the next refresh, if they did.

        Not while another screen is over this one (the help, a triage screen): the app's
        keys change under it, and back on top they are as they were, so the two rebuilds
        (each a frame, after the frame the key asked for) came to nothing (issue 25)."""
        self._bindings_ready = True
        mine = screen.app.app_focus and self.is_attached and screen is self.screen
        mine = mine and screen.is_active
        if mine and not self._rebuild_pending and self._bindings_now() != self._shown:
            self._rebuild_soon()

    def on_resize(self) -> None:
        """A new width: every key shown again, then trimmed (the keys are the same)."""
        for key in self.query(FooterKey):
            key.display = True
        self.call_after_refresh(self._fit)

    def _rebuild_soon(self) -> None:
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_after_refresh(self.recompose)

    def _fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        room = self.region.width - sum(k.outer_size.width for k in palette)
        verbs = [k for k in keys if k not in palette and k.display]
        used = sum(k.outer_size.width for k in verbs)
        # the least important leave first (a stable sort: of equals, the rightmost first)
        for key in sorted(reversed(verbs), key=lambda k: -rank(k.action.removeprefix("app."))):
            if used <= room:
                break
            key.display = False
            used -= key.outer_size.width
