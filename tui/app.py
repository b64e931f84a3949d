"""QuarryApp: the dashboard over one store, either following a live Session or polling files.

``QuarryApp(store_out, session)`` sweeps then watches through ``session`` in a thread worker;
``QuarryApp(store_out)`` (``quarry ui --store PATH``) reads the store and re-reads it when
another process rewrites ``extract.jsonl``. Either way the store is parsed in a thread worker
and the first screen shows at once, filling as chunks arrive.

The app routes: what the engine side does to the records model, the activity log and the
live state is :class:`tui.link.Link`'s (no Textual there); the app runs the workers that
load and follow the store, hands each message to the link and the link's answer to the
screens, every one of them through one message (:class:`~tui.messages.ModelChanged`).
Screens own their keys. What must outlive a screen (retries, tools re-checks: decided by
:class:`tui.retries.Retries`, run in the app's workers) and the terminal hand-over live here,
behind the :class:`~tui.screens.ports.Dashboard` protocol the screens are given; the triage
screens and the help are made once by :class:`tui.screens.kept.KeptScreens`.

Past STYLE's 500 lines: the workers, the Textual handlers and the Dashboard's answers are
what is left, each short; the next seams out are the Dashboard's read side (header, tool
rows, counts: Textual-free, a class beside the link) and the crash capture.
"""

from __future__ import annotations

import gc
import time
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.driver import Driver
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.worker import Worker

from engine.errors import SessionClosed
from engine.events import Event
from engine.names import shown
from engine.passwords import Passwords
from engine.records import Key, Record, Status, is_sha256
from engine.store import Store
from engine.tools import KNOWN_TOOLS
from tui import actions
from tui.hangup import TerminalGone, driver_class
from tui.link import Applied, Change, Header, Link, Live, Opening, Say, open_store
from tui.loader import Chunk, JsonlSource, jsonl_stamp, read_summary
from tui.messages import (
    EngineEvents,
    LoadFailed,
    ModelChanged,
    RetryFinished,
    RowsLoaded,
    SessionStage,
    StoreChanged,
    StoreFollowed,
    StoreLoaded,
    ToolsChecked,
)
from tui.model import TABS, RecordModel
from tui.poll import Followed
from tui.query import TextTerm
from tui.retries import Retries, ToolsCheck

# Only the records screen is imported here; every other screen (and what it imports) is
# imported by the action that shows it, after the first frame.
from tui.screens.failures import crash_report, worker_failure
from tui.screens.kept import KeptScreens
from tui.screens.records import RecordsScreen
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState, announce
from tui.triage import (
    ToolRow,
    found_from_summary,
    found_from_toolset,
    group_keys,
    tool_rows,
    tools_waited_on,
)
from tui.words import count

if TYPE_CHECKING:
    from engine.session import Session

POLL_SECONDS = 0.1
"""How often a store opened without a session is checked for changes: a stat and one read
of the index's counter (~0.1 ms, whatever the store's size), so a change is on screen a
tenth of a second after its batch is committed (tests/bench/bench_follow.py)."""
ANNOUNCE_SECONDS = 8.0
"""How long a new-error-groups notification shows; the next one waits until it has gone."""


class QuarryApp(App[None]):
    """The textquarry dashboard."""

    TITLE = "textquarry"
    CSS_PATH = "app.tcss"
    MODES = {"records": "records"}  # the records screen, installed by name in __init__
    DEFAULT_MODE = "records"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("t", "show_tools", "Tools"),
        Binding("x", "show_errors", "Errors"),
        Binding("u", "show_unsupported", "Unsupported"),
        Binding("at", "show_activity", "Activity"),
        Binding("p", "pause", "Pause", show=False),
        Binding("D", "what_changed", "What changed", show=False),
    ]

    paused: reactive[bool] = reactive(False, init=False)
    """Whether live changes are held back (they queue and apply on resume)."""

    def __init__(
        self,
        store_out: Path,
        session: Session | None = None,
        *,
        read_only: bool = False,
        compare: Store | None = None,
        since: float | None = None,
    ) -> None:
        super().__init__()
        self.compare_with = compare
        """A store to compare this one with on the compare screen, opened on mount."""
        self.compare_since = since
        """A time to compare this store with itself as it was then, on mount."""
        self.changed_since = time.time()
        """What ``D`` compares the store with: itself when the dashboard opened, or when the
        last retry began (what each file was and what it is now)."""
        self.store = session.store if session is not None else Store(Path(store_out))
        self.session = session
        self.read_only = read_only
        self.model = RecordModel()
        self.model.text_lookup = self._texts_matching
        self.triage = TriageState(engine=None if read_only else session, read_only=read_only)
        self.link = Link(self.model, self.triage, sweeping=session is not None)
        """The engine side's doings to the model, the log and the live state."""
        self.retries = Retries(self.triage, self.link, self.tools_left_out)
        """What retries, password unlocks and tools re-checks decide."""
        self.pending: list[Event] = []
        self.load_error = ""
        """Why the store could not be read at all, or empty."""
        self.crash = ""
        """The one-line reason the app stopped on an unexpected error (empty if it did not)."""
        self.crash_log: Path | None = None
        """Where the full traceback of that error was written."""
        self.terminal_gone = False
        """True once the terminal went away (no SIGHUP): the app left as on q (exit 1)."""
        self.quitting = False
        """True once q was pressed: the engine is stopping and the app will exit.

        (Not `_closing`: that is Textual's own flag, and setting it makes the app drop
        every message, ExitApp included.)"""
        self._polling = False
        self._announcing = False
        self._announced = -ANNOUNCE_SECONDS
        """When (monotonic) new error groups were last announced."""
        self._opening = Opening(None, None, None)
        """The store as :meth:`on_load` opened it; :meth:`_load` loads the rest."""
        self._gc_paused = False
        """Whether :meth:`on_load` paused the garbage collector (it was running)."""
        self._rows_begun = False
        """Whether the model was started afresh with the load's first chunk."""
        self.kept = KeptScreens(self, lambda kind: kind(self.model, self.triage, self))
        """The triage screens and the help, each made once and shown anew."""
        self.records_screen = RecordsScreen(self.model, self.triage, self)
        """The home screen, at the bottom of the stack."""
        self.install_screen(self.records_screen, name="records")
        if session is not None:
            session.on_event = self.engine_listener

    def engine_listener(self, event: Event) -> None:
        """The session's listener, called on engine threads: one message per event, in order
        (the run already batches records; this is the only batching layer's consumer)."""
        self.post_message(EngineEvents([event]))

    # -- what the screens ask (tui.screens.ports.Dashboard) ----------------------------------

    def header(self) -> Header:
        """What the header and the summary bar show."""
        problem = self.load_error
        if not problem and self.model.bad_lines:
            n = self.model.bad_lines
            problem = count(n, "unreadable line")
        link = self.link
        return Header(self.folder, self.state_text, link.progress, link.last_event, problem)

    def _texts_matching(self, term: TextTerm) -> frozenset[Key]:
        """The records whose text a ``text:`` term of the query line matches: the engine
        answers from the store's text index (or reads the texts); nothing for a term that
        means nothing (its error is on screen)."""
        from engine.grep import matching_keys

        if term.pattern is None:
            return frozenset()
        return matching_keys(self.store, term.pattern)

    def store_counts(self) -> dict[str, int] | None:
        """The store's counts per tab from its index while its records load (else None)."""
        counts = self._opening.counts
        if counts is None or self.state is not Live.LOADING:
            return None
        return {tab: counts.get(tab, 0) for tab in TABS}

    @property
    def folder(self) -> str:
        """The folder(s) swept, or the store's own folder."""
        if self.session is not None:
            return ", ".join(map(str, self.session.roots))
        summary = self.link.summary
        if summary is not None and summary.roots:
            return ", ".join(summary.roots)
        return str(self.store.out)

    @property
    def state(self) -> Live:
        """What the engine side is doing (loading, sweeping, watching, following...)."""
        return self.link.state

    @property
    def state_text(self) -> str:
        """The live state in words."""
        writable, pending = self.triage.writable, len(self.pending)
        return self.link.state_text(writable=writable, paused=self.paused, pending=pending)

    def tools_missing(self) -> set[str]:
        """Tools the last summary reported missing."""
        summary = self.link.summary
        return set(summary.tools_missing) if summary else set()

    def tool_rows(self) -> list[ToolRow]:
        """The tools view's rows, from the live model."""
        if self.session is not None:
            found = found_from_toolset(self.session.tools)
        else:
            summary = self.link.summary
            found = found_from_summary(summary.tools_found if summary else {})
        # reads on a Dask cluster: which worker has which tool
        workers = self.session.worker_tools() if self.session is not None else {}
        return tool_rows(found, self.model.waiting(), workers, self.tools_left_out())

    def tools_left_out(self) -> set[str]:
        """Tools this run was told not to use (``--without``, ``--no-external``); empty for a
        store followed from another process (its summary does not say)."""
        if self.session is None:
            return set()
        options = self.session.sweeper.options
        return set(KNOWN_TOOLS) if options.no_external else set(options.without)

    def source_path(self, key: Key) -> Path:
        """The file on disk a record came from."""
        return Path(key[0]) / key[1]

    def stored_text(self, record: Record, limit: int | None = None) -> bytes | None:
        """The record's stored text (its first ``limit`` bytes if given), read by the store
        (never through a link); None without text or a valid hash. OSError when it cannot be
        read."""
        sha = record.sha256
        usable = record.has_text and sha is not None and is_sha256(sha)
        return self.store.text_bytes(sha, limit) if usable and sha is not None else None

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
            self.push_screen(InspectorScreen(record, lambda: self.store.text_bytes(sha), find=find))
        elif detail:
            self.push_screen(DetailScreen(record, self.tools_missing()))
        else:
            self.notify(f"{record.path}: no text stored ({record.status})", severity="warning")

    def open_key(self, key: Key) -> None:
        """Open the file ``key``'s stored text in the inspector (its record in full when it
        has none); say so when the dashboard does not hold it."""
        rid = self.model.ids.get(key)
        if rid is None:
            self.notify(f"{key[1]}: not in the store now", severity="warning")
        else:
            self.open_record(rid, detail=True)

    def watch_paused(self) -> None:
        """Redraw the header."""
        self._tell_screens(Change())

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification as plain text: file names and engine messages in it are shown
        escaped, never read as markup or terminal controls."""
        del markup  # never markup: a file may be called "[b]x"
        super().notify(
            shown(message), title=shown(title), severity=severity, timeout=timeout, markup=False
        )

    # -- start-up --------------------------------------------------------------------------

    def on_load(self) -> None:
        """Open the store and parse its first block here, before the records screen mounts:
        the first frame has rows (a few hundred, in milliseconds); the rest is loaded by
        :meth:`_load` from :meth:`on_mount` (helper processes may be parsing it already:
        :func:`tui.loadpart.start_early`).

        The cyclic garbage collector is paused until the load is shown (:meth:`_gc_resume`):
        the load allocates millions of objects (rows' columns, unpickled chunks) and few
        cycles, and each pass walked the growing model: ~0.1 s of this process's CPU per
        million records, some of it inside frames."""
        self._gc_paused = gc.isenabled()
        gc.disable()
        self._opening = opening = open_store(self.store)
        for chunk in opening.first:
            assert opening.load is not None
            self._rows_loaded(RowsLoaded(chunk, opening.load.src, not self._rows_begun))
            self._rows_begun = True

    def on_mount(self) -> None:
        """Load the rest of the store; then sweep and watch, or poll."""
        self._load()
        if self.session is None:
            self.set_interval(POLL_SECONDS, self._poll)
        if self.compare_with is not None:  # quarry ui --compare OTHER: OTHER before, ours after
            from tui.screens.compare import CompareScreen

            self.push_screen(CompareScreen(self.compare_with, self.store, self))
        elif self.compare_since is not None:  # quarry ui --since TIME: ours then, ours now
            from tui.screens.compare import CompareScreen

            self.push_screen(CompareScreen(self.store, self.store, self, since=self.compare_since))

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        """Parse the rest of ``extract.jsonl`` in chunks (thread) and then start the session,
        if any."""
        load, stamp = self._opening.load, self._opening.stamp
        first = not self._rows_begun  # the first chunk starts the model afresh
        data = load.src if load is not None else JsonlSource(data=b"")
        try:
            if self._opening.trouble is not None:
                raise self._opening.trouble
            assert load is not None
            for chunk in load.rest():
                self.post_message(RowsLoaded(chunk, data, first))
                first = False
        except OSError as exc:  # a folder in its place, no permission, a failing disk
            self.post_message(LoadFailed(self._cannot_read(exc)))
        if first:  # an empty, missing or unreadable store: still start afresh
            self.post_message(RowsLoaded(Chunk([], array("q"), 0, 0), data, True))
        summary, problem = read_summary(self.store)
        self.post_message(StoreLoaded(summary, stamp, problem, data.point))
        if self.session is not None:
            self._run_session()

    def _cannot_read(self, exc: OSError) -> str:
        return f"cannot read {shown(str(self.store.jsonl_path))}: {exc.strerror or exc}"

    def _run_session(self) -> None:
        assert self.session is not None
        try:
            # Observers start before the sweep: what changes during it is applied after it.
            self.session.sweep_then_watch()
            if not self.quitting:
                self.post_message(SessionStage(Live.WATCHING))
        except SessionClosed:
            pass  # q came before the sweep began: nothing to say, the app is leaving
        except Exception as exc:  # the engine failed: say so on screen, keep browsing
            self.post_message(SessionStage(Live.FAILED, f"{type(exc).__name__}: {exc}"))

    @on(RowsLoaded)
    def _rows_loaded(self, message: RowsLoaded) -> None:
        self._route(self.link.rows_loaded(message.chunk, message.data, message.first))

    @on(StoreLoaded)
    def _store_loaded(self, message: StoreLoaded) -> None:
        where, problems = (message.stamp, message.point), (message.problem, self.load_error)
        self._route(self.link.loaded(message.summary, where, problems, self._kept_row()))
        self.triage.new_waiting_tools(r.name for r in tools_waited_on(self.tool_rows()))
        self._learn_groups(self.model.rids_with_status(Status.ERROR.value))
        self.call_after_refresh(self._gc_resume)  # the first collection after the frame

    def _gc_resume(self) -> None:
        """The load is over (or failed, or the app is leaving): collect garbage again."""
        if self._gc_paused:
            self._gc_paused = False
            gc.enable()

    def on_unmount(self) -> None:
        """Leaving (a quit during the load too): the collector runs again."""
        self._gc_resume()

    @work(thread=True, exclusive=True, group="known-groups", exit_on_error=False)
    def _learn_groups(self, rids: list[int]) -> None:
        """Group the loaded errors off the UI thread (each distinct message is normalised by
        regular expressions: many distinct ones take a while)."""
        self.call_from_thread(setattr, self.triage, "known_groups", group_keys(self.model, rids))

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        self._gc_resume()
        self.load_error = message.reason
        self._route(self.link.failed(message.reason))

    @on(SessionStage)
    def _session_stage(self, message: SessionStage) -> None:
        self._route(self.link.stage(message.stage, message.detail, self._kept_row()))

    # -- polling another process's store ---------------------------------------------------

    def _poll(self) -> None:
        if self._polling or self.state is Live.LOADING:
            return
        if jsonl_stamp(self.store) != self.link.stamp:
            self._polling = True
            self._catch_up()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def _catch_up(self) -> None:
        """Another process wrote the store: ask the link what changed (its index says, or
        the store is read again whole). The handler of what is posted ends the poll
        (:attr:`_polling`): no second poll starts from the same point."""
        posted = False
        try:
            caught = self.link.catch_up(self.store)
            if isinstance(caught, Followed):
                posted = self.post_message(StoreFollowed(caught))
            elif caught is not None:
                posted = self.post_message(StoreChanged(caught))
        except OSError as exc:
            self.post_message(LoadFailed(self._cannot_read(exc)))
        finally:
            if not posted:
                self._polling = False

    @on(StoreFollowed)
    def _store_followed(self, message: StoreFollowed) -> None:
        self._polling = False
        if self.is_running:  # (else leaving: the screens are going)
            self._route(self.link.followed(message.followed, self._kept_row()))

    @on(StoreChanged)
    def _store_changed(self, message: StoreChanged) -> None:
        self._polling = False
        if self.is_running:  # (else leaving: the screens are going)
            self._route(self.link.diffed(message.diff, self._kept_row()))

    # -- live engine events ----------------------------------------------------------------

    @on(EngineEvents)
    def _engine_events(self, message: EngineEvents) -> None:
        if not self.is_running:  # leaving: the screens are going, a retry may still report
            return
        self.link.last_event = message.events[-1].at
        if self.paused:
            self.pending.extend(message.events)
            self._tell_screens(Change())
            return
        self.apply_events(message.events)

    def apply_events(self, events: Iterable[Event]) -> None:
        """Apply engine events to the model and the triage state, then tell the screens."""
        self._route(self.link.apply(list(events), self._kept_row()))

    def _kept_row(self) -> int | None:
        """The row the records table keeps its cursor on, read before a change."""
        return self.records_screen.kept_rid

    def _route(self, applied: Applied) -> None:
        """Do the app's part of what the link did, and tell the screens."""
        for say in applied.say:
            self._say(say)
        if applied.seen:
            self._see_records(applied.seen)
        if applied.full_sweep:
            self.call_later(self._maybe_show_tools)
        self._tell_screens(applied.change)

    def _say(self, say: Say) -> None:
        self.notify(say.message, title=say.title, severity=say.severity, timeout=say.timeout)

    def _tell_screens(self, change: Change) -> None:
        """Every screen is told by one message: the records screen at once (the row its
        cursor keeps is read before the next change), the screen on top when it is another."""
        self.records_screen.on_model_changed(ModelChanged(change))
        top = self._top()
        if top is not None and top is not self.records_screen:
            top.post_message(ModelChanged(change))

    def _top(self) -> Screen[object] | None:
        """The screen on top, or None (starting, or exiting: the stack is empty)."""
        return self.screen_stack[-1] if self.screen_stack else None

    def _see_records(self, records: Iterable[Record]) -> None:
        """New error groups are announced together: a second after the first, and never
        while the previous announcement is still on screen (at 80x24 three or four of them
        covered the status column)."""
        if self.triage.see_records(records) and not self._announcing:
            self._announcing = True
            wait = self._announced + ANNOUNCE_SECONDS - time.monotonic()
            self.set_timer(max(1.0, wait), self._announce_groups)

    def _announce_groups(self) -> None:
        from tui.screens.errors import ErrorsScreen

        self._announcing = False
        new = self.triage.take_new_groups()
        if new and not isinstance(self._top(), ErrorsScreen):  # there, the groups are shown
            self._announced = time.monotonic()
            title, message = announce(new)
            self.notify(message, title=title, severity="warning", timeout=ANNOUNCE_SECONDS)

    def _maybe_show_tools(self) -> None:
        """After a full sweep: the tools screen, when files now wait on a tool they did not
        wait on after the previous sweep (not on every launch)."""
        from tui.screens.tools import ToolsScreen

        waited = [r.name for r in tools_waited_on(self.tool_rows())]
        if not self.triage.new_waiting_tools(waited) or self.quitting:
            return
        top = self._top()
        if top is not None and not isinstance(top, ModalScreen | ToolsScreen):
            self.show_kept(ToolsScreen)

    # -- retries and tools (they outlive any screen: tui.retries decides) -------------------

    def _say_any(self, say: Say | None) -> bool:
        """Say ``say`` if there is one; whether there was."""
        if say is not None:
            self._say(say)
        return say is not None

    def unlock(self, keys: list[Key], label: str, *, unmark: bool = False) -> None:
        """Ask for a password (or a file of them), keep it for the session, retry ``keys``."""
        from tui.screens.password import PasswordScreen

        if self._say_any(self.retries.refusal(keys, unlock=True)):
            return

        def answered(passwords: Passwords | None) -> None:
            if passwords:
                self.triage.add_passwords(passwords)
                self.retry(keys, label, unmark=unmark, unlock=True)

        self.push_screen(PasswordScreen(*self.retries.prompt(keys, label)), answered)

    def retry(
        self, keys: list[Key], label: str, *, unmark: bool = False, unlock: bool = False
    ) -> None:
        """Retry ``keys`` (asking first above :data:`~tui.retries.CONFIRM_ABOVE`); ``unmark``
        once started; ``unlock``: the operator just gave a password for them (the answer
        counts what opened)."""
        from tui.screens.confirm import ConfirmScreen

        if self._say_any(self.retries.refusal(keys)):
            return
        question = self.retries.question(keys, label)
        if question is None:
            self._start_retry(keys, label, unmark, unlock)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._start_retry(keys, label, unmark, unlock)

        self.push_screen(ConfirmScreen(question, "Retry"), answered)

    def _start_retry(self, keys: list[Key], label: str, unmark: bool, unlock: bool) -> None:
        say = self.retries.begin(keys, label, unmark=unmark)
        self.changed_since = time.time()  # D: what this retry changed
        self._tell_screens(Change(marks=True))
        self._say(say)
        self._retry_worker(keys, label, unlock)

    @work(thread=True, group="retry", exit_on_error=False)
    def _retry_worker(self, keys: list[Key], label: str, unlock: bool) -> None:
        # the records it changed were posted (in order) before this answer
        self.post_message(RetryFinished(self.retries.run(keys, label, unlock)))

    @on(RetryFinished)
    def _retry_finished(self, message: RetryFinished) -> None:
        say = self.retries.finished(message.done)
        self._tell_screens(Change(marks=True))
        self._say(say)
        from tui.screens.compare import CompareScreen

        if isinstance(top := self._top(), CompareScreen):  # R there: what each file is now
            top.retried(message.done.keys, self.changed_since)

    def action_what_changed(self) -> None:
        """The store against itself as it was when the dashboard opened or the last retry
        began (no earlier than the history its index keeps): the compare screen."""
        from engine.comparison import history_start
        from tui.screens.compare import CompareScreen

        since = max(self.changed_since, self.link.sweep_began or 0.0)  # the last retry or sweep
        since = max(since, history_start(self.store) or since)
        self.push_screen(CompareScreen(self.store, self.store, self, since=since))

    def check_tools(self) -> bool:
        """Look up the tools again (a new one retries what it unlocks); False if refused."""
        if self._say_any(self.retries.start_check()):
            return False
        self._check_tools_worker()
        return True

    @work(thread=True, exclusive=True, group="tools", exit_on_error=False)
    def _check_tools_worker(self) -> None:
        check = self.retries.check()
        self.post_message(ToolsChecked(check.appeared, check.error))

    @on(ToolsChecked)
    def _tools_checked(self, message: ToolsChecked) -> None:
        self._say_any(self.retries.checked(ToolsCheck(message.appeared, message.error)))
        if (top := self._top()) is not None:  # a message of its own (see ToolsChecked.bubble)
            top.post_message(ToolsChecked(message.appeared, message.error))
        self._tell_screens(Change())

    def run_outside(self, command: list[str]) -> int | None:
        """Run ``command`` with the terminal handed over (the app suspended); None if it can't."""
        import shutil

        if shutil.which(command[0]) is None:
            return 127  # not installed: no need to hand the terminal over
        try:
            with self.suspend():
                return actions.run_foreground(command)
        except SuspendNotSupported:
            self.notify("this terminal cannot hand over to another program", severity="error")
            return None

    # -- failures --------------------------------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of the app failed: say so; the app keeps running."""
        what = worker_failure(event)
        if what is None:
            return
        if event.worker.group == "load":
            self.post_message(LoadFailed(f"loading the store failed: {what}"))
            return
        self.notify(what, title=f"{event.worker.name or 'a task'} failed", severity="error")

    def _handle_exception(self, error: Exception) -> None:
        """An unexpected error: its traceback to a file and one line to say; then Textual exits
        with status 1 (:func:`tui.cli.run_app` prints the line once the terminal is back)."""
        if not self.crash:
            self.crash, self.crash_log = crash_report(error)
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        """Print nothing: the traceback is in :attr:`crash_log`, the line is the caller's."""
        self._exit_renderables.clear()

    # -- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No new screen while quitting or under a question."""
        blocked = self.quitting or isinstance(self._top(), ModalScreen)
        return not (action.startswith("show_") and blocked)

    def show_kept(self, kind: type[TriageScreen]) -> None:
        """Show the one screen of ``kind`` over the one on top, or go back to it
        (:meth:`tui.screens.kept.KeptScreens.show`)."""
        self.kept.show(kind)

    def action_show_tools(self) -> None:
        """Every tool, found or missing, and what it would unlock."""
        from tui.screens.tools import ToolsScreen

        self.show_kept(ToolsScreen)

    def action_show_errors(self) -> None:
        """Error records grouped by reason and message."""
        from tui.screens.errors import ErrorsScreen

        self.show_kept(ErrorsScreen)

    def action_show_unsupported(self) -> None:
        """Unsupported files grouped by reason and MIME type."""
        from tui.screens.unsupported import UnsupportedScreen

        self.show_kept(UnsupportedScreen)

    def action_show_activity(self) -> None:
        """The engine's events, live."""
        from tui.screens.activity import ActivityScreen

        self.show_kept(ActivityScreen)

    def action_pause(self) -> None:
        """Hold live changes back, or apply what queued meanwhile."""
        self.paused = not self.paused
        if not self.paused and self.pending:
            events, self.pending = self.pending, []
            self.apply_events(events)
        self.notify("live updates paused" if self.paused else "live updates resumed")

    def action_help(self) -> None:
        """Show every key."""
        keys = [b for b in self.BINDINGS if isinstance(b, Binding)]
        self.kept.help(keys, read_only=not self.triage.writable)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, one that notices its terminal is gone on Linux and macOS."""
        return driver_class(super().get_driver_class())

    @on(TerminalGone)
    async def _terminal_gone(self) -> None:
        """No one can see or stop the dashboard any more: leave as on q, not spin for ever."""
        self.terminal_gone = True
        await self.action_quit()

    async def action_quit(self) -> None:
        """Stop the engine cleanly, then leave."""
        if self.session is None:
            self.exit()
            return
        if not self.quitting:
            self.quitting = True
            self.notify("stopping the engine…")
            self._close_session()

    @work(thread=True, group="close", exit_on_error=False)
    def _close_session(self) -> None:
        assert self.session is not None
        try:
            self.session.close()
        finally:
            self.call_from_thread(self.exit)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's and the records screen's actions in the command palette (ctrl+p)."""
        yield from super().get_system_commands(screen)
        yield from self.records_screen.commands()
        yield SystemCommand("Tools", "t: found and missing tools", self.action_show_tools)
        yield SystemCommand("Errors", "x: error records grouped", self.action_show_errors)
        yield SystemCommand("Activity", "@: the engine's events", self.action_show_activity)
        if self.triage.writable:
            yield SystemCommand(
                "Check tools again", "Re-read PATH; a new tool retries files", self.check_tools
            )
        yield SystemCommand("Pause / resume live updates", "p", self.action_pause)
        yield SystemCommand("Help", "Every key", self.action_help)
