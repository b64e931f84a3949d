"""The compare screen: two stores' differences, grouped, then a group's files, then a file.

Built with the two stores (``CompareScreen(before, after)``) and pushed: the comparison
(:class:`engine.diff.Comparison`) runs in a thread worker, then the groups are listed (got
worse, got better, text changed, verdict changed, new, gone), largest first, each with its
count and an example. Enter drills into a group's files, enter on a file shows its two texts
(:mod:`engine.difftext`: unified at 80 columns, side by side from :data:`SIDE_BY_SIDE`
columns on; ``s`` switches), changed lines highlighted, ``n``/``N`` from change to change.
Escape goes back a level to the same row; from the groups it leaves the screen. Given the
dashboard (:class:`tui.screens.ports.Dashboard`), ``o`` opens a file's source with the
system's opener and ``e`` its text (after, else before) in ``$EDITOR``/``$PAGER``, as the
records screen does.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from engine.comparison import Comparison, since
from engine.diff import GROUP_TITLES, DiffSummary, FileChange, Group
from engine.difftext import DiffLine, PairLine, side_by_side, texts_of, unified
from engine.diffview import what_changed
from engine.errors import QuarryError
from engine.names import shown
from engine.records import Key
from engine.store import Store
from tui import actions
from tui.screens.ports import Dashboard
from tui.widgets.diff_view import DiffView
from tui.widgets.footer import FittingFooter
from tui.words import count, escape

SIDE_BY_SIDE = 160
"""From this width on a file's texts are shown side by side."""

Groups = dict[Group, list[FileChange]]


def ordered(groups: Groups) -> list[Group]:
    """The groups that hold files, largest first (ties in the groups' own order)."""
    order = list(Group)
    return sorted((g for g in Group if groups[g]), key=lambda g: (-len(groups[g]), order.index(g)))


def place(path: Path) -> str:
    """``path`` as the title names it: relative to the current folder when it is under it
    (``A``, ``old/.quarry``), else whole."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def compare(
    before: Store, after: Store, when: float | None = None
) -> tuple[Groups, DiffSummary, list[str], Store, tuple[str, str] | None]:
    """Every change of ``after`` against ``before`` by group, the summary, the warnings,
    the store the texts before are read from and the two folders files pair by the path in
    (:attr:`engine.comparison.Comparison.pair`); ``when``: ``after`` against itself as it was
    then (its history: the texts replaced since are read from where they were kept)."""
    warned: list[str] = []
    with contextlib.ExitStack() as stack:
        if when is None:
            comparison = Comparison(before, after, warned.append)
        else:
            comparison = stack.enter_context(since(after, when, warned.append))
        groups: Groups = {g: [] for g in Group}
        for change in comparison.changes():
            groups[change.group].append(change)
        return groups, comparison.summary(), warned, comparison.a, comparison.pair


GROUP_COLUMNS = ("changes", "files", "for example")
FILE_COLUMNS = ("file", "what changed")


Rows = Sequence[tuple[str, Sequence[str]]]
"""(key, cells) of a table's rows."""


def _fill(table: DataTable[str], labels: tuple[str, ...], rows: Rows) -> None:
    """Put ``rows`` (key, cells) in ``table`` under columns as wide as their widest cell.

    The widths are given, not left to the table to work out as rows come: under load a
    table filled while hidden kept its columns as wide as their labels ("text ch") at 160
    columns, seen in a real terminal."""
    table.clear(columns=True)
    for i, label in enumerate(labels):
        width = max([cell_len(label), *(cell_len(cells[i]) for _key, cells in rows)])
        table.add_column(label, width=width)
    for key, cells in rows:
        table.add_row(*cells, key=key)


class CompareScreen(Screen[None]):
    """Two stores compared: groups, a group's files, a file's two texts."""

    CSS_PATH = "compare.tcss"
    BINDINGS = [
        Binding("escape,q", "back", "Back"),
        Binding("n", "change(1)", "Next change"),
        Binding("N", "change(-1)", "Previous change"),
        Binding("s", "side_by_side", "Side by side"),
        Binding("o", "open_source", "Open file"),
        Binding("e", "edit_text", "Open text"),
        Binding("enter", "inspect", "Inspect", show=False),
        Binding("i", "inspect", "Inspect"),
        Binding("r", "retry_one", "Retry"),
        Binding("R", "retry_many", "Retry all"),
    ]

    def __init__(
        self,
        before: Store,
        after: Store,
        dash: Dashboard | None = None,
        *,
        since: float | None = None,
    ) -> None:
        super().__init__()
        self.before, self.after = before, after
        self.since = since
        """A time: ``after`` is compared with itself as it was then (its history)."""
        self.texts_before = before
        """Where the texts before are read (with ``since``: the store as it was)."""
        self.dash = dash
        """The dashboard around the screen (None: no file is opened from here)."""
        self.groups: Groups = {g: [] for g in Group}
        self.summary: DiffSummary | None = None
        self.group: Group | None = None
        """The group whose files are listed (None: the groups are)."""
        self.change: FileChange | None = None
        """The file whose texts are shown (None: not at that level)."""
        self.failed: str | None = None
        self.retrying: frozenset[Key] = frozenset()
        """The files of the retry asked for here (its end shows what each is now)."""

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="compare-title")
        yield Static("comparing...", id="compare-status")
        yield DataTable(id="compare-groups", cursor_type="row")
        yield DataTable(id="compare-files", cursor_type="row")
        yield DiffView(id="compare-diff")
        yield FittingFooter()

    def _title(self) -> str:
        a, b = escape(shown(place(self.before.out))), escape(shown(place(self.after.out)))
        if self.since is not None:
            return f"[b]compare  [/b]{b}  as at {self._then()}  ->  now"
        return f"[b]compare  [/b]{a}  ->  {b}"

    def _then(self) -> str:
        """What the texts before are: the time compared with, else the first store."""
        if self.since is not None:
            return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return shown(place(self.before.out))

    def on_mount(self) -> None:
        groups = self.query_one("#compare-groups", DataTable)
        files = self.query_one("#compare-files", DataTable)
        _fill(groups, GROUP_COLUMNS, [])
        _fill(files, FILE_COLUMNS, [])
        self._level()
        self._compare()

    # -- the comparison -------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="compare")
    def _compare(self) -> None:
        try:
            groups, summary, warned, then, pair = compare(self.before, self.after, self.since)
        except (QuarryError, OSError) as exc:
            self.app.call_from_thread(self._compare_failed, str(exc))
            return
        self.texts_before, self.pair = then, pair
        self.app.call_from_thread(self._compared, groups, summary, warned)

    def _compare_failed(self, why: str) -> None:
        self.failed = why
        self._status(f"[$error]cannot compare: {escape(shown(why))}[/]")

    def _compared(self, groups: Groups, summary: DiffSummary, warned: list[str]) -> None:
        self.groups, self.summary = groups, summary
        table = self.query_one("#compare-groups", DataTable)
        rows = []
        for group in ordered(groups):
            first = groups[group][0]
            example = f"{shown(first.path)}: {what_changed(first)}"
            rows.append((group.value, (GROUP_TITLES[group], f"{len(groups[group]):,}", example)))
        _fill(table, GROUP_COLUMNS, rows)
        self._level()  # (no group: no table; R comes with the groups)
        self._status(self._counts())
        for message in warned:
            self.notify(shown(message), severity="warning")
        self.set_focus(table)

    def _counts(self) -> str:
        s = self.summary
        if s is None:
            return ""
        verdict = "[$error]something got worse[/]" if s.worse else "nothing got worse"
        changed = sum(s.groups.values())
        if not changed:
            since = "since" if self.since is not None else "from"
            then = escape(self._then())
            return f"nothing changed {since} {then}: {count(s.files_after, 'file')} as they were"
        paired = " · files paired by path (each store holds one folder)" if self.pair else ""
        return (
            f"{s.files_before:,} files before, {s.files_after:,} after: {changed:,} changed, "
            f"{s.unchanged:,} unchanged; {verdict}{paired}"
        )

    def _status(self, markup: str) -> None:
        self.query_one("#compare-status", Static).update(markup)

    # -- levels ---------------------------------------------------------------------------

    def _level(self) -> None:
        """Show the table or view of the level we are at."""
        at_files = self.group is not None and self.change is None
        any_group = self.summary is not None and any(self.summary.groups.values())
        self.query_one("#compare-groups").display = self.group is None and any_group
        self.query_one("#compare-files").display = at_files
        self.query_one("#compare-diff").display = self.change is not None
        self.refresh_bindings()  # n, N, s, o and e come and go with the level

    @on(DataTable.RowSelected, "#compare-groups")
    def _into_group(self, event: DataTable.RowSelected) -> None:
        self.group = Group(str(event.row_key.value))
        files = self.query_one("#compare-files", DataTable)
        rows = [
            (str(n), (shown(change.path), what_changed(change)))
            for n, change in enumerate(self.groups[self.group])
        ]
        _fill(files, FILE_COLUMNS, rows)
        total = self.summary.groups[self.group] if self.summary else 0
        self._status(f"[b]{GROUP_TITLES[self.group]}[/b]: {count(total, 'file')}")
        self._level()
        self.set_focus(files)

    @on(DataTable.RowSelected, "#compare-files")
    def _into_file(self, event: DataTable.RowSelected) -> None:
        if self.group is None:
            return
        self.change = self.groups[self.group][int(str(event.row_key.value))]
        self._status(f"[b]{escape(shown(self.change.path))}[/b]: loading its texts...")
        self._level()
        self._load_texts(self.change)

    @work(thread=True, exclusive=True, group="texts")
    def _load_texts(self, change: FileChange) -> None:
        a, b = texts_of(self.texts_before, self.after, change)
        rows, pairs = unified(a, b), side_by_side(a, b)
        self.app.call_from_thread(self._show_texts, change, rows, pairs, a is None, b is None)

    def _show_texts(
        self,
        change: FileChange,
        rows: list[DiffLine],
        pairs: list[PairLine],
        no_a: bool,
        no_b: bool,
    ) -> None:
        if change is not self.change:
            return  # the user went back meanwhile
        view = self.query_one(DiffView)
        view.show(rows, pairs, self.size.width >= SIDE_BY_SIDE)
        said = what_changed(change)
        missing = [w for w, gone in (("no text before", no_a), ("no text after", no_b)) if gone]
        extra = f" ({', '.join(missing)})" if missing else ""
        self._status(f"[b]{escape(shown(change.path))}[/b]: {escape(said)}{extra}")
        self.set_focus(view)
        view.go_change(1)

    # -- keys -----------------------------------------------------------------------------

    def action_back(self) -> None:
        """Up a level, to the row we came from; from the groups, leave the screen."""
        if self.change is not None:
            self.change = None
            self._level()
            self.set_focus(self.query_one("#compare-files", DataTable))
            group = self.group
            total = self.summary.groups[group] if self.summary and group else 0
            self._status(f"[b]{GROUP_TITLES[group]}[/b]: {count(total, 'file')}" if group else "")
        elif self.group is not None:
            self.group = None
            self._level()
            self.set_focus(self.query_one("#compare-groups", DataTable))
            self._status(self._counts())
        else:
            self.dismiss()

    def action_change(self, step: int) -> None:
        """Go to the next or previous change of the file's texts."""
        if self.change is not None:
            self.query_one(DiffView).go_change(step)

    def action_side_by_side(self) -> None:
        """Switch between the unified view and the two columns."""
        if self.change is not None:
            view = self.query_one(DiffView)
            view.set_side_by_side(not view.side_by_side)
            view.go_change(1)

    def _file(self) -> FileChange | None:
        """The file shown, else the one highlighted in a group's files (None: neither)."""
        if self.change is not None or self.group is None:
            return self.change
        row = self.query_one("#compare-files", DataTable).cursor_row
        files = self.groups[self.group]
        return files[row] if 0 <= row < len(files) else None

    def action_open_source(self) -> None:
        """Open the file's source with the system's opener."""
        change = self._file()
        if change is None or self.dash is None:
            return
        path = self.dash.source_path((change.root, change.path))
        if not path.exists():
            self.notify(f"{shown(str(path))} is no longer on disk", severity="warning")
            return
        self._hand_over(actions.opener_command(path), "cannot open files here")

    def action_edit_text(self) -> None:
        """Open the file's text (after, else before) in $EDITOR / $PAGER, a private copy."""
        change = self._file()
        if change is None or self.dash is None:
            return
        try:
            a, b = texts_of(self.texts_before, self.after, change)
            text = b if b is not None else a
            if text is None:
                self.notify(f"{shown(change.path)}: no text stored", severity="warning")
                return
            copy = actions.private_copy(text.encode("utf-8", "replace"), change.path)
        except OSError as exc:
            self.notify(f"cannot copy the text: {exc}", severity="error")
            return
        self._hand_over(actions.viewer_command(copy), "cannot open the text")

    def action_inspect(self) -> None:
        """Open the file's text as it is now in the inspector (its record in full when it
        has none), as enter does on the records."""
        change = self._file()
        if change is not None and self.dash is not None:
            self.dash.open_key((change.root, change.path))

    def action_retry_one(self) -> None:
        """Read the file again (the one shown, else the one highlighted)."""
        change = self._file()
        if change is not None:
            self._retry([change], shown(change.path))

    def action_retry_many(self) -> None:
        """Read every file of the group again (the one listed, else the one highlighted);
        once done, the files retried are compared as they were with what they are now."""
        group = self.group
        if group is None:
            row = self.query_one("#compare-groups", DataTable).cursor_row
            present = ordered(self.groups)
            group = present[row] if 0 <= row < len(present) else None
        if group is not None:
            self._retry(self.groups[group], f"the {GROUP_TITLES[group]} group")

    def _retry(self, changes: Sequence[FileChange], label: str) -> None:
        if self.dash is None:
            return
        keys = [(c.root, c.path) for c in changes if c.after is not None]  # (gone: no file)
        if not keys:
            self.notify("nothing to retry: the files are gone", severity="warning")
            return
        self.retrying = frozenset(keys)
        self.dash.retry(keys, label)

    def retried(self, keys: Sequence[Key], began: float) -> None:
        """A retry ended (the dashboard says so): when it was this screen's, the files are
        shown as they were when it began and as they are now."""
        if not self.retrying or not self.retrying.intersection(keys):
            return
        self.retrying = frozenset()
        self.app.push_screen(CompareScreen(self.after, self.after, self.dash, since=began))

    def _hand_over(self, command: list[str], cannot: str) -> None:
        assert self.dash is not None
        status = self.dash.run_outside(command)
        if status == 127:
            self.notify(f"{cannot}: {command[0]} is not installed", severity="error")
        elif status:
            self.notify(f"{command[0]} exited with status {status}", severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``n``, ``N`` and ``s`` only where a file's texts are shown; ``o`` and ``e`` where
        a file is, within a dashboard."""
        if action in ("change", "side_by_side"):
            return self.change is not None
        if action in ("open_source", "edit_text", "inspect", "retry_one"):
            return self.dash is not None and self.group is not None
        if action == "retry_many":
            return self.dash is not None and any(self.groups.values())
        return True


__all__ = ["SIDE_BY_SIDE", "CompareScreen", "compare", "ordered", "place"]
