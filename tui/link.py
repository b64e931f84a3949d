"""The link between the dashboard and the engine, without Textual.

:class:`Link` owns what the engine side does to the dashboard's data: the store's rows as
they load, engine events applied to the records model and the activity log (a sweep's new
rows held to its end), the live state and the notice-to-header state machine, and a store
followed through its index (or re-read when the index cannot say). Each call returns an
:class:`Applied`: the :class:`Change` every screen is told of (the app sends it in one
message, :class:`tui.messages.ModelChanged`) and what the app alone does with it (pop-ups,
error groups to announce, the tools screen after a full sweep). The app only routes.

The link runs on the UI thread but one method, :meth:`Link.catch_up`, which the app's poll
worker calls (it only reads the store and the link's point in it).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import islice
from typing import Literal

from engine.db import DB, Point, status_counts
from engine.events import (
    Event,
    Level,
    Notice,
    NoticeKind,
    Progress,
    RecordsChanged,
    StoreHealth,
    StoreState,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.records import Key, Record, Status, Summary
from engine.store import Store
from tui.eventlog import LogLine, store_lines
from tui.hold import SweepHold
from tui.loader import Chunk, Rows, Stamp, load_rows, open_rows
from tui.model import RecordModel
from tui.pace import Pace, describe
from tui.paged import PagedModel
from tui.poll import Followed, StoreDiff, diff_store, follow_store, whole_store
from tui.state import TriageState, is_encrypted
from tui.triage import error_records
from tui.words import count

FLASHED = 1_024
"""Records of one batch of events (or of one poll of a followed index) past which a paged
store's changed rows are not flashed (a mass sweep's: each would be handed an id, a key held
for the dashboard's life)."""
Where = tuple[Stamp | None, Point | None]
"""Where a model stands in a store's history: the file's stamp, the index's point."""
Severity = Literal["information", "warning", "error"]
"""How a pop-up looks (Textual's severity levels)."""
_POPS_UP: dict[Level, Severity] = {Level.WARNING: "warning", Level.ERROR: "error"}
"""The levels an event pops up at, and how it looks then."""


class Live(StrEnum):
    """What the engine side is doing; :meth:`Link.state_text` says it in words."""

    LOADING = "loading"
    FAILED = "failed"
    SWEEPING = "sweeping"
    UPDATING = "updating"
    FOLLOWING = "following"
    WATCHING = "watching"
    IDLE = "idle"
    STORE_LOST = "store-lost"
    """The watcher stopped: the store is gone or refused for good."""
    RETRYING = "retrying"
    """The watcher's changes are not stored yet: it keeps trying."""
    ROOT_GONE = "root-gone"
    """A folder watched is gone: its records are kept until a folder is there again."""


_WORDS = {
    Live.STORE_LOST: "stopped: store lost",
    Live.RETRYING: "not stored: retrying",
    Live.ROOT_GONE: "folder gone",
}
"""The header's words where they are not the state's own name."""


def words(state: Live) -> str:
    """The header's words for ``state``."""
    return _WORDS.get(state, state.value)


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


@dataclass(frozen=True, slots=True)
class Change:
    """What changed, as every screen is told (in :class:`tui.messages.ModelChanged`).

    The default is a change of the live state or header only.
    """

    rows: frozenset[int] | None = None
    """Rows whose record changed or appeared (empty: the records changed, redraw them all);
    None when the records did not change."""
    keep: int | None = None
    """The row the records table keeps its cursor on (read before the change)."""
    lines: tuple[LogLine, ...] = ()
    """Activity log lines added."""
    marks: bool = False
    """Marks or retries in flight changed."""
    loading: bool = False
    """Rows of the store's load arrived (redrawn now and then, not at each chunk)."""
    first: bool = False
    """With ``loading``: the load's first rows (drawn at once)."""
    texts: bool = False
    """The store now holds records (and texts) other than when the query's ``text:`` terms
    were answered: they are asked again. A sweep's changes count at its end, once they are
    committed (asked while it runs, the store would answer as before them)."""


@dataclass(frozen=True, slots=True)
class Say:
    """A pop-up the app shows."""

    message: str
    title: str = ""
    severity: Severity = "information"
    timeout: float | None = None


def _pop_up(message: str, title: str, level: Level) -> list[Say]:
    """The pop-up of an event at ``level`` (none for news)."""
    severity = _POPS_UP.get(level)
    return [] if severity is None else [Say(message, title, severity)]


@dataclass(frozen=True, slots=True)
class Applied:
    """What one call of the link did: the screens' change and the app's own work."""

    change: Change
    say: tuple[Say, ...] = ()
    """Pop-ups, in order."""
    seen: tuple[Record, ...] = ()
    """Records shown anew: their error groups may be new (announced by the app)."""
    full_sweep: bool = False
    """A full sweep finished: the tools screen may be offered."""


class Link:
    """The dashboard's data as the engine changes it (see the module docstring)."""

    def __init__(self, model: RecordModel, triage: TriageState, *, sweeping: bool) -> None:
        self.model = model
        self.triage = triage
        self.sweeping = sweeping
        """Whether a session sweeps and watches (else another process's store is followed)."""
        self.state = Live.LOADING
        self.summary: Summary | None = None
        self.progress: tuple[int, int] | None = (0, 1)
        self.indexing = False
        """Whether the index of a big store opened without one is being built (its first
        lines shown meanwhile: :func:`engine.dbread.head_index`)."""
        self.pace = Pace()
        """The sweep's rate and time left (the header's)."""
        self.hold = SweepHold()
        """A running sweep's new rows, shown with its removals at its end."""
        self.last_event: float | None = None
        self.watching = False
        """Whether the session watches (after its first sweep)."""
        self.trouble: Live | None = None
        """Why the watcher's changes are not in the store (the header says it); None if none."""
        self.gone = 0
        """Folders watched that are gone now (their records kept, the header says so)."""
        self.stamp: Stamp | None = None
        self.point: Point | None = None
        """Where in the store index's history the model is (following; None: no index)."""
        self._untrusted = 0
        """Polls in a row where the index could not say what changed (:meth:`catch_up`)."""
        self.sweep_began: float | None = None
        """When the last whole sweep over records already shown began (``D`` compares the
        store with itself as it was then); None: none yet."""
        self._sweep_changed: int | None = None
        """Files the whole sweep in flight changed (None: no such sweep, or a first one)."""
        self.failure = ""
        """Why the store could not be read at all, or empty (:meth:`failed`)."""
        self._run_changed = False
        """The engine's run in flight changed records (its end changes the texts' answers)."""

    # -- words ---------------------------------------------------------------------------

    def state_text(self, *, writable: bool, paused: bool, pending: int) -> str:
        """The live state in words, as the header shows it."""
        badge = "" if writable else "read-only · "
        if paused:
            return f"{badge}paused · {pending} pending"
        if self.state in (Live.SWEEPING, Live.UPDATING) and self.progress:
            return f"{badge}{words(self.state)} {describe(*self.progress, self.pace)}"
        if self.state is Live.LOADING and self.indexing:
            if not self.progress:
                return f"{badge}indexing: sorting"
            done, total = self.progress
            return f"{badge}indexing {100 * done // total if total else 100}%"
        if self.state is Live.LOADING and self.progress:
            done, total = self.progress
            return f"{badge}loading {100 * done // total if total else 100}%"
        return badge + words(self.state)

    # -- loading -------------------------------------------------------------------------

    def rows_loaded(self, chunk: Chunk, data: Rows | None, first: bool) -> Applied:
        """A chunk of the store's rows (``first``: the model starts afresh with it)."""
        if first or chunk.restart:
            self.model.clear()
            self.model.data = data.table if data is not None else None
        self.model.extend(chunk.rows)
        self.model.note_bad(chunk.bad, chunk.bad_count)
        self.progress = (chunk.done, chunk.total)
        return Applied(Change(loading=True, first=first or chunk.restart))

    def indexed(self, done: int, total: int) -> Applied:
        """How far the index of a big store opened without one is built (``done`` bytes of
        its file of ``total`` read; all of them: its sort trees are being made)."""
        self.indexing = True
        self.progress = (done, total) if done < total else None
        return Applied(Change())

    def browsing(self, data: Rows) -> Applied:
        """A big store is browsed from its index (:class:`~tui.paged.PagedModel`): its rows
        are not loaded, the first page is read as the first frame is drawn."""
        model = self.model
        assert isinstance(model, PagedModel)
        model.data = data.table
        model.attach(model.index)
        model.note_bad(data.table.bad, data.table.bad_count)
        self.progress = (len(model), len(model))
        return Applied(Change(loading=True, first=True))

    def loaded(
        self, summary: Summary | None, where: Where, problem: str, keep: int | None
    ) -> Applied:
        """The whole store is loaded: its summary, where the load stands in the store's
        history, the summary's problem (the load's is :attr:`failure`)."""
        self.summary = summary
        self.model.take_summary(summary)
        self.stamp, self.point = where
        self.progress, self.indexing = None, False
        if self.state is not Live.FAILED:
            self.state = Live.SWEEPING if self.sweeping else Live.FOLLOWING
        if summary is not None and not self.sweeping:
            self.last_event = parse_iso(summary.finished)
        told = (problem, self.model.bad_text(), self.failure)
        lines = self.triage.activity.extend(store_lines(summary, None, len(self.model), told))
        say = tuple(Say(p, "store", "warning", 15) for p in told[:2] if p)
        return Applied(Change(frozenset(), keep, tuple(lines), texts=True), say)

    def failed(self, reason: str) -> Applied:
        """The store could not be read at all: said once, not at every poll that finds it
        still unreadable (a new reason is said)."""
        again = self.state is Live.FAILED and reason == self.failure
        self.state, self.failure = Live.FAILED, reason
        return Applied(Change(), () if again else (Say(reason, "store", "error", 30),))

    def _readable(self) -> tuple[Say, ...]:
        """A store that could not be read was read: the failure is over (said once)."""
        if not self.failure:
            return ()
        self.failure = ""
        if self.state is Live.FAILED:
            self.state = Live.SWEEPING if self.sweeping else Live.FOLLOWING
        return (Say("the store can be read again", "store"),)

    def stage(self, stage: Live, detail: str, keep: int | None) -> Applied:
        """The session moved on (``watching`` after its first sweep, or ``failed``)."""
        shown = self.show_held(keep)
        self.watching = stage is Live.WATCHING
        self.state = stage
        say = (Say(detail, "engine failed", "error", 30),) if detail else ()
        return Applied(shown.change, say, shown.seen)

    # -- engine events -------------------------------------------------------------------

    def apply(self, events: list[Event], keep: int | None) -> Applied:
        """Apply engine events to the model, the log and the live state."""
        records: dict[Key, Record] = {}
        removed: list[Key] = []
        say: list[Say] = []
        full = texts = ended = False
        paged = self.model.paged  # (the session's index holds them: read as committed)
        for event in events:
            if isinstance(event, RecordsChanged):
                self._count_changes(event)
                self._run_changed = self._run_changed or bool(event.records or event.removed)
                for key in event.removed:
                    records.pop(key, None)
                    removed.append(key)
                fresh = {r.key: r for r in event.records}
                if not paged:
                    # a sweep's new keys wait for its removals: counts never overshoot
                    # (tui.hold); a paged store's counts are the index's, as committed
                    self.hold.take(fresh, list(event.removed), self.model.ids)
                records.update(fresh)
                continue
            if isinstance(event, SweepStarted):
                self.hold.start(len(self.model) > 0 and not paged)
                self._sweep_changed = 0 if event.full and len(self.model) and not paged else None
                if self._sweep_changed is not None:
                    self.sweep_began = event.at
            elif isinstance(event, SweepFinished):
                records.update((r.key, r) for r in self.hold.release())
                full, ended = full or event.full, True
                say.extend(self._offer_changes())
                texts, self._run_changed = texts or self._run_changed, False
            say.extend(self._engine_state(event))
        lines = tuple(self.triage.activity.add(events))
        if not (records or removed or (paged and ended)):
            return Applied(Change(lines=lines, texts=texts), tuple(say), full_sweep=full)
        seen = tuple(records.values())
        if paged and len(seen) > FLASHED:
            # a mass sweep's rows are read as they are drawn: no id handed out for each one
            rows = frozenset(self.model.apply((), removed))
        else:
            rows = frozenset(self.model.apply(seen, removed))
        change = Change(rows, keep, lines, texts=texts)
        return Applied(change, tuple(say), seen, full)

    def paging(self, model: PagedModel, data: Rows) -> Applied:
        """(A store that grew past :data:`engine.browse.BROWSE_FROM` records.) Page the
        store from ``model`` (over its index) from now on, its records read
        through ``data``: the held model is let go, and with it what a held sweep keeps
        (its new keys waiting for its removals, the count of what it changed: the index
        holds each verdict as committed)."""
        self.model = model
        self.hold = SweepHold()
        self._sweep_changed = None
        model.data = data.table
        model.attach(model.index)
        model.note_bad(data.table.bad, data.table.bad_count)
        model.take_summary(self.summary)
        return Applied(Change(frozenset(), None))

    def renewed(self, now: Point, keep: int | None) -> Applied:
        """(A session paging its store.) The store's index is at ``now``, not where the
        snapshot the model reads is (a commit after the events that told of it): read as it
        is now; from the start if it is another index (the session made it anew)."""
        model = self.model
        assert isinstance(model, PagedModel)
        if model.point is None or model.point.index != now.index:
            model.attach(model.index)
        else:
            model.apply(())
        return Applied(Change(frozenset(), keep))

    def _count_changes(self, event: RecordsChanged) -> None:
        """Count what a whole sweep over shown records changes (not what it merely reused)."""
        if self._sweep_changed is None:
            return
        model = self.model
        for r in event.records:
            rid = model.ids.get(r.key)
            old = model.record(rid) if rid is not None else None
            self._sweep_changed += old is None or verdict_of(old) != verdict_of(r)
        self._sweep_changed += len(event.removed)

    def _offer_changes(self) -> list[Say]:
        """A whole sweep that changed shown records ended: the compare screen is offered (a
        pop-up naming its key, never opened unasked)."""
        changed, self._sweep_changed = self._sweep_changed, None
        if not changed:
            return []
        return [Say(f"{count(changed, 'file')} changed: D shows what changed", "sweep finished")]

    def show_held(self, keep: int | None) -> Applied:
        """Show the rows a sweep held back (it stopped before its end)."""
        if not self.hold.held:
            return Applied(Change())
        records = self.hold.release()
        return Applied(Change(frozenset(self.model.apply(records)), keep), seen=tuple(records))

    def _engine_state(self, event: Event) -> list[Say]:
        """What an event other than a record change does to the live state; its pop-ups."""
        if isinstance(event, SweepStarted):
            self.state = Live.SWEEPING if event.full else Live.UPDATING
            self.progress = (0, event.files)
            self.pace.start(event.at)
        elif isinstance(event, Progress):
            self.progress = (event.done, event.total)
            self.pace.add(event.at, event.done)
        elif isinstance(event, SweepFinished):
            self.summary, self.progress = event.summary, None
            self.model.take_summary(event.summary)  # (a paged store's totals are the summary's)
            self.state = self._settled()
        elif isinstance(event, ToolsChanged) and event.appeared:
            return [Say(f"tools found: {', '.join(event.appeared)}", "tools")]
        elif isinstance(event, StoreHealth):
            return self._store_health(event)
        elif isinstance(event, Notice):
            return self._notice(event)
        return []

    def _settled(self) -> Live:
        """The state once no sweep runs: never "watching" while the store lags."""
        if self.trouble is not None:
            return self.trouble
        if self.watching and self.gone:
            return Live.ROOT_GONE
        return Live.WATCHING if self.watching else Live.IDLE

    def _store_health(self, event: StoreHealth) -> list[Say]:
        """The store's health goes to the header; its trouble and its loss also pop up."""
        if event.state is StoreState.LOST:
            self.watching = False
            self.trouble = self.state = Live.STORE_LOST
        elif event.state is StoreState.TROUBLE:
            self.trouble = self.state = Live.RETRYING
        else:
            self.trouble = None
            self.state = self._settled()
        return _pop_up(event.message, event.state.value, event.level)

    def _notice(self, event: Notice) -> list[Say]:
        """Warnings and errors pop up, and a watcher that falls back to polling."""
        if event.kind is NoticeKind.POLLING and event.level == Level.INFO:
            return [Say(event.message, "watching by polling", "warning")]
        if event.kind in (NoticeKind.ROOT_GONE, NoticeKind.ROOT_BACK):
            self.gone = max(0, self.gone + (1 if event.kind is NoticeKind.ROOT_GONE else -1))
            if self.state in (Live.WATCHING, Live.ROOT_GONE):  # (a sweep says so at its end)
                self.state = self._settled()
        return _pop_up(event.message, event.kind.value, event.level)

    # -- following another process's store ----------------------------------------------

    def catch_up(self, store: Store) -> Followed | StoreDiff | None:
        """(A worker thread.) What changed in ``store`` since the model's point in its
        index's history (a few indexed reads at any size); without an index to trust, the
        whole store read again; None to ask again at the next poll. OSError when the store
        cannot be read."""
        if self.point is not None:
            followed = follow_store(store, self.point)
            if followed is not None:
                self._untrusted = 0
                return followed
            self._untrusted += 1
            if self._untrusted < 2:
                # The writer renames a new extract.jsonl into place and only then says so
                # in its index: the next poll sees them agree again.
                return None
        self._untrusted = 0
        if isinstance(self.model, PagedModel):  # the index made anew: browsed from the start
            return whole_store(store)
        return diff_store(store, self.model)

    def followed(self, followed: Followed, keep: int | None) -> Applied:
        """Apply what the store's index says changed."""
        self.stamp, self.point = followed.stamp, followed.point
        self.summary = followed.summary or self.summary
        self.model.take_summary(self.summary)
        say = self._readable()
        if followed.whole and isinstance(self.model, PagedModel):
            self.indexing = False
            model = self.model
            model.data = followed.table
            model.attach(followed.index)  # (the index made anew: read from the start)
            if followed.table is not None:  # (what this index left out, said anew)
                model.note_bad(followed.table.bad, followed.table.bad_count, anew=True)
            self.last_event = time.time()
            return Applied(Change(frozenset(), keep, texts=True), say)
        if not (followed.records or followed.removed):  # extract.jsonl caught up with the index
            return Applied(Change(), say)
        self.last_event = time.time()
        written: Sequence[Record] = followed.records
        if isinstance(self.model, PagedModel) and len(written) > FLASHED:
            written = ()  # (as a session's mass sweep: no id, and no key kept, for each row)
        rows = frozenset(self.model.apply(written, followed.removed))
        done = len(followed.records) + len(followed.removed)
        lines = self.triage.activity.extend(
            store_lines(self.summary, done, len(self.model), (self.model.bad_text(),))
        )
        change = Change(rows, keep, tuple(lines), texts=True)
        return Applied(change, say, tuple(followed.records))

    def diffed(self, diff: StoreDiff, keep: int | None) -> Applied:
        """Take the store as re-read whole (the cursor's record kept by its key)."""
        model = self.model
        self.stamp, self.point = diff.data.stamp, diff.data.point
        self.summary = diff.summary or self.summary
        if self.summary is not None:
            self.last_event = parse_iso(self.summary.finished) or time.time()
        kept = model.key(keep) if keep is not None else None
        model.clear()
        model.data = diff.data.table
        model.extend(diff.chunk.rows)
        model.note_bad(diff.chunk.bad, diff.chunk.bad_count)
        rows = frozenset(model.ids[k] for k in diff.changed if k in model.ids)
        problems = (model.bad_text(),)
        lines = self.triage.activity.extend(
            store_lines(diff.summary, len(diff.changed), len(model), problems)
        )
        change = Change(rows, model.ids.get(kept) if kept else None, tuple(lines), texts=True)
        return Applied(change, self._readable(), tuple(error_records(model)))

    # -- what a retry's answer means -----------------------------------------------------

    def retried(self, keys: list[Key], label: str, vanished: Iterable[Key], unlock: bool) -> Say:
        """What a finished retry of ``keys`` says: the verdicts they have now (the records
        it changed were applied before its answer), or, after a new password
        (``unlock``), how many of them opened."""
        gone = set(vanished)
        if unlock:
            return self._unlocked(keys, gone)
        verdicts: dict[str, int] = {}
        for key in keys:
            if key in gone:
                continue
            rid = self.model.ids.get(key)
            record = self.model.record(rid) if rid is not None else None
            status = record.status if record is not None else "?"
            verdicts[status] = verdicts.get(status, 0) + 1
        parts = [f"{status} {n:,}" for status, n in sorted(verdicts.items())]
        if gone:
            names = ", ".join(path for _root, path in sorted(gone)[:3])
            parts.append(f"{len(gone):,} vanished (no longer on disk: {names})")
        return Say(" · ".join(parts), f"retried {label}", "warning" if gone else "information")

    def _unlocked(self, keys: list[Key], vanished: set[Key]) -> Say:
        """After a retry with a new password: how many of the files opened."""
        model = self.model
        records = [model.record(rid) for k in keys if (rid := model.ids.get(k)) is not None]
        opened = sum(1 for r in records if r is not None and r.status == Status.OK)
        still = sum(1 for r in records if is_encrypted(r))
        tried = len(keys) - len(vanished)
        text = f"opened {opened:,} of {count(tried, 'encrypted file')}"
        if still:
            text += f"; {still:,} still encrypted: the passwords given did not open them"
        if vanished:
            text += f"; {len(vanished):,} no longer on disk"
        return Say(text, "password", "information" if opened and not still else "warning")


def verdict_of(r: Record) -> tuple[object, ...]:
    """What a record says of its file, as a comparison sees it (not ``reused``, ``why``,
    ``ms`` or the file's stat)."""
    verdict = r.quality.verdict if r.quality is not None else None
    return (r.status, r.reason, r.sha256, r.chars, r.extractor, verdict)


def parse_iso(text: str) -> float | None:
    """An ISO time as ``time.time()`` seconds; None when empty or not a time."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(text).timestamp() if text else None
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True, slots=True)
class Opening:
    """A store opened before the dashboard's first frame: the rest is loaded after it."""

    counts: dict[str, int] | None
    """The store's counts per status from its index (a few rows at any size), if it has one."""
    rows: Rows | None
    """Its records, as the engine gives them (None when it could not be opened)."""
    chunks: Iterator[Chunk] | None = None
    """The chunks after :attr:`first`, read as they are asked for (the load worker's)."""
    first: tuple[Chunk, ...] = ()
    """The first chunk (a screen's worth of records, from one indexed query)."""
    trouble: OSError | None = None
    """Why the store could not be opened or read (a folder in its place, no permission)."""

    @property
    def stamp(self) -> Stamp | None:
        """The stamp of what is loaded (what a later change is told from)."""
        return self.rows.stamp if self.rows is not None else None


def open_store(store: Store, *, browse: bool = False) -> Opening:
    """Open ``store`` and read its first rows (milliseconds from an index; a store without
    one has it built first, by the engine); an OSError is kept, not raised: the loading
    worker says it. ``browse``: the rows are not loaded (a :class:`~tui.paged.PagedModel`
    pages them from the index), only the store's table is opened for its records."""
    counts = status_counts(store.out / DB, store.jsonl_path)
    try:
        rows = open_rows(store)
        if browse:
            rows.table.end_read()  # (no load: the snapshot is let go at once)
            return Opening(counts, rows, None, ())
        chunks = load_rows(rows)
        first = tuple(islice(chunks, 1))
    except OSError as exc:
        return Opening(counts, None, None, (), exc)
    return Opening(counts, rows, chunks, first)
