"""Words in messages: one way to say a number of things (``1 file``, ``2 files``).

Every count the engine's notices, errors and the command line's lines say goes through
:func:`count`, as the dashboard's do (:mod:`tui.words` re-exports it): a hand-made ``file(s)``
reads as a form filled in.
"""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1; thousands separated (``1,234 files``).

    ``plural`` for a noun that does not just take an ``s`` (``match``: ``matches``)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
