"""Mailboxes (mbox, and Foxmail's ``.box``): every message in turn, as the e-mail reader
writes one.

Messages are split by the ``From `` separator lines themselves (at the start of the file or
after a blank line, as mboxo/mboxrd write them), reading the file line by line, so only one
message is in memory at a time and the file is never opened for writing (unlike
:class:`mailbox.mbox`). ``>From `` quoting is undone. Each message is introduced by a
``# message N`` line; ``pages`` is the number of messages. A Foxmail mailbox (Tencent's client,
common in China) puts a binary separator before each message instead, seven 0x10 bytes and
six 0x11 bytes, then a status letter to the end of its line (:func:`split_foxmail`).

Bounds, as for the other containers: at most ``limits.mbox_messages`` messages are read, and
a read about to run out of time stops before its next message (:func:`check_time`); either
way the text of the messages read is kept, with a line naming the bound, and so are
``pages`` and the attachments' verdicts. At the text cap likewise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.readers.mail import attachments, parse_message, write_message
from engine.readers.members import MemberReader, check_time

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


FOXMAIL_SEPARATOR = b"\x10" * 7 + b"\x11" * 6
"""What begins each message of a Foxmail mailbox (then a status byte, ``S``, and a line break)."""


def split_foxmail(fh: BinaryIO) -> Iterator[bytes]:
    """Yield each message of a Foxmail mailbox (its separator line removed; a blank one,
    nothing)."""
    lines: list[bytes] = []
    for line in fh:
        at = line.find(FOXMAIL_SEPARATOR)
        if at < 0:
            lines.append(line)
            continue
        if at:
            lines.append(line[:at])  # (a message that did not end its last line)
        if any(x.strip() for x in lines):
            yield b"".join(lines)
        lines = []  # the rest of the separator's line is its status: no part of a message
    if any(line.strip() for line in lines):
        yield b"".join(lines)


def _join(lines: list[bytes]) -> bytes:
    # The blank line before the next separator belongs to the format, not the message.
    if lines and lines[-1] in (b"\n", b"\r\n"):
        lines = lines[:-1]
    return b"".join(lines)


class MboxReader:
    """Reads every message of an mbox mailbox."""

    name = "mbox"
    version = 5
    mimes = frozenset({M.MBOX})
    tools: tuple[str, ...] = ()
    split = staticmethod(split_mbox)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each message of the mailbox at ``path`` after a ``# message N`` line."""
        with attachments(ctx, sink) as members:
            tally = _Tally()
            try:
                _read_messages(path, ctx, sink, members, tally, self.split)
            except (LimitExceeded, TextCapReached):
                sink.info = _info(members, tally.messages, self.name)  # kept with the text
                raise
            if members is None:
                return ReadInfo(extractor=self.name, pages=tally.messages)
            return replace(members.finish(self.name), pages=tally.messages)


class FoxmailReader(MboxReader):
    """Reads every message of a Foxmail mailbox (``.box``)."""

    name = "foxmail"
    version = 1
    mimes = frozenset({M.FOXMAIL})
    split = staticmethod(split_foxmail)


@dataclass(slots=True)
class _Tally:
    """Messages begun so far (a bound that stops the read leaves it as it was)."""

    messages: int = 0


def _read_messages(
    path: Path,
    ctx: ReadContext,
    sink: TextSink,
    members: MemberReader | None,
    tally: _Tally,
    split: Callable[[BinaryIO], Iterator[bytes]],
) -> None:
    """Write every message ``split`` finds, counting them in ``tally``; a bound reached
    raises."""
    cap = ctx.limits.mbox_messages
    try:
        with open(path, "rb") as fh:
            for data in split(fh):
                if tally.messages >= cap:
                    raise LimitExceeded("mbox_messages", f"more than {cap} messages")
                check_time(ctx, f"{tally.messages} messages")
                tally.messages += 1
                number = tally.messages
                if number > 1:
                    sink.write("\n")
                sink.line(f"# message {number}")
                write_message(
                    parse_message(data), sink, members=members, prefix=f"message {number}/"
                )
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
    except RecursionError as exc:
        raise CorruptFile(f"message {tally.messages} nests too deeply to read") from exc


def _info(members: MemberReader | None, messages: int, extractor: str) -> ReadInfo:
    """What a read stopped by a bound says: its messages and the attachments' verdicts."""
    verdicts = tuple(members.verdicts) if members is not None else ()
    return ReadInfo(extractor, pages=messages, members=verdicts)


READERS = (MboxReader(), FoxmailReader())
