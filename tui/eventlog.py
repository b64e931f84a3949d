"""The activity log: engine events as timed lines, bounded, errors kept. No Textual here.

The dashboard feeds every batch of engine events through :meth:`ActivityLog.add`; the activity
screen shows :attr:`ActivityLog.lines` and follows the new ones. Progress events are not
logged (a sweep sends one per file; the header shows them). Routine lines are bounded: past
:data:`LIMIT` the oldest of them go, so a million-file sweep costs a bounded amount of memory;
errors and warnings are never let go (they went first once, being the oldest). Files a sweep
or rescan reuses unchanged get no line each (each 5-minute rescan added one per file, 789 on
the corpus): the sweep's closing line counts them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from engine.events import (
    Event,
    Level,
    Notice,
    RecordsChanged,
    RunKind,
    StoreHealth,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.names import shown
from engine.records import Record, Status, Summary
from tui.words import count

LIMIT = 10_000
"""Routine lines held; older ones are let go (errors and warnings never are)."""

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
    kept: bool = False
    """An error or a warning: never let go when the log is full."""

    def render(self) -> str:
        """``HH:MM:SS kind      text`` (local time)."""
        return f"{time.strftime('%H:%M:%S', time.localtime(self.at))} {self.kind:<9} {self.text}"


def _verdict(record: Record) -> str:
    verdict = record.status + (f"/{record.reason}" if record.reason else "")
    if record.status == Status.OK:
        verdict += f" · {count(record.chars, 'char')}"
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
    text = f"{shown(record.path)} → {shown(_verdict(record))}{why}"
    return LogLine(at, kind, text, kept=kind == "error")


_RUN_WORDS = {
    RunKind.SWEEP: ("full sweep started", "full sweep finished"),
    RunKind.RESCAN: ("rescan started", "rescan finished"),
    RunKind.CHANGES: ("changes seen", "changes applied"),
    RunKind.RETRY: ("retry started", "retry finished"),
    RunKind.TOOLS: ("reading again for new tools", "read again for new tools"),
}
"""How a run's start and end are said, by why it ran (a watch batch was said "rescan")."""


def _kind(event: SweepStarted | SweepFinished) -> RunKind:
    """Why the run ran (a run not full that says no more: a rescan, as it was said before)."""
    return RunKind.RESCAN if not event.full and event.kind == RunKind.SWEEP else event.kind


def describe(event: Event) -> list[LogLine]:
    """The log lines of one engine event (none for progress)."""
    at = event.at
    if isinstance(event, RecordsChanged):
        lines = [_record_line(at, r) for r in event.records]
        lines += [LogLine(at, "removed", shown(path)) for _root, path in event.removed]
        return lines
    if isinstance(event, SweepStarted):
        if _kind(event) == RunKind.CHANGES and not event.files:
            return []  # (files removed: a line each says so)
        started, _ = _RUN_WORDS[_kind(event)]
        return [LogLine(at, "sweep", f"{started}: {count(event.files, 'file')}")]
    if isinstance(event, SweepFinished):
        _, finished = _RUN_WORDS[_kind(event)]
        counts = ", ".join(f"{s} {n:,}" for s, n in event.summary.counts.items() if n)
        done = [f"{event.extracted:,} read", f"{event.reused:,} reused"]
        if event.removed:  # (a batch that only removed files read none: said so alone)
            done = done if event.extracted or event.reused else []
            done.append(f"{event.removed:,} removed")
        text = f"{finished}: {', '.join(done)} ({counts})"
        left = _left_out(at, event.summary) if event.full else []  # a batch walks no folder
        return [LogLine(at, "sweep", text), *left]
    if isinstance(event, ToolsChanged):
        parts = []
        if event.appeared:
            parts.append(f"found {', '.join(event.appeared)}")
        if event.vanished:
            parts.append(f"gone {', '.join(event.vanished)}")
        return [LogLine(at, "tools", "; ".join(parts) or "tool set re-checked")]
    if isinstance(event, Notice):
        return [_notice_line(at, event.kind, event.message, event.level)]
    if isinstance(event, StoreHealth):  # said as the notice it once was
        return [_notice_line(at, event.state, event.message, event.level)]
    return []


def _notice_line(at: float, word: str, message: str, level: Level) -> LogLine:
    """``kind: message``; a warning or an error is kept."""
    kept = level in (Level.WARNING, Level.ERROR)
    text = message if message.startswith(f"{word} ") else f"{word}: {message}"
    return LogLine(at, "notice", shown(text), kept=kept)  # (not "watching: watching 1 folder")


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
    # timed at the sweep's end: "store loaded" there read as a load made before the
    # dashboard started
    what = "store as swept" if changed is None else f"store rewritten: {changed:,} changed"
    if summary is None:
        if not records:  # a new store: nothing to say yet
            return notes if changed is None else [LogLine(now, "notice", what), *notes]
        loaded = "store loaded" if changed is None else what  # (timed now: no sweep's time)
        return [LogLine(now, "sweep", f"{loaded}: {count(records, 'record')} (no summary)"), *notes]
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
    return [*lines, *_left_out(at, summary)]


def _left_out(at: float, summary: Summary) -> list[LogLine]:
    """What the default exclusions left out of the last walk, as the sweep's table says it."""
    from engine.console import left_out_line

    line = left_out_line(summary.left_out)
    return [LogLine(at, "sweep", line)] if line else []


class ActivityLog:
    """Engine activity: every error and warning, and the newest :data:`LIMIT` other lines."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        """Routine (not kept) lines held at most."""
        self.lines: list[LogLine] = []
        """The lines held, oldest first."""
        self.total = 0
        """Lines ever added (so a screen can tell how many were let go)."""
        self.compactions = 0
        """How many times old routine lines were let go (a screen showing them redraws)."""
        self._routine = 0
        self._sweeping = False

    def add(self, events: Iterable[Event]) -> list[LogLine]:
        """Log a batch of events; return the lines added. Inside a sweep (or a rescan), a
        reused record gets no line: the sweep's closing line counts them."""
        lines: list[LogLine] = []
        for event in events:
            if isinstance(event, SweepStarted):
                self._sweeping = True
            elif isinstance(event, SweepFinished):
                self._sweeping = False
            if self._sweeping and isinstance(event, RecordsChanged):
                fresh = tuple(r for r in event.records if not r.reused)
                event = RecordsChanged(event.at, fresh, event.removed)
            lines += describe(event)
        return self.extend(lines)

    def extend(self, lines: list[LogLine]) -> list[LogLine]:
        """Log lines that did not come from engine events (a store read from disk)."""
        self.lines.extend(lines)
        self.total += len(lines)
        self._routine += sum(1 for line in lines if not line.kept)
        if self._routine > self.limit:
            self._compact()
        return lines

    def _compact(self) -> None:
        """Let the oldest routine lines go, down to nine tenths of the limit (so that this
        walk of the whole log is rare), keeping every kept line."""
        drop = self._routine - max(1, self.limit * 9 // 10)
        held: list[LogLine] = []
        for line in self.lines:
            if drop and not line.kept:
                drop -= 1
                continue
            held.append(line)
        self.lines = held
        self._routine = sum(1 for line in held if not line.kept)
        self.compactions += 1

    @property
    def dropped(self) -> int:
        """Lines let go (never an error or a warning)."""
        return self.total - len(self.lines)
