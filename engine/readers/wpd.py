"""WordPerfect documents (``.wpd``) through libwpd's ``wpd2text`` when it is installed.

Without the tool the verdict is ``unsupported/needs_tool`` naming it, so installing
``libwpd-tools`` retries exactly these files. The tool's output is checked like any tool's
(mostly unprintable output is refused, never stored).
"""

from __future__ import annotations

from engine import mimes as M
from engine.readers.liberation import LiberationReader

MAGIC = b"\xffWPC"
"""WordPerfect 5.x-X files open with these bytes."""

READERS = (LiberationReader("wpd", "wpd2text", frozenset({M.WPD})),)
"""libwpd is the Document Liberation Project's too: its ``wpd2text`` is read as the others'
commands are (:class:`engine.readers.liberation.LiberationReader`)."""
