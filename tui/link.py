"""The link between the dashboard and the engine, without Textual.

What the header shows (:class:`Header`) is data the screens read by name. The app asks the
link, not the screens: the screens see the dashboard only through
:class:`tui.screens.ports.Dashboard`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Header:
    """What the records screen's header and summary bar show."""

    folder: str
    """The folder(s) swept, or the store's own folder."""
    state: str
    """The live state in words (with the read-only badge, progress or pause)."""
    progress: tuple[int, int] | None
    """(done, total) of a load or sweep in flight; None when none runs."""
    last_event: float | None
    """When (``time.time()``) the engine last said something; None before it did."""
    problem: str
    """Why the store could not be read, or how many of its lines could not; empty if none."""
