"""QuarryApp: the dashboard over one store, either following a live Session or polling files.

``QuarryApp(store_out, session)`` sweeps then watches through ``session`` in a thread worker;
``QuarryApp(store_out)`` (``quarry ui --store PATH``) reads the store and re-reads it when
another process rewrites ``extract.jsonl``. Either way the store is parsed in a thread worker
and the first screen shows at once, filling as chunks arrive.

The app makes the dashboard's parts and routes. Its workers (:mod:`tui.feed`) post what they
find; each message goes to the :class:`tui.router.Router`, which hands it to
:class:`tui.link.Link` (no Textual: the records model, the activity log, the live state) and
the link's :class:`~tui.link.Applied` back out: pop-ups, error groups to announce, and one
:class:`~tui.messages.ModelChanged` for the screens. The screens are given a
:class:`tui.desk.Desk` (the :class:`~tui.screens.ports.Dashboard`): what they read of the
dashboard, and what they ask of it that outlives them (retries, tools re-checks, prompts).
Screens own their keys; the app's, which work on every screen, its command palette and its
way out are :class:`tui.globalkeys.GlobalKeys`'; what it is as a terminal program,
:class:`tui.shell.Shell`'s. A store that grows too big to hold (a session's first sweep of
a big share, another process's store followed as it grows) is paged from its index from
then on, its records screen made anew (:func:`page_if_big`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work

from engine import browse
from engine.browse import browsable
from engine.dbread import head_index
from engine.events import Event
from engine.store import Store
from tui.desk import Desk
from tui.globalkeys import GlobalKeys
from tui.link import Link, Live
from tui.loader import Rows, open_rows
from tui.messages import EngineEvents, Fed
from tui.model import RecordModel
from tui.paged import PagedModel
from tui.router import Router
from tui.state import TriageState

if TYPE_CHECKING:
    from engine.session import Session


class QuarryApp(GlobalKeys):
    """The textquarry dashboard: its parts made and wired, each message routed."""

    TITLE = "textquarry"
    CSS_PATH = "app.tcss"
    MODES = {"records": "records"}  # the records screen, installed by name in __init__
    DEFAULT_MODE = "records"

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
        self.compare_with, self.compare_since = compare, since
        """A store to compare this one with on mount; or a time to compare it with itself."""
        self.store = session.store if session is not None else Store(Path(store_out))
        self.session = session
        self.read_only = read_only
        # a big store is paged from its index, never held: one another process writes, or
        # the one this session sweeps (its own index, which the sweep commits as it goes)
        index = browsable(self.store, cached=session is None)
        # one that has no index yet has one built, its first lines browsed meanwhile
        head = head_index(self.store) if session is None and index is None else None
        self.model = PagedModel(index or head, head=head) if index or head else RecordModel()
        if session is not None:  # (labelled from the first row of a sweep of several folders)
            self.model.take_roots(map(str, session.roots))
        self.triage = TriageState(engine=None if read_only else session, read_only=read_only)
        self.link = Link(self.model, self.triage, sweeping=session is not None)
        """The engine side's doings to the model, the log and the live state."""
        self.desk = desk = Desk(self, self.store, session, self.link, self.triage)
        self.model.text_lookup = desk.texts_matching
        self.pending = desk.pending  # (the same list: the header counts it)
        # what scripts and tests ask the app, answered by the desk and the router
        self.retry, self.open_record = desk.retry, desk.open_record
        self.stored_text, self.tool_rows = desk.stored_text, desk.tool_rows
        self.router = Router(self, self.link, desk, lambda: self.quitting, self._outgrown)
        self.apply_events = self.router.apply_events
        self.feed = self.router.feed
        self.records_screen = desk.home
        """The home screen, at the bottom of the stack (only it is imported before the
        first frame; every other screen by the action that shows it)."""
        self.install_screen(self.records_screen, name="records")
        if session is not None:
            session.on_event = self.engine_listener

    def engine_listener(self, event: Event) -> None:
        """The session's listener, called on engine threads: one message per event, in order
        (the run already batches records; this is the only batching layer's consumer)."""
        self.post_message(EngineEvents([event]))

    def _outgrown(self) -> None:
        """After each batch of engine events or catch-up, and every second: page a store
        grown too big to hold (:func:`page_if_big`); not once leaving (its screens going)."""
        if self.is_running:
            page_if_big(self)

    @property
    def state(self) -> Live:
        """What the engine side is doing (loading, sweeping, watching, following...)."""
        return self.link.state

    @property
    def state_text(self) -> str:
        """The live state in words."""
        return self.desk.state_text

    @property
    def load_error(self) -> str:
        """Why the store could not be read at all, or empty."""
        return self.link.failure

    def on_load(self) -> None:
        """Open the store and show its first block before the first frame."""
        self.desk.counts = self.feed.open().counts

    def on_mount(self) -> None:
        """Load the rest of the store; then sweep and watch, or poll; compare if asked."""
        self._load()
        self.feed.follow()
        if not self.model.paged:
            # (also when no batch comes: the records screen shown again over a quiet folder)
            self.set_interval(1.0, self._outgrown)
        self.desk.compare(self.compare_with, self.compare_since)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> None:
        self.feed.load(lambda: self.quitting)

    def on_unmount(self) -> None:
        """Leaving (a quit during the load too): the load stops, the collector runs again."""
        self.feed.stop_loading()
        self.feed.collector.release()
        if isinstance(self.model, PagedModel):  # (an index of the first lines, if one was made)
            self.model.drop_head()

    @on(Fed)
    def _fed(self, message: Fed) -> None:
        """What a worker posted, routed (:meth:`tui.router.Router.take`)."""
        self.router.take(message)


PAGED = "records-paged"
"""The mode (and the name of its records screen) of a session's store paged once it grew
past :data:`engine.browse.BROWSE_FROM` records."""


def page_if_big(app: QuarryApp) -> None:
    """A store held in full that passed :data:`engine.browse.BROWSE_FROM` records, or whose
    sweep in flight will take it past them (the first sweep of a big share: its walk counts
    the files long before they are read; another process's, from its index), is paged from
    its index from now on, as one that big from the start is, rather than held a row at a
    time (every sort and filter a pass over them all): a session's own index, or the one a
    store followed is followed through (another process growing it). Only from the records
    screen, never taken from under another (asked again later), and once the index holds a
    record (its commits follow the events)."""
    model = app.model
    if model.paged:
        return
    session = app.session is not None
    planned = app.link.progress[1] if session and app.link.progress is not None else 0
    files = max(len(model), planned)
    if not session and files < browse.BROWSE_FROM:
        files = max(files, browse.walked(app.store))  # (another process's sweep)
    if files < browse.BROWSE_FROM or app.screen is not app.records_screen or app.desk.paused:
        return
    index = browsable(app.store, at_least=1, cached=not session)
    if index is None:
        return
    try:
        rows = open_rows(app.store)
    except OSError:
        return
    rows.table.end_read()  # (the records are read a page at a time)
    _page(app, PagedModel(index), rows)
    app.notify(
        f"{files:,} files: their records are shown from the store's index from now on,"
        " a page at a time",
        title="a big store",
    )


def _page(app: QuarryApp, paged: PagedModel, rows: Rows) -> None:
    """Show ``paged`` in place of the app's held model: its tab, sort and query kept (the
    marks are the triage state's), a records screen made anew in a mode of its own (the
    records screen is its mode's base: there is no screen to switch it with), the old mode
    and screen let go, the triage screens made anew when next shown."""
    held = app.model
    paged.text_lookup = app.desk.texts_matching
    paged.set_tab(held.tab)
    paged.set_sort(held.sort_column, held.sort_reverse)
    old, home = app.records_screen, app.desk.rehome(paged, held.query.text)
    app.model, app.records_screen = paged, home
    app.router.route(app.link.paging(paged, rows))
    app.install_screen(home, name=PAGED)
    app.add_mode(PAGED, PAGED)
    app.switch_mode(PAGED)
    app.remove_mode(app.DEFAULT_MODE)
    app.uninstall_screen(old)  # (out of every stack: removed with its mode)
    if app.session is not None:  # (a store followed: its polls go on as they were)
        app.feed.paging()
