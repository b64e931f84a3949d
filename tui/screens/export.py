"""Export: ask where, then write the current view there (``E`` on the records screen).

The path comes prefilled (``quarry-<view>-<date>.csv`` in the current folder); its extension
chooses the format (``.csv`` or ``.jsonl``). A name that exists is replaced only after a
yes; a folder that does not exist or a name of another kind is said in the box, which stays
open. The modal only decides the path: :func:`tui.actions.write_export` writes it.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from engine.names import shown
from tui.actions import export_format
from tui.screens.confirm import ConfirmScreen
from tui.widgets.typed_input import TypedInput
from tui.words import count, escape


def resolve(text: str, cwd: Path) -> Path:
    """What the user typed as a path: ``~`` expanded, relative to ``cwd``."""
    path = Path(text.strip()).expanduser()
    return path if path.is_absolute() else cwd / path


def problem(path: Path) -> str | None:
    """Why ``path`` cannot be written to, or None when it can (it may exist: we ask)."""
    if export_format(path) is None:
        return "the name must end in .csv or .jsonl (that is the format)"
    if not path.parent.is_dir():
        return f"no such folder: {shown(str(path.parent))}"
    if path.is_dir():
        return "that is a folder: add a file name"
    if path.exists() and not path.is_file():
        return "that is not a regular file"
    return None


class ExportScreen(ModalScreen[Path | None]):
    """Where to write ``count`` records; dismisses with the path, or None when cancelled."""

    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > #export {
        width: 76; max-width: 100%; height: auto; padding: 0 1;
        border: thick $accent; background: $panel;
    }
    ExportScreen #export-problem { color: $error; height: auto; }
    ExportScreen #export-hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: Path, count: int, cwd: Path) -> None:
        super().__init__()
        self.default = default
        self.count = count
        self.cwd = cwd

    def compose(self) -> ComposeResult:
        """The question, the path box, a problem line, the keys."""
        many = count(self.count, "record")
        with Vertical(id="export"):
            yield Static(f"[b]Export {many} [/b](the current view, every field) to:")
            path_input = TypedInput(str(self.default), id="export-path", select_on_focus=False)
            path_input.cursor_blink = False
            yield path_input
            yield Static("", id="export-problem")
            yield Static(
                f"in {escape(shown(str(self.cwd)))} unless the path says otherwise; .csv or "
                ".jsonl · enter: write · escape: cancel",
                id="export-hint",
            )

    def on_mount(self) -> None:
        """The cursor at the end of the path, ready to edit (not selected: a key typed
        by mistake must not replace it)."""
        path_input = self.query_one(Input)
        path_input.focus()
        path_input.cursor_position = len(path_input.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        path = resolve(event.value, self.cwd)
        why = problem(path) if event.value.strip() else "type a file name"
        if why is not None:
            self.query_one("#export-problem", Static).update(escape(why))
            return
        if not path.exists():
            self.dismiss(path)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(path)
            else:
                self.query_one("#export-problem", Static).update("not replaced: another name?")

        self.app.push_screen(
            ConfirmScreen(f"{shown(str(path))} exists. Replace it?", "Replace"), answered
        )

    def action_cancel(self) -> None:
        """Write nothing."""
        self.dismiss(None)
