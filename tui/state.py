"""The dashboard's triage state beside the records model: marks, retries in flight, error
groups already known, the activity log, and the engine port. No Textual here.

Screens receive a :class:`TriageState` (and the :class:`~tui.model.RecordModel`) when they are
built and read or change it directly; the app applies engine events to both and tells the
screen on top that they changed. The engine is reached only through :class:`EnginePort`,
which is absent (``None``) when the dashboard is read-only or follows another process's
store: then no write action is offered at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.passwords import NO_PASSWORDS, Passwords
from engine.records import Key, Reason, Record
from tui.eventlog import ActivityLog
from tui.model import RecordModel
from tui.triage import GroupKey, group_key

if TYPE_CHECKING:  # the engine port's types; the sweep is not imported before the first frame
    from engine.sweep import SweepResult
    from engine.tools import ToolSet


class EnginePort(Protocol):
    """What the dashboard asks of the engine (a :class:`engine.session.Session` is one)."""

    @property
    def roots(self) -> Sequence[Path]:
        """The folders swept."""
        ...

    @property
    def tools(self) -> ToolSet:
        """The external tools as the engine sees them now."""
        ...

    def retry(self, keys: Iterable[Key], passwords: Passwords = NO_PASSWORDS) -> SweepResult:
        """Read ``keys`` again, whatever their verdict, trying ``passwords`` on encrypted
        files (blocking)."""
        ...

    def recheck_tools(self) -> ToolSet:
        """Look the tools up again; a new one retries what it unlocks (blocking)."""
        ...


@dataclass(slots=True)
class TriageState:
    """What the operator has marked, what is being retried, what is already known."""

    engine: EnginePort | None = None
    """The engine, or None when nothing may be written (read-only, another's store)."""
    read_only: bool = False
    """``--read-only``: browse only (the reason :attr:`engine` is None, when it is)."""
    marks: set[Key] = field(default_factory=set)
    """Records marked on the records screen (space, shift+arrows)."""
    retrying: set[Key] = field(default_factory=set)
    """Records whose retry is in flight."""
    activity: ActivityLog = field(default_factory=ActivityLog)
    """The newest engine events, as lines."""
    known_groups: set[GroupKey] | None = None
    """Error groups seen so far; None until the loaded store has been grouped."""
    new_groups: dict[GroupKey, str] = field(default_factory=dict)
    """Error groups first seen since the last announcement, each with the first message of
    it as the engine wrote it (the group's key has ``#`` for its numbers: not words to show)."""
    checking_tools: bool = False
    """A tools re-check is running."""
    waiting_tools: frozenset[str] | None = None
    """Missing tools files waited on after the previous sweep (None before the first)."""
    passwords: Passwords = field(default=NO_PASSWORDS, repr=False)
    """Passwords given this session (``P``), tried by every retry of an encrypted file; held
    in memory only: never written to the store, the activity log or a notification."""

    @property
    def writable(self) -> bool:
        """Whether write actions (retry, check tools, export) are offered."""
        return self.engine is not None and not self.read_only

    def why_not_writable(self, what: str) -> str:
        """Why ``what`` cannot be done here, in one line."""
        if self.read_only:
            return f"read-only: cannot {what}"
        # (quarry ui: whether or not another quarry writes the store, it only shows it)
        return (
            f"cannot {what}: quarry ui only shows the store; `quarry retry PATH` reads files "
            "again, and `quarry DIR` opens a dashboard that can"
        )

    def add_passwords(self, passwords: Passwords) -> None:
        """Keep ``passwords`` for this session (after those given before, tried first)."""
        self.passwords = self.passwords + passwords

    def toggle_mark(self, key: Key) -> None:
        """Mark ``key``, or unmark it when it is marked."""
        if key in self.marks:
            self.marks.discard(key)
        else:
            self.marks.add(key)

    def see_records(self, records: Iterable[Record]) -> bool:
        """Note error groups never seen before; True when some wait to be announced."""
        for record in records:
            self.retrying.discard(record.key)
            if record.status == "error" and self.known_groups is not None:
                key = group_key(record)
                if key not in self.known_groups:
                    self.new_groups.setdefault(key, record.error or key.detail)
        return bool(self.new_groups)

    def take_new_groups(self) -> dict[GroupKey, str]:
        """The groups to announce now (they become known)."""
        new, self.new_groups = self.new_groups, {}
        if self.known_groups is not None:
            self.known_groups.update(new)
        return new

    def new_waiting_tools(self, waited_on: Iterable[str]) -> bool:
        """After a full sweep: whether files now wait on a tool the previous sweep did not
        leave them waiting on (that is when the tools screen opens by itself)."""
        now = frozenset(waited_on)
        before, self.waiting_tools = self.waiting_tools, now
        return bool(now - (before or frozenset()))


def is_encrypted(record: Record | None) -> bool:
    """Whether a password could help ``record`` (its verdict is ``error/encrypted``)."""
    return record is not None and record.reason == Reason.ENCRYPTED


def encrypted_keys(model: RecordModel, keys: Iterable[Key]) -> list[Key]:
    """Those of ``keys`` whose records are encrypted (what ``P`` gives a password for)."""
    ids = model.ids
    return [k for k in keys if (rid := ids.get(k)) is not None and is_encrypted(model.record(rid))]


def announce(new: dict[GroupKey, str]) -> tuple[str, str]:
    """(title, message) of the notification for new error groups: one real message (a
    group's key has ``#`` for its numbers) and how many more, short enough for 80 columns."""
    (reason, _), example = next(iter(new.items()))
    more = f" (+{len(new) - 1} more)" if len(new) > 1 else ""
    title = "new error group" if len(new) == 1 else f"{len(new)} new error groups"
    return title, f"{reason}: {example}{more} · x: errors"
