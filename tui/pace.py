"""How fast a sweep goes and how long it has left, from the engine's progress events.

The header shows files done of the total, the percentage, files a second and the time left
(it showed a bar whose percentage lost its ``%`` at 80 columns, and no rate). The rate is
taken over the last :data:`WINDOW` seconds of events, so a sweep that slows down (a folder of
scans after one of texts) is soon told so; the time left is the files still to read at that
rate. Times are the events' own (:attr:`engine.events.Event.at`), not the clock at drawing.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW = 30.0
"""Seconds of progress events the rate is measured over."""


@dataclass(slots=True)
class Pace:
    """Progress samples of one sweep: (event time, files done)."""

    samples: deque[tuple[float, int]] = field(default_factory=deque)

    def start(self, at: float) -> None:
        """A sweep began at ``at`` with nothing done."""
        self.samples.clear()
        self.samples.append((at, 0))

    def add(self, at: float, done: int) -> None:
        """``done`` files were decided by ``at``; samples past the window are let go (one
        before it stays as the window's start)."""
        self.samples.append((at, done))
        while len(self.samples) > 2 and self.samples[1][0] <= at - WINDOW:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Files a second over the window; None before two samples a moment apart."""
        if len(self.samples) < 2:
            return None
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else None

    def left(self, done: int, total: int) -> float | None:
        """Seconds left at the current rate; None when it is not known (or zero)."""
        rate = self.rate()
        return max(0, total - done) / rate if rate else None


def duration(seconds: float) -> str:
    """``0:42``, ``12:05``, ``3:02:10``."""
    s = round(seconds)
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def describe(done: int, total: int, pace: Pace) -> str:
    """``1,234/5,000 files · 25% · 41 files/s · 1:32 left`` (the rate and time once known)."""
    percent = 100 * done // total if total else 100
    parts = [f"{done:,}/{total:,} files", f"{percent}%"]
    rate = pace.rate()
    if rate is not None:
        parts.append(f"{rate:.1f} files/s" if rate < 10 else f"{rate:,.0f} files/s")
        left = pace.left(done, total)
        if left is not None:
            parts.append(f"{duration(left)} left")
    return " · ".join(parts)
