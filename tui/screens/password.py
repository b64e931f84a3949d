"""Asks for a password (or a file of them) for encrypted files, before a retry with it.

The typed password is wrapped in :class:`~engine.passwords.Passwords` (whose ``repr`` hides
it) the moment it is read, and the box is emptied before the screen closes: no string of it
stays in a widget, a local variable a traceback could show, or a notification.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from engine.errors import UsageError
from engine.passwords import Passwords, read_password_file
from tui.widgets.typed_input import TypedInput
from tui.words import escape

KEPT = (
    "Kept in memory for this session only: never written to the store, the activity log "
    "or a notification. Later retries of encrypted files try it too."
)
"""What the screen says about where a password goes."""


class PasswordScreen(ModalScreen[Passwords | None]):
    """Ask for passwords for ``what``; dismisses with them, or None when cancelled."""

    DEFAULT_CSS = """
    PasswordScreen { align: center middle; }
    PasswordScreen > #password-box {
        width: 72; max-width: 100%; height: auto; padding: 1 2;
        border: thick $accent; background: $panel;
    }
    PasswordScreen Input { margin-bottom: 1; }
    PasswordScreen #password-kept { color: $text-muted; }
    PasswordScreen #password-problem { color: $error; height: auto; }
    PasswordScreen #password-buttons { height: auto; align: right middle; margin-top: 1; }
    PasswordScreen Button { margin-left: 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, what: str, held: int = 0) -> None:
        super().__init__()
        self.what = what
        """What the passwords are for, in words (``2 encrypted files of the group ...``)."""
        self.held = held
        """Passwords already given this session (tried too)."""

    def compose(self) -> ComposeResult:
        """The question, the two boxes, where the password goes, two buttons."""
        with Vertical(id="password-box"):
            yield Static(f"[b]Password [/b]for {escape(self.what)}", id="password-title")
            yield TypedInput(placeholder="password (not shown)", password=True, id="password-typed")
            yield TypedInput(placeholder="or a password file: one a line", id="password-file")
            held = f" ({self.held} given before: tried too.)" if self.held else ""
            yield Static(KEPT + held, id="password-kept")
            yield Static("", id="password-problem")
            with Horizontal(id="password-buttons"):
                yield Button("Retry with it (enter)", variant="primary", id="password-ok")
                yield Button("Cancel (esc)", id="password-cancel")

    def on_mount(self) -> None:
        """Typing starts in the password box."""
        self.query_one("#password-typed", Input).focus()

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        """Enter in either box."""
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """By mouse (or enter on a button)."""
        if event.button.id == "password-ok":
            self._submit()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        """Close without a password."""
        self._forget()
        self.dismiss(None)

    def _submit(self) -> None:
        typed = self.query_one("#password-typed", Input)
        passwords = Passwords.of([typed.value])
        name = self.query_one("#password-file", Input).value.strip()
        if name:
            try:
                passwords = passwords + read_password_file(Path(name).expanduser())
            except UsageError as exc:  # names the file, never a password
                self._problem(str(exc))
                return
        if not passwords:
            self._problem("type a password, or give a file of passwords")
            return
        self._forget()
        self.dismiss(passwords)

    def _problem(self, message: str) -> None:
        self.query_one("#password-problem", Static).update(escape(message))

    def _forget(self) -> None:
        """Empty the password box: the widget keeps no copy once the screen closes."""
        self.query_one("#password-typed", Input).value = ""
