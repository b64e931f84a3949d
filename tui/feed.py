"""What feeds the dashboard: the store opened and loaded, the session run, a store another
process writes caught up with, each in the app's thread workers (:class:`Feed`).

The workers post what they find as messages (:mod:`tui.messages`), in order; the app hands
each to the link. Nothing here touches a screen. The cyclic garbage collector is paused
while the store loads (:class:`Collector`).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import App
from textual.message import Message

from engine.db import DB, index_point
from engine.errors import SessionClosed
from engine.names import shown
from engine.readindex import reading_index
from engine.store import Store
from tui.columns import Batch
from tui.link import Applied, Link, Live, Opening, open_store
from tui.loader import Chunk, jsonl_stamp, read_summary
from tui.messages import (
    Indexing,
    LoadFailed,
    RowsLoaded,
    SessionStage,
    StoreChanged,
    StoreFollowed,
    StoreLoaded,
)
from tui.paged import PagedModel
from tui.poll import Followed, whole_store

if TYPE_CHECKING:
    from engine.session import Session

Post = Callable[[Message], bool]
"""How a worker posts a message to the app (``App.post_message``)."""
POLL_SECONDS = 0.1
"""How often a store opened without a session is checked for changes: a stat and one read
of the index's counter (~0.1 ms, whatever the store's size), so a change is on screen a
tenth of a second after its batch is committed (tests/bench/bench_follow.py)."""


class Feed:
    """The app's workers over one store (and its session, when one sweeps)."""

    def __init__(
        self,
        app: App[None],
        store: Store,
        session: Session | None,
        link: Link,
        route: Callable[[Applied], None],
        paused: Callable[[], bool],
        kept: Callable[[], int | None],
    ) -> None:
        self.app, self.store, self.session, self.link = app, store, session, link
        self.route = route
        """Hands what the link did to the router (the first block's rows:
        :meth:`tui.router.Router.route`)."""
        self.paused = paused
        """Whether the dashboard holds the engine's changes back (``p``)."""
        self.kept = kept
        """The row the records table keeps its cursor on."""
        self.opening = Opening(None, None, None)
        """The store as :meth:`open` opened it; :meth:`load` loads the rest."""
        self.collector = Collector()
        self.begun = False
        """Whether the model was started afresh with the load's first chunk."""
        self.polling = False
        """Whether a catch-up is in flight (its message's handler ends it: :meth:`caught`)."""
        self._leaving = threading.Event()
        self._renewing = False
        """Whether :meth:`renew` runs ten times a second (a session paging its store)."""
        """Set as the app leaves: an index being built for it stops at its next block."""

    def open(self) -> Opening:
        """Open the store and read its first rows, before the records screen mounts: the
        first frame has rows (a screen's worth, in milliseconds); :meth:`load` loads the
        rest, the garbage collector paused until it is shown."""
        self.collector.pause()
        browse = self.link.model.paged
        self.opening = opening = open_store(self.store, browse=browse)
        if browse and opening.rows is not None:
            self.route(self.link.browsing(opening.rows))
            self.begun = True
        for chunk in opening.first:
            self.route(self.link.rows_loaded(chunk, opening.rows, not self.begun))
            self.begun = True
        return opening

    def stop_loading(self) -> None:
        """The app is leaving: the load ends before its next chunk (an index the engine is
        building for it, at its next block), so the process need not wait for the rest."""
        self._leaving.set()
        if self.opening.rows is not None:
            self.opening.rows.table.stop()

    def follow(self) -> None:
        """Poll the store for another process's writes (no session writes it here); or, for
        a session's store paged from its index, the index for the session's commits."""
        if self.session is None:
            self.app.set_interval(POLL_SECONDS, self.poll)
        elif self.link.model.paged:
            self.paging()

    def paging(self) -> None:
        """The session's store is paged from its index from now on: read the index's point
        ten times a second (:meth:`renew`)."""
        if not self._renewing:
            self._renewing = True
            self.app.set_interval(POLL_SECONDS, self.renew)

    def renew(self) -> None:
        """The session's index moved past the snapshot the paged model reads (the sweep
        commits a batch or a second at a time, after the events that tell of it): read it
        again (one read of its point when it has not: ~0.4 ms at a million records).
        Not while loading, nor while paused (the events held, the rows too)."""
        model = self.link.model
        if self.link.state is Live.LOADING or self.paused() or not isinstance(model, PagedModel):
            return
        if not self.app.is_running:  # (leaving: the screens are going)
            return
        now = index_point(self.store.out / DB)
        if now is not None and now != model.point:
            self.route(self.link.renewed(now, self.kept()))

    def load(self, quitting: Callable[[], bool]) -> None:
        """(The app's load worker.) Load the rest of the store; then sweep and watch."""
        model = self.link.model
        if isinstance(model, PagedModel) and model.head is not None:
            built = build_index(self.store, self._leaving.is_set, self.app.post_message)
            self.opening = built or self.opening  # (what the load ends on)
        load_rest(self.store, self.opening, not self.begun, self.app.post_message)
        if self.session is not None:
            run_session(self.session, quitting, self.app.post_message)

    def poll(self) -> None:
        """Catch up with the store when another process wrote it (one catch-up at a time)."""
        if self.polling or self.link.state is Live.LOADING:
            return
        if jsonl_stamp(self.store) != self.link.stamp:
            self.polling = True
            self.app.run_worker(
                self._catch_up,
                name="_catch_up",
                group="poll",
                thread=True,
                exclusive=True,
                exit_on_error=False,
            )

    def reread(self) -> None:
        """The session failed (its first sweep's index could not be written: a full disk):
        the rows its events told of may not be in the store, which kept only what it had
        committed. Read the store again whole, once, and show it as it is."""
        self.link.point = self.link.stamp = None  # (no point in its history to follow from)
        self.poll()

    def _catch_up(self) -> None:
        # the handler of what is posted ends the poll: no second starts from the same point
        if not catch_up(self.link, self.store, self.app.post_message):
            self.polling = False

    def caught(self) -> None:
        """What a catch-up posted arrived: the next poll may start."""
        self.polling = False

    def close(self) -> None:
        """Stop the session cleanly (in a worker: it waits for reads in flight), then exit."""
        self.app.run_worker(
            self._close, name="_close_session", group="close", thread=True, exit_on_error=False
        )

    def _close(self) -> None:
        assert self.session is not None
        try:
            self.session.close()
        finally:
            self.app.call_from_thread(self.app.exit)


def load_rest(store: Store, opening: Opening, first: bool, post: Post) -> None:
    """Read the rest of the store's rows in chunks, then its summary (``first``: no chunk
    was shown yet, the next starts the model afresh)."""
    data, stamp = opening.rows, opening.stamp
    try:
        if opening.trouble is not None:
            raise opening.trouble
        for chunk in opening.chunks or ():  # (none for a store browsed from its index)
            post(RowsLoaded(chunk, data, first))
            first = False
    except OSError as exc:  # a folder in its place, no permission, a failing disk
        post(LoadFailed(cannot_read(store, exc)))
    if first:  # an empty, missing or unreadable store: still start afresh
        post(RowsLoaded(Chunk(Batch(), 0, 0), data, True))
    summary, problem = read_summary(store)
    post(StoreLoaded(summary, stamp, problem, data.point if data is not None else None))


def build_index(store: Store, stop: Callable[[], bool], post: Post) -> Opening | None:
    """A big store opened without an index (its first lines browsed meanwhile): the engine
    builds one in the user's cache, how far it is posted (every ~0.2 s), then the store is
    opened again and browsed from it (that opening). Where the build fails (a full disk), the
    first lines stay, with why; stopped (the app leaves), nothing is posted (None both)."""
    told = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - told[0] >= PROGRESS_SECONDS:
            told[0] = now
            post(Indexing(done, total))

    where = reading_index(store, stop=stop, progress=progress)
    if stop():
        return None
    if where is None:
        name = shown(str(store.jsonl_path))
        post(
            LoadFailed(
                f"could not build an index of {name} in the user's cache: only its"
                " first lines are shown"
            )
        )
        return None
    opening = open_store(store, browse=True)
    if opening.rows is not None:  # (else the load says why it could not be read)
        post(StoreFollowed(whole_store(store, opening.rows)))
    return opening


PROGRESS_SECONDS = 0.2
"""How often the progress of an index's build is posted."""


def cannot_read(store: Store, exc: OSError) -> str:
    """Why ``store`` cannot be read, in one line."""
    return f"cannot read {shown(str(store.jsonl_path))}: {exc.strerror or exc}"


def run_session(session: Session, quitting: Callable[[], bool], post: Post) -> None:
    """Sweep then watch (blocks until the session closes); ``watching`` after the first
    sweep, ``failed`` if the engine fails."""
    try:
        # Observers start before the sweep: what changes during it is applied after it.
        swept = session.sweep_then_watch()
        if swept.failed:  # (its store could not be written: nothing is watched)
            post(SessionStage(Live.FAILED, swept.failed))
        elif not quitting():
            post(SessionStage(Live.WATCHING))
    except SessionClosed:
        pass  # q came before the sweep began: nothing to say, the app is leaving
    except Exception as exc:  # the engine failed: say so on screen, keep browsing
        post(SessionStage(Live.FAILED, f"{type(exc).__name__}: {exc}"))


def catch_up(link: Link, store: Store, post: Post) -> bool:
    """Another process wrote the store: what the link says changed (its index says, or the
    store is read again whole), posted; whether anything was (the handler of what is
    posted ends the poll)."""
    try:
        caught = link.catch_up(store)
        if isinstance(caught, Followed):
            return post(StoreFollowed(caught))
        if caught is not None:
            return post(StoreChanged(caught))
    except OSError as exc:
        post(LoadFailed(cannot_read(store, exc)))
    return False


class Collector:
    """The cyclic garbage collector, paused while the store loads, and kept off what the
    load made once it is shown.

    The load allocates millions of objects (the rows' columns) and few cycles,
    and each pass walked the growing model: ~0.1 s of this process's CPU per million
    records, some of it inside frames. Resumed, the collector's full passes walked every
    object again, the model and Textual's widgets alike: 25-60 ms of CPU each on the
    fixtures' store (74,000 objects), several a minute as keys are pressed (a frame
    allocates thousands), inside whichever key was being answered: most of the keys slower
    than 150 ms (issue 25). What exists when the load is shown lives as long as the
    dashboard, so it is frozen (``gc.freeze``: out of every pass, still freed by its
    references); the passes walk only what came after. The freeze is undone as the app
    leaves (an app in a test run is not the last one of its process)."""

    def __init__(self) -> None:
        self.paused = False
        """Whether :meth:`pause` paused it (it was running)."""
        self.frozen = False
        """Whether :meth:`resume` froze what existed then (until :meth:`release`)."""

    def pause(self) -> None:
        """Stop collecting until :meth:`resume`."""
        self.paused = gc.isenabled()
        gc.disable()

    def resume(self) -> None:
        """The load is over (or failed): collect again, but not what is there now."""
        if self.paused:
            self.paused = False
            gc.freeze()
            self.frozen = True
            gc.enable()

    def release(self) -> None:
        """The app is leaving: collect again, and what was frozen with the rest."""
        self.resume()
        if self.frozen:
            self.frozen = False
            gc.unfreeze()
