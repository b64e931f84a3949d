"""The dashboard the screens are given: :class:`Desk`, the :class:`~tui.screens.ports.Dashboard`.

It answers what the screens read (:class:`tui.board.Board`, Textual-free) and does what they
ask that outlives them: a retry started on the errors screen answers wherever the operator
is, a tools re-check, a password prompt, the inspector, a program run with the terminal
handed over (the app's). What those mean is decided by :class:`tui.retries.Retries` (no
Textual); the desk asks it, shows what it says, and runs the engine calls in the app's
thread workers (the app hands their answers back: :meth:`Desk.retry_finished`,
:meth:`Desk.tools_checked`).

It makes the records screen (:attr:`Desk.home`) and tells every screen of each change
(:meth:`Desk.tell`: one :class:`~tui.messages.ModelChanged`). It also keeps the two offers
the app makes of its own accord: new error groups announced together, and the tools screen
after a full sweep when files wait on a new tool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from textual.screen import ModalScreen, Screen

from engine.events import Event
from engine.passwords import Passwords
from engine.query import TextTerm
from engine.records import Key, Record, is_sha256
from engine.store import Store
from tui.board import Board
from tui.link import Change, Link, Say
from tui.messages import ModelChanged, RetryFinished, ToolsChecked
from tui.model import RecordModel
from tui.retries import Retries, RetryDone, ToolsCheck
from tui.screens.kept import KeptScreens
from tui.screens.records import RecordsScreen
from tui.shell import Shell
from tui.state import TriageState, announce
from tui.triage import group_keys, tools_waited_on

if TYPE_CHECKING:
    from engine.session import Session

ANNOUNCE_SECONDS = 8.0
"""How long a new-error-groups notification shows; the next one waits until it has gone."""


class Desk(Board):
    """The app as its screens see it (see the module docstring)."""

    def __init__(
        self, app: Shell, store: Store, session: Session | None, link: Link, triage: TriageState
    ) -> None:
        super().__init__(store, session, link, triage)
        self.app = app
        self.retries = Retries(triage, link, self.tools_left_out)
        """What retries, password unlocks and tools re-checks decide."""
        self.changed_since = time.time()
        """What ``D`` compares the store with: itself when the dashboard opened, or when the
        last retry began (what each file was and what it is now)."""
        self.kept = KeptScreens(app, lambda kind: kind(self.model, self.triage, self))
        """The triage screens and the help, each made once and shown anew."""
        self._announcing = False
        self._announced = -ANNOUNCE_SECONDS
        """When (monotonic) new error groups were last announced."""
        self.home = RecordsScreen(self.model, triage, self)
        """The records screen, at the bottom of the stack (the app installs it)."""
        self.greeting: Say | None = None
        """A pop-up shown once the store is loaded (why the dashboard follows it read-only)."""

    def rehome(self, model: RecordModel, query: str) -> RecordsScreen:
        """Show ``model`` from now on (a session's store grew too big to hold: the app pages
        it from its index): the triage screens are made anew when next shown, and a new
        records screen, filtering by ``query``, for the app to put in place of :attr:`home`."""
        self.model = model
        self.kept.forget()
        self.home = RecordsScreen(model, self.triage, self, query=query)
        return self.home

    def say(self, say: Say | None) -> bool:
        """Show ``say`` as a pop-up if there is one; whether there was."""
        if say is not None:
            self.app.notify(
                say.message, title=say.title, severity=say.severity, timeout=say.timeout
            )
        return say is not None

    def top(self) -> Screen[object] | None:
        """The screen on top, or None (starting, or exiting: the stack is empty)."""
        stack = self.app.screen_stack
        return stack[-1] if stack else None

    def tell(self, change: Change) -> None:
        """Every screen is told of a change by one message: the records screen at once (the
        row its cursor keeps is read before the next change), the screen on top when it is
        another. Nothing once the app is leaving: its timers (a paged store's renewal) tick
        on while it removes the screens' widgets, and there is nothing left to draw."""
        if not self.app.is_running:
            return
        self.home.on_model_changed(ModelChanged(change))
        top = self.top()
        if top is not None and top is not self.home:
            top.post_message(ModelChanged(change))

    def held(self, events: list[Event]) -> bool:
        """Engine events arrived: whether they are held back (paused: the header counts them
        and says when the engine last spoke)."""
        self.link.last_event = events[-1].at
        if not self.paused:
            return False
        self.pending.extend(events)
        self.tell(Change())
        return True

    def release(self) -> list[Event]:
        """The events held back while paused, in order (none are held any more)."""
        events = self.pending[:]
        self.pending.clear()
        return events

    # -- what the screens ask ----------------------------------------------------------

    def open_record(self, rid: int, *, detail: bool = False, find: TextTerm | None = None) -> None:
        """Open the stored text of row ``rid`` (at ``find``'s first match); with ``detail``,
        a record without text shows in full instead (from triage screens: never a dead end)."""
        from tui.screens.detail import DetailScreen
        from tui.screens.inspector import InspectorScreen

        record = self.model.record(rid)
        if record is None:
            return
        sha = record.sha256
        if record.has_text and sha is not None and is_sha256(sha):
            opened = InspectorScreen(record, lambda: self.store.text_bytes(sha), find=find)
            self.app.push_screen(opened)
        elif detail:
            self.app.push_screen(DetailScreen(record, self.tools_missing()))
        else:
            self.app.notify(f"{record.path}: no text stored ({record.status})", severity="warning")

    def open_key(self, key: Key) -> None:
        """Open the file ``key``'s stored text in the inspector (its record in full when it
        has none); say so when the dashboard does not hold it."""
        rid = self.model.ids.get(key)
        if rid is None:
            self.app.notify(f"{key[1]}: not in the store now", severity="warning")
        else:
            self.open_record(rid, detail=True)

    def unlock(self, keys: list[Key], label: str, *, unmark: bool = False) -> None:
        """Ask for a password (or a file of them), keep it for the session, retry ``keys``."""
        from tui.screens.password import PasswordScreen

        if self.say(self.retries.refusal(keys, unlock=True)):
            return

        def answered(passwords: Passwords | None) -> None:
            if passwords:
                self.triage.add_passwords(passwords)
                self.retry(keys, label, unmark=unmark, unlock=True)

        self.app.push_screen(PasswordScreen(*self.retries.prompt(keys, label)), answered)

    def retry(
        self, keys: list[Key], label: str, *, unmark: bool = False, unlock: bool = False
    ) -> None:
        """Retry ``keys`` (asking first above :data:`~tui.retries.CONFIRM_ABOVE`); ``unmark``
        once started; ``unlock``: the operator just gave a password for them (the answer
        counts what opened)."""
        from tui.screens.confirm import ConfirmScreen

        if self.say(self.retries.refusal(keys)):
            return
        question = self.retries.question(keys, label)
        if question is None:
            self._start_retry(keys, label, unmark, unlock)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_retry(keys, label, unmark, unlock)

        self.app.push_screen(ConfirmScreen(question, "Retry"), answered)

    def _start_retry(self, keys: list[Key], label: str, unmark: bool, unlock: bool) -> None:
        say = self.retries.begin(keys, label, unmark=unmark)
        self.changed_since = time.time()  # D: what this retry changed
        self.tell(Change(marks=True))
        self.say(say)
        run = partial(self._run_retry, keys, label, unlock)
        self.app.run_worker(
            run, name="_retry_worker", group="retry", thread=True, exit_on_error=False
        )

    def _run_retry(self, keys: list[Key], label: str, unlock: bool) -> None:
        # (a thread) the records it changed were posted (in order) before this answer
        self.app.post_message(RetryFinished(self.retries.run(keys, label, unlock)))

    def retry_finished(self, done: RetryDone) -> None:
        """A retry answered (the app hands :class:`~tui.messages.RetryFinished` on)."""
        say = self.retries.finished(done)
        self.tell(Change(marks=True))
        self.say(say)
        from tui.screens.compare import CompareScreen

        if isinstance(top := self.top(), CompareScreen):  # R there: what each file is now
            top.retried(done.keys, self.changed_since)

    def check_tools(self) -> bool:
        """Look up the tools again (a new one retries what it unlocks); False if refused."""
        if self.say(self.retries.start_check()):
            return False
        self.app.run_worker(
            self._run_check,
            name="_check_tools_worker",
            group="tools",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )
        return True

    def _run_check(self) -> None:
        check = self.retries.check()  # (a thread)
        self.app.post_message(ToolsChecked(check.appeared, check.error))

    def tools_checked(self, message: ToolsChecked) -> None:
        """A tools re-check answered: said, and handed to the screen on top (the tools
        screen redraws on it: see :class:`~tui.messages.ToolsChecked`'s ``bubble``)."""
        self.say(self.retries.checked(ToolsCheck(message.appeared, message.error)))
        if (top := self.top()) is not None:
            top.post_message(ToolsChecked(message.appeared, message.error))
        self.tell(Change())

    def run_outside(self, command: list[str]) -> int | None:
        """Run ``command`` with the terminal handed over (:meth:`tui.shell.Shell.run_outside`)."""
        return self.app.run_outside(command)

    def compare(self, other: Store | None, since: float | None) -> None:
        """The compare screen as the dashboard opens, if asked: ``quarry ui --compare OTHER``
        (OTHER before, this store after), ``--since TIME`` (this store then, and now)."""
        if other is None and since is None:
            return
        from tui.screens.compare import CompareScreen

        before, since = (other, None) if other is not None else (self.store, since)
        self.app.push_screen(CompareScreen(before, self.store, self, since=since))

    def what_changed(self) -> None:
        """The store against itself as it was when the dashboard opened, the last retry began
        or the last whole sweep that changed records began (no earlier than the history its
        index keeps): the compare screen."""
        from engine.comparison import history_start
        from tui.screens.compare import CompareScreen

        since = max(self.changed_since, self.link.sweep_began or 0.0)  # the last retry or sweep
        since = max(since, history_start(self.store) or since)
        self.app.push_screen(CompareScreen(self.store, self.store, self, since=since))

    # -- what the app offers of its own accord -------------------------------------------

    def loaded(self) -> None:
        """The store is loaded: the tools its files wait on are known (no tools screen for
        them at the first sweep's end), and its error groups (new ones are announced)."""
        self.say(self.greeting)
        self.greeting = None
        if not self.model.paged:  # (it reads every record; no sweep here)
            self.triage.new_waiting_tools(r.name for r in tools_waited_on(self.tool_rows()))
        self.app.run_worker(
            partial(self._learn_groups, self.model.error_messages()),
            name="_learn_groups",
            group="known-groups",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _learn_groups(self, messages: Callable[[], set[tuple[str | None, str | None]]]) -> None:
        # off the UI thread: each distinct message is normalised by regular expressions
        groups = group_keys(messages())
        self.app.call_from_thread(setattr, self.triage, "known_groups", groups)

    def see_records(self, records: Iterable[Record]) -> None:
        """New error groups are announced together: a second after the first, and never
        while the previous announcement is still on screen (at 80x24 three or four of them
        covered the status column)."""
        if self.triage.see_records(records) and not self._announcing:
            self._announcing = True
            wait = self._announced + ANNOUNCE_SECONDS - time.monotonic()
            self.app.set_timer(max(1.0, wait), self._announce_groups)

    def _announce_groups(self) -> None:
        from tui.screens.errors import ErrorsScreen

        self._announcing = False
        if not self.app.is_running:  # (leaving: its screens are going)
            return
        new = self.triage.take_new_groups()
        if new and not isinstance(self.top(), ErrorsScreen):  # there, the groups are shown
            self._announced = time.monotonic()
            title, message = announce(new)
            self.app.notify(message, title=title, severity="warning", timeout=ANNOUNCE_SECONDS)

    def offer_tools(self, *, quitting: bool) -> None:
        """After a full sweep: the tools screen, when files now wait on a tool they did not
        wait on after the previous sweep (not on every launch)."""
        from tui.screens.tools import ToolsScreen

        waited = [r.name for r in tools_waited_on(self.tool_rows())]
        if not self.triage.new_waiting_tools(waited) or quitting or not self.app.is_running:
            return
        top = self.top()
        if top is not None and not isinstance(top, ModalScreen | ToolsScreen):
            self.kept.show(ToolsScreen)
