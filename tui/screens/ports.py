"""What a screen may ask of the dashboard around it, as a Protocol (no import of the app).

Screens are built with the records model, the triage state and a :class:`Dashboard`; they
never reach into the App with ``getattr``. Work that must outlive a screen (a retry, a tools
re-check) and what needs the terminal (an editor, the opener) is the dashboard's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from engine.query import TextTerm
from engine.records import Key, Record
from tui.link import Header
from tui.triage import ToolRow, Waiting


class Dashboard(Protocol):
    """The app, as the screens see it."""

    def retry(
        self, keys: list[Key], label: str, *, unmark: bool = False, unlock: bool = False
    ) -> None:
        """Read ``keys`` again (asking first when there are many)."""
        ...

    def unlock(self, keys: list[Key], label: str, *, unmark: bool = False) -> None:
        """Ask for a password for the encrypted files ``keys``, then retry them with it."""
        ...

    def check_tools(self) -> bool:
        """Look the tools up again; False when refused (read-only)."""
        ...

    def tool_rows(self, waiting: Waiting | None = None) -> list[ToolRow]:
        """The tools view's rows, from the live model (the records waiting on a tool:
        ``waiting``, or :meth:`waiting`)."""
        ...

    def waiting(self) -> Waiting:
        """The records waiting on a tool, from the live model."""
        ...

    def waiting_known(self) -> bool:
        """Whether :meth:`waiting` answers at once (else ask it from a worker)."""
        ...

    def open_record(self, rid: int, *, detail: bool = False, find: TextTerm | None = None) -> None:
        """Open row ``rid``'s text in the inspector (at the first match of ``find``, whose
        matches ``n``/``N`` then go through); without text, say why not (or, with
        ``detail``, show the record in full)."""
        ...

    def open_key(self, key: Key) -> None:
        """Open the file ``key``'s stored text in the inspector (its record in full when it
        has none), as :meth:`open_record` does for a row."""
        ...

    def run_outside(self, command: list[str]) -> int | None:
        """Run ``command`` with the terminal handed over; its status, None if impossible."""
        ...

    def source_path(self, key: Key) -> Path:
        """The file on disk a record came from (its exact name)."""
        ...

    def stored_text(self, record: Record, limit: int | None = None) -> bytes | None:
        """The record's stored text (its first ``limit`` bytes), None when it has none (or
        no valid hash); OSError when it cannot be read. The store reads it, never a path."""
        ...

    def tools_missing(self) -> set[str]:
        """Tools the engine reports missing."""
        ...

    def tools_left_out(self) -> set[str]:
        """Tools this run was told not to use (``--without``, ``--no-external``)."""
        ...

    def header(self) -> Header:
        """What the header and the summary bar show (folder, live state, progress, last
        event time, problem)."""
        ...

    def store_counts(self) -> dict[str, int] | None:
        """Records per status tab (``all`` included) the store holds, from its index, while
        its records are still loading; None once they are loaded (or without an index)."""
        ...
