"""A fault-injection reader for the isolation tests: it lives under ``tests/``, never in the
package.

Tests bring it in as any extra reader comes in: in this process and the workers it starts
with ``registry.use_extra((SPEC,))`` (the ``fault_reader`` fixture, or
``SweepOptions(readers=(SPEC,))``), in a ``quarry`` they run with ``--reader`` (:data:`ARGS`)
and :func:`env` (which puts this checkout on its ``PYTHONPATH``). It reads files whose content
starts with
:data:`MAGIC` (the NUL makes detection call them ``application/octet-stream``, which no real
reader claims) followed by an action word and an optional argument::

    \\x00QUARRY-FAULT hang            sleep without end (a wall-clock timeout must catch it)
    \\x00QUARRY-FAULT busy            spin the CPU without end
    \\x00QUARRY-FAULT alloc           allocate until RLIMIT_AS says no (MemoryError)
    \\x00QUARRY-FAULT oom             die by SIGKILL, as the kernel's OOM killer does
    \\x00QUARRY-FAULT exit            os._exit(3)
    \\x00QUARRY-FAULT segv            a segmentation fault
    \\x00QUARRY-FAULT flood           100 MB on stdout and stderr, then text past the cap
    \\x00QUARRY-FAULT raise           an unexpected Python exception
    \\x00QUARRY-FAULT tool <pidfile>  start a tool (``sleep``) as run_tool does, then hang
    \\x00QUARRY-FAULT vanish <exe>    delete the tool ``quarry-fault-tool``, then run it
    \\x00QUARRY-FAULT ok              a clean read
    \\x00QUARRY-FAULT halves          a text with UTF-16 halves in it (a pair, and a lone one)
    \\x00QUARRY-FAULT edit <path>     overwrite <path> mid-read (once: while it holds these bytes)
    \\x00QUARRY-FAULT churn           append to itself on every read (a file never still)
    \\x00QUARRY-FAULT delete          delete itself mid-read
    \\x00QUARRY-FAULT runtool <arg>   run ``quarry-fault-tool <arg>`` through ``run_tool``
    \\x00QUARRY-FAULT where <file>    write the path it is read from (a member's scratch
                                    copy, inside an archive) into <file>, then hang
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink

SPEC = "tests.faultreader"
"""The reader's name for ``registry.use_extra``, ``SweepOptions.readers`` and ``--reader``."""
ARGS = ("--reader", SPEC)
"""The flags that give a ``quarry`` command this reader."""
CHECKOUT = str(Path(__file__).resolve().parent.parent)
"""The folder ``tests`` is imported from."""


def env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (the environment by default) with this checkout first on ``PYTHONPATH``, so
    that a ``quarry`` run by a test, and its workers, can import this module."""
    out = dict(os.environ if base is None else base)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [CHECKOUT, out.get("PYTHONPATH", "")]))
    return out


MAGIC = b"\x00QUARRY-FAULT "
"""Start of every fault fixture."""
MIME = "application/octet-stream"
TOOL = "quarry-fault-tool"
"""The tool the ``vanish`` fault deletes and then runs."""


def fixture(action: str, arg: str = "") -> bytes:
    """The bytes of a fault fixture for ``action``."""
    return MAGIC + f"{action} {arg}".strip().encode() + b"\n"


class FaultReader:
    """Does to its worker what the fixture asks."""

    name = "fault"
    version = 1
    mimes = frozenset({MIME})
    tools: tuple[str, ...] = (TOOL,)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Act out the fixture's fault."""
        head = path.read_bytes()[:4096]
        if not head.startswith(MAGIC):
            raise CorruptFile("not a fault fixture")
        first = head[len(MAGIC) :].split(b"\n", 1)[0]
        action, _, arg = first.decode().strip().partition(" ")
        act = _ACTIONS.get(action)
        if act is None:
            raise CorruptFile(f"unknown fault {action!r}")
        if action in _ON_ITSELF:
            _ON_ITSELF[action](path, head)
            arg = str(path)
        act(arg, ctx, sink)
        return ReadInfo(extractor="fault")


def _hang(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    while True:
        time.sleep(3600)


def _busy(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    n = 0
    while True:
        n += 1


def _alloc(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    hoard = []
    while True:
        hoard.append(bytearray(32 * 1024 * 1024))


def _oom(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _exit(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    os._exit(3)


def _segv(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    ctypes.string_at(0)


def _flood(_arg: str, ctx: ReadContext, sink: TextSink) -> None:
    block = b"flood " * (1 << 16)
    for _ in range(100 * (1 << 20) // len(block)):
        os.write(1, block)
        os.write(2, block)
    line = "flood of text\n" * 1024
    while True:
        sink.write(line)  # stops with TextCapReached at the cap


def _raise(_arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    raise RuntimeError("a reader bug")


def _tool(arg: str, _ctx: ReadContext, _sink: TextSink) -> None:
    # A tool in a session of its own: the pool must find and kill it all the same.
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    Path(arg).write_text(str(proc.pid))
    while True:
        time.sleep(3600)


def _vanish(arg: str, ctx: ReadContext, _sink: TextSink) -> None:
    Path(arg).unlink()
    ctx.run_tool(TOOL, [])


def _where(path: Path, head: bytes) -> None:
    """Tell the test where this copy lies (an archive member's is in a scratch folder)."""
    target = Path(head[len(MAGIC) :].split(b"\n", 1)[0].decode().split(" ", 1)[1])
    target.write_text(str(path))


def _ok(_arg: str, _ctx: ReadContext, sink: TextSink) -> None:
    sink.line("fault reader: a clean read")


HALVES = "Gothic \ud800\udf30\ud800\udf31 and a lone \ud800 half\n"
"""What the ``halves`` fault writes: what pypdf made of a Gothic text."""


def _halves(_arg: str, _ctx: ReadContext, sink: TextSink) -> None:
    sink.write(HALVES)


def _slow(_arg: str, _ctx: ReadContext, sink: TextSink) -> None:
    time.sleep(0.2)  # longer than the worker's SEND_AFTER_S: what was read before is sent
    sink.line("fault reader: a slow read")


EDITED = b"edited in the middle of its read\n"
"""What the ``edit`` fault writes over its target."""


def _edit(path: Path, head: bytes) -> None:
    """The race of issue 11: the file changes between its hash and the end of its read."""
    target = Path(head[len(MAGIC) :].split(b"\n", 1)[0].decode().split(" ", 1)[1])
    if target.read_bytes() == path.read_bytes():
        # Whole at once, as an editor saves: written in place, the file was empty between the
        # truncation and the write, and a loaded CI read it then (a true record of the empty
        # file, which the test did not expect).
        # Its own temporary per process: a copy of this fixture read at the same moment on
        # the other worker edits the same target, and a shared name lost one of the two
        # renames (a reader crash on the copy: CI, stop 39).
        tmp = target.with_name(f".{target.name}.edited.{os.getpid()}")
        tmp.write_bytes(EDITED)
        os.replace(tmp, target)


def _churn(path: Path, _head: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(b"x")


def _delete(path: Path, _head: bytes) -> None:
    path.unlink()


def _read_on(_arg: str, _ctx: ReadContext, sink: TextSink) -> None:
    sink.line("fault reader: read before the file changed")


def _runtool(arg: str, ctx: ReadContext, sink: TextSink) -> None:
    sink.write(ctx.run_tool(TOOL, [arg]).decode())


_ON_ITSELF = {"edit": _edit, "churn": _churn, "delete": _delete, "where": _where}

_ACTIONS = {
    "runtool": _runtool,
    "edit": _read_on,
    "churn": _read_on,
    "delete": _read_on,
    "hang": _hang,
    "busy": _busy,
    "alloc": _alloc,
    "oom": _oom,
    "exit": _exit,
    "segv": _segv,
    "flood": _flood,
    "raise": _raise,
    "tool": _tool,
    "vanish": _vanish,
    "ok": _ok,
    "halves": _halves,
    "slow": _slow,
    "where": _hang,
}

READERS = (FaultReader(),)
