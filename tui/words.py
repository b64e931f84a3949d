"""Words on screen: one way to say a number of things (``1 file``, ``2 files``, ``0 records``).

Every count the dashboard shows goes through :func:`count` (the engine's,
:mod:`engine.words`): "1 files" and "record(s)" were each a hand-made plural somewhere, and
one of them was always forgotten.
"""

from __future__ import annotations

from engine.words import count

__all__ = ["count", "escape"]


def escape(text: str) -> str:
    """``text`` as Textual markup that shows it as it is, whatever it holds.

    Every ``[`` is escaped: Rich's ``escape`` leaves a ``[`` that starts no tag as it is, and
    Textual's parser then takes the markup that follows as text (an error message holding
    ``[2J`` showed a ``[/dim]`` and lost its style, and ``[a`` before a ``]`` formed a tag).
    A backslash at the end would escape the tag after it: a zero-width space follows it."""
    text = text.replace("[", "\\[")
    return text + "\u200b" if text.endswith("\\") else text
