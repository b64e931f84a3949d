"""The reader interface: what a format family implements and what it is given.

A reader is a small object with a name, a version, the MIME types it handles and the external
tools it can use. ``read`` writes text into a :class:`TextSink` and returns a :class:`ReadInfo`;
any failure is a :class:`engine.errors.ReadFailure` subclass. Readers run inside worker
processes (``engine.isolate``), so they may be killed at any time and must not write anywhere
but the sink.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import select
import signal
import subprocess
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from engine.errors import (
    CorruptFile,
    LimitExceeded,
    NeedsTool,
    ReadFailure,
    ReadTimeout,
    ToolFailed,
)
from engine.limits import DEFAULT_LIMITS, Limits
from engine.ptree import kill_with_children
from engine.records import Member
from engine.tools import ToolSet

_PR_SET_PDEATHSIG = 1


def die_with_parent(code: int = 1) -> None:
    """Ask the kernel for SIGKILL when our parent exits; exit ``code`` now if it already has.

    Workers call it at start; a tool run where no guard runs (:func:`guard_group`) calls it
    between fork and exec, so nothing a read started outlives the process that started it,
    whatever killed that one.
    """
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request took hold
        os._exit(code)


GUARD_SHELL = "/bin/sh"
"""The shell that runs a worker's guard (:func:`guard_group`)."""
_GUARD_SCRIPT = "read line; kill -KILL 0"
"""Wait for the end of standard input (the worker's end of the pipe closes when it dies,
whatever kills it), then SIGKILL the whole process group: the worker's tools and the guard."""
_guard: list[tuple[subprocess.Popen[bytes], int]] = []
"""This process's guard and the write end of its pipe, once :func:`guard_group` started it."""


def guard_group() -> bool:
    """Start a guard that kills this process's group the moment this process dies.

    For a worker, which leads its own group, and the tools its reads run in it: a shell blocked
    reading a pipe whose only writer is this process. Its death closes the pipe, however it
    came (the parent-death signal after a SIGKILLed engine, the OOM killer, a crash), and the
    guard kills the group at once: no tool outlives the read that started it. The tools then
    need nothing between fork and exec and start as cheaply as a spawn can make them (they
    carried a parent-death signal of their own, set by ``setpriv``: a second program started
    for each tool run, 6% of the CPU of a sweep of the shared corpus). Returns whether the
    guard runs (False: no shell to run it; tools then get the parent-death hook).
    """
    if _guard:
        return True
    read_end, write_end = os.pipe()  # neither inherited by what this process starts later
    try:
        guard = subprocess.Popen(
            [GUARD_SHELL, "-c", _GUARD_SCRIPT],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        os.close(write_end)
        return False
    finally:
        os.close(read_end)
    _guard.append((guard, write_end))  # held open for the life of this process: the guard
    return True


def tool_argv(exe: str, args: Sequence[str]) -> tuple[list[str], Callable[[], None] | None]:
    """The command line and the ``preexec_fn`` that run a tool which dies with its worker.

    With the worker's guard running (:func:`guard_group`) the tool needs nothing of its own:
    the guard kills it with the worker's group. Elsewhere (a process without a guard: a test,
    a machine without ``/bin/sh``) the tool sets its own parent-death signal between fork and
    exec, which makes subprocess fork the whole process and run Python in the child (~5 ms a
    tool run against ~1 ms).
    """
    if _guard:
        return [exe, *args], None
    return [exe, *args], die_with_parent


def run_bounded(
    argv: list[str], stdin: bytes | None, timeout: float, preexec: Callable[[], None] | None
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)``, but the
    exit is awaited on a pidfd where there is one (see :class:`_Tool`).

    Raises TimeoutExpired (the tool killed first) and OSError as ``subprocess.run`` does.
    """
    with _Tool(
        argv,
        stdin=None if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=preexec,
    ) as proc:
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_with_children(proc.pid)  # what it started holds its output open too
            proc.communicate()
            raise
        except BaseException:
            proc.kill()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


class _Tool(subprocess.Popen[bytes]):
    """A tool's process whose timed wait for its exit sleeps on a pidfd.

    ``communicate(timeout=...)`` ends with ``wait(timeout)``, which subprocess does by looking
    for the exit, sleeping 1, 2, 4... ms between looks. A tool closes its output a moment
    before it exits, so most runs found it still there and lost a millisecond or more, the
    worker idle meanwhile (pdftotext on 175 PDFs: 0.12 s). A pidfd is readable the moment
    the tool exits. Without one (an old kernel) subprocess's own wait is used.
    """

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit, at most ``timeout`` seconds (TimeoutExpired after that)."""
        if timeout is not None and self.returncode is None:
            _await_exit(self, timeout)
        return super().wait(timeout)


def _await_exit(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Return once ``proc`` has exited (TimeoutExpired after ``timeout`` seconds); return at
    once where there is no pidfd to wait on (the caller's wait then does it all)."""
    if not hasattr(os, "pidfd_open"):
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:  # an old kernel: subprocess's own wait
        return
    try:
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
    finally:
        os.close(fd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)


class TextCapReached(Exception):
    """Raised by :meth:`TextSink.write` once ``max_chars`` have been kept."""


class TextSink:
    """Collects a reader's text up to a character cap.

    Reaching the cap raises :class:`TextCapReached`; the harness catches it, keeps what was
    written and appends a line naming the cap.
    """

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._parts: list[str] = []
        self._n = 0
        self.capped = False
        self.info: ReadInfo | None = None
        """What the reader has said so far (see :meth:`describe`); kept when a cap stops it."""

    def describe(self, extractor: str, pages: int | None = None) -> None:
        """Say what is producing the text before writing it, so a capped read keeps it."""
        self.info = ReadInfo(extractor=extractor, pages=pages)

    def write(self, text: str) -> None:
        """Append ``text``; raises TextCapReached once the cap is reached."""
        if not text:
            return
        room = self.max_chars - self._n
        if len(text) > room:
            if room > 0:
                self._parts.append(text[:room])
                self._n += room
            self.capped = True
            raise TextCapReached
        self._parts.append(text)
        self._n += len(text)

    def line(self, text: str) -> None:
        """Append ``text`` and a newline."""
        self.write(text + "\n")

    def end_line(self) -> None:
        """End the line in progress (nothing when there is none: no text, or a newline last)."""
        if self._parts and not self._parts[-1].endswith("\n"):
            self.write("\n")

    def rows(self, header: str, rows: Iterable[Sequence[str]]) -> None:
        """A spreadsheet's block: ``header`` (``# sheetN``) and each row that has any text,
        its cells tab-separated; nothing at all when none has (a blank sheet has no line)."""
        for cells in rows:
            if any(cells):
                if header:
                    self.line(header)
                    header = ""
                self.line("\t".join(cells))

    def __len__(self) -> int:
        return self._n

    def getvalue(self) -> str:
        """Everything written so far."""
        return "".join(self._parts)


@dataclass(frozen=True, slots=True)
class ReadInfo:
    """What a reader says about a finished read, besides the text."""

    extractor: str
    """What produced the text: ``text:cp1252``, ``pdftotext``, ``pypdf``, ``tesseract``..."""
    pages: int | None = None
    """Pages, slides or sheets, when the format has them."""
    scanned: bool = False
    """True when the document has pages but no text layer (needs OCR)."""
    members: tuple[Member, ...] = ()
    """For a container: the verdict on each document inside it."""
    note: str | None = None
    """A remark for the record's ``error`` field on a good read (``2 of 9 members not read``)."""
    needs: tuple[str, ...] = ()
    """For a container: the tools its unread members wait on (any one reads some of them)."""


class ArchiveBudget:
    """Decompressed bytes that the containers of one read may still spend (``archive_bytes``).

    Shared by a read and every container nested in it, so a zip of zips cannot multiply it.
    """

    def __init__(self) -> None:
        self.used = 0
        """Bytes spent so far."""

    def spend(self, n: int, limits: Limits) -> None:
        """Count ``n`` more bytes; LimitExceeded past ``limits.archive_bytes``."""
        self.used += n
        if self.used > limits.archive_bytes:
            raise LimitExceeded(
                "archive_bytes", f"members inflate past {limits.archive_bytes} bytes in all"
            )


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool about to run for a read: its command line, and the time it has."""

    tool: str
    argv: list[str]
    preexec: Callable[[], None] | None
    """What runs between fork and exec (see :func:`tool_argv`)."""
    timeout: float
    """Seconds it may run: its own ``tool_timeout_s``, or what is left of the read's."""
    short: bool
    """The read's time left, shorter than the tool's own, bounds it."""
    budget: float
    """The read's whole time (``timeout_s``), for the verdict."""

    def ran_out(self) -> ReadFailure:
        """The verdict on a tool stopped at its time: the read's timeout when the read's
        time ran out, the tool's failure when its own did."""
        if self.short:
            return ReadTimeout(f"{self.tool} stopped: the read's {self.budget:g} s ran out")
        return ToolFailed(f"{self.tool} timed out after {self.timeout:.0f} s")

    def could_not_start(self, exc: OSError) -> ToolFailed:
        """The verdict on a tool that could not be started."""
        return ToolFailed(f"{self.tool} could not start: {exc.strerror or exc}")


@dataclass(frozen=True, slots=True)
class ReadContext:
    """Everything a reader may use besides the file: bounds, tools and the deadline."""

    mime: str
    """The detected MIME type."""
    limits: Limits = DEFAULT_LIMITS
    """Bounds of this read."""
    tools: ToolSet = field(default_factory=ToolSet.empty)
    """External tools this read may use (already filtered by --no-external / --without)."""
    deadline: float = float("inf")
    """``time.monotonic()`` value after which the read is over."""
    depth: int = 0
    """Containers this read is inside (0 for a walked file; archive members are 1 deeper)."""
    budget: ArchiveBudget = field(default_factory=ArchiveBudget)
    """Decompressed bytes left to the containers of this read (shared with nested reads)."""
    data: bytes | None = None
    """The file's whole content when the worker already read all of it while hashing it (a
    file of at most :data:`~engine.detect.HEAD_BYTES`), else None: a reader may use these
    bytes instead of opening ``path``. Never passed to a nested read (see
    :func:`engine.readers.members.read_file`)."""

    def remaining(self) -> float:
        """Seconds left of this read's budget."""
        return self.deadline - time.monotonic()

    def require(self, *tools: str) -> None:
        """Raise NeedsTool naming every one of ``tools`` (all needed) that this read lacks."""
        missing = [tool for tool in tools if not self.tools.has(tool)]
        if missing:
            raise NeedsTool(*missing, message=f"needs {' and '.join(missing)} on this machine")

    def tool_call(self, tool: str, args: Sequence[str]) -> ToolCall:
        """``tool`` with ``args``, about to run for this read (:meth:`run_tool`, and
        :func:`engine.readers.toolpipe.piped` for a tool read as it writes).

        Raises NeedsTool when the tool is not in the tool set, ReadTimeout when the read's
        time is spent before it could start.
        """
        exe = self.tools.path(tool)
        if exe is None:
            raise NeedsTool(tool)
        left = self.remaining()
        budget = self.limits.timeout_s
        if left <= 0:
            raise ReadTimeout(f"the read's {budget:g} s were spent before {tool} could run")
        argv, preexec = tool_argv(exe, args)
        short = left < self.limits.tool_timeout_s
        return ToolCall(tool, argv, preexec, min(self.limits.tool_timeout_s, left), short, budget)

    def run_tool(self, tool: str, args: Sequence[str], *, stdin: bytes | None = None) -> bytes:
        """Run ``tool`` with ``args``; return stdout. Timeout clipped to the read's budget.

        Raises NeedsTool when the tool is not in the tool set, ReadTimeout when the read's
        budget is spent (before the tool starts, or while it runs: that is the read's
        timeout, not the tool's failure) and ToolFailed when it exits non-zero or passes its
        own ``tool_timeout_s``. The tool stays in the worker's process group, which the pool
        kills whole when a read times out or its worker dies, and which the worker's guard
        (:func:`guard_group`) kills whatever kills the worker, so no tool outlives its read.
        """
        call = self.tool_call(tool, args)
        try:
            proc = run_bounded(call.argv, stdin, call.timeout, call.preexec)
        except subprocess.TimeoutExpired as exc:
            raise call.ran_out() from exc
        except OSError as exc:
            raise call.could_not_start(exc) from exc
        if proc.returncode != 0:
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise ToolFailed(f"{tool} exited {proc.returncode}: {tail[0][:200]}")
        return proc.stdout


@runtime_checkable
class Reader(Protocol):
    """A format family's reader."""

    name: str
    """Short family name recorded in ``Record.reader`` (``text``, ``pdf``, ``docx``...)."""
    version: int
    """Bumped whenever the reader's output changes; redoes only this reader's records."""
    mimes: frozenset[str]
    """MIME types this reader handles."""
    tools: tuple[str, ...]
    """External tools this reader can use (possibly none)."""

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the text of ``path`` into ``sink``; raise a ReadFailure on failure."""
        ...


@contextmanager
def quiet_library(logger_name: str, level: int = logging.ERROR) -> Iterator[None]:
    """Silence a library's warnings and logging below ``level`` for one read.

    Parsers warn about every oddity of a hostile file; none of that is our diagnostic, and
    the suite turns warnings into errors.
    """
    logger = logging.getLogger(logger_name)
    before = logger.level
    logger.setLevel(level)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(before)


@contextmanager
def csv_fields(limit: int, malformed: str = "malformed CSV") -> Iterator[None]:
    """Read CSV in the block with fields of at most ``limit`` characters; the csv module's
    error becomes a verdict: LimitExceeded for a field past it, else CorruptFile
    (``malformed``: what to call the table).

    The csv module's field limit is one setting for the whole process: the block sets its
    own and gives the process back the one it had, so nothing else that reads CSV in this
    process (an export read back, another reader) inherits the cap.
    """
    import csv

    before = csv.field_size_limit(limit)
    try:
        yield
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise LimitExceeded(
                "csv_field_chars", f"a field is longer than {limit} characters"
            ) from exc
        raise CorruptFile(f"{malformed}: {exc}") from exc
    finally:
        csv.field_size_limit(before)


def read_all(path: Path) -> bytes:
    """The bytes of ``path``; an OS error becomes CorruptFile naming only its cause."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
