"""A tool's standard output read as it comes, under the read's bounds: :func:`piped`.

:meth:`~engine.readers.base.ReadContext.run_tool` hands a reader a tool's whole output once the
tool has exited. An archive tool's output is every member of the archive (``bsdtar`` turns a
RAR into a tar stream), far more than a read keeps, and the reader must be able to stop it the
moment a bound is reached: here the reader reads the tool's standard output as a stream, and
the tool is killed when the reader leaves it early, when its time runs out (the tool's own
``tool_timeout_s`` or what is left of the read's, as for ``run_tool``) and whatever else ends
the read. The tool runs in the worker's process group, as ``run_tool``'s do (see
:func:`~engine.readers.base.tool_argv`), so the pool's kill of a read takes it too.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from engine.errors import CorruptFile, ReadFailure, ToolFailed
from engine.ptree import kill_with_children
from engine.readers.base import ReadContext, ToolCall

DRAIN_BYTES = 1 << 20
"""Output a tool may still write once the reader has all it wanted (a tar stream's padding is
at most 10 KiB): past this the tool is stopped rather than read to its end."""
FEED_WAIT_S = 1.0
"""How long an ended tool's threads (its standard error's reader, its feeder) are waited for:
each ends with the tool's pipes."""
ERROR_BYTES = 4096
"""Bytes of the tool's standard error kept (its first ones: the cause comes before the
"exited with errors" lines that end it)."""
_NOISE = re.compile(r"error exit delayed|^\s*$|^\S+: \(null\)$", re.IGNORECASE)
"""Lines that say nothing: bsdtar's closing line, and the "(null)" it prints for an error it
has no words for (an archive cut short, in its create mode)."""


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """How a piped tool ended."""

    code: int | None
    """Its exit status (negative: the signal that killed it); None when it was stopped
    because the reader was done with it."""
    error: str
    """The first telling line of its standard error, without the tool's name before it."""
    timed_out: bool = False
    """Killed because its time ran out."""


class Piped:
    """A running tool whose standard output the reader reads (:attr:`stdout`)."""

    def __init__(
        self, proc: subprocess.Popen[bytes], call: ToolCall, feed: IO[bytes] | None = None
    ) -> None:
        self.tool = call.tool
        self._call = call
        self._proc = proc
        assert proc.stdout is not None and proc.stderr is not None
        self.stdout: IO[bytes] = proc.stdout
        self._err = bytearray()
        self._timed_out = False
        self._stopped = False
        self._drain = threading.Thread(target=self._keep_errors, args=(proc.stderr,), daemon=True)
        self._drain.start()
        self._feed: threading.Thread | None = None
        if feed is not None and proc.stdin is not None:
            self._feed = threading.Thread(target=_copy, args=(feed, proc.stdin), daemon=True)
            self._feed.start()
        self._timer = threading.Timer(call.timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _keep_errors(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read(65536):
                room = ERROR_BYTES - len(self._err)
                if room > 0:
                    self._err += chunk[:room]

    def _expire(self) -> None:
        if self._proc.poll() is None:
            self._timed_out = True
            self._kill()

    def _kill(self) -> None:
        if self._proc.returncode is None:  # not reaped: the pid is still the tool's
            kill_with_children(self._proc.pid)

    def end(self) -> ToolEnd:
        """Read what the tool still writes (at most :data:`DRAIN_BYTES`), wait for its exit
        within its time, and say how it ended; a tool still writing past that is stopped."""
        left = DRAIN_BYTES
        with contextlib.suppress(OSError, ValueError):
            while left > 0 and (chunk := self.stdout.read(min(65536, left))):
                left -= len(chunk)
        if left <= 0:
            self._stopped = True
        return self._finish()

    def stop(self) -> ToolEnd:
        """Stop the tool now, whatever it was doing (the reader needs nothing more of it)."""
        if self._proc.poll() is None:
            self._stopped = True
        return self._finish()

    def _finish(self) -> ToolEnd:
        if self._stopped:
            self._kill()
        self._proc.wait()  # the timer kills it at the latest
        self._timer.cancel()
        # Bounded: a child the tool left holding its standard error (or a read of the file
        # that hangs) keeps a thread alive, not the read; the pool stops what outlives it.
        self._drain.join(FEED_WAIT_S)
        if self._feed is not None:
            self._feed.join(FEED_WAIT_S)
        for stream in (self.stdout, self._proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        code = None if self._stopped and not self._timed_out else self._proc.returncode
        return ToolEnd(code, _first_line(bytes(self._err), self.tool), self._timed_out)

    def failure(self, end: ToolEnd) -> ReadFailure | None:
        """What a tool that ended as ``end`` says about the read: None when it did its work
        (or was stopped because the reader had all it wanted)."""
        if end.timed_out:
            return self._call.ran_out()
        if end.code is None or end.code == 0:
            return None
        return ToolFailed(f"{self.tool} exited {end.code}: {end.error[:200]}")


def _copy(source: IO[bytes], sink: IO[bytes]) -> None:
    """Write ``source`` into the tool's standard input, then close both; a tool that stops
    reading (it is done, or was stopped) ends the copy."""
    try:
        with source, sink:
            while chunk := source.read(65536):
                sink.write(chunk)
    except (OSError, ValueError):  # EPIPE: the tool is gone
        pass


def _first_line(err: bytes, tool: str) -> str:
    prefix = f"{tool}: "
    for raw in err.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if _NOISE.search(line):
            continue
        return line.removeprefix(prefix)[:300]
    return ""


@contextmanager
def piped(
    ctx: ReadContext, tool: str, args: Sequence[str], feed: Path | None = None
) -> Iterator[Piped]:
    """Run ``tool`` with ``args``, its standard output a stream for the block; the tool is
    stopped when the block is left, however it is left. ``feed``: a file written into the
    tool's standard input through a pipe (a tool that could seek in the file itself may
    read it otherwise: libarchive takes a RAR whose last member is a stored zip for a zip).

    Raises NeedsTool when the tool is not in the read's tool set, ReadTimeout when the read's
    time is spent before it starts and ToolFailed when it cannot start; how it ended is
    :meth:`Piped.end`'s answer, asked in the block.
    """
    call = ctx.tool_call(tool, args)
    try:
        source = None if feed is None else open(feed, "rb")  # noqa: SIM115 (the feeder's)
    except OSError as exc:
        raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
    try:
        proc = subprocess.Popen(
            call.argv,
            stdin=subprocess.DEVNULL if source is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=call.preexec,
        )
    except OSError as exc:
        if source is not None:
            source.close()
        raise call.could_not_start(exc) from exc
    pipe = Piped(proc, call, source)
    try:
        yield pipe
    finally:
        pipe.stop()
