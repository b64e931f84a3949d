"""What the tools, errors and activity screens share: built with the model, the triage state
and the dashboard; escape goes back; live changes redraw them, at most every 0.3 s.

The app makes one screen of each kind and shows it again (``x esc x``): shown again, it
starts over as a new one would, with the records as they are then (:meth:`start_over`), before
it is on top: its widgets' changes then reach it while it is hidden, and the one repaint
Textual makes as it resumes shows them. Started over once on top, the same changes arrived
after that repaint: a second frame of the whole screen for each ``x``, ``u`` or ``t`` (12 KB
at 160x50), the next key waiting behind it (issue 25)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.binding import Binding

from tui.messages import ModelChanged
from tui.model import RecordModel
from tui.screens.full import FullScreen
from tui.screens.ports import Dashboard
from tui.state import TriageState

REFRESH_SECONDS = 0.3
"""Live events redraw a triage screen at most this often (a sweep sends many)."""


class TriageScreen(FullScreen):
    """A screen over the records screen; ``t x @`` switch between them, escape (or q) goes back."""

    BINDINGS = [Binding("escape,q", "back", "Back")]

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__()
        self.model = model
        self.triage = triage
        self.dash = dash
        self.ready = False
        """Set once mounted: live refreshes before that would find no widgets."""
        self._refresh_due = False
        self._counting = False
        """A worker of :meth:`count_in_worker` runs."""
        self._count_again = False
        """Asked to count while one ran: :meth:`refresh_data` again once it is done."""

    def refresh_data(self) -> None:
        """The records or the tools changed: redraw."""

    def count_in_worker(self, work: Callable[[], Any], then: Callable[[Any], None]) -> None:
        """``work()`` on a worker thread, its answer handed to ``then`` on this one, one at a
        time: asked again while one runs, :meth:`refresh_data` runs once more after it (a
        followed sweep changes the records every 0.3 s, and an index without its trees may
        take 45 s to answer: a thread each would pile up)."""
        if self._counting:
            self._count_again = True
            return
        self._counting = True

        def run() -> None:
            try:
                answer = work()
            except BaseException:
                self.app.call_from_thread(self._counted_by_worker, None, None)
                raise
            self.app.call_from_thread(self._counted_by_worker, then, answer)

        self.run_worker(run, name="count", group="count", thread=True, exit_on_error=False)

    def _counted_by_worker(self, then: Callable[[Any], None] | None, answer: object) -> None:
        self._counting = False
        again, self._count_again = self._count_again, False
        if not self.ready or not self.is_attached or not self.app.is_running:
            return  # (gone back from, or the dashboard quit, while it counted)
        if then is not None:
            then(answer)
        if again:
            self.refresh_data()

    def show_anew(self) -> None:
        """The app is about to show this screen again: start over now, while hidden (a
        screen not mounted yet starts as new when it mounts)."""
        if self.ready:
            self.start_over()

    def start_over(self) -> None:
        """As a new screen of this kind would be: the records as they are now, the first
        row highlighted, the keys on the first table (the view kept hidden a while missed
        the live changes meanwhile: only the screen on top is told of them)."""
        self.refresh_data()

    def on_model_changed(self, message: ModelChanged) -> None:
        """Live changes: redraw soon (once for a burst of them)."""
        if self.ready and not self._refresh_due:
            self._refresh_due = True
            self.set_timer(REFRESH_SECONDS, self._refresh_now)

    def _refresh_now(self) -> None:
        self._refresh_due = False
        # Due 0.3 s after a change, the redraw may find the screen gone back from (shown
        # again, it starts over anyway) or being taken down as the dashboard quits, its
        # tables already removed (a NoMatches that failed CI at stop 34).
        if self.ready and self.is_attached and self.is_current and self.app.is_running:
            self.refresh_data()

    def action_back(self) -> None:
        """Back to the records."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
