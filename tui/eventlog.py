"""The activity log: engine events as timed lines in a bounded ring buffer. No Textual here.

The dashboard feeds every batch of engine events through :meth:`ActivityLog.add`; the activity
screen shows :attr:`ActivityLog.lines` and follows the new ones. Progress events are not
logged (a sweep sends one per file; the header shows them). The buffer keeps the newest
:data:`LIMIT` lines, so a million-file sweep costs a bounded amount of memory.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from engine.events import (
    Event,
    Notice,
    RecordsChanged,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.names import shown
from engine.records import Record, Status, Summary
from tui.words import count

LIMIT = 10_000
"""Lines kept; older ones fall off."""

KINDS: tuple[str, ...] = (
    "extracted",
    "reused",
    "removed",
    "error",
    "skipped",
    "sweep",
    "tools",
    "notice",
)
"""Kinds of line, for colours and filtering."""


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of the activity log."""

    at: float
    """``time.time()`` of the event."""
    kind: str
    """One of :data:`KINDS`."""
    text: str
    """What happened, in words (never a file's text)."""

    def render(self) -> str:
        """``HH:MM:SS kind      text`` (local time)."""
        return f"{time.strftime('%H:%M:%S', time.localtime(self.at))} {self.kind:<9} {self.text}"


def _verdict(record: Record) -> str:
    verdict = record.status + (f"/{record.reason}" if record.reason else "")
    if record.status == Status.OK:
        verdict += f" · {record.chars:,} chars"
    elif record.error:
        verdict += f" · {record.error}"
    return verdict


def _record_line(at: float, record: Record) -> LogLine:
    if record.reused:
        return LogLine(at, "reused", f"{shown(record.path)} ({record.status})")
    kind = {Status.ERROR.value: "error", Status.SKIPPED.value: "skipped"}.get(
        record.status, "extracted"
    )
    why = f" [{record.why}]" if record.why else ""
    return LogLine(at, kind, f"{shown(record.path)} → {shown(_verdict(record))}{why}")


def describe(event: Event) -> list[LogLine]:
    """The log lines of one engine event (none for progress)."""
    at = event.at
    if isinstance(event, RecordsChanged):
        lines = [_record_line(at, r) for r in event.records]
        lines += [LogLine(at, "removed", shown(path)) for _root, path in event.removed]
        return lines
    if isinstance(event, SweepStarted):
        what = "full sweep" if event.full else "rescan"
        return [LogLine(at, "sweep", f"{what} started: {count(event.files, 'file')}")]
    if isinstance(event, SweepFinished):
        what = "full sweep" if event.full else "rescan"
        counts = ", ".join(f"{s} {n:,}" for s, n in event.summary.counts.items() if n)
        text = f"{what} finished: {event.extracted:,} read, {event.reused:,} reused ({counts})"
        return [LogLine(at, "sweep", text)]
    if isinstance(event, ToolsChanged):
        parts = []
        if event.appeared:
            parts.append(f"found {', '.join(event.appeared)}")
        if event.vanished:
            parts.append(f"gone {', '.join(event.vanished)}")
        return [LogLine(at, "tools", "; ".join(parts) or "tool set re-checked")]
    if isinstance(event, Notice):
        return [LogLine(at, "notice", shown(f"{event.kind}: {event.message}"))]
    return []


def store_lines(
    summary: Summary | None,
    changed: int | None = None,
    records: int | None = None,
    problems: Iterable[str] = (),
) -> list[LogLine]:
    """Lines for a store read from disk: when it was swept and what it holds.

    ``changed`` is set when another process rewrote the store (``quarry ui --store``);
    ``records`` is how many records were read (the summary may claim others: a store cut
    short); ``problems`` are what could not be read, each a line of its own.
    """
    now = time.time()
    notes = [LogLine(now, "notice", shown(p)) for p in problems if p]
    what = "store loaded" if changed is None else f"store rewritten: {changed:,} changed"
    if summary is None:
        if not records:  # a new store: nothing to say yet
            return notes if changed is None else [LogLine(now, "notice", what), *notes]
        return [LogLine(now, "sweep", f"{what}: {count(records, 'record')} (no summary)"), *notes]
    try:
        at = datetime.fromisoformat(summary.finished).timestamp()
    except (ValueError, TypeError):
        at = now
    counts = ", ".join(f"{s} {n:,}" for s, n in summary.counts.items() if n)
    if records is None or records == summary.files:
        held = f"{count(summary.files, 'file')} ({counts})"
    else:
        says = count(summary.files, "file")
        held = f"{count(records, 'record')} read (its summary says {says}: {counts})"
    lines = [LogLine(at, "sweep", shown(f"{what}: {held}")), *notes]
    if summary.tools_found:
        found = ", ".join(f"{name} {v}" for name, v in sorted(summary.tools_found.items()))
        lines.append(LogLine(at, "tools", f"found {found}"))
    return lines


class ActivityLog:
    """The newest :data:`LIMIT` lines of engine activity."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.lines: deque[LogLine] = deque(maxlen=limit)
        """The lines kept, oldest first."""
        self.total = 0
        """Lines ever added (so a screen can tell how many fell off)."""

    def add(self, events: Iterable[Event]) -> list[LogLine]:
        """Log a batch of events; return the lines added."""
        return self.extend([line for event in events for line in describe(event)])

    def extend(self, lines: list[LogLine]) -> list[LogLine]:
        """Log lines that did not come from engine events (a store read from disk)."""
        self.lines.extend(lines)
        self.total += len(lines)
        return lines

    @property
    def dropped(self) -> int:
        """Lines that fell off the start of the buffer."""
        return self.total - len(self.lines)
