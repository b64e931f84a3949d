"""Mailboxes (mbox): every message in turn, as the e-mail reader writes one.

Messages are split by the ``From `` separator lines themselves (at the start of the file or
after a blank line, as mboxo/mboxrd write them), reading the file line by line, so only one
message is in memory at a time and the file is never opened for writing (unlike
:class:`mailbox.mbox`). ``>From `` quoting is undone. Each message is introduced by a
``# message N`` line; ``pages`` is the number of messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.mail import attachments, parse_message, write_message

_QUOTED_FROM = re.compile(rb"^>(>*From )")


def split_mbox(fh: BinaryIO) -> Iterator[bytes]:
    """Yield each message's bytes (separator line removed, ``>From`` unquoted)."""
    lines: list[bytes] = []
    previous_blank = True
    started = False
    for line in fh:
        if line.startswith(b"From ") and previous_blank:
            if started:
                yield _join(lines)
            lines = []
            started = True
        else:
            lines.append(_QUOTED_FROM.sub(rb"\1", line))
        previous_blank = line in (b"\n", b"\r\n")
    if started or any(line.strip() for line in lines):
        yield _join(lines)


def _join(lines: list[bytes]) -> bytes:
    # The blank line before the next separator belongs to the format, not the message.
    if lines and lines[-1] in (b"\n", b"\r\n"):
        lines = lines[:-1]
    return b"".join(lines)


class MboxReader:
    """Reads every message of an mbox mailbox."""

    name = "mbox"
    version = 3
    mimes = frozenset({M.MBOX})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each message of the mailbox at ``path`` after a ``# message N`` line."""
        count = 0
        with attachments(ctx, sink) as members:
            try:
                with open(path, "rb") as fh:
                    for count, data in enumerate(split_mbox(fh), start=1):
                        if count > 1:
                            sink.write("\n")
                        sink.line(f"# message {count}")
                        prefix = f"message {count}/"
                        write_message(parse_message(data), sink, members=members, prefix=prefix)
            except OSError as exc:
                raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
            except RecursionError as exc:
                raise CorruptFile(f"message {count} nests too deeply to read") from exc
            if members is None:
                return ReadInfo(extractor="mbox", pages=count)
            return replace(members.finish("mbox"), pages=count)


READERS = (MboxReader(),)
