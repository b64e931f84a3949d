"""Outlook data files (``.pst``, and the ``.ost`` caches libpst can read): the mail, contacts,
appointments and journal of every folder, through ``readpst`` (libpst; Debian ``pst-utils``).

No Python library reads the format (pypff needs libpff built), and readpst has no output to
a pipe: it writes files. It runs in its own scratch folder, in its plain mode (one file per
folder and kind, ``Inbox.mbox``, ``Contacts.contacts`` as vCards, ``Calendar.calendar``...,
all in that one folder: readpst makes each ``/``, ``\\`` and ``:`` of a folder's name ``_``).
Its recursive mode is not used: it makes a directory of each folder's name and changes into
it, and a folder named ``..`` would take it out of the scratch folder. Each file it wrote is
then read as a member (a mailbox by the mbox reader, its messages' attachments members of
it), under its name as readpst gave it.

What readpst writes has no bound of its own (a whole mailbox's mail, its attachments
base64-encoded): the scratch folder's bytes and files are counted while it runs, and past
what is left of ``archive_bytes`` or past ``archive_members`` files it is stopped. It may take
three quarters of the read's time left (and its own ``tool_timeout_s`` at most): the rest
reads what it wrote. Stopped either way, the folders it wrote by then are read and the bound
is named as any container's is (the text so far kept, with a line naming it; nothing read:
``error/limit`` or ``error/timeout``). A file readpst cannot read (not a PST, a damaged
index) is ``error/corrupt`` in its words; what it wrote before it failed is read, and the
read says it stopped.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, TimeSpent, ToolFailed
from engine.ptree import kill_with_children
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink, ToolCall
from engine.readers.members import MemberReader, check_time, scratch_dir

POLL_S = 0.02
"""How often the bytes readpst has written are counted while it runs (less often when a
count takes more than a fifth of that)."""
TOOL_SHARE = 0.75
"""The share of the read's time left that readpst may take: the rest reads what it wrote
(a mailbox too big for the read's time gives the text of the folders written by then)."""
_LEFT = "the rest of the read's time left to read the folders it had written"
Stop = LimitExceeded | None
"""The bound that stopped readpst (a :class:`TimeSpent` for its time), if one did."""
_ERR_KEPT = 64 * 1024
"""Bytes of readpst's messages kept (the last line names the failure)."""


class PstReader:
    """Outlook ``.pst`` / ``.ost`` files, through readpst."""

    name = "pst"
    version = 1
    mimes = frozenset({M.PST, M.OST})
    tools: tuple[str, ...] = ("readpst",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the text of every folder's items, one member a folder and kind."""
        with scratch_dir() as scratch:
            out = os.path.join(scratch, "out")
            os.mkdir(out)
            # -q: no progress; -8: bodies in UTF-8 where the file has them so. Not -b: a
            # message whose only body is RTF would lose it (where a plain body is there too,
            # the RTF is an attachment of the same text).
            call = ctx.tool_call("readpst", ["-q", "-8", "-o", out, "--", str(path)])
            bounds = _Bounds(
                ctx.limits.archive_bytes - ctx.budget.used,
                ctx.limits.archive_members,
                time.monotonic() + min(call.timeout, TOOL_SHARE * ctx.remaining()),
            )
            code, err, stopped = _run_counted(call, scratch, bounds)
            names = _written(out)
            if stopped is None and code != 0 and not names:
                raise _failure(code, err)
            with MemberReader(ctx, sink) as members:
                try:
                    for name in names:
                        check_time(ctx, f"{members.count} folders")
                        _read_one(members, ctx, out, name)
                    if stopped is not None:  # the folders it wrote are read, the bound named
                        raise stopped
                except (LimitExceeded, TextCapReached):
                    sink.info = members.finish("readpst")
                    raise
                info = members.finish("readpst")
        if code != 0:
            why = f"readpst stopped before the end ({_tail(err, code)})"
            note = f"{info.note}; {why}" if info.note else why
            return replace(info, note=note)
        return info


def _read_one(members: MemberReader, ctx: ReadContext, out: str, name: str) -> None:
    target = os.path.join(out, name)
    try:
        st = os.lstat(target)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):  # readpst writes files only; anything else is left
        return
    ctx.budget.spend(st.st_size, ctx.limits)
    if members.admit(name):
        members.read_copied(name, Path(target))


def _written(out: str) -> list[str]:
    """The names of what readpst wrote, in order (folders in the file's order by name)."""
    with os.scandir(out) as entries:
        return sorted(entry.name for entry in entries)


@dataclass(frozen=True, slots=True)
class _Bounds:
    """What readpst may write and until when."""

    bytes: int
    """What is left of ``archive_bytes``."""
    files: int
    """``archive_members``: a file of a million folders must not fill the disk's inodes."""
    deadline: float
    """``time.monotonic()`` past which it is stopped."""


def _run_counted(call: ToolCall, scratch: str, bounds: _Bounds) -> tuple[int, bytes, Stop]:
    """Run ``call`` in ``scratch`` until it exits or passes a bound: its exit code, its
    messages, and the bound that stopped it (None: it ended by itself). Stopped, it is killed
    with whatever it started, and what it wrote stays to be read."""
    err_path = os.path.join(scratch, "messages")
    with open(err_path, "w+b") as err:
        proc = subprocess.Popen(
            call.argv,
            stdin=subprocess.DEVNULL,
            stdout=err,  # (readpst says why it stopped on its output, not its errors)
            stderr=err,
            cwd=scratch,
            preexec_fn=call.preexec,
        )
        begun = time.monotonic()
        stopped: Stop = None
        pause = POLL_S
        try:
            while stopped is None and proc.poll() is None:
                try:
                    proc.wait(timeout=min(pause, max(bounds.deadline - time.monotonic(), 0.0)))
                except subprocess.TimeoutExpired:
                    pass
                else:
                    break
                counted = time.monotonic()
                stopped = _past(scratch, bounds)
                # Thousands of folders make a count cost: it takes a fifth of the time at most.
                pause = max(POLL_S, 4 * (time.monotonic() - counted))
                if stopped is None and time.monotonic() >= bounds.deadline:
                    took = time.monotonic() - begun
                    stopped = TimeSpent(f"readpst stopped after {took:.0f} s, {_LEFT}")
        finally:
            if proc.returncode is None:
                kill_with_children(proc.pid)
                proc.wait()
        if stopped is None:
            stopped = _past(scratch, bounds)  # what it wrote since the last count
        err.seek(max(os.fstat(err.fileno()).st_size - _ERR_KEPT, 0))
        return proc.returncode, err.read(), stopped


def _past(scratch: str, bounds: _Bounds) -> Stop:
    """The bound the files under ``scratch`` have passed (readpst's messages file is one of
    them), if any."""
    size, count = _written_under(scratch)
    if size > bounds.bytes:
        left = bounds.bytes
        return LimitExceeded("archive_bytes", f"readpst wrote more than the {left:,} bytes left")
    if count > bounds.files + 1:
        return LimitExceeded("archive_members", f"readpst wrote more than {bounds.files:,} files")
    return None


def _written_under(folder: str) -> tuple[int, int]:
    """The bytes and the number of the files under ``folder`` (no link followed; one gone
    meanwhile is 0 bytes)."""
    total = count = 0
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
                    else:
                        total += st.st_size
                        count += 1
        except OSError:
            continue
    return total, count


def _tail(err: bytes, code: int) -> str:
    """readpst's last message, or how it ended."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    if lines:
        return lines[-1][:200]
    return f"killed by signal {-code}" if code < 0 else f"exit {code}"


def _failure(code: int, err: bytes) -> CorruptFile | ToolFailed:
    """The verdict on a run that wrote nothing: a file readpst could not read is damaged (or
    no PST); readpst killed by a signal is the tool's failure."""
    if code < 0:
        return ToolFailed(f"readpst {_tail(err, code)}")
    return CorruptFile(f"readpst could not read it: {_tail(err, code)}")


READERS = (PstReader(),)
