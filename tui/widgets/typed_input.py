"""An input box whose keys take effect in the order they were typed.

Textual's ``Input`` (8.2) inserts a letter in its own key handler, as soon as the key
reaches it, but a key it binds (backspace, delete, the arrows, home, end, enter) goes
another way: the key is not handled there, so it bubbles to the screen and then to the app,
a message queue each, and only the app looks its bindings up and runs ``delete_left``.
Letters typed right behind it are meanwhile forwarded by the app straight to the box, so
they overtake it whenever several keys wait at once: a fast typist, a paste, a loaded
machine. ``/abcdK``, two backspaces and ``xyz`` left ``abcdKx`` (issue 25; Textual issue
#6605).

:class:`TypedInput` looks the bindings up where the key is, as the app would when it
arrives there: the same chain (the box, then its screen, then the app; the app's priority
bindings were tried before the key was forwarded), so what a key does is unchanged, only
when.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TypedInput(Input):
    """Textual's ``Input``, its bound keys run in turn with the letters typed around them."""

    async def _on_key(self, event: events.Key) -> None:
        """Run a bound key's action now; a letter is left to ``Input``, which inserts it."""
        if event.is_printable:
            return
        # The binding the app would run once the key has bubbled up (nothing in between in
        # this dashboard: no screen handles keys itself), as the screen's public map of its
        # active bindings gives it: the box's, then its screen's, then the app's, those whose
        # action is disabled left out. A priority binding ran before the key was forwarded.
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.binding.priority or not active.enabled:
            return
        if await self.app.run_action(active.binding.action, active.node):
            event.stop()  # done: the app must not run it a second time
