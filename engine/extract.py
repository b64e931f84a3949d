"""One read, as it runs inside a worker process: detect, pick the reader, read, normalise.

:func:`read_one` never raises for anything a file does: every failure comes back as an
:class:`Outcome` with a status and reason. The text goes to a temporary file in the store's
``tmp/`` folder, so the engine's own process never holds a
document's text: it only renames the file into place.

A failure of the machine rather than the file (the text cannot be written, a tool vanished
during the sweep) comes back with ``machine`` set: the sweep keeps the earlier record and
reports it, and never blames the file.
"""

from __future__ import annotations

import contextlib
import os
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from engine import mimes
from engine.detect import detect
from engine.errors import LimitExceeded, NeedsTool, ReadFailure, ToolFailed
from engine.limits import Limits
from engine.quality import Quality, score
from engine.quality import enabled as quality_enabled
from engine.readers.base import ReadContext, Reader, ReadInfo, TextCapReached, TextSink
from engine.readers.registry import reader_for
from engine.records import Reason, Status
from engine.tools import ToolSet


@dataclass(frozen=True, slots=True)
class ReadTask:
    """Everything a worker needs to read one file."""

    path: str
    """Absolute path of the file."""
    sha256: str
    """Content hash (names the text file)."""
    limits: Limits
    """Bounds of the read."""
    tools: ToolSet
    """Tools the read may use."""
    tmp_dir: str
    """Folder for the finished text file."""
    size: int = 0
    """Size in bytes when planned (the pool batches small files)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a read produced (the record's fields that come from reading)."""

    status: str
    """One of :class:`Status`."""
    mime: str
    """Detected MIME type."""
    reason: str | None = None
    """Reason code refining the status."""
    reader: str | None = None
    """Reader family used."""
    v: int = 0
    """Its version."""
    extractor: str | None = None
    """What produced the text."""
    chars: int = 0
    """Characters of normalised text."""
    pages: int | None = None
    """Pages, slides or sheets."""
    error: str | None = None
    """The verdict, for anything not ok."""
    needs: tuple[str, ...] = ()
    """Tools that would unlock it."""
    ms: int = 0
    """Wall time of the read."""
    text_file: str | None = None
    """Temporary file holding the text (ok records)."""
    machine: bool = False
    """The machine failed, not the file: keep the earlier record, report ``error``."""
    lost_worker: bool = False
    """The read killed its worker or was killed with it (counts towards quarantine)."""
    quality: Quality | None = None
    """Is the text any good (ok outcomes): scored here, in the worker, on a sample."""


def normalise(text: str) -> str:
    """CRLF and lone CR become LF, NUL is removed, then NFC."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return unicodedata.normalize("NFC", text)


def cap_line(limit: str, detail: str) -> str:
    """The line that ends a text cut short by a named bound."""
    return f"\n[quarry: text cut at the {limit} cap: {detail}]\n"


def read_one(task: ReadTask, started: Callable[[str], None] | None = None) -> Outcome:
    """Read one file; every failure is an Outcome, never an exception.

    ``started`` is called with the MIME type once the file is detected, before its reader
    runs (the pool uses it to know what a worker that dies was reading).
    """
    begun = time.monotonic()
    path = Path(task.path)
    try:
        mime = detect(path)
    except Exception:  # a detection bug must cost one record, not the worker
        mime = mimes.OCTET
    if started is not None:
        started(mime)
    outcome = _read_detected(task, path, mime, begun)
    ms = int((time.monotonic() - begun) * 1000)
    return _replace(outcome, ms=ms)


def _read_detected(task: ReadTask, path: Path, mime: str, started: float) -> Outcome:
    if mime == mimes.EMPTY:
        return Outcome(Status.EMPTY, mime, Reason.NO_TEXT, error="the file is empty")
    reader = reader_for(mime)
    if reader is None:
        return Outcome(Status.UNSUPPORTED, mime, Reason.NO_READER, error=f"no reader for {mime}")
    ctx = ReadContext(
        mime=mime,
        limits=task.limits,
        tools=task.tools,
        deadline=started + task.limits.timeout_s,
    )
    sink = TextSink(task.limits.max_chars)
    base = Outcome(Status.OK, mime, reader=reader.name, v=reader.version)
    cut: LimitExceeded | None = None
    try:
        info = reader.read(path, ctx, sink)
    except TextCapReached:
        info = sink.info or ReadInfo(extractor=reader.name)
    except LimitExceeded as exc:
        if not len(sink):
            return _fail(base, exc)
        # The spec: reaching a cap keeps the text read so far, ending with a line naming it.
        info, cut = sink.info or ReadInfo(extractor=reader.name), exc
    except NeedsTool as exc:
        return _fail(base, exc, needs=exc.tools)
    except ToolFailed as exc:
        return _tool_failed(base, exc, reader, task.tools)
    except ReadFailure as exc:
        return _fail(base, exc)
    except MemoryError:
        return _replace(
            base,
            status=Status.ERROR,
            reason=Reason.MEMORY,
            error=f"ran out of memory (limit {task.limits.memory_bytes} bytes)",
        )
    except RecursionError:
        return _replace(
            base,
            status=Status.ERROR,
            reason=Reason.CORRUPT,
            error="structure nested too deeply to read",
        )
    except Exception as exc:  # a reader bug must cost one record, not the sweep
        return _replace(
            base,
            status=Status.ERROR,
            reason=Reason.CRASHED,
            error=f"reader {reader.name} failed: {type(exc).__name__}: {str(exc)[:200]}",
        )
    return _finish(task, base, info, sink, cut)


def _finish(
    task: ReadTask, base: Outcome, info: ReadInfo, sink: TextSink, cut: LimitExceeded | None
) -> Outcome:
    text = normalise(sink.getvalue())
    base = _replace(base, extractor=info.extractor, pages=info.pages)
    if sink.capped:
        detail = f"{task.limits.max_chars} characters"
        text += cap_line("max_chars", detail)
        base = _replace(base, error=f"text cut at the max_chars cap ({detail})")
    elif cut is not None:
        text += cap_line(cut.limit, str(cut).removeprefix(f"{cut.limit}: "))
        base = _replace(base, error=f"text cut: {cut}"[:500])
    if not text.strip():
        if info.scanned:
            return _replace(
                base,
                status=Status.EMPTY,
                reason=Reason.SCANNED,
                error="pages but no text layer: needs OCR (pdftoppm and tesseract)",
                needs=("pdftoppm", "tesseract"),
            )
        return _replace(
            base, status=Status.EMPTY, reason=Reason.NO_TEXT, error="the reader found no text"
        )
    tmp = Path(task.tmp_dir) / f"{task.sha256}.{os.getpid()}.{time.monotonic_ns()}.txt"
    try:
        _write_text(tmp, text)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return machine_failure(base.mime, f"cannot write the text: {exc.strerror or exc}")
    quality = score_quietly(text, base.mime, info.pages)
    return _replace(base, chars=len(text), text_file=str(tmp), quality=quality)


def score_quietly(text: str, mime: str, pages: int | None) -> Quality | None:
    """The text's quality; None if the scorer fails (that must not cost the record its text,
    and a record without quality is scored again on the next sweep)."""
    if not quality_enabled():
        return None
    try:
        return score(text, mime, pages=pages)
    except Exception:
        return None


def _write_text(tmp: Path, text: str) -> None:
    # No fsync here: the engine syncs once before extract.jsonl names these texts, which is
    # as durable and far cheaper than one fsync per small file.
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def machine_failure(mime: str, message: str) -> Outcome:
    """An Outcome that blames the machine: the sweep keeps the earlier record."""
    return Outcome(Status.ERROR, mime, Reason.TOOL_FAILED, error=message, machine=True)


def _tool_failed(base: Outcome, exc: ToolFailed, reader: Reader, tools: ToolSet) -> Outcome:
    """A tool that failed because it is gone from disk is the machine's failure."""
    for name in reader.tools:
        exe = tools.path(name)
        if exe is not None and not os.access(exe, os.X_OK):
            return machine_failure(base.mime, f"{name} vanished during the sweep ({exe})")
    return _fail(base, exc)


def _fail(base: Outcome, exc: ReadFailure, needs: tuple[str, ...] = ()) -> Outcome:
    return _replace(base, status=exc.status, reason=exc.reason, error=str(exc)[:500], needs=needs)


def _replace(o: Outcome, **kw: object) -> Outcome:
    return replace(o, **kw)  # type: ignore[arg-type]
