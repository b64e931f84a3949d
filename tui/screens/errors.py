"""The errors screen: error records grouped by reason and normalised message, largest first,
then the ok records whose text is suspect or garbled, grouped by their worst quality signal.

Enter drills from a group into its files, enter on a file opens it, escape comes back (see
:mod:`tui.screens.groups`); ``R`` retries the highlighted group, ``r`` the highlighted file;
``u`` goes to the unsupported files, grouped the same way. Groups and files update live as
retried records come back.
"""

from __future__ import annotations

from textual.binding import Binding

from engine.names import shown
from engine.quality import summary_line
from engine.records import Record
from engine.tallies import Kind
from tui.paged import PagedModel
from tui.screens.groups import Column, GroupsScreen
from tui.state import is_encrypted
from tui.triage import (
    ErrorGroup,
    error_records,
    group_errors,
    group_quality,
    quality_records,
    tally_errors,
    tally_examples,
    tally_quality,
)
from tui.widgets.record_table import cut
from tui.words import count, escape


class ErrorsScreen(GroupsScreen[ErrorGroup]):
    """Error groups (then suspect-text groups) above, the highlighted group's files below."""

    CSS_PATH = "errors.tcss"
    BINDINGS = [
        Binding("u", "app.show_unsupported", "Unsupported"),
        Binding("P", "retry_with_password", "Password"),
    ]
    TITLE_ID = "errors-title"
    EMPTY = "no error records"
    counts: tuple[int, ...] = (0, 0, 0)
    """Error records, their groups, suspect texts (for the title)."""

    def load(self) -> tuple[list[ErrorGroup], list[Record]]:
        """Error groups, then the suspect and garbled texts' groups."""
        errors, suspects = error_records(self.model), quality_records(self.model)
        by_error = group_errors(errors)
        self.counts = (len(errors), len(by_error), len(suspects))
        return by_error + group_quality(suspects), [*errors, *suspects]

    def load_tallied(self, model: PagedModel) -> tuple[list[ErrorGroup], tuple[int, ...]]:
        """The same groups of a paged store, from its index's tallies."""
        by_error = tally_errors(model.tallies(Kind.ERRORS))
        by_quality = tally_quality(model.tallies(Kind.SUSPECT))
        every = sum(g.count for g in by_error)
        return by_error + by_quality, (every, len(by_error), sum(g.count for g in by_quality))

    def finish_tallied(self, groups: list[ErrorGroup]) -> None:
        """The suspect texts' examples, in words."""
        if isinstance(self.model, PagedModel):
            tally_examples(self.model, groups)

    def columns(self, wide: bool) -> list[Column]:
        """Files, reason, a real example's words; wide: the MIME types and example path too."""
        if wide:
            return [("files", 0), ("reason", 0), ("message", 0.45), ("MIME types", 0.2),
                    ("example", 0.35)]  # fmt: skip
        return [("files", 0), ("reason", 0), ("message", 1)]

    def cells(self, group: ErrorGroup, wide: bool) -> list[str]:
        """A group's row."""
        row = [f"{group.count:,}", group.reason, group.example or group.message]
        return [*row, group.mime_text(2), group.example_path] if wide else row

    def title_parts(self) -> list[str]:
        """Counts first (they must fit 80 columns), then the keys."""
        if not self.counted:
            return ["[b]Errors [/b]counting…", self.keys_hint()]
        errors, groups, suspects = self.counts
        parts = [f"[b]Errors [/b]{errors:,} in {count(groups, 'group')}"]
        if suspects:
            parts.append(f"[b]suspect texts [/b]{suspects:,}")
        parts.append(self.keys_hint())
        if self.triage.writable:
            parts.append("R: retry the group · r: a file")
        return parts

    def describe(self, group: ErrorGroup) -> str:
        """Reason, size, MIME types, then a real example in full."""
        many = self.files_said(group)
        return (
            f"[b]{escape(group.reason)} [/b]· {many} · {escape(shown(group.mime_text(6)))}\n"
            f"[b]e.g. [/b]{escape(shown(group.example_path))}: {escape(shown(group.example))}"
        )

    def verdict(self, record: Record | None) -> str:
        """An error's message, or a suspect text's quality in words."""
        if record is None:
            return ""
        if record.error or record.quality is None:
            return record.error or ""
        return summary_line(record.quality)

    def group_label(self, group: ErrorGroup) -> str:
        """``group corrupt: <message>`` in the retry's notification."""
        return f"group {group.reason}: {cut(shown(group.message), 40)}"

    def action_retry_with_password(self) -> None:
        """Give a password for the encrypted files of the highlighted group (or, with the
        files focused, the highlighted file), then retry them with it."""
        group, key = self.group, self.file_key
        if self.in_files and key is not None:
            keys, label = [key], key[1]
        else:
            keys = list(group.keys) if group is not None else []
            label = f"group {group.reason}" if group is not None else ""
        self.dash.unlock([k for k in keys if is_encrypted(self.records.get(k))], label)
