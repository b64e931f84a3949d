"""One read, as it runs inside a worker process: detect, pick the reader, read, normalise.

:func:`read_one` never raises for anything a file does: every failure comes back as an
:class:`Outcome` with a status and reason. The text goes to a temporary file in the store's
``tmp/`` folder, so the engine's own process never holds a
document's text: it only renames the file into place.

Hash what you read: the Outcome names the content its text was made from (``sha256``, with the
``size`` and ``mtime_ns`` it had). The file's :data:`Ident` (device, inode, size, mtime, ctime:
any write to it, or a rename over its path, changes it) is taken before and after the read; when
it is the one the engine hashed (``ReadTask.ident``) the engine's hash stands, otherwise the
worker hashes the file itself. A file whose Ident moved during the read is read again, at most
:data:`READ_ATTEMPTS` times, then given ``skipped/changing``: a text is never filed under a hash
its file did not have while it was read. A file gone before or during the read comes back with
``gone`` set (the sweep drops its record).

A failure of the machine rather than the file (the text cannot be written, a tool vanished
during the sweep) comes back with ``machine`` set: the sweep keeps the earlier record and
reports it, and never blames the file.

Past STYLE's 500 lines on purpose: one read is one sequence (hash, detect, read, unlock,
normalise, score, write the text, build the Outcome) whose steps share the task and the
outcome being built; split apart, each piece would take and give back the same half-built
state.
"""

from __future__ import annotations

import contextlib
import hashlib
import operator
import os
import re
import stat
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from engine import mimes
from engine.detect import HEAD_BYTES, detect
from engine.errors import EncryptedFile, LimitExceeded, NeedsTool, ReadFailure, ToolFailed
from engine.limits import Limits
from engine.passwords import NO_PASSWORDS, Passwords, unlock
from engine.quality import Quality, repaired, score
from engine.quality import enabled as quality_enabled
from engine.readers.base import ReadContext, Reader, ReadInfo, TextCapReached, TextSink
from engine.readers.registry import reader_for
from engine.records import Member, Reason, Status
from engine.store import held_folders, open_in, open_own_tmp, place_text, text_ident
from engine.tools import ToolSet
from engine.walk import fits_64

Ident = tuple[int, int, int, int, int]
"""(device, inode, size, mtime_ns, ctime_ns) of a file: equal before and after, no write between."""
READ_ATTEMPTS = 3
"""Reads (and hashes) of a file that keeps changing before it is given ``skipped/changing``."""


def ident_of(st: os.stat_result) -> Ident:
    """The Ident of a stat result."""
    return (st.st_dev, st.st_ino, st.st_size, fits_64(st.st_mtime_ns), st.st_ctime_ns)


def hash_file(path: str | os.PathLike[str]) -> tuple[str, Ident] | None:
    """sha256 of the file and its Ident, or None when it changed while being hashed.

    Raises OSError (FileNotFoundError when it is gone). The Ident comes from the open file, so
    a hash and an Ident always describe the same bytes.
    """
    hashed = _hash_with_head(path)
    return None if hashed is None else hashed[:2]


HASH_CHUNK = 1 << 20
"""Bytes read per step while hashing a file."""


def _hash_with_head(path: str | os.PathLike[str]) -> tuple[str, Ident, bytes] | None:
    """:func:`hash_file`, and the file's first :data:`~engine.detect.HEAD_BYTES` bytes (what
    detection looks at: the same bytes, so the file need not be opened again for it). A file
    of at most that many bytes is all there: its head is its whole content, as hashed.

    Plain ``os.open`` and ``os.read``: a buffered file object costs more than reading a small
    file, and the first read asks for the size ``fstat`` gave and one byte more, so a small
    file is read into a buffer of its own size (not a 1 MiB one). The end is an empty read (a
    short read is not one on every file system).
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        before = ident_of(os.fstat(fd))
        head = chunk = os.read(fd, min(before[2] + 1, HASH_CHUNK))
        h = hashlib.sha256()
        while chunk:
            h.update(chunk)
            chunk = os.read(fd, HASH_CHUNK)
        after = ident_of(os.fstat(fd))
    finally:
        os.close(fd)
    return (h.hexdigest(), before, head[:HEAD_BYTES]) if before == after else None


@dataclass(frozen=True, slots=True)
class ReadTask:
    """Everything a worker needs to read one file."""

    path: str
    """Absolute path of the file."""
    sha256: str
    """Content hash as the engine found it; empty when it did not hash (the worker does)."""
    limits: Limits
    """Bounds of the read."""
    tools: ToolSet
    """Tools the read may use."""
    tmp_dir: str
    """Folder for the finished text file."""
    size: int = 0
    """Size in bytes when planned (the pool batches small files)."""
    ident: Ident | None = None
    """The file's Ident when the engine hashed it to ``sha256``; None: the worker hashes."""
    store_dir: str = ""
    """The store: a finished text is renamed into its ``extract/`` by the worker, under the
    hash of what was read. Empty: the text stays in ``tmp_dir`` for the engine (verify)."""
    passwords: Passwords = NO_PASSWORDS
    """Passwords to try on an encrypted file (an operator's retry); never shown."""


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
    """The file holding the text (ok records): in the store already when the task named one,
    else a temporary file for the engine to move or compare."""
    machine: bool = False
    """The machine failed, not the file: keep the earlier record, report ``error``."""
    lost_worker: bool = False
    """The read killed its worker or was killed with it (counts towards quarantine)."""
    members: tuple[Member, ...] = ()
    """For a container: the verdict on each document inside it."""
    quality: Quality | None = None
    """Is the text any good (ok outcomes): scored here, in the worker, on a sample."""
    sha256: str | None = None
    """Hash of the bytes the text was made from; None: the task's (a read lost with its worker)."""
    size: int | None = None
    """Size of the file as read (with ``sha256``)."""
    mtime_ns: int | None = None
    """Its mtime as read (with ``sha256``)."""
    gone: bool = False
    """The file was gone (deleted or replaced by a non-file) when the worker came to it."""
    tools: str | None = None
    """The tools the read had (:attr:`ToolSet.named`) when they were not the engine's own: a
    Dask worker's. None: read with the sweep's tool set."""
    body: str | None = None
    """The text itself when it is small (:data:`BODY_SENT_MAX`): the engine's text index
    takes it from here instead of opening the file again (:attr:`body_ident`)."""
    body_ident: str | None = None
    """With ``body``: the identity (inode, size, mtime) of the file the worker wrote it to."""

    def __reduce__(self) -> tuple[type[Outcome], tuple[object, ...]]:
        # A worker sends one per file: rebuilt by one call, not dataclasses' field-by-field
        # __setstate__ (which cost the engine several microseconds per file).
        return Outcome, _OUTCOME_FIELDS(self)


_OUTCOME_ORDER = tuple(f.name for f in fields(Outcome))
_OUTCOME_NAMES = frozenset(_OUTCOME_ORDER)
_OUTCOME_FIELDS = operator.attrgetter(*_OUTCOME_ORDER)


BODY_SENT_MAX = 1 << 16
"""Texts of up to this many characters travel with their Outcome (:attr:`Outcome.body`):
for a folder of small files, reading each text back for the search index cost the engine's
process a thread, four system calls a file and the interpreter's lock it shared with the
records' writes (a quarter of a cold sweep's time at 20,000 files); a long text is read
from its file as before, so a worker's message stays small."""


def normalise(text: str) -> str:
    """CRLF and lone CR become LF, NUL is removed, surrogates are made whole, then NFC.

    A reader can hand back UTF-16 halves (pypdf maps a font's glyph to half of a surrogate
    pair, and a Gothic or emoji text comes out split): a high half followed by a low one is the
    character they encode, a lone half is U+FFFD. A text holding one could not be written as
    UTF-8 at all (the worker died on it, and the file was said to have crashed it)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if not text.isascii() and _SURROGATE.search(text) is not None:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return unicodedata.normalize("NFC", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def cap_line(limit: str, detail: str) -> str:
    """The line that ends a text cut short by a named bound."""
    return f"\n[quarry: text cut at the {limit} cap: {detail}]\n"


def read_one(task: ReadTask, started: Callable[[str], None] | None = None) -> Outcome:
    """Read one file; every failure is an Outcome, never an exception.

    ``started`` is called with the MIME type once the file is detected, before its reader
    runs (the pool uses it to know what a worker that dies was reading). The Outcome names
    the content it was made from (see the module docstring).
    """
    begun = time.monotonic()
    for _attempt in range(READ_ATTEMPTS):
        before = _ident(task.path)
        if before is None or isinstance(before, Outcome):
            return _replace(before or GONE, ms=_ms(begun))
        head = None
        try:
            if before == task.ident:
                sha: str | None = task.sha256
            else:
                sha, head = _hash(task.path, before)
        except OSError as exc:
            return _unreadable(exc, begun)
        if sha is None:
            continue  # it changed while hashed
        # A file no bigger than the head was read whole while hashed: its reader gets those
        # bytes (the very bytes ``sha`` names) and need not open it again.
        whole = head if head is not None and len(head) == before[2] else None
        outcome = _read_once(task, begun, started, head, whole)
        if _ident(task.path) == before:
            text_file = outcome.text_file
            if text_file is not None and task.store_dir:
                try:
                    text_file = _place(text_file, sha, task.store_dir)
                except OSError as exc:
                    why = f"cannot write the text: {exc.strerror or exc}"
                    return machine_failure(outcome.mime, why)
            return _replace(
                outcome,
                sha256=sha,
                size=before[2],
                mtime_ns=before[3],
                ms=_ms(begun),
                text_file=text_file,
            )
        if outcome.text_file is not None:  # made from bytes that are no longer there
            with contextlib.suppress(OSError):
                os.unlink(outcome.text_file)
    return Outcome(
        Status.SKIPPED,
        mimes.OCTET,
        Reason.CHANGING,
        error=f"the file changed during each of {READ_ATTEMPTS} reads; read again next sweep",
        ms=_ms(begun),
    )


GONE = Outcome(Status.SKIPPED, mimes.OCTET, gone=True, error="the file is gone")
"""The Outcome of a file that was gone when its worker came to it."""


def _place(tmp: str, sha: str, store_dir: str) -> str:
    """Rename a finished text into the store (atomic; synced once per sweep by the engine);
    its place. Raises OSError (the temporary file is removed)."""
    try:
        return place_text(store_dir, tmp, sha)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _ms(begun: float) -> int:
    return int((time.monotonic() - begun) * 1000)


def _ident(path: str) -> Ident | Outcome | None:
    """The file's Ident; None when it is gone; an Outcome when it cannot be looked at."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _unreadable(exc, None)
    return ident_of(st) if stat.S_ISREG(st.st_mode) else None


def _unreadable(exc: OSError, begun: float | None) -> Outcome:
    ms = _ms(begun) if begun is not None else 0
    why = exc.strerror or str(exc)
    return Outcome(Status.SKIPPED, mimes.OCTET, Reason.UNREADABLE, error=why, ms=ms)


def _hash(path: str, before: Ident) -> tuple[str | None, bytes | None]:
    """The file's hash and head when it still is ``before`` throughout; (None, None) when it
    moved or went.

    Raises OSError when the file cannot be read (the verdict is ``skipped/unreadable``).
    """
    try:
        hashed = _hash_with_head(path)
    except FileNotFoundError:
        return None, None  # the next attempt's lstat finds it gone
    if hashed is None or hashed[1] != before:
        return None, None
    return hashed[0], hashed[2]


def _read_once(
    task: ReadTask,
    begun: float,
    started: Callable[[str], None] | None,
    head: bytes | None = None,
    whole: bytes | None = None,
) -> Outcome:
    path = Path(task.path)
    try:
        mime = detect(path, head)
    except Exception:  # a detection bug must cost one record, not the worker
        mime = mimes.OCTET
    if started is not None:
        started(mime)
    return _read_detected(task, path, mime, begun, whole)


def _read_detected(
    task: ReadTask, path: Path, mime: str, started: float, whole: bytes | None = None
) -> Outcome:
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
        data=whole,
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
    except EncryptedFile as exc:
        if not task.passwords:
            return _fail(base, exc)
        return _read_unlocked(task, path, base, started)
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


def _read_unlocked(task: ReadTask, path: Path, base: Outcome, started: float) -> Outcome:
    """An encrypted file, read again from a copy that one of the task's passwords decrypted
    (:func:`engine.passwords.unlock`); the copy is removed once it is read."""
    try:
        copy = unlock(path, task.passwords, task.tmp_dir)
    except EncryptedFile as exc:
        return _fail(base, exc)
    except OSError as exc:
        return machine_failure(base.mime, f"cannot decrypt into tmp/: {exc.strerror or exc}")
    try:
        try:
            mime = detect(copy)
        except Exception:  # as in _read_once: a detection bug costs one record
            mime = base.mime
        plain = replace(task, passwords=NO_PASSWORDS)  # no second round of unlocking
        outcome = _read_detected(plain, copy, mime, started)
    finally:
        with contextlib.suppress(OSError):
            copy.unlink()
    if outcome.status == Status.OK and outcome.error is None:
        outcome = _replace(outcome, error=OPENED)
    return outcome


OPENED = "opened with a password given for it"
"""The note on a record read from a decrypted copy."""


def _finish(
    task: ReadTask, base: Outcome, info: ReadInfo, sink: TextSink, cut: LimitExceeded | None
) -> Outcome:
    text = normalise(sink.getvalue())
    error = info.note
    # Judged before any cap line is added: a text that would be only that line is no text.
    blank = not text.strip()
    if not blank and sink.capped:
        detail = f"{task.limits.max_chars} characters"
        text += cap_line("max_chars", detail)
        error = f"text cut at the max_chars cap ({detail})"
    elif not blank and cut is not None:
        text += cap_line(cut.limit, str(cut).removeprefix(f"{cut.limit}: "))
        error = f"text cut: {cut}"[:500]
    # needs: a container whose members wait on a tool (read again once one is here)
    read = {
        "extractor": info.extractor,
        "pages": info.pages,
        "members": info.members,
        "needs": info.needs,
    }
    if not blank:  # the common case: one Outcome made, not one per field that changed
        return _keep(task, base, text, read, error)
    base = _replace(base, error=error, **read)
    if cut is not None:
        return _fail(base, cut)  # a bound stopped it before any text: that bound's verdict
    if info.scanned:
        return _replace(
            base,
            status=Status.EMPTY,
            reason=Reason.SCANNED,
            error="pages but no text layer: needs OCR (pdftoppm and tesseract)",
            needs=("pdftoppm", "tesseract"),
        )
    if info.needs:  # no text, and members waiting on a tool: that is what stands in the way
        return _replace(
            base,
            status=Status.UNSUPPORTED,
            reason=Reason.NEEDS_TOOL,
            error=f"its documents need {' or '.join(info.needs)} to be read",
        )
    stopped = " before it stopped at a cap" if sink.capped else ""
    why = f"the reader found no text{stopped}"
    return _replace(base, status=Status.EMPTY, reason=Reason.NO_TEXT, error=why)


def _keep(
    task: ReadTask,
    base: Outcome,
    text: str,
    read: dict[str, Any],
    error: str | None,
) -> Outcome:
    """Write the text to a temporary file; the ok Outcome that names it. A text whose
    quality names mojibake is stored repaired when the repair clears it (its extractor then
    ends in ``+ftfy``: :func:`engine.quality.repaired`)."""
    pages = read["pages"]
    extractor = read["extractor"]
    quality = score_quietly(text, base.mime, pages)
    mended = _mended(text, base.mime, quality, pages)
    if mended is not None:
        text, quality = mended
        extractor = f"{extractor}+ftfy"
    small = len(text) <= BODY_SENT_MAX
    try:
        tmp, ident = _write_text(task.tmp_dir, text, small)
    except OSError as exc:
        return machine_failure(base.mime, f"cannot write the text: {exc.strerror or exc}")
    # One constructor call (no _replace): this is every ok read's Outcome.
    return Outcome(
        base.status,
        base.mime,
        reader=base.reader,
        v=base.v,
        extractor=extractor,
        chars=len(text),
        pages=pages,
        error=error,
        text_file=tmp,
        members=read["members"],
        needs=read["needs"],
        quality=quality,
        body=text if ident is not None else None,
        body_ident=ident,
    )


def _mended(
    text: str, mime: str, quality: Quality | None, pages: int | None
) -> tuple[str, Quality] | None:
    """:func:`engine.quality.repaired`, whose failure keeps the text as read."""
    try:
        return repaired(text, mime, quality, pages)
    except Exception:
        return None


def score_quietly(text: str, mime: str, pages: int | None) -> Quality | None:
    """The text's quality; None if the scorer fails (that must not cost the record its text,
    and a record without quality is scored again on the next sweep)."""
    if not quality_enabled():
        return None
    try:
        return score(text, mime, pages=pages)
    except Exception:
        return None


def _write_text(tmp_dir: str, text: str, ident: bool = False) -> tuple[str, str | None]:
    """Write ``text`` to a new file in this process's own folder of the store's ``tmp/``;
    its path, and its identity when ``ident`` (see :attr:`Outcome.body_ident`). Raises
    OSError (nothing left behind)."""
    # No fsync here: the engine syncs once before extract.jsonl names these texts, which is
    # as durable and far cheaper than one fsync per small file. os.open and os.write: a
    # text-mode file object costs more than the write of a small text itself. The store's
    # tmp/ is opened as the store's folders are: a link there is never written through.
    data = text.encode("utf-8")
    held = held_folders()
    if held is None:
        folder, path = open_own_tmp(tmp_dir)
        try:
            return _write_in(folder, path, data, ident)
        finally:
            os.close(folder)
    try:
        return _write_in(*held.own_tmp(tmp_dir), data, ident)
    except FileNotFoundError:  # the folder held was removed (a writer's clean_tmp)
        held.forget()
        return _write_in(*held.own_tmp(tmp_dir), data, ident)


def _write_in(folder: int, path: str, data: bytes, ident: bool) -> tuple[str, str | None]:
    """Write ``data`` to a new file in the folder ``folder`` (at ``path``); its path, and
    its identity when ``ident`` (a rename into the store keeps all three parts)."""
    name = f"text.{os.getpid()}.{time.monotonic_ns()}.txt"
    fd = open_in(folder, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        made = text_ident(os.fstat(fd)) if ident else None
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder)
        raise
    finally:
        os.close(fd)
    return f"{path}/{name}", made


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


def _replace(o: Outcome, **kw: Any) -> Outcome:
    """``o`` with ``kw`` changed: one constructor call (``dataclasses.replace`` costs a
    worker tens of microseconds a file, and each read makes a few)."""
    if not kw.keys() <= _OUTCOME_NAMES:
        raise TypeError(f"not Outcome fields: {sorted(kw.keys() - _OUTCOME_NAMES)}")
    values: list[Any] = [
        kw.get(n, v) for n, v in zip(_OUTCOME_ORDER, _OUTCOME_FIELDS(o), strict=True)
    ]
    return Outcome(*values)
