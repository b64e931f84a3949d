"""What the errors and unsupported screens share: groups of records above, the highlighted
group's example and files below.

Enter drills from a group into its files; enter on a file opens the record (its text, or the
record in full) and escape comes back to the same place; escape from the files goes back to
the groups. ``R`` retries the highlighted group, ``r`` the highlighted file. The groups table
shows every column from :data:`WIDE` columns on; narrower, the columns the line below the
table repeats (MIME types, the example) are left out, so nothing is cut at 80 columns.
"""

from __future__ import annotations

from functools import partial
from typing import Generic, Protocol, TypeVar

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import DescendantFocus, Resize
from textual.widgets import DataTable

from engine.names import shown
from engine.records import Key, Record
from engine.tallies import Kind, Tally
from tui.model import RecordModel
from tui.paged import PagedModel
from tui.screens.ports import Dashboard
from tui.screens.triage_base import TriageScreen
from tui.state import TriageState
from tui.triage import FILES_READ, GroupKey
from tui.widgets.footer import FittingFooter
from tui.widgets.line import Line
from tui.widgets.marked_table import RETRYING
from tui.widgets.record_table import cut, fit_path
from tui.widgets.row_table import RowTable
from tui.words import count

WIDE = 120
"""From this width on the groups table shows every column."""


class Group(Protocol):
    """A group of records, as the screen needs it."""

    @property
    def keys(self) -> list[Key]:
        """(root, path) of every record in the group."""
        ...

    @property
    def count(self) -> int:
        """Records in the group."""
        ...

    @property
    def ident(self) -> GroupKey:
        """What makes the group itself (stable across refreshes)."""
        ...

    @property
    def tallied(self) -> tuple[Kind, list[Tally]] | None:
        """A paged store's group: what it was counted from (its files read when shown)."""
        ...


G = TypeVar("G", bound=Group)

Column = tuple[str, float]
"""A column's title and its share of the width left after the natural-width columns (0:
as wide as its cells)."""
FILE_SHARES: list[Column] = [("path", 0.5), ("MIME", 0.25), ("verdict", 0.25)]
"""The group's files: a column whose cells fit its share is as wide as they are, and gives
the rest to the others (a group of short paths shows their verdicts whole)."""


def fit_title(parts: list[str], width: int) -> str:
    """Markup ``parts`` joined by `` · ``, leaving out from the end what does not fit."""
    title = parts[0]
    for part in parts[1:]:
        longer = f"{title} · {part}"
        if Text.from_markup(longer).cell_len > width:
            break
        title = longer
    return title


def widths(columns: list[Column], rows: list[list[str]], total: int) -> list[int]:
    """Each column's width: natural ones as wide as their cells; the others share what is
    left of ``total`` (less the cells' padding and a scroll bar) by their shares, a column
    that needs less than its share giving the rest to the others; at least 8 each."""
    natural = [
        max([cell_len(title), *(cell_len(row[i]) for row in rows)])
        for i, (title, _s) in enumerate(columns)
    ]
    out = [n if share == 0 else 0 for n, (_t, share) in zip(natural, columns, strict=True)]
    free = total - sum(out) - 2 * len(columns) - 2
    open_ = [i for i, (_t, share) in enumerate(columns) if share > 0]
    while open_:  # those that fit their share take what they need; the rest share anew
        shares = sum(columns[i][1] for i in open_)
        fits = [i for i in open_ if natural[i] <= free * columns[i][1] / shares]
        if not fits:
            for i in open_:
                out[i] = max(8, int(free * columns[i][1] / shares))
            break
        for i in fits:
            out[i] = natural[i]
            free -= natural[i]
        open_ = [i for i in open_ if i not in fits]
    return out


def set_columns(table: DataTable[object], titles: tuple[str, ...]) -> None:
    """Empty ``table``, and give it ``titles`` as its columns when it has others. (Rebuilding
    the same columns on every refresh left them as wide as their titles after a live
    refresh, with Textual 8.2: the cells were cut.)"""
    if tuple(str(c.label) for c in table.columns.values()) == titles:
        table.clear()
    else:
        table.clear(columns=True)
        table.add_columns(*titles)


class GroupsScreen(TriageScreen, Generic[G]):
    """Groups above, the highlighted group's files below; subclasses say what a group is."""

    BINDINGS = [
        Binding("R", "retry_group", "Retry group"),
        Binding("r", "retry_file", "Retry file"),
        Binding("escape,q", "back", "Back"),
    ]
    TITLE_ID = "groups-title"
    """The title's id."""
    FILE_COLUMNS: tuple[str, ...] = ("path", "MIME", "verdict")
    """The files table's columns."""
    EMPTY = "no groups"
    """What the detail line says when there is no group."""
    counted = True
    """Whether the groups shown were counted (a paged store's are, once its worker is done:
    until then the title and the detail line say it counts)."""
    counts: tuple[int, ...] = ()
    """The title's counts of the groups shown (a subclass says what they are)."""

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self.groups: list[G] = []
        self.records: dict[Key, Record] = {}
        self._shown: GroupKey | None = None
        self._file_before: Key | None = None  # the file highlighted before a refresh
        self._width = 0
        self._drawn: tuple[tuple[str, ...], list[list[str]]] | None = None
        """The groups table's titles and cells as last drawn."""
        self._files_drawn: list[list[str]] = []
        """The files table's cells as last drawn."""

    # -- what a subclass says ---------------------------------------------------------------

    def load(self) -> tuple[list[G], list[Record]]:
        """The groups, and every record they hold, from the live model."""
        raise NotImplementedError

    def load_tallied(self, model: PagedModel) -> tuple[list[G], tuple[int, ...]]:
        """A paged store's groups, from its index's tallies, and the title's counts (on a
        worker thread: no read of the store's table here)."""
        raise NotImplementedError

    def finish_tallied(self, groups: list[G]) -> None:
        """What :meth:`load_tallied`'s groups need read from the store's table (on the UI
        thread)."""

    def columns(self, wide: bool) -> list[Column]:
        """The groups table's columns."""
        raise NotImplementedError

    def cells(self, group: G, wide: bool) -> list[str]:
        """A group's row, one string per column (cut to the column's width here)."""
        raise NotImplementedError

    def title_parts(self) -> list[str]:
        """The title as markup parts, most important first (the rest is left out when
        narrow: the footer has the keys too)."""
        raise NotImplementedError

    def describe(self, group: G) -> str:
        """The line(s) below the groups: the group in full, with its example."""
        raise NotImplementedError

    def verdict(self, record: Record | None) -> str:
        """A file's verdict in the files table."""
        return "" if record is None else record.error or ""

    def files_said(self, group: G) -> str:
        """``1,000,000 files`` (``, the first 1,000 listed``: a paged store's big group)."""
        many = count(group.count, "file")
        if group.tallied is not None and group.count > FILES_READ:
            return f"{many}, the first {FILES_READ:,} listed"
        return many

    # -- the screen -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Title, groups, the group's example, its files, footer."""
        yield Line("", id=self.TITLE_ID, classes="groups-title")
        yield RowTable(id="groups", cursor_type="row", zebra_stripes=True, into="group-files")
        yield Line("", id="group-detail")
        yield RowTable(id="group-files", cursor_type="row")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Columns, then the groups."""
        self.query_one("#group-files", DataTable).add_columns(*self.FILE_COLUMNS)
        self.ready = True
        self.refresh_data()
        self.query_one("#groups", DataTable).focus()

    def on_resize(self, event: Resize) -> None:
        """Another width: the columns that fit it."""
        if self.ready and event.size.width != self._width:
            self._draw()

    def start_over(self) -> None:
        """The first group highlighted, the keys on the groups (at once, not as ``focus()``
        does, a repaint and a callback later: this runs before the screen is shown)."""
        self.groups = []  # none highlighted: refresh_data keeps none
        self.refresh_data()
        self.query_one("#group-files", DataTable).move_cursor(row=0)
        self.set_focus(self.query_one("#groups", DataTable))

    @property
    def group(self) -> G | None:
        """The highlighted group."""
        return self.query_one("#groups", RowTable).at_cursor(self.groups)

    @property
    def file_key(self) -> Key | None:
        """The highlighted file of the group."""
        group = self.group
        if group is None:
            return None
        return self.query_one("#group-files", RowTable).at_cursor(group.keys)

    def refresh_data(self) -> None:
        """Groups from the live model; the cursor stays on the same group. A paged store's
        groups are counted by its index in a worker (the screen keeps its keys meanwhile:
        without its triage B-tree that walks the whole table) and drawn once counted."""
        if isinstance(self.model, PagedModel):
            self.count_in_worker(partial(self._count, self.model), self._counted)
            if self._drawn is None:  # (nothing shown yet: the title says it counts)
                self.counted = False
                self._draw()
            return
        groups, records = self.load()
        self.records = {r.key: r for r in records}
        self._draw(groups)

    def _count(self, model: PagedModel) -> tuple[list[G], tuple[int, ...]]:
        """(A worker thread.) :meth:`load_tallied`; and, when the index has no triage
        B-tree, each group's first files, in one walk here rather than one a group there."""
        groups, counts = self.load_tallied(model)
        by_kind: dict[Kind, list[tuple[G, list[Tally]]]] = {}
        for group in groups:
            if group.tallied is not None:
                kind, tallies = group.tallied
                by_kind.setdefault(kind, []).append((group, tallies))
        for kind, mine in by_kind.items():
            ahead = model.files_ahead(kind, [tallies for _group, tallies in mine], FILES_READ)
            for (group, _tallies), keys in zip(mine, ahead or [], strict=False):
                group.keys.extend(keys)
        return groups, counts

    def _counted(self, counted: tuple[list[G], tuple[int, ...]]) -> None:
        """A paged store's groups, counted: drawn."""
        groups, counts = counted
        self.counted = True
        self.counts = counts
        self.records = {}
        self.finish_tallied(groups)
        self._draw(groups)

    def _draw(self, groups: list[G] | None = None) -> None:
        """Draw ``groups`` (None: the groups shown, again), the cursor on the same group."""
        before, file_before = self.group, self.file_key
        keep = before.ident if before else None
        if groups is not None:
            self.groups = groups
        self._width = width = self.app.size.width
        wide = width >= WIDE
        columns = self.columns(wide)
        rows = [[shown(c) for c in self.cells(g, wide)] for g in self.groups]
        table = self.query_one("#groups", DataTable)
        cuts = widths(columns, rows, width)
        drawn = (tuple(t for t, _share in columns), [list(map(cut, r, cuts)) for r in rows])
        if drawn != self._drawn:  # the same rows again: kept (a rebuilt table repaints all)
            self._drawn = drawn
            set_columns(table, drawn[0])
            for row in drawn[1]:
                table.add_row(*map(Text, row))
        idents = [g.ident for g in self.groups]
        target = 0
        if keep in idents:
            target = idents.index(keep)
        elif before is not None:
            # The group is gone: follow its files to the group that holds most of them now
            # (a retry with a wrong password, a repaired file that fails another way).
            following = set(before.keys)
            shared = [len(following.intersection(g.keys)) for g in self.groups]
            most = max(shared, default=0)
            if most:
                target = shared.index(most)
        table.move_cursor(row=target)
        self._file_before = file_before
        self._show_title()
        self._shown = None
        self._show_group()

    def _show_title(self) -> None:
        title = self.query_one(f"#{self.TITLE_ID}", Line)
        title.show(fit_title(self.title_parts(), self._width - 2))

    @property
    def in_files(self) -> bool:
        """Whether the files table has the keys (enter opens a file there)."""
        return self.query_one("#group-files", DataTable).has_focus

    def keys_hint(self) -> str:
        """What enter and escape do where the keys are now (a title part)."""
        if self.in_files:
            return "enter: open the file · escape: back to the groups"
        return "enter: the group's files, then a file"

    def on_descendant_focus(self, _event: DescendantFocus) -> None:
        """The keys moved between the tables: the title says what enter does now."""
        if self.ready:
            self._show_title()

    def _show_group(self) -> None:
        group = self.group
        files = self.query_one("#group-files", DataTable)
        detail = self.query_one("#group-detail", Line)
        if group is None:
            files.clear()
            self._files_drawn = []
            detail.show(f"[dim]{self.EMPTY if self.counted else 'counting…'}[/dim]")
            self._shown = None
            return
        detail.show(self.describe(group))
        if group.ident == self._shown:
            return
        self._shown = group.ident
        if group.tallied is not None and isinstance(self.model, PagedModel):
            self._read_files(self.model, group, *group.tallied)
        keep = files.cursor_row
        retrying = self.triage.retrying
        rows = []
        for key in group.keys:
            record = self.records.get(key)
            verdict = RETRYING if key in retrying else self.verdict(record)
            rows.append([shown(key[1]), shown(record.mime if record else ""), shown(verdict)])
        # each column whole when the width holds them; else each its share, the path cut in
        # its folders (the file's name kept: what the operator is looking for), the MIME type
        # and the verdict at their ends (the line above has the group's in full)
        cuts = widths(FILE_SHARES, rows, self._width)
        drawn = [
            [fit_path(path, cuts[0]), cut(mime, cuts[1]), cut(verdict, cuts[2])]
            for path, mime, verdict in rows
        ]
        if drawn != self._files_drawn:  # the same files again: kept, as the groups are
            self._files_drawn = drawn
            files.clear()
            for row in drawn:
                files.add_row(*map(Text, row))
        follow, self._file_before = self._file_before, None
        if follow in group.keys:  # the same file, wherever it now is in the list
            keep = group.keys.index(follow)
        files.move_cursor(row=min(keep, max(0, group.count - 1)))

    def _read_files(self, model: PagedModel, group: G, kind: Kind, tallies: list[Tally]) -> None:
        """A paged store's group, shown: its first files read (its records were counted, not
        read: a group of a big store may hold millions)."""
        if not group.keys:
            group.keys.extend(model.first_keys(kind, tallies, FILES_READ))
        self.records.update((r.key, r) for r in model.records_of(group.keys))

    @on(DataTable.RowHighlighted, "#groups")
    def _group_highlighted(self) -> None:
        self._show_group()

    @on(DataTable.RowSelected, "#groups")
    def _group_selected(self) -> None:
        """Enter on a group: into its files (the table moved the focus there already)."""
        self.query_one("#group-files", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Retries are not offered when nothing may be written."""
        return not action.startswith("retry_") or self.triage.writable

    @on(DataTable.RowSelected, "#group-files")
    def _file_selected(self) -> None:
        """Enter on a file: the record in full (its text when it has one); escape returns."""
        key = self.file_key
        rid = None if key is None else self.model.ids.get(key)
        if rid is not None:
            self.dash.open_record(rid, detail=True)

    def action_back(self) -> None:
        """From the files back to the groups; from the groups back to the records."""
        files = self.query_one("#group-files", DataTable)
        if files.has_focus:
            self.query_one("#groups", DataTable).focus()
        else:
            super().action_back()

    def group_label(self, group: G) -> str:
        """How a retry of ``group`` is named in its notification."""
        return f"group {cut(shown(' '.join(group.ident)), 48)}"

    def action_retry_group(self) -> None:
        """Retry every file of the highlighted group."""
        group = self.group
        if group is None:
            self.notify("no group to retry", severity="warning")
            return
        self.dash.retry(list(group.keys), self.group_label(group))
        self._shown = None
        self._show_group()

    def action_retry_file(self) -> None:
        """Retry the highlighted file (the first of the group while the groups have focus)."""
        key = self.file_key
        if key is None:
            self.notify("no file to retry", severity="warning")
            return
        self.dash.retry([key], key[1])
        self._shown = None
        self._show_group()
