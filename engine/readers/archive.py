"""Archives: zip, tar (plain; compressed ones arrive through the compressed-file reader), 7z,
and through bsdtar RAR, ISO 9660 images, cabinets, LHA, xar and cpio.

Every member goes through :class:`engine.readers.members.MemberReader`: its own verdict, its
text under a ``# member PATH`` line, the same readers and bounds as a walked file, one level
deeper. Directories are passed over; links (zip entries with a symlink mode, tar symlinks and
hard links) are ``skipped/link`` and tar devices and FIFOs ``skipped/special``, never followed;
encrypted members are ``error/encrypted`` (a zip's own encryption, or an OpenDocument manifest's
in a package no OpenDocument reader took); names that climb out of the archive are
``error/refused``. Zip members are inflated through :mod:`engine.readers.zipsafe`'s counted
streams (stored and deflate only). 7z archives are read with py7zr, pure Python: the plan is
made from the header before anything is inflated (py7zr inflates exactly what a member declares,
and every member before it in its solid block), so a member declaring more than the member cap
is refused unread, with those behind it; each member is written to a counting sink that stops
py7zr at once when a bound is reached. The others need ``bsdtar`` (libarchive; no Python library
reads RAR 5 without the non-free ``unrar``): it writes their members out as a tar stream
(:mod:`engine.readers.toolpipe`), read as a tar archive is; a member passed over (past its cap)
is still inflated by the tool, and counts against the archive's byte budget.
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, NoDecoder, ReadFailure
from engine.names import shown
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.readers.members import CHUNK, MemberReader, safe_name
from engine.readers.odf import encrypted_parts
from engine.readers.toolpipe import Piped, ToolEnd, piped
from engine.readers.xmlsafe import XmlBudget
from engine.readers.zipsafe import SafeZip
from engine.records import Reason, Status

if TYPE_CHECKING:
    import tarfile


def _zip_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _zip_chunks(zf: SafeZip, name: str) -> Iterator[bytes]:
    with zf.open(name) as stream:
        while chunk := stream.read_chunk(CHUNK):
            yield chunk


class ZipReader:
    """Zip archives (a zip that is not an Office, OpenDocument or EPUB file)."""

    name = "zip"
    version = 3
    """2: members in Deflate64, Zstandard, xz and PPMd are read. 3: the members an
    OpenDocument manifest says are encrypted are ``error/encrypted``, not read as text."""
    mimes = frozenset({M.ZIP, "application/x-zip-compressed"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each member's text after its ``# member`` line."""
        undecoded: list[NoDecoder] = []
        with SafeZip(path, ctx.limits) as zf, MemberReader(ctx, sink) as members:
            encrypted = _encrypted_members(zf, ctx)
            for name in zf.names():
                info = zf.info(name)
                if info.is_dir():
                    continue
                if _zip_link(info):
                    members.skip(name, Status.SKIPPED, Reason.LINK, "a symbolic link: not followed")
                    continue
                if name in encrypted:
                    members.skip(name, Status.ERROR, Reason.ENCRYPTED, _SEALED)
                    continue
                try:
                    zf.check(info)
                except ReadFailure as exc:
                    members.skip(name, exc.status, exc.reason, str(exc)[:300])
                    if isinstance(exc, NoDecoder):
                        undecoded.append(exc)
                    continue
                members.read(name, _zip_chunks(zf, name), info.compress_size)
            if undecoded and not len(sink) and len(undecoded) == members.failed:
                # nothing damaged, nothing read: the archive's kind is what is unsupported
                raise NoDecoder(f"{len(undecoded)} members not read; {undecoded[0]}"[:500])
            return members.finish("zip")


_SEALED = "encrypted with the package's password (its manifest gives encryption data)"


def _encrypted_members(zf: SafeZip, ctx: ReadContext) -> frozenset[str]:
    """The members an OpenDocument-style manifest in the zip says are encrypted (an ODF
    package of an unknown kind, or a zip of one's parts: their bytes read as text were
    garbage); none when its manifest cannot be read (the members are read as before)."""
    try:
        return encrypted_parts(zf, XmlBudget(ctx.limits))
    except ReadFailure:
        return frozenset()


def _tar_errors(*more: type[Exception]) -> tuple[type[Exception], ...]:
    """What a broken tar archive raises (and ``more``: a 7z's own errors)."""
    import tarfile  # only a sweep that reads an archive needs it (the registry imports us)

    return (tarfile.TarError, EOFError, OSError, zlib.error, ValueError, *more)


class TarReader:
    """Tar archives, read front to back without seeking."""

    name = "tar"
    version = 1
    mimes = frozenset({"application/x-tar"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each regular member's text; links and special files get verdicts."""
        import tarfile

        with MemberReader(ctx, sink) as members:
            try:
                with tarfile.open(path, mode="r|") as tf:
                    for entry in tf:
                        _tar_member(tf, entry, members)
            except _tar_errors() as exc:
                if not members.count:
                    raise CorruptFile(f"not a readable tar archive: {exc}"[:300]) from exc
                members.note("(rest of the archive)", Status.ERROR, Reason.CORRUPT, f"{exc}"[:300])
            return members.finish("tar")


def _tar_member(tf: tarfile.TarFile, entry: tarfile.TarInfo, members: MemberReader) -> None:
    name = entry.name
    if entry.isdir():
        return
    if entry.issym() or entry.islnk():
        members.skip(name, Status.SKIPPED, Reason.LINK, "a link inside the archive: not followed")
        return
    if not entry.isreg():
        members.skip(name, Status.SKIPPED, Reason.SPECIAL, "a device or FIFO entry: not read")
        return
    stream = tf.extractfile(entry)
    if stream is None:
        members.skip(name, Status.ERROR, Reason.CORRUPT, "no data")
        return
    with stream:
        members.read(name, _file_chunks(stream), None)


class LibarchiveReader:
    """Archives Python has no reader for (RAR 4 and 5, ISO 9660 images, cabinets, LHA, xar,
    cpio) through ``bsdtar`` (libarchive), which writes their members out as a tar stream;
    that stream is read as a tar archive is, member by member, the tool stopped the moment a
    bound stops the read. One reader a format, so that each has its name in the records."""

    version = 1
    tools: tuple[str, ...] = ("bsdtar",)

    def __init__(self, name: str, mimes: frozenset[str]) -> None:
        self.name = name
        self.mimes = mimes

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each regular member's text; links and special files get verdicts."""
        import tarfile

        # "@-": bsdtar copies the entries of the archive on its standard input into the tar it
        # writes; a pipe, which it cannot seek in: given the file, it looks at its end first,
        # and a RAR whose last member is a stored zip (a .docx) is then read as that zip.
        # "-b 1": written out a 512-byte record at a time; in blocks (10 KiB by default) the
        # members before a damaged one were lost with the block the tool never wrote.
        argv = ["-cf", "-", "-b", "1", "--format", "pax", "@-"]
        with (
            MemberReader(ctx, sink) as members,
            piped(ctx, "bsdtar", argv, feed=path) as tool,
        ):
            broke: Exception | None = None
            reading = "(rest of the archive)"  # what a stream breaking off leaves unread
            try:
                with tarfile.open(fileobj=tool.stdout, mode="r|") as tf:
                    for entry in tf:
                        reading = entry.name
                        _tar_member(tf, entry, members)
                        reading = "(rest of the archive)"
                        _charge_unread(tf, entry, ctx)
            except _tar_errors() as exc:
                broke = exc
            _tool_verdict(tool, tool.end(), broke, members, reading)
            return members.finish("bsdtar")


def _charge_unread(tf: tarfile.TarFile, entry: tarfile.TarInfo, ctx: ReadContext) -> None:
    """Count what is left of a member the reading stopped short of (a member past its cap)
    against the archive's byte budget: a stream is only passed over by the tool inflating
    it, and a bomb's one member must not cost more than a whole archive may."""
    if not entry.isreg():
        return
    unread = entry.offset_data + entry.size - tf.fileobj.tell()
    if unread > 0:
        ctx.budget.spend(unread, ctx.limits)


_ENCRYPTED = re.compile(r"encrypt|passphrase|password", re.IGNORECASE)


def _tool_verdict(
    tool: Piped, end: ToolEnd, broke: Exception | None, members: MemberReader, where: str
) -> None:
    """Say what stopped an archive tool's stream early: the whole archive's verdict when no
    member came (``error/encrypted`` for an archive that needs a password, ``error/corrupt``
    with the tool's own words, or the tool's own failure: its time ran out, it crashed), else
    a verdict for ``where`` (the member it broke off in, or the rest of the archive) beside
    the members read."""
    failure = tool.failure(end)
    if failure is None and broke is None:
        return
    if end.error:
        said = end.error.removeprefix("Error reading archive -: ")  # (-: its standard input)
    elif failure is not None:  # (the stream then broke off too: that says nothing more)
        said = f"stopped (exit {end.code}) without a reason: a damaged or cut-short archive"
    else:
        said = f"what it wrote did not read as tar: {broke}"
    verdict: ReadFailure
    if failure is not None and (end.timed_out or (end.code is not None and end.code < 0)):
        verdict = failure
    elif _ENCRYPTED.search(said):
        verdict = EncryptedFile(f"{tool.tool}: {said}"[:300])
    else:
        verdict = CorruptFile(f"{tool.tool}: {said}"[:300])
    if not members.count:
        raise verdict
    members.note(where, verdict.status, verdict.reason, str(verdict)[:300])


def _file_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


class SevenZipReader:
    """7z archives through py7zr (pure Python: LZMA, LZMA2, BZip2, Deflate, PPMd, zstd...)."""

    name = "7z"
    version = 1
    mimes = frozenset({"application/x-7z-compressed"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each member's text after its ``# member`` line."""
        import py7zr

        with MemberReader(ctx, sink) as members, open(path, "rb") as fh:
            # A file object, not a path: py7zr then decompresses in this thread only.
            try:
                archive = py7zr.SevenZipFile(fh, mode="r")
            except py7zr.exceptions.PasswordRequired as exc:
                raise EncryptedFile("the archive is password-protected") from exc
            except _tar_errors(py7zr.exceptions.ArchiveError, KeyError, IndexError) as exc:
                raise CorruptFile(f"not a readable 7z archive: {exc}"[:300]) from exc
            with archive:
                _read_7z(archive, members)
            return members.finish("7z")


def _read_7z(archive: Any, members: MemberReader) -> None:
    import py7zr

    if archive.needs_password():
        raise EncryptedFile("the archive is password-protected")
    targets = _plan_7z(archive.files, members)
    if not targets:
        return
    # py7zr's own count of everything it inflates (members passed through on the way to a
    # target included): a backstop behind the plan's declared sizes.
    archive.max_extract_size = members.limits.archive_bytes
    factory = _Factory(members, targets)
    try:
        archive.extract(targets=list(targets.values()), factory=factory)
    except _Stop:
        pass
    except py7zr.exceptions.DecompressionBombError:
        if factory.fatal is None:
            cap = members.limits.archive_bytes
            factory.fatal = LimitExceeded("archive_bytes", f"members inflate past {cap} bytes")
    except _tar_errors(py7zr.exceptions.ArchiveError, KeyError, IndexError, EOFError) as exc:
        if factory.fatal is not None:
            raise factory.fatal from exc
        raise CorruptFile(f"7z archive is damaged: {exc}"[:300]) from exc
    finally:
        factory.discard()
    if factory.fatal is not None:
        raise factory.fatal
    factory.note_unreached()


def _plan_7z(entries: Iterable[Any], members: MemberReader) -> dict[str, str]:
    """The members worth extracting, as py7zr names its writers -> the member's name.

    Decided from the header before anything is inflated. py7zr inflates exactly the size a
    member declares, and reaching a member of a solid block means inflating every member
    before it in that block: a member declaring more than ``zip_member_bytes`` is refused
    unread, and so are those behind it in its block. Names that climb out or are absolute
    are refused (py7zr would strip the ``/`` or give up on the whole archive), links skipped.
    """
    cap = members.limits.zip_member_bytes
    blocked: dict[int, str] = {}
    """id() of a solid block -> the member in it that declares more than the cap."""
    targets: dict[str, str] = {}
    for entry in entries:
        name = entry.filename
        if entry.is_directory:
            continue
        block = id(entry.folder) if entry.folder is not None else None
        if block is not None and block in blocked:
            why = f"behind {shown(blocked[block])} in the same solid block, past the cap"
            members.skip(name, Status.ERROR, Reason.LIMIT, f"zip_member_bytes: {why}")
        elif (entry.uncompressed or 0) > cap:
            if block is not None:
                blocked[block] = name
            why = f"{shown(name)} declares {entry.uncompressed} bytes, more than {cap}"
            members.skip(name, Status.ERROR, Reason.LIMIT, f"zip_member_bytes: {why}")
        elif entry.is_symlink:
            members.skip(name, Status.SKIPPED, Reason.LINK, "a symbolic link: not followed")
        elif (refused := safe_name(name) or _unnamed(name)) is not None:
            members.skip(name, Status.ERROR, Reason.REFUSED, refused)
        else:
            targets[_py7zr_name(name)] = name
    return targets


def _unnamed(name: str) -> str | None:
    return None if _py7zr_name(name) else "no member name"


def _py7zr_name(name: str) -> str:
    """The name py7zr gives the writer of a member whose name is safe (``.`` parts dropped)."""
    return "/".join(part for part in PurePosixPath(name).parts if part != ".")


class _Stop(Exception):
    """Raised from a writer to stop py7zr inflating: a bound was reached."""


class _Factory:
    """py7zr's writer factory: one counting scratch file per member, read when it is done.

    Anything that must stop the whole read (the member count, the archive byte budget, the
    text cap) is kept in ``fatal`` and py7zr is stopped at once by :class:`_Stop`; the
    reader raises ``fatal`` once py7zr has returned.
    """

    def __init__(self, members: MemberReader, names: dict[str, str]) -> None:
        self.members = members
        self.names = names
        """py7zr's writer name -> the member's name."""
        self.started: set[str] = set()
        self.stopped_at: str | None = None
        """The member whose bytes passed the cap while inflated (a bomb the plan missed)."""
        self.fatal: BaseException | None = None
        self.current: _Product | None = None

    def create(self, filename: str) -> _Product:
        """A writer for ``filename``."""
        name = self.names.get(filename, filename)
        self.started.add(filename)
        self.current = _Product(name, self)
        return self.current

    def discard(self) -> None:
        """Close and drop a member py7zr left open when it was stopped."""
        if self.current is not None:
            self.current.drop()
            self.current = None

    def note_unreached(self) -> None:
        """Members py7zr never got to because a member before them was stopped."""
        for key, name in self.names.items():
            if key not in self.started:
                why = f"behind {shown(self.stopped_at or '?')}, stopped at the cap"
                self.members.skip(name, Status.ERROR, Reason.LIMIT, f"zip_member_bytes: {why}")


class _Product:
    """One member's decompressed bytes, counted as they come, then read on ``close``."""

    def __init__(self, name: str, factory: _Factory) -> None:
        self.name = name
        self.factory = factory
        self.written = 0
        self.path: Path | None = None
        self.fh: IO[bytes] | None = None
        members = factory.members
        try:
            if members.admit(name):
                self.path = members.scratch_path(name)
                self.fh = open(self.path, "xb")  # noqa: SIM115  (closed in close() or drop())
        except LimitExceeded as exc:
            factory.fatal = exc
            raise _Stop from exc

    def write(self, data: bytes | bytearray) -> int:
        """Keep ``data``; stop py7zr (raise :class:`_Stop`) once a bound is reached."""
        if self.fh is None:
            return len(data)
        limits = self.factory.members.limits
        self.written += len(data)
        try:
            if self.written > limits.zip_member_bytes:
                raise LimitExceeded(
                    "zip_member_bytes",
                    f"{shown(self.name)} inflates past {limits.zip_member_bytes} bytes",
                )
            self.factory.members.ctx.budget.spend(len(data), limits)
        except LimitExceeded as exc:
            if exc.limit == "archive_bytes":
                self.factory.fatal = exc
            else:
                self.factory.stopped_at = self.name
                self.factory.members.note(self.name, exc.status, exc.reason, str(exc)[:300])
            raise _Stop from exc
        self.fh.write(data)
        return len(data)

    def read(self, size: int | None = None) -> bytes:
        """Nothing is read back through py7zr."""
        return b""

    def seek(self, offset: int, whence: int = 0) -> int:
        """Writers are never rewound here."""
        return 0

    def flush(self) -> None:
        """Written on close."""

    def size(self) -> int:
        """Bytes written so far."""
        return self.written

    def drop(self) -> None:
        """Close and delete the scratch file, whatever it holds."""
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None

    def close(self) -> None:
        """The member is complete: read it, then drop its bytes."""
        if self.fh is None or self.path is None:
            return
        self.fh.close()
        self.fh = None
        factory = self.factory
        try:
            factory.members.read_copied(self.name, self.path)
        except (LimitExceeded, TextCapReached) as exc:
            factory.fatal = exc
            raise _Stop from exc
        finally:
            self.drop()
            factory.current = None


class RarReader(LibarchiveReader):
    """RAR archives, RAR 4 and 5 (no Python library reads RAR 5 without the non-free unrar)."""

    def __init__(self) -> None:
        super().__init__(
            "rar", frozenset({M.RAR, "application/x-rar-compressed", "application/x-rar"})
        )


READERS = (
    ZipReader(),
    TarReader(),
    SevenZipReader(),
    RarReader(),
    LibarchiveReader("iso", frozenset({M.ISO, "application/x-cd-image"})),
    LibarchiveReader("cab", frozenset({M.CAB})),
    LibarchiveReader("lha", frozenset({M.LHA, "application/x-lha"})),
    LibarchiveReader("xar", frozenset({M.XAR})),
    LibarchiveReader("cpio", frozenset({M.CPIO})),
)
