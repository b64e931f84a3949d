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
base64-encoded): the scratch folder's bytes are counted while it runs, and past what is left
of ``archive_bytes`` it is stopped, the read ``error/limit``; its time is the tool's, as for
any tool. A file readpst cannot read (not a PST, a damaged index) is ``error/corrupt`` with
its words; what it wrote before it failed is read, and the read says it stopped.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, ToolFailed
from engine.ptree import kill_with_children
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink, ToolCall
from engine.readers.members import MemberReader, check_time, scratch_dir

POLL_S = 0.02
"""How often the bytes readpst has written are counted while it runs."""
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
            left = ctx.limits.archive_bytes - ctx.budget.used
            code, err = _run_counted(call, scratch, left, ctx.limits.archive_members)
            names = _written(out)
            if code != 0 and not names:
                raise _failure(code, err)
            with MemberReader(ctx, sink) as members:
                try:
                    for name in names:
                        check_time(ctx, f"{members.count} folders")
                        _read_one(members, ctx, out, name)
                except (LimitExceeded, TextCapReached):
                    sink.info = members.finish("readpst")
                    raise
                info = members.finish("readpst")
        if code != 0:
            stopped = f"readpst stopped before the end ({_tail(err, code)})"
            note = f"{info.note}; {stopped}" if info.note else stopped
            return ReadInfo(info.extractor, members=info.members, note=note, needs=info.needs)
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


def _run_counted(call: ToolCall, scratch: str, budget: int, files: int) -> tuple[int, bytes]:
    """Run ``call`` in ``scratch`` until it exits; its exit code and its messages.

    Raises LimitExceeded when what it wrote passes ``budget`` bytes (``archive_bytes``) or
    ``files`` files (``archive_members``: a file of a million folders must not fill the
    disk's inodes), and the tool's time verdict (:meth:`ToolCall.ran_out`) when its time runs
    out; it is killed with whatever it started either way."""
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
        deadline = time.monotonic() + call.timeout
        try:
            while proc.poll() is None:
                try:
                    proc.wait(timeout=min(POLL_S, max(deadline - time.monotonic(), 0.0)))
                except subprocess.TimeoutExpired:
                    pass
                else:
                    break
                _check_written(scratch, budget, files)
                if time.monotonic() >= deadline:
                    raise call.ran_out()
        except BaseException:
            kill_with_children(proc.pid)
            proc.wait()
            raise
        _check_written(scratch, budget, files)  # what it wrote since the last count
        err.seek(max(os.fstat(err.fileno()).st_size - _ERR_KEPT, 0))
        return proc.returncode, err.read()


def _check_written(scratch: str, budget: int, files: int) -> None:
    """LimitExceeded when the files under ``scratch`` pass ``budget`` bytes or ``files``
    files (readpst's messages file is one of them)."""
    size, count = _written_under(scratch)
    if size > budget:
        raise LimitExceeded("archive_bytes", f"readpst wrote more than the {budget:,} bytes left")
    if count > files + 1:
        raise LimitExceeded("archive_members", f"readpst wrote more than {files:,} files")


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
