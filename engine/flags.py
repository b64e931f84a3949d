"""The sweep's command-line flags, once: the parser (:mod:`engine.cli`) adds them from here and
the walk ahead (:mod:`engine.ahead`) reads here which of them leave the walk alone.

Each :class:`Flag` says its names, whether it takes a value, and what it does to the walk
(:class:`Walk`). A flag that changes the walk in a way the walk ahead does not guess is
:attr:`Walk.OTHER`: such a sweep walks for itself. The parser's own details (types, defaults,
help) stay in :mod:`engine.cli`, keyed by these names; a test holds the two to each other.

Only ``enum`` is imported (the interpreter has it loaded at start): the ``quarry`` script reads
this table before it imports the engine.
"""

from __future__ import annotations

import enum


class Walk(enum.Enum):
    """What a flag does to the sweep's walk."""

    SAME = "same"
    """Leaves the walk alone."""
    OUT = "out"
    """The store folder, which the walk leaves out."""
    EXCLUDE = "exclude"
    """A gitignore-style pattern the walk leaves out (repeatable)."""
    NO_DEFAULTS = "no-defaults"
    """The default exclusions off."""
    EXECUTOR = "executor"
    """Where reads run: the read pool is started ahead only for this machine's."""
    OTHER = "other"
    """Changes the walk in a way the walk ahead does not guess (``--max-bytes``)."""


class Flag:
    """One flag. (Not a dataclass: ``dataclasses`` is 7 ms to import, before the walk ahead.)"""

    __slots__ = ("names", "valued", "walk")

    def __init__(self, names: tuple[str, ...], valued: bool, walk: Walk) -> None:
        self.names = names
        """The long name first, then any short one."""
        self.valued = valued
        """Takes a value (``--out DIR``, ``--out=DIR``); else it is a switch."""
        self.walk = walk
        """What it does to the walk."""

    def __repr__(self) -> str:
        return f"Flag({self.names!r}, {self.valued!r}, {self.walk})"


SWEEPING: tuple[Flag, ...] = (
    Flag(("--out",), True, Walk.OUT),
    Flag(("--exclude",), True, Walk.EXCLUDE),
    Flag(("--max-bytes",), True, Walk.OTHER),
    Flag(("--no-default-excludes",), False, Walk.NO_DEFAULTS),
    Flag(("--rehash",), False, Walk.SAME),
    Flag(("--forget-missing",), False, Walk.SAME),
    Flag(("--no-external",), False, Walk.SAME),
    Flag(("--without",), True, Walk.SAME),
    Flag(("--timeout",), True, Walk.SAME),
    Flag(("--memory",), True, Walk.SAME),
    Flag(("--workers",), True, Walk.SAME),
    Flag(("--executor",), True, Walk.EXECUTOR),
    Flag(("--reader",), True, Walk.SAME),
    Flag(("--no-text-index",), False, Walk.SAME),
)
"""The flags of every verb that sweeps (``open``, ``sweep``, ``watch``, ``retry``), in the
order ``--help`` lists them."""

SWEEP_VERB: tuple[Flag, ...] = (
    Flag(("--json",), False, Walk.SAME),
    Flag(("--verify",), False, Walk.SAME),
    Flag(("--quiet", "-q"), False, Walk.SAME),
)
"""The ``sweep`` verb's own flags, listed before :data:`SWEEPING`."""


def by_name(flags: tuple[Flag, ...]) -> dict[str, Flag]:
    """Every name of ``flags`` -> its flag."""
    return {name: flag for flag in flags for name in flag.names}
