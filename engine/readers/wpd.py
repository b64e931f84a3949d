"""WordPerfect documents (``.wpd``) through libwpd's ``wpd2text`` when it is installed.

Without the tool the verdict is ``unsupported/needs_tool`` naming it, so installing
``libwpd-tools`` retries exactly these files. The tool's output is checked like any tool's
(mostly unprintable output is refused, never stored).
"""

from __future__ import annotations

import os
from pathlib import Path

from engine import mimes as M
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.legacy import run_text_tool

MAGIC = b"\xffWPC"
"""WordPerfect 5.x-X files open with these bytes."""


class WpdReader:
    """WordPerfect 4.2-X documents by wpd2text."""

    name = "wpd"
    version = 1
    mimes = frozenset({M.WPD})
    tools = ("wpd2text",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the document's text."""
        text = run_text_tool(ctx, "wpd2text", [os.fspath(path.absolute())])
        sink.write(text)
        return ReadInfo("wpd2text")


READERS = (WpdReader(),)
