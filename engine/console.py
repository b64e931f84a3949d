"""Terminal output for the command line: a rich progress bar on a terminal, log lines otherwise.

Never prints a file's text (except ``quarry show``, which is asked for it).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from engine.events import (
    Event,
    Level,
    Notice,
    RecordsChanged,
    StoreHealth,
    SweepFinished,
    SweepStarted,
    ToolsChanged,
)
from engine.events import Progress as ProgressEvent
from engine.names import shown
from engine.quality import VERDICTS, summary_line
from engine.records import Key, Record, Status, Summary
from engine.words import count

if TYPE_CHECKING:  # rich is imported when something is drawn: `--json` and logs never pay
    from rich.console import Console, RenderableType
    from rich.progress import Progress, ProgressColumn, TaskID

STATUS_STYLE = {
    "ok": "green", "empty": "yellow", "unsupported": "magenta", "error": "red",
    "skipped": "bright_black",
}  # fmt: skip


class SweepReporter:
    """Listener that shows a sweep: a full sweep's progress bar on a TTY, else one line per
    read (a log; a watch batch on a TTY too)."""

    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, summarize: bool = False
    ) -> None:
        self.stream = stream or sys.stderr
        self._console: Console | None = None
        self.tty = self.stream.isatty()
        self.quiet = quiet
        self.summarize = summarize
        """Say each full sweep's counts in a line when it ends (``watch``, which prints no
        table: its first sweep; a rescan is a batch, its files said one a line)."""
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._rates: Rates | None = None

    @property
    def console(self) -> Console:
        """The rich console on the stream, made on first use."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)
        return self._console

    def __call__(self, event: Event) -> None:
        if isinstance(event, SweepStarted):
            self._start(event)
        elif isinstance(event, ProgressEvent):
            self._advance(event)
        elif isinstance(event, RecordsChanged):
            self._records(event.records, event.removed)
        elif isinstance(event, SweepFinished):
            self._stop()
            if self.summarize and event.full:
                self._line(swept_line(event.summary, event.extracted))
        elif isinstance(event, Notice | StoreHealth) and event.level != Level.INFO:
            self._line(describe(event), always=True)  # warnings and errors, even when quiet
        elif isinstance(event, Notice | StoreHealth | ToolsChanged):
            self._line(describe(event))

    def _start(self, e: SweepStarted) -> None:
        if self.tty and not self.quiet and e.full:
            from rich.progress import BarColumn, Progress, TextColumn

            # Files done of the files found, and what the rates say, drawn at every refresh
            # (not only at each event: a long OCR read ends no file, and its time must show).
            self._rates = Rates(e.at, e.files, e.bytes)
            self._progress = Progress(
                TextColumn("[bold]sweep"),
                BarColumn(),
                _stats_column(self._rates),
                TextColumn("{task.fields[current]}", style="dim"),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("sweep", total=max(e.files, 1), current="")
        elif not self.quiet and e.full:  # (a batch's files say themselves, a line each: a
            # rescan said "sweep: 1,000,000 files" every five minutes and read none of them)
            self._line(f"sweep: {count(e.files, 'file')}, {count(e.bytes, 'byte')}")

    def _advance(self, e: ProgressEvent) -> None:
        if self._rates is not None:
            self._rates.add(e)
        if self._progress is not None and self._task is not None:
            current = shown(e.current)[-50:]
            self._progress.update(
                self._task, total=max(e.total, 1), completed=e.done, current=current
            )

    def _records(self, records: Iterable[Record], removed: Iterable[Key]) -> None:
        # On a terminal the bar stands for a full sweep's reads; a watch batch, which has
        # none, says each file it read (a terminal showed "sweep: 2 files" and no verdict)
        if self._progress is not None or self.quiet:
            return
        for r in records:
            if not r.reused:  # (a rescan tells every record it kept: a million lines)
                self._line(record_line(r))
        for _root, path in removed:
            self._line(f"removed  {shown(path)}")

    def _stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        self._rates = None

    def _line(self, text: str, *, always: bool = False) -> None:
        """Write one line; whatever a name held, it stays one line of plain characters."""
        if self.quiet and not always:
            return
        text = shown(text)
        if self.tty:
            self.console.print(text, markup=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()


WINDOW_S = 20.0
"""How far back the rates look: long enough to span a few slow reads, short enough to follow a
sweep that moves from OCR to plain text."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """Where a sweep stands: files done of total, the rate, the time left (None: not known)."""

    done: int
    total: int
    files_per_s: float | None
    left_s: float | None


class Rates:
    """A sweep's progress events, and the rates and time left they give at any moment.

    Two things fooled the time left of a byte-based bar: a scan is few bytes and a slow OCR
    read, so the bytes left understate the time left; and a read that takes a minute sends no
    event, so a rate taken between events never slows down. Here the time left is the larger
    of what the files left and the bytes left would take at the rates of the last
    :data:`WINDOW_S` seconds up to *now* (a read still running slows them down). When no file
    ended in that window, the rates since the first file ended are taken; the time before it
    (the walk, the workers starting) counts only once it is all there is to go by.
    """

    def __init__(self, started: float, total: int, bytes_total: int) -> None:
        self.started = started
        self.total = total
        self.bytes_total = bytes_total
        self.first: tuple[float, int, int] | None = None
        """The first event's (time, files done, bytes done)."""
        self.samples: deque[tuple[float, int, int]] = deque()
        """(time, files done, bytes done) of the events since the window's baseline."""

    def add(self, e: ProgressEvent) -> None:
        """Take one progress event."""
        self.total, self.bytes_total = e.total, e.bytes_total
        sample = (e.at, e.done, e.bytes_done)
        if self.first is None:
            self.first = sample
        self.samples.append(sample)
        # keep one sample at or before the window's start: it is the baseline
        while len(self.samples) > 2 and self.samples[1][0] <= e.at - WINDOW_S:
            self.samples.popleft()

    def estimate(self, now: float) -> Estimate:
        """The estimate at ``now``."""
        if not self.samples:
            return Estimate(0, self.total, None, None)
        t1, done, bytes_done = self.samples[-1]
        now = max(now, t1)
        base = None
        for sample in self.samples:
            if sample[0] > now - WINDOW_S:
                break
            base = sample
        if base is None or base[1] == done:  # nothing ended in the window
            base = self.first
        if (base is None or base[1] == done) and now - self.started >= WINDOW_S:
            base = (self.started, 0, 0)
        if base is None or base[1] == done or now <= base[0]:
            return Estimate(done, self.total, None, None)
        span = now - base[0]
        files_rate = (done - base[1]) / span
        bytes_rate = (bytes_done - base[2]) / span
        left = (self.total - done) / files_rate
        if bytes_rate > 0:
            left = max(left, (self.bytes_total - bytes_done) / bytes_rate)
        return Estimate(done, self.total, files_rate, max(left, 0.0))


def progress_text(est: Estimate) -> str:
    """``412/818 files  35.2 files/s  0:00:12 left``: what the progress bar says beside it."""
    rate = "--" if est.files_per_s is None else _rate(est.files_per_s)
    left = "-:--:--" if est.left_s is None else _clock(est.left_s)
    return f"{est.done:,}/{est.total:,} files  {rate} files/s  {left} left"


def _rate(per_s: float) -> str:
    return f"{per_s:,.0f}" if per_s >= 100 else f"{per_s:.1f}" if per_s >= 1 else f"{per_s:.2f}"


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _stats_column(rates: Rates) -> ProgressColumn:
    """A rich column drawing :func:`progress_text` of ``rates`` at each refresh."""
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class Stats(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(progress_text(rates.estimate(time.time())))

    return Stats()


def record_line(r: Record) -> str:
    """One log line for a record: status/reason, path, how."""
    verdict = r.status if not r.reason else f"{r.status}/{r.reason}"
    how = r.extractor or r.mime
    tail = (
        f" ({how}, {count(r.chars, 'char')})"
        if r.status == Status.OK
        else f" ({r.error or r.mime})"
    )
    if r.quality is not None and r.quality.verdict != "good":
        tail += f" [{summary_line(r.quality)}]"
    return f"{verdict:<24} {shown(r.path)}{shown(tail)}"


def describe(event: Event) -> str:
    """A log line for a non-record event."""
    stamp = time.strftime("%H:%M:%S", time.localtime(event.at))
    if isinstance(event, Notice | StoreHealth):
        return f"{stamp} {event.level}: {shown(event.message)}"
    if isinstance(event, ToolsChanged):
        parts = []
        if event.appeared:
            parts.append("found " + ", ".join(event.appeared))
        if event.vanished:
            parts.append("lost " + ", ".join(event.vanished))
        return f"{stamp} tools: " + "; ".join(parts)
    return f"{stamp} {type(event).__name__}"


def quality_counts(counts: dict[str, int]) -> str:
    """``good 533, suspect 34, garbled 5``: the ok texts by quality verdict."""
    return ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICTS)


def swept_line(summary: Summary, extracted: int) -> str:
    """``swept 818 files in 6.1 s: ok 595, empty 75, ...; read 35, reused 782``: a full
    sweep's table in one line, for a log."""
    counts = ", ".join(f"{s.value} {summary.counts.get(s.value, 0):,}" for s in Status)
    decided = how_decided(summary.files, extracted, summary.reused, summary.others)
    line = f"swept {count(summary.files, 'file')} in {summary.seconds:.1f} s: {counts}; {decided}"
    return f"{line}; {others}" if (others := others_line(summary.others)) else line


def summary_table(summary: Summary, extracted: int) -> RenderableType:
    """The table printed after a sweep, and below it what the default exclusions left out
    (a line of its own: a caption would be folded to the table's width)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"quarry: {count(summary.files, 'file')} in {summary.seconds:.1f} s",
        title_justify="left",
    )
    table.add_column("status")
    table.add_column("files", justify="right")
    table.add_column("reasons")
    for status in Status:
        n = summary.counts.get(status.value, 0)
        reasons = ", ".join(
            f"{k.split('/', 1)[1]} {v}"
            for k, v in summary.reasons.items()
            if k.startswith(status.value + "/")
        )
        if status is Status.OK and any(summary.quality.values()):
            reasons = quality_counts(summary.quality)
        table.add_row(f"[{STATUS_STYLE[status.value]}]{status.value}[/]", str(n), reasons)
    decided = how_decided(summary.files, extracted, summary.reused, summary.others)
    table.caption = f"{decided}, {count(summary.chars, 'character')}" + (
        f"; missing tools: {', '.join(summary.tools_missing)}" if summary.tools_missing else ""
    )
    notes = [
        line
        for line in (
            left_out_line(summary.left_out),
            others_line(summary.others),
            read_without_line(summary.read_without, summary.tools_found),
        )
        if line
    ]
    return Group(table, *map(Text, notes)) if notes else table


def how_decided(
    files: int, extracted: int, reused: int, others: Mapping[str, int] | None = None
) -> str:
    """``read 3, reused 800, 14 not read (empty, skipped)``: parts that add up to ``files``
    (a record neither read nor reused is an empty file, a link, a file over the cap...), but
    for the records of ``others``, folders the sweep did not walk (:func:`others_line`)."""
    rest = files - extracted - reused - sum((others or {}).values())
    tail = f", {rest:,} not read (empty, skipped)" if rest > 0 else ""
    return f"read {extracted:,}, reused {reused:,}{tail}"


def others_line(others: Mapping[str, int], most: int = 3) -> str:
    """``the store also holds 3 records of /srv/a, not swept now``, of the folders the
    store holds beside those swept (``--out`` shared by sweeps of other folders); "" when
    it holds none. The first ``most`` are named."""
    if not others:
        return ""
    named = [f"{shown(root)} ({n:,})" for root, n in list(others.items())[:most]]
    more = f" and {len(others) - most:,} more" if len(others) > most else ""
    total = count(sum(others.values()), "record")
    if len(others) == 1:
        (root,) = others
        return f"the store also holds {total} of {shown(root)}, not swept now"
    return f"the store also holds {total} of folders not swept now: {', '.join(named)}{more}"


def left_out_line(left_out: dict[str, int]) -> str:
    """``left out by default: 3 files (*.tmp 2, .DS_Store 1), 1 folder (.git/); ...``, or
    "" when the default exclusions left nothing out."""
    files = {k: v for k, v in left_out.items() if not k.endswith("/")}
    folders = {k: v for k, v in left_out.items() if k.endswith("/")}
    parts = []
    for what, counts in (("file", files), ("folder", folders)):
        n = sum(counts.values())
        if n:
            each = ", ".join(f"{shown(k)} {v}" for k, v in counts.items())
            parts.append(f"{n:,} {what}{'' if n == 1 else 's'} ({each})")
    if not parts:
        return ""
    return f"left out by default: {', '.join(parts)}; --no-default-excludes keeps them"


def read_without_line(read_without: Mapping[str, int], found: Collection[str]) -> str:
    """``12 files read without pdftotext, 3 without tesseract, found now: the next sweep of
    their folder reads them again``, of the tools of ``found`` (empty when every record was
    read with those)."""
    read_without = {tool: n for tool, n in read_without.items() if tool in found}
    if not read_without:
        return ""
    (name, n), *rest = read_without.items()
    parts = [f"{n:,} {'file' if n == 1 else 'files'} read without {name}"]
    parts += [f"{k:,} without {tool}" for tool, k in rest]
    return f"{', '.join(parts)}, found now: the next sweep of their folder reads them again"
