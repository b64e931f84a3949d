"""The records screen's small panels: live header, summary bar, detail pane."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import ProgressBar, Static, Tab, Tabs

from engine.names import shown
from engine.quality import Quality
from engine.records import STATUSES, Record, read_with_words
from engine.tools import KNOWN_TOOLS
from tui.widgets.record_table import fit_path, human_size, start_cells
from tui.words import escape

STATUS_COLOURS = {
    "ok": "$text-success",
    "empty": "$text-warning",
    "unsupported": "$text-primary",
    "error": "$text-error",
    "skipped": "$text-muted",
}
"""Theme colour of each status (the table uses the same through its component classes)."""


def clock(at: float | None) -> str:
    """Local wall-clock time of ``at``, or a dash."""
    return "-" if at is None else time.strftime("%H:%M:%S", time.localtime(at))


def short_number(n: int) -> str:
    """``12,345`` up to a million, then ``1.2M``."""
    return f"{n:,}" if n < 1_000_000 else f"{n / 1e6:.1f}M"


BAR_FROM = 100
"""The header shows a sweep's progress bar from this many columns (its numbers are in the
state's words: narrower, the folder has its room)."""


class FolderLabel(Widget):
    """The header's folder, fitted to the room it is given: while a sweep runs, its state
    and progress take most of 80 columns, and the path cut at its end showed "/" alone;
    fitted, its last folder stays (:func:`fit_folder`)."""

    DEFAULT_CSS = "FolderLabel { height: 1; }"

    folder: reactive[str] = reactive("")
    """The folder shown, as given (unfitted): a new one is drawn at once."""

    def render(self) -> Content:
        """The folder in the width the header leaves it (nothing in less than 2 columns)."""
        return Content(fit_folder(self.folder, self.content_size.width))


def fit_folder(folder: str, width: int) -> str:
    """``folder`` in ``width`` cells: whole, or its last part whole after as much of the
    start as fits (``/home/…/fixtures``, ``…/fixtures``), or that part's start (``fixt…``:
    more recognisable than its end), or nothing in less than 2."""
    if cell_len(folder) <= width:
        return folder
    head, _, name = folder.rstrip("/").rpartition("/")
    name = name or folder
    room = width - cell_len(name) - 2
    if head and room >= 0:
        return start_cells(head, room) + "…/" + name
    return start_cells(name, width - 1) + "…" if width > 1 else ""


class LiveHeader(Horizontal):
    """Folder, live state (with a progress bar during a sweep or a load), last event time."""

    DEFAULT_CSS = """
    LiveHeader { height: 1; background: $panel; }
    LiveHeader > #title { width: auto; text-style: bold; padding: 0 1; }
    LiveHeader > #folder { width: 1fr; color: $text-muted; }
    LiveHeader > #state { width: auto; padding: 0 1; }
    LiveHeader > ProgressBar { width: 12; display: none; }
    LiveHeader > ProgressBar.-busy { display: block; }
    LiveHeader > #last { width: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._busy = False
        """Whether a sweep or a load is in progress (its bar shown where there is room)."""

    def compose(self) -> ComposeResult:
        """Title, folder, state, progress, last event."""
        yield Static("textquarry", id="title")
        yield FolderLabel(id="folder")
        yield Static("", id="state")
        # the numbers are the state's words (done/total, %, rate, time left): a bar of 36
        # cells cut its own percentage at 80 columns ("3 last event")
        yield ProgressBar(show_eta=False, show_percentage=False, id="progress")
        yield Static("", id="last")

    def show(
        self,
        folder: str,
        state: str,
        progress: tuple[int, int] | None,
        last_event: float | None,
    ) -> None:
        """Update every part (nothing while the header's parts are not there: an engine
        event that comes while the app is closing must not end it with an error)."""
        try:
            folder_part = self.query_one(FolderLabel)
            state_part, last_part = [
                self.query_one(f"#{name}", Static) for name in ("state", "last")
            ]
            bar = self.query_one(ProgressBar)
        except NoMatches:
            return
        folder_part.folder = shown(folder)
        _, read_only, live = state.rpartition("read-only · ")
        colour = {
            "watching": "$success",
            "paused": "$warning",
            "failed": "$error",
            "folder": "$warning",
        }.get(live.split(" ")[0], "$accent")
        mark = "[b $warning]READ-ONLY[/] " if read_only else ""
        state_part.update(f"{mark}[{colour}]●[/] {escape(live)}")
        self._busy = progress is not None
        self._place_bar()
        if progress is not None:
            bar.update(total=max(progress[1], 1), progress=progress[0])
        # while a sweep runs, events come all the time: its room goes to the rate and time
        last_part.display = progress is None or live.split(" ")[0] == "loading"
        last_part.update(f"last event {clock(last_event)}")

    def on_resize(self) -> None:
        """The bar comes and goes with the room (:meth:`_place_bar`)."""
        self._place_bar()

    def _place_bar(self) -> None:
        # the state's words carry the same (done/total and %): under BAR_FROM columns the
        # bar's room goes to the folder, which the state's words otherwise leave none of
        room = self.size.width >= BAR_FROM or not self.size.width
        bar = next(iter(self.query(ProgressBar)), None)
        if bar is not None:
            bar.set_class(self._busy and room, "-busy")


class CountTabs(Tabs):
    """The status tabs, whose labels carry counts: a count that changes moves the underline
    at once.

    Textual animates the underline for 0.3 s whenever a tab is relabelled. Counts change
    twice a second while a store loads and with every batch of a sweep, so the screen was
    redrawn at animation speed for most of a load, on the UI thread the loader's chunks need.
    Choosing another tab still animates it.

    Reached with Tab from the table, the tabs show that they have the keys (the active tab in
    the cursor's colours: Textual's focus mark was a shade of the underline no one saw), take
    ``h``/``l`` as the arrows, and give the keys back to the table with ``j``, ``down`` or
    ``enter`` (both did nothing here).
    """

    DEFAULT_CSS = """
    CountTabs:focus Tab.-active {
        background: $block-cursor-background; color: $block-cursor-foreground;
        text-style: bold;
    }
    """
    BINDINGS = [
        Binding("h", "previous_tab", "Previous tab", show=False),
        Binding("l", "next_tab", "Next tab", show=False),
        Binding("down,j,enter", "to_table", "To the table", show=False),
    ]

    def action_to_table(self) -> None:
        """Give the keys back to the table below (the focus chain's next widget)."""
        self.screen.focus_next()

    def _on_tab_relabelled(self, event: Tab.Relabelled) -> None:
        event.stop()
        self._highlight_active(animate=False)


class SummaryBar(Static):
    """Count per status in its colour, then totals: those that fit whole (at 80 columns a
    folder of thousands of files left a bare "files" at the edge, its count cut off)."""

    DEFAULT_CSS = """
    SummaryBar { height: 1; padding: 0 1; }
    """

    _shown: tuple[str, list[str]] | None = None
    """The markup before the totals, and each total's: fitted again at each resize."""

    def show(
        self,
        counts: dict[str, int],
        files: int,
        reused: int | None,
        chars: int | None,
        problem: str = "",
    ) -> None:
        """Update the counts and totals, and what is wrong with the store (if anything);
        ``reused`` and ``chars`` None: not known yet (the records are still loading)."""
        parts = [f"[{STATUS_COLOURS[s]}]● {s} {counts.get(s, 0):,}   [/]" for s in STATUSES]
        used = "…" if reused is None else f"{reused:,}"
        text = "…" if chars is None else short_number(chars)
        totals = [f"files [b]{files:,} [/b]", f"· reused [b]{used} [/b]", f"· chars [b]{text}[/b]"]
        # first: at 80 columns the end of the line is cut, and the counts are on the tabs too
        trouble = f"[$text-error]⚠ {escape(problem)}   [/]" if problem else ""
        # each run of spaces ends a styled run, never starts one: an SVG export drawn
        # by librsvg drops the spaces that start a run ("skipped 2files")
        self._shown = (trouble + "".join(parts), totals)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Show the counts and as many totals as fit whole after them (all of them before
        the bar has a width)."""
        if self._shown is None:
            return
        head, totals = self._shown
        room = self.content_size.width
        used = Content.from_markup(head).cell_length
        markup = head
        for piece in totals:
            total = Content.from_markup(piece)
            if room and used + total.rstrip().cell_length > room:  # (its last space may go)
                break
            markup += piece
            used += total.cell_length
        self.update(markup)


def _iso(ns: int) -> str:
    if not ns:
        return "-"  # not recorded (the extract stage writes no mtime)
    try:
        return datetime.fromtimestamp(ns / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return f"{ns} ns (out of range)"


QUALITY_COLOURS = {"good": "$success", "suspect": "$warning", "garbled": "$error"}


def quality_lines(q: Quality) -> list[str]:
    """The quality verdict, why in words, and the numbers, as detail-pane markup."""
    colour = QUALITY_COLOURS.get(q.verdict, "$text")
    lines = [f"[b]quality [/b][{colour}][b]{escape(q.verdict)}[/b][/]"]
    lines += [f"  {escape(reason)}" for reason in q.explain()]
    facts = [f"language {q.lang}" if q.lang else "", q.script or ""]
    if q.common is not None:
        facts.append(f"{q.common * 100:.0f}% common words")
    facts.append(f"rules v{q.v}")
    lines.append(f"  [dim]{escape(' · '.join(f for f in facts if f))}[/dim]")
    return lines


PATH_SHOWN = 320
"""Characters of a path (and of its root) the detail pane shows: a Windows share's longest
whole (260), a received tree thousands of folders deep cut in its folders (``a/b…/name``),
so that its verdict is not a hundred lines below (the whole path: ``quarry show``)."""


def describe(record: Record, tools_missing: set[str]) -> str:
    """Every field of ``record`` as markup for the detail pane."""
    colour = STATUS_COLOURS.get(record.status, "$text")
    verdict = record.status + (f" / {record.reason}" if record.reason else "")
    lines = [
        f"[b]{escape(fit_path(shown(record.path), PATH_SHOWN))}[/b]",
        f"[dim]in {escape(fit_path(shown(record.root), PATH_SHOWN))}[/dim]",
        "",
        f"[{colour}][b]{escape(verdict)}[/b][/]",
    ]
    if record.error:
        lines += ["", "[b]verdict[/b]", escape(shown(record.error))]
    if record.quality is not None:
        lines += ["", *quality_lines(record.quality)]
    if record.needs:
        lines += ["", "[b]needs one of[/b]"]
        for tool in record.needs:
            state = "[$error]missing[/]" if tool in tools_missing else "[$success]found[/]"
            spec = KNOWN_TOOLS.get(tool)
            hint = f"\n    [dim]{escape(spec.install.get('debian', ''))}[/dim]" if spec else ""
            lines.append(f"  {escape(tool)} ({state}){hint}")
    if record.members:
        lines += ["", *describe_members(record)]
    fields = [
        ("why", record.why or "-"),
        ("reused", "yes" if record.reused else "no"),
        ("MIME", record.mime or "-"),
        ("extractor", record.extractor or "-"),
        ("reader", f"{record.reader} v{record.v}" if record.reader else "-"),
        ("chars", f"{record.chars:,}"),
        ("pages", "-" if record.pages is None else str(record.pages)),
        ("size", f"{record.size:,} B ({human_size(record.size)})"),
        ("modified", _iso(record.mtime_ns)),
        ("read in", f"{record.ms} ms"),
        ("crashes", str(record.crashes)),
        ("sha256", record.sha256 or "-"),
        ("tool set", record.tools or "-"),
    ]
    if record.read_with is not None:  # the tools its reader uses, as its read had them
        fields.append(("read with", read_with_words(record.read_with)))
    lines.append("")
    lines += [f"[b]{name:<10}[/b]{escape(shown(str(value)))}" for name, value in fields]
    return "\n".join(lines)


MEMBERS_SHOWN = 60
"""Member verdicts listed in the pane; the rest are counted."""


def describe_members(record: Record) -> list[str]:
    """The verdict on each document inside a container record (archive, mail...), as markup.

    Members that were not read come first, each with its reason and error, so the one that
    failed is seen at once; ``r`` on the container reads it again, members included.
    """
    members = sorted(record.members, key=lambda m: m.status == "ok")
    bad = sum(1 for m in members if m.status not in ("ok", "empty"))
    lines = [
        f"[b]members [/b]{len(record.members)}" + (f", [$error]{bad} not read[/]" if bad else "")
    ]
    for m in members[:MEMBERS_SHOWN]:
        colour = STATUS_COLOURS.get(m.status, "$text")
        verdict = m.status + (f"/{m.reason}" if m.reason else "")
        lines.append(f"  [{colour}]{escape(verdict)}[/] {escape(m.path)}")
        if m.error and m.status != "ok":
            lines.append(f"    [dim]{escape(m.error)}[/dim]")
    if len(members) > MEMBERS_SHOWN:
        lines.append(f"  [dim]and {len(members) - MEMBERS_SHOWN} more[/dim]")
    return lines


def resized_without_layout(
    widget: Widget, size: Size, virtual: Size, container: Size, layout: bool = True
) -> bool:
    """Textual's ``_size_updated`` for a widget whose content does not depend on its height,
    without the second layout pass Textual asks for when its virtual size changed.

    The records table's box and the detail pane change height when the filter box shows or
    hides (``/``, ``escape``); Textual, having laid them out and drawn them at their new
    height, laid the screen out again for the new virtual size and repainted the table's
    whole area: a second frame of ~20 KB at 160x50 behind each key (issue 25). The scroll
    bars are updated all the same."""
    return Widget._size_updated(widget, size, virtual, container, layout=False)


class Body(Horizontal):
    """The records table beside the detail pane (laid out once when its height changes)."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return resized_without_layout(self, size, virtual_size, container_size, layout)


class DetailPane(VerticalScroll):
    """Everything known about the highlighted record."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        return resized_without_layout(self, size, virtual_size, container_size, layout)

    DEFAULT_CSS = """
    DetailPane { width: 42; border-left: vkey $panel; padding: 0 1; }
    DetailPane > Static { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        """One static body."""
        yield Static("", id="detail-body")

    def show(
        self, record: Record | None, tools_missing: set[str], preview: list[str] | None = None
    ) -> None:
        """Show ``record`` and the first lines of its text (or say there is nothing to show)."""
        body = self.query_one("#detail-body", Static)
        markup = "[dim]no record[/dim]" if record is None else describe(record, tools_missing)
        if preview:
            markup += "\n\n[b]text[/b]\n" + "\n".join(f"[dim]{escape(p)}[/dim]" for p in preview)
        # A layout pass re-renders the whole screen (~25 ms at 160x50); moving the cursor
        # between records whose details take the same height needs only a repaint.
        height = _wrapped_height(markup, max(body.size.width, 1))
        body.update(markup, layout=height != self._height)
        self._height = height

    _height = -1


def _wrapped_height(markup: str, width: int) -> int:
    """Lines ``markup`` takes in the pane, wrapped the way the pane wraps it."""
    return len(Content.from_markup(markup).wrap(width))
