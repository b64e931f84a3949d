"""Counts that never overshoot: a sweep's new rows wait for its removals.

A sweep reports records as it reads them and the records it no longer answers for (files
moved away, deleted) only at its end, just before it finishes. Applied as they came, a folder
moved within a watched root counted twice until then: the summary showed "ok 6,810", then
"ok 9,213", for a true 5,010. While a sweep runs over a store that already has rows, records
of keys the dashboard does not show yet are held here and shown with the sweep's end, in the
same step as its removals; changes to rows already shown apply at once. The first sweep of an
empty store holds nothing: every row shows as it is read. No Textual here.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field

from engine.records import Key, Record


@dataclass(slots=True)
class SweepHold:
    """New keys a sweep reported while rows it may remove are still shown."""

    active: bool = False
    """A sweep runs over a store that had rows when it began."""
    held: dict[Key, Record] = field(default_factory=dict)
    """The newest record of each held key."""

    def start(self, had_rows: bool) -> None:
        """A sweep began; hold its new keys when rows were shown already."""
        self.active = self.active or had_rows

    def take(self, records: dict[Key, Record], removed: list[Key], shown: Container[Key]) -> None:
        """Move the records of keys not ``shown`` from ``records`` into the hold (while a sweep
        runs); a removed key is let go of (it is neither shown nor held any more)."""
        for key in removed:
            self.held.pop(key, None)
        if not self.active:
            return
        for key in [k for k in records if k not in shown]:
            self.held[key] = records.pop(key)

    def release(self) -> list[Record]:
        """The sweep ended (or the engine stopped): every held record, to show now."""
        self.active = False
        out, self.held = list(self.held.values()), {}
        return out
