"""What the screens read of the dashboard around them, without Textual.

The read side of :class:`tui.screens.ports.Dashboard`: the header's words, the counts the
store's index gives while its records load, the tools view's rows, a record's file and its
stored text, the records a ``text:`` term matches. It reads the store, the session (when one
sweeps), the link's live state and the triage state; it changes none of them. The side that
acts (retries, prompts, the inspector) is :class:`tui.desk.Desk`, which extends this one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engine.events import Event
from engine.query import TextTerm
from engine.records import Key, Record, is_sha256
from engine.store import Store
from engine.tools import KNOWN_TOOLS
from tui.link import Header, Link, Live
from tui.model import TABS
from tui.paged import PagedModel
from tui.state import TriageState
from tui.triage import (
    ToolRow,
    Waiting,
    found_from_summary,
    found_from_toolset,
    tool_rows,
    waiting_of,
    waiting_tallied,
)
from tui.words import count

if TYPE_CHECKING:
    from engine.session import Session


WAITING = "waiting"
"""The paged model's memo of :meth:`Board.waiting`."""


class Board:
    """The dashboard's answers to what its screens ask (see the module docstring)."""

    def __init__(
        self, store: Store, session: Session | None, link: Link, triage: TriageState
    ) -> None:
        self.store = store
        self.session = session
        self.link = link
        self.model = link.model
        self.triage = triage
        self.counts: dict[str, int] | None = None
        """The store's counts per status from its index, as it was opened (if it has one)."""
        self.paused = False
        """Whether live changes are held back (the app's ``p``)."""
        self.pending: list[Event] = []
        """The engine events held back while paused, in order."""

    def header(self) -> Header:
        """What the header and the summary bar show."""
        problem = self.link.failure
        if not problem and self.model.bad_lines:
            problem = count(self.model.bad_lines, "unreadable line")
        link = self.link
        return Header(self.folder, self.state_text, link.progress, link.last_event, problem)

    @property
    def folder(self) -> str:
        """The folder(s) swept, then those the store holds beside them; or the store's own
        folder."""
        summary = self.link.summary
        others = [r for r in (summary.others if summary is not None else ()) if r]
        if self.session is not None:
            return ", ".join([*map(str, self.session.roots), *others])
        if summary is not None and summary.roots:
            return ", ".join([*summary.roots, *others])
        return str(self.store.out)

    @property
    def state_text(self) -> str:
        """The live state in words."""
        writable, pending = self.triage.writable, len(self.pending)
        return self.link.state_text(writable=writable, paused=self.paused, pending=pending)

    def store_counts(self) -> dict[str, int] | None:
        """The store's counts per tab from its index while its records load (else None)."""
        counts = self.counts
        if counts is None or self.link.state is not Live.LOADING:
            return None
        return {tab: counts.get(tab, 0) for tab in TABS}

    def texts_matching(self, term: TextTerm) -> frozenset[Key]:
        """The records whose text a ``text:`` term of the query line matches: the engine
        answers from the store's text index (or reads the texts); nothing for a term that
        means nothing (its error is on screen)."""
        from engine.grep import matching_keys

        if term.pattern is None:
            return frozenset()
        return matching_keys(self.store, term.pattern)

    def tools_missing(self) -> set[str]:
        """Tools the last summary reported missing."""
        summary = self.link.summary
        return set(summary.tools_missing) if summary else set()

    def tool_rows(self, waiting: Waiting | None = None) -> list[ToolRow]:
        """The tools view's rows, from the live model (the records waiting on a tool:
        ``waiting``, or :meth:`waiting`)."""
        if self.session is not None:
            found = found_from_toolset(self.session.tools)
        else:
            summary = self.link.summary
            found = found_from_summary(summary.tools_found if summary else {})
        # reads on a Dask cluster: which worker has which tool
        workers = self.session.worker_tools() if self.session is not None else {}
        summary = self.link.summary  # the records read without a tool, counted by tool
        without = summary.read_without if summary is not None else {}
        without = {tool: n for tool, n in without.items() if tool in found}
        waiting = self.waiting() if waiting is None else waiting
        return tool_rows(found, waiting, workers, self.tools_left_out(), without)

    def waiting(self) -> Waiting:
        """The records waiting on a tool (a paged store's: counted by its index, once per
        change of its records)."""
        model = self.model
        if isinstance(model, PagedModel):
            return model.memo(WAITING, lambda: waiting_tallied(model))
        return waiting_of(model.waiting())

    def waiting_known(self) -> bool:
        """Whether :meth:`waiting` answers at once (a paged store's is counted by its index:
        ask it from a worker when not)."""
        return not isinstance(self.model, PagedModel) or self.model.has_memo(WAITING)

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
