"""Documents inside documents: archive members, compressed payloads and mail attachments.

A container reader hands each member to a :class:`MemberReader`, which copies the member's
bytes to a private scratch file under the member bounds, then reads that file exactly as a
walked file is read (content detection, the registry's reader, the same limits and deadline)
at one more level of nesting. Each member gets a verdict of its own
(:class:`engine.records.Member`: path, status, reason, error, characters), kept in the
container's record, and its text goes into the container's text after a ``# member PATH``
line (the way ``# sheetN`` lines separate sheets). A member that fails costs only itself.

Bounds, each named when reached:

- ``archive_depth``: containers nested deeper than this are not opened (member verdict);
- ``archive_members``: members of one container (the read stops, the text so far is kept);
- ``archive_bytes``: decompressed bytes of all members of one top-level file, nesting
  included (likewise);
- ``zip_member_bytes`` and ``zip_ratio``: one member's decompressed size and its ratio to
  its compressed size (past 1 MiB), counted as the bytes come, never trusted from headers;
- ``timeout_s``: a container whose read is about to run out of time stops before its next
  member (:func:`check_time`), keeping the text so far, rather than being killed with it.

Member names are shown as :func:`engine.names.shown` makes them (one line, escapes for
control characters and undecodable bytes); names that climb out of the archive (``..``,
absolute) are refused, links and special files are skipped, none is ever written to disk
under its own name.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from types import TracebackType

from engine import mimes as M
from engine.detect import detect
from engine.errors import LimitExceeded, NeedsTool, ReadFailure, TimeSpent
from engine.limits import Limits
from engine.names import shown
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.records import Member, Reason, Status

RATIO_FLOOR = 1024 * 1024
"""Members smaller than this are never refused for their ratio."""
CHUNK = 64 * 1024
"""Bytes copied per step."""
KEPT = 200
"""Member verdicts kept in a record; the rest are counted in the container's error."""
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,12}$")
_NESTED = re.compile(r"^(# member )", re.M)


class NoReader(ReadFailure):
    """Raised when an inner document's type has no reader (``unsupported/no_reader``)."""

    status = Status.UNSUPPORTED
    reason = Reason.NO_READER


@contextmanager
def scratch_dir() -> Iterator[str]:
    """A private folder for inner documents' bytes, removed afterwards.

    A worker killed mid-read cannot remove it: it lies in the worker's own temporary folder,
    which the pool removes once the worker is gone (:mod:`engine.scratch`).
    """
    path = tempfile.mkdtemp(prefix="quarry-members-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Inner:
    """What reading one member (or the payload of a compressed file) gave."""

    text: str
    """Its text (possibly cut by a cap)."""
    info: ReadInfo
    """What its reader said."""
    cut: LimitExceeded | None = None
    """The bound that stopped it after some text, if any."""


def safe_name(name: str) -> str | None:
    """Why ``name`` must not be read (it climbs out of the archive), or None when it is fine."""
    posix = name.replace("\\", "/")
    if posix.startswith("/") or re.match(r"^[A-Za-z]:", posix):
        return "absolute member path"
    if ".." in PurePosixPath(posix).parts:
        return "member path climbs out of the archive (..)"
    return None


def read_file(path: Path, ctx: ReadContext, max_chars: int) -> Inner:
    """Read ``path`` through the registry at ``ctx.depth + 1``; failures raise ReadFailure."""
    from engine.readers.registry import reader_for

    mime = detect(path)
    if mime == M.EMPTY:
        return Inner("", ReadInfo("empty"))
    reader = reader_for(mime)
    if reader is None:
        raise NoReader(f"no reader for {mime}")
    sink = TextSink(max_chars)
    inner_ctx = replace(ctx, mime=mime, depth=ctx.depth + 1, data=None)  # not the container's
    try:
        info = reader.read(path, inner_ctx, sink)
    except TextCapReached:
        info = sink.info or ReadInfo(reader.name)
    except LimitExceeded as exc:
        if not len(sink):
            raise
        return Inner(sink.getvalue(), sink.info or ReadInfo(reader.name), exc)
    return Inner(sink.getvalue(), info)


class MemberReader:
    """Reads the members of one container into its sink, with a verdict each."""

    def __init__(self, ctx: ReadContext, sink: TextSink) -> None:
        enter(ctx)
        self.ctx = ctx
        self.sink = sink
        self.limits = ctx.limits
        self.verdicts: list[Member] = []
        self.count = 0
        self.failed = 0
        self.noted = 0
        self.needs: set[str] = set()
        """Tools that members left unread wait on (the container is read again with them)."""
        self._scratch: str | None = None

    def __enter__(self) -> MemberReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    # -- verdicts ---------------------------------------------------------------------------

    def note(
        self, name: str, status: str, reason: str | None, error: str | None, chars: int = 0
    ) -> None:
        """Record one member's verdict."""
        self.noted += 1
        if status not in (Status.OK, Status.EMPTY):
            self.failed += 1
        if len(self.verdicts) < KEPT:
            reason = str(reason) if reason is not None else None
            self.verdicts.append(Member(shown(name), str(status), reason, error, chars))

    def _counted(self, name: str) -> None:
        check_time(self.ctx, f"{self.count} members")
        self.count += 1
        if self.count > self.limits.archive_members:
            raise LimitExceeded(
                "archive_members", f"more than {self.limits.archive_members} members"
            )

    def skip(self, name: str, status: str, reason: str, error: str) -> None:
        """A member that is not read (a link, a special file, a refused name...)."""
        self._counted(name)
        self.note(name, status, reason, error)

    # -- reading ----------------------------------------------------------------------------

    def admit(self, name: str) -> bool:
        """Count a member about to be read; False (with its verdict) when its name is refused."""
        self._counted(name)
        why = safe_name(name)
        if why is not None:
            self.note(name, Status.ERROR, Reason.REFUSED, why)
            return False
        return True

    def read(self, name: str, chunks: Iterable[bytes], packed: int | None = None) -> None:
        """Copy one member's bytes (under the bounds) and read them as a document."""
        if not self.admit(name):
            return
        path = self.scratch_path(name)
        try:
            if self._copy(name, chunks, path, packed):
                self.read_copied(name, path)
        finally:
            path.unlink(missing_ok=True)

    def _copy(self, name: str, chunks: Iterable[bytes], path: Path, packed: int | None) -> bool:
        """Copy under the bounds; False (with the member's verdict) when a bound or damage
        stops it. The archive-wide byte budget stops the whole read instead."""
        try:
            copy_bounded(chunks, path, self.ctx, name, packed)
        except LimitExceeded as exc:
            if exc.limit == "archive_bytes":
                raise
            self.note(name, exc.status, exc.reason, str(exc)[:300])
            return False
        except ReadFailure as exc:
            self.note(name, exc.status, exc.reason, str(exc)[:300])
            return False
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:  # a generator holding a member stream open
                close()
        return True

    def scratch_path(self, name: str) -> Path:
        """A fresh scratch file name for ``name`` (keeping a plain extension, for detection)."""
        return Path(self._dir()) / f"m{self.count}{_suffix(name)}"

    def read_copied(self, name: str, path: Path) -> None:
        """Read a member already copied to ``path`` (admitted and counted) and note it."""
        room = self.sink.max_chars - len(self.sink)
        try:
            inner = read_file(path, self.ctx, max(room, 0))
        except NeedsTool as exc:
            self.needs.update(exc.tools)
            self.note(name, exc.status, exc.reason, str(exc)[:300])
            return
        except ReadFailure as exc:
            self.note(name, exc.status, exc.reason, str(exc)[:300])
            return
        except RecursionError:
            self.note(name, Status.ERROR, Reason.CORRUPT, "structure nested too deeply to read")
            return
        except (MemoryError, TextCapReached):
            raise
        except Exception as exc:  # a reader bug costs one member, not the container
            self.note(name, Status.ERROR, Reason.CRASHED, f"{type(exc).__name__}: {exc}"[:300])
            return
        self._write(name, inner)

    def _write(self, name: str, inner: Inner) -> None:
        text = inner.text
        self.needs.update(inner.info.needs)  # a container inside: its members' tools too
        if not text.strip():
            if inner.info.scanned:  # pages without text, and no OCR here: what it needs
                self.needs.update(("pdftoppm", "tesseract"))
                self.note(name, Status.EMPTY, Reason.SCANNED, "pages but no text layer")
            else:
                self.note(name, Status.EMPTY, Reason.NO_TEXT, "no text")
            return
        error = f"text cut: {inner.cut}"[:300] if inner.cut is not None else inner.info.note
        label = shown(name)
        if inner.info.members:
            # A container inside: its members are this one's too, by their full path.
            text = _NESTED.sub(lambda m: f"{m.group(1)}{label}//", text)
        self.note(name, Status.OK, None, error, len(text))
        for m in inner.info.members:
            self.note(f"{label}//{m.path}", m.status, m.reason, m.error, m.chars)
        self.sink.line(f"# member {label}")
        self.sink.write(text if text.endswith("\n") else text + "\n")

    def _dir(self) -> str:
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="quarry-members-")
        return self._scratch

    # -- the container's verdict ------------------------------------------------------------

    def finish(self, extractor: str) -> ReadInfo:
        """The container's ReadInfo, with every member's verdict.

        A container whose members gave no text at all, and some failed, fails itself with
        the first failure's reason (a zip of one encrypted document is ``error/encrypted``).
        """
        members = tuple(self.verdicts)
        failures = [m for m in self.verdicts if m.status == Status.ERROR]
        if not len(self.sink) and failures:
            first = failures[0]
            raise ReadFailure(
                f"no member could be read; {first.path}: {first.error}"[:500],
                reason=first.reason or Reason.CORRUPT,
            )
        note = None
        if self.failed:
            note = f"{self.failed} of {self.noted} members not read"
        return ReadInfo(extractor, members=members, note=note, needs=tuple(sorted(self.needs)))


def check_time(ctx: ReadContext, done: str) -> None:
    """Stop a container whose read has almost no time left (:class:`TimeSpent`).

    Checked before each member or message, :func:`stop_margin` before the deadline: the read
    then ends with the text it has, where the pool would kill it (and lose it) a moment later.
    """
    if ctx.remaining() < stop_margin(ctx.limits):
        raise TimeSpent(f"the read's {ctx.limits.timeout_s:g} s ran out after {done}")


def stop_margin(limits: Limits) -> float:
    """Seconds before its deadline at which a container stops: a twentieth of the read's
    time, at most 1 s (the text still has to be written before the pool's kill)."""
    return min(1.0, limits.timeout_s / 20)


def enter(ctx: ReadContext) -> None:
    """Refuse to open a container nested deeper than ``limits.archive_depth``."""
    if ctx.depth >= ctx.limits.archive_depth:
        raise LimitExceeded(
            "archive_depth", f"a container nested more than {ctx.limits.archive_depth} deep"
        )


def _suffix(name: str) -> str:
    """The member's extension (it helps detection), when it is a plain one."""
    match = _SUFFIX.search(name.rsplit("/", 1)[-1])
    return match.group(0).lower() if match else ""


def copy_bounded(
    chunks: Iterable[bytes], path: Path, ctx: ReadContext, name: str, packed: int | None
) -> int:
    """Write ``chunks`` to ``path``, counting against the member, ratio and archive caps."""
    limits = ctx.limits
    budget = ctx.budget
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            written += len(chunk)
            if written > limits.zip_member_bytes:
                raise LimitExceeded(
                    "zip_member_bytes",
                    f"{shown(name)} inflates past {limits.zip_member_bytes} bytes",
                )
            if (
                packed is not None
                and written > RATIO_FLOOR
                and written > limits.zip_ratio * max(packed, 1)
            ):
                raise LimitExceeded(
                    "zip_ratio", f"{shown(name)} inflates more than {limits.zip_ratio}:1"
                )
            budget.spend(len(chunk), limits)
            out.write(chunk)
    return written


def stream_chunks(read: object, size: int = CHUNK) -> Iterator[bytes]:
    """``read(size)`` until it gives nothing."""
    assert callable(read)
    while True:
        chunk = read(size)
        if not chunk:
            return
        yield chunk
