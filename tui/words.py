"""Words on screen: one way to say a number of things (``1 file``, ``2 files``, ``0 records``).

Every count the dashboard shows goes through :func:`count`: "1 files" and "record(s)" were
each a hand-made plural somewhere, and one of them was always forgotten.
"""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1; thousands separated (``1,234 files``).

    ``plural`` for a noun that does not just take an ``s`` (``match``: ``matches``)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
