"""A big ``extract.jsonl`` parsed by helper processes, a part each, beside the dashboard.

Decoding a million records is seconds of Python holding the GIL; split over processes it
takes a fraction of that on every core, and the dashboard's own process only unpickles
finished columns. The parent parses the first block itself (the first screen fills at once),
cuts the rest into one part per process at line ends, and runs :func:`_child` (``FD START
STOP CHUNK_ROWS``) in a new Python for each, at :data:`HELPER_NICE`: the child reads the same
open file (its descriptor is passed, so a store replaced meanwhile is still the version being
loaded) and writes its chunks to stdout as length-prefixed pickles. Chunks are yielded in file
order, with line numbers of lines that are not records counted from the file's start, exactly
as one process would give them.

A child that cannot start, dies or writes garbage costs time, never rows: whatever it did not
deliver is parsed here. No Textual.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Generator, Iterator
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

from engine.store import BadLine, Store
from tui.loader import BLOCK_BYTES, FIRST_BYTES, Chunk, JsonlSource, parse_range, read_jsonl

PARALLEL_BYTES = 32 << 20
"""Stores from this size (about 70,000 records) are parsed by helper processes."""
HELPER_NICE = 10
"""How much nicer than the dashboard its helpers run: on a machine with few cores they parse
with what the dashboard leaves (started before its first frame, they made that frame 2-3x
later on two loaded cores; at 10 the frame kept its time and the full count did not slow)."""
_CHILD = (
    f"import os, sys; os.nice({HELPER_NICE}); "
    "from tui.loadpart import _child; sys.exit(_child(sys.argv[1:]))"
)
"""A helper's program: niced before it imports anything."""
_HEADER = struct.Struct("<Q")
_END = b""
"""What a reader thread queues when its child's output ends (or fails)."""


def load_all(src: JsonlSource, chunk_rows: int = 50_000) -> Iterator[Chunk]:
    """Every chunk of ``src`` in order: by helper processes for a big file on disk, else here
    (see :class:`Load`)."""
    load = Load(src, chunk_rows)
    yield from load.first()
    yield from load.rest()


class Load:
    """One load of ``src``: its first block, parsed by whoever asks for it (the dashboard, on
    its UI thread, so that its first frame has rows), and the rest, from helper processes
    started here for a big file on disk (:data:`PARALLEL_BYTES`, :func:`_processes`), else
    parsed by whoever iterates :meth:`rest`."""

    def __init__(
        self,
        src: JsonlSource,
        chunk_rows: int = 50_000,
        first: int = FIRST_BYTES,
        processes: int | None = None,
    ) -> None:
        self.src, self.chunk_rows = src, chunk_rows
        head = src.read(0, first) if src.size else b""
        # the first block ends at a line's end; one enormous first line leaves it empty
        self.first_stop = src.size if len(head) >= src.size else head.rfind(b"\n") + 1
        self.lines = 0
        """Lines of the first block (once :meth:`first` ran)."""
        procs = _processes() if processes is None else processes  # given: whatever the size
        big = src.size >= PARALLEL_BYTES or processes is not None
        self.parts: list[_Part] = []
        if big and procs > 1 and src.fileno() >= 0 and 0 < self.first_stop < src.size:
            cuts = _cuts(src, self.first_stop, procs)
            self.parts = [_Part(src, a, b, chunk_rows) for a, b in pairwise(cuts) if a < b]

    def first(self) -> list[Chunk]:
        """The chunks of the first block (a few hundred records: milliseconds)."""
        chunks = []
        for chunk, lines in parse_range(self.src, 0, self.first_stop, self.chunk_rows):
            chunks.append(chunk)
            self.lines = lines
        return chunks

    def rest(self) -> Iterator[Chunk]:
        """The chunks after the first block, in order (after :meth:`first`)."""
        try:
            if self.parts:
                before = self.lines
                for part in self.parts:
                    before = yield from _deliver(self.src, part, self.chunk_rows, before)
                return
            stop, rows = self.src.size, self.chunk_rows
            for chunk, _ in parse_range(self.src, self.first_stop, stop, rows, first=BLOCK_BYTES):
                yield _renumbered(chunk, self.lines)
        finally:
            self.stop()

    def stop(self) -> None:
        """The load was abandoned (the app quit) or is over: no child outlives it."""
        for part in self.parts:
            part.stop_child()


_early: dict[str, Load] = {}


def start_early(store: Store) -> None:
    """Start the helper processes of the store ``path`` now, before the dashboard has even
    imported Textual (``quarry ui``): they parse while it starts. The app takes the load with
    :func:`take_early`; a store too small for helpers is left for the app to open."""
    try:
        src = read_jsonl(store)
    except OSError:  # the app will say what is wrong with it
        return
    load = Load(src)
    if not load.parts:
        src.close()
        return
    _early[os.fsdecode(store.jsonl_path)] = load
    atexit.register(load.stop)  # never taken (the app failed to start): no child left


def take_early(path: Path) -> Load | None:
    """The load :func:`start_early` began for ``path``, if any (once)."""
    return _early.pop(os.fsdecode(path), None)


def _processes() -> int:
    """Helper processes for a big store: one per core, at most 4; ``QUARRY_LOAD_PROCS``
    sets it (1: parse in the dashboard's process only)."""
    wanted = os.environ.get("QUARRY_LOAD_PROCS", "")
    if wanted.isdigit():
        return int(wanted)
    return min(os.cpu_count() or 1, 4)


def _cuts(src: JsonlSource, start: int, parts: int) -> list[int]:
    """``parts + 1`` offsets from ``start`` to the file's end, each just after a newline."""
    cuts = [start]
    step = (src.size - start) // parts
    for k in range(1, parts):
        at = max(start + k * step, cuts[-1])
        buf = src.read(at, 1 << 16)
        while buf and b"\n" not in buf:  # a long line: look further
            more = src.read(at + len(buf), 1 << 20)
            if not more:
                break
            buf += more
        nl = buf.find(b"\n")
        cuts.append(src.size if nl < 0 else at + nl + 1)
    cuts.append(src.size)
    return cuts


class _Part:
    """One child process and the frames it wrote, read by a thread (pipes never fill up)."""

    def __init__(self, src: JsonlSource, start: int, stop: int, chunk_rows: int) -> None:
        self.start, self.stop = start, stop
        self.most = 16 * (stop - start) + (1 << 20)
        """Bytes a frame of this part can take, at most (its columns pickled)."""
        self.frames: queue.Queue[bytes] = queue.Queue()
        self.proc: subprocess.Popen[bytes] | None = None
        fd = src.fileno()
        # -P: a folder called tui/ where the user stands must not stand in for this package
        argv = [sys.executable, "-P", "-c", _CHILD, *map(str, (fd, start, stop, chunk_rows))]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                pass_fds=(fd,), close_fds=True,
            )  # fmt: skip
        except OSError:  # no process to be had: this part is parsed in the parent
            self.frames.put(_END)
            return
        threading.Thread(target=self._read, name="quarry-loadpart", daemon=True).start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while header := out.read(_HEADER.size):
                if len(header) < _HEADER.size:
                    break
                (size,) = _HEADER.unpack(header)
                if size > self.most:  # no chunk of this part is that big: not our child
                    break
                frame = out.read(size)
                if len(frame) < size:
                    break
                self.frames.put(frame)
        except Exception:  # whatever the pipe gave: what was not delivered is parsed here
            pass
        finally:
            self.frames.put(_END)
            out.close()
            self.proc.wait()

    def stop_child(self) -> None:
        """No child outlives its load."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()


def load_in_parts(
    src: JsonlSource, chunk_rows: int, processes: int, first: int = FIRST_BYTES
) -> Iterator[Chunk]:
    """The chunks of the whole file, in order: the ``first`` bytes parsed here, the rest by
    ``processes`` helper processes."""
    load = Load(src, chunk_rows, first, processes)
    yield from load.first()
    yield from load.rest()


def _deliver(
    src: JsonlSource, part: _Part, chunk_rows: int, lines_before: int
) -> Generator[Chunk, None, int]:
    """One part's chunks, from its child while it delivers and from here for the rest;
    returns the lines before the next part."""
    pos, lines = part.start, 0
    while (frame := part.frames.get()) != _END:
        try:
            chunk, lines_after = pickle.loads(frame)
        except Exception:  # garbage: take no more from this child
            part.stop_child()
            break
        if not isinstance(chunk, Chunk) or not pos < chunk.done <= part.stop:
            part.stop_child()
            break
        yield _renumbered(chunk, lines_before)
        pos, lines = chunk.done, lines_after
    rest = 0
    if pos < part.stop:  # the child stopped short: the rest is parsed here
        for chunk, consumed in parse_range(src, pos, part.stop, chunk_rows):
            yield _renumbered(chunk, lines_before + lines)
            rest = consumed
    return lines_before + lines + rest


def _renumbered(chunk: Chunk, lines_before: int) -> Chunk:
    """``chunk`` with its bad lines numbered from the file's start."""
    if not chunk.bad or not lines_before:
        return chunk
    bad = tuple(BadLine(b.line + lines_before, b.why) for b in chunk.bad)
    return replace(chunk, bad=bad)


def _child(argv: list[str]) -> int:
    """``FD START STOP CHUNK_ROWS``: parse that part of the open file, chunks to stdout."""
    fd, start, stop, chunk_rows = map(int, argv)
    src = JsonlSource.from_fd(fd)
    out = sys.stdout.buffer
    for chunk, lines in parse_range(src, start, stop, chunk_rows):
        frame = pickle.dumps((chunk, lines), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_HEADER.pack(len(frame)))
        out.write(frame)
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
