"""The help screen: every key of every screen, read from their BINDINGS."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.screens.full import restyle_if_new
from tui.words import escape

MOUSE = [
    ("click a row", "highlight it (the detail pane follows)"),
    ("double click a row", "open its text"),
    ("click a column title", "sort by it (again: reverse)"),
    ("click a status tab", "show that status"),
    ("wheel / scroll bars", "scroll"),
]


TABS_KEY = Binding("1,2,3,4,5,6", "tab", "status tabs: all ok empty unsupported error skipped")
"""The six tab keys, shown as one line."""


def key_label(binding: Binding) -> str:
    """``question_mark,f1`` -> ``? f1``."""
    names = {"question_mark": "?", "slash": "/", "left_square_bracket": "[",
             "right_square_bracket": "]", "pageup": "PgUp", "pagedown": "PgDn", "at": "@",
             "space": "space", "escape": "esc"}  # fmt: skip
    return " ".join(names.get(k, k) for k in binding.key.split(","))


def section(title: str, bindings: list[Binding]) -> str:
    """One screen's keys as markup."""
    rows = [f"[b $accent]{title}[/]"]
    for b in bindings:
        rows.append(
            f"  [b]{escape(key_label(b).ljust(12))} [/b]{escape(b.description or b.action)}"
        )
    return "\n".join(rows)


def inherited(cls: type[DOMNode]) -> list[Binding | tuple[str, ...] | str]:
    """``cls``'s bindings with those of our classes it extends (as Textual merges them; not
    Textual's own): a key bound again further down is listed once, where the base put it."""
    keys: dict[str, Binding | tuple[str, ...] | str] = {}
    for base in reversed(cls.__mro__):
        if not base.__module__.startswith("tui."):
            continue
        for b in base.__dict__.get("BINDINGS", ()):
            keys[b.key if isinstance(b, Binding) else str(b)] = b
    return list(keys.values())


def help_text(app_keys: list[Binding], read_only: bool = False) -> str:
    """Every key, grouped by screen (write actions left out when nothing may be written)."""
    from tui.screens.activity import ActivityScreen
    from tui.screens.errors import ErrorsScreen
    from tui.screens.inspector import InspectorScreen
    from tui.screens.records import RecordsScreen
    from tui.screens.tools import ToolsScreen
    from tui.screens.unsupported import UnsupportedScreen
    from tui.widgets.record_table import RecordTable

    writes = {"retry_one", "retry_many", "retry_group", "retry_file", "retry_with_password",
              "check", "export_view"}  # fmt: skip

    def of(cls: type[DOMNode]) -> list[Binding]:
        keys = [b for b in inherited(cls) if isinstance(b, Binding)]
        return [b for b in keys if not (read_only and b.action in writes)]

    app_keys = [*app_keys, Binding("ctrl+p", "command_palette", "Command palette")]
    parts = [
        section("Everywhere", app_keys),
        section("Records", [TABS_KEY, *(b for b in of(RecordsScreen) if b.action[:4] != "tab(")]),
        section("Records table", of(RecordTable)),
        section("Text inspector", of(InspectorScreen)),
        section("Tools (t)", of(ToolsScreen)),
        section("Errors (x)", of(ErrorsScreen)),
        section("Unsupported (u)", of(UnsupportedScreen)),
        section("Activity (@)", of(ActivityScreen)),
        "[b $accent]Mouse[/]\n" + "\n".join(f"  [b]{k:<20} [/b]{v}" for k, v in MOUSE),
    ]
    return "\n\n".join(parts)


class HelpScreen(ModalScreen[None]):
    """Every key; any of escape, q or ? closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, app_keys: list[Binding], *, read_only: bool = False) -> None:
        super().__init__()
        self.app_keys = app_keys
        self.read_only = read_only

    def compose(self) -> ComposeResult:
        """The key list."""
        with VerticalScroll(id="help"):
            yield Static(help_text(self.app_keys, self.read_only), id="help-body")

    def on_mount(self) -> None:
        """Say how to move through it (at 80x24 it is longer than the box)."""
        box = self.query_one("#help", VerticalScroll)
        box.border_title = "Keys"
        box.border_subtitle = "↑ ↓ PgUp PgDn: scroll · esc: close"

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """Not restyled when shown again unless the app's styles changed (its scroll bars
        then repainted themselves in a second frame)."""
        restyle_if_new(self, event)

    def show_anew(self) -> None:
        """Shown again (the app keeps it): from the top (moved only when it is not there: a
        scroll repaints the scroll bar, a frame after the help's own)."""
        box = self.query_one("#help", VerticalScroll)
        if box.scroll_offset != (0, 0):
            box.scroll_home(animate=False, immediate=True)

    def action_dismiss(self) -> None:  # type: ignore[override]
        """Close the help."""
        self.dismiss()
