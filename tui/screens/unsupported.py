"""The unsupported screen: files no reader took, grouped by reason and MIME type, largest
first, each group saying what would unlock it (the tools its records name, or that no
reader reads the type).

It works as the errors screen does (:mod:`tui.screens.groups`): enter drills into a group's
files, enter on a file shows the record in full, escape comes back to the same place. ``R``
retries a group (after installing what it waits on; the tools screen's ``g`` does that by
itself for the files a newly found tool unlocks).
"""

from __future__ import annotations

from engine.names import shown
from engine.records import Record
from engine.tallies import Kind
from tui.model import RecordModel
from tui.paged import PagedModel
from tui.screens.groups import Column, GroupsScreen
from tui.screens.ports import Dashboard
from tui.state import TriageState
from tui.triage import (
    UnsupportedGroup,
    group_unsupported,
    install_hint,
    tally_unsupported,
    this_platform,
    unsupported_records,
)
from tui.words import count, escape


class UnsupportedScreen(GroupsScreen[UnsupportedGroup]):
    """Unsupported files by reason and MIME type above, the highlighted group's files below."""

    CSS_PATH = "errors.tcss"
    TITLE_ID = "unsupported-title"
    EMPTY = "no unsupported files"
    FILE_COLUMNS = ("path", "MIME", "why not read")
    counts: tuple[int, ...] = (0, 0)
    """Unsupported records and their groups (for the title)."""

    def __init__(self, model: RecordModel, triage: TriageState, dash: Dashboard) -> None:
        super().__init__(model, triage, dash)
        self._platform = this_platform()
        """This machine's install-hint key (None: no hint fits it)."""
        self._left_out = frozenset(dash.tools_left_out())
        """Tools this run was told not to use: no hint to install them."""

    def load(self) -> tuple[list[UnsupportedGroup], list[Record]]:
        """Unsupported records by reason and MIME type."""
        records = unsupported_records(self.model)
        groups = group_unsupported(records)
        self.counts = (len(records), len(groups))
        return groups, records

    def load_tallied(self, model: PagedModel) -> tuple[list[UnsupportedGroup], tuple[int, ...]]:
        """The same groups of a paged store, from its index's tallies."""
        tallied = tally_unsupported(model.tallies(Kind.UNSUPPORTED))
        return tallied, (sum(g.count for g in tallied), len(tallied))

    def columns(self, wide: bool) -> list[Column]:
        """Files, reason, MIME type, what would unlock it; wide: an example path too."""
        if wide:
            return [("files", 0), ("reason", 0), ("MIME type", 0.35), ("unlocked by", 0.3),
                    ("example", 0.35)]  # fmt: skip
        return [("files", 0), ("reason", 0), ("MIME type", 0.55), ("unlocked by", 0.45)]

    def cells(self, group: UnsupportedGroup, wide: bool) -> list[str]:
        """A group's row."""
        row = [f"{group.count:,}", group.reason, group.mime or "?", self._unlock(group)]
        return [*row, group.example_path] if wide else row

    def title_parts(self) -> list[str]:
        """Counts first, then the keys."""
        if not self.counted:
            return ["[b]Unsupported [/b]counting…", self.keys_hint()]
        files, groups = self.counts
        return [
            f"[b]Unsupported [/b]{files:,} in {count(groups, 'group')}",
            self.keys_hint(),
            "by reason and MIME type",
        ]

    def describe(self, group: UnsupportedGroup) -> str:
        """Reason, size, MIME type, what would unlock it, then a real example in full."""
        many = self.files_said(group)
        return (
            f"[b]{escape(group.reason)} [/b]· {many} · {escape(shown(group.mime or '?'))}\n"
            f"[b]unlocked by [/b]{escape(shown(self._unlock(group)))}{self._install(group)}\n"
            f"[b]e.g. [/b]{escape(shown(group.example_path))}: {escape(shown(group.example))}"
        )

    def _unlock(self, group: UnsupportedGroup) -> str:
        return group.unlock_with(self._left_out)

    def _install(self, group: UnsupportedGroup) -> str:
        """`` · sudo apt install ...`` for this machine (every platform's: ``t``), for the
        tools not left out on purpose; for those, that they were."""
        names = [name for name, _ in group.needs.most_common()]
        hint = install_hint((n for n in names if n not in self._left_out), self._platform)
        if hint:
            return f" [dim]·[/dim] [$accent]{escape(hint)}[/] [dim](t: tools)[/dim]"
        if names and all(n in self._left_out for n in names):
            return " [dim]on purpose (--without or --no-external; t: tools)[/dim]"
        return ""

    def group_label(self, group: UnsupportedGroup) -> str:
        """``group needs_tool image/png`` in the retry's notification."""
        return f"group {group.reason} {shown(group.mime or '?')}"
