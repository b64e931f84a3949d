"""The store: content-addressed texts, ``extract.jsonl`` and ``extract.summary.json``.

Layout under the output folder (default ``<root>/.quarry``)::

    extract/<aa>/<sha256>.txt   one normalised UTF-8 text per distinct content hash
    extract.jsonl               one record per walked file, sorted by (root, path)
    extract.summary.json        counts, tools, readers, timing
    extract.stat                derived: what the next full sweep keeps as it is (engine.statindex)
    lock                        held (flock) by the one writer
    quarry-store.json           the marker: this folder is a store, and its format version
    tmp/w<pid>.<token>/         a worker process's texts before they are renamed into place
    history/<aa>/<hash>.txt     texts replaced by another read of the same content that kept
                                records had (engine.history), each under the text's own hash

Readers take nothing on trust: every line of ``extract.jsonl`` is validated (a line that is
not a usable record is dropped and named in :attr:`Loaded.bad`, never fatal), and a store
whose shape is wrong (a folder where a file belongs, a file in the way of the store, a newer
format) is one :class:`StoreUnusable` naming what is wrong.

Every file is written atomically (temp file, fsync, rename, fsync of the folder), so a crash
leaves the last good store. Readers never take the lock and never block.

No link inside a store is followed (a default store arrives with the folder it describes,
chosen by whoever sent it): every open, creation, rename and removal in it goes through the
link-safe primitives below (:func:`open_folder`, :func:`open_in`, :func:`read_in`,
:func:`write_in`, :func:`place_text`), a link where a store name belongs is StoreUnusable, and
a text that is a link is missing.

Past STYLE's 500 lines on purpose: the format's reading, writing, locking and shape checks
are one set of rules about one folder; the serialised lines' cache is apart
(:mod:`engine.jsonl`), as are the store's record types (:mod:`engine.records`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import re
import stat
import sys
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, cast

import msgspec
import orjson

from engine.errors import StoreCorrupt, StoreLocked, StoreLost, StoreUnusable
from engine.jsonl import LineCache
from engine.names import shown
from engine.records import SHA256_RE, BadRecord, Record, Summary, is_sha256
from engine.textnames import TextNames
from engine.walk import STORE_ENTRIES, STORE_MARKER, is_default_ignored, looks_like_store

STORE_DIRNAME = ".quarry"
JSONL = "extract.jsonl"
SUMMARY = "extract.summary.json"
STAT_INDEX = "extract.stat"
"""The stat index (:mod:`engine.statindex`): every write of ``extract.jsonl`` removes it."""
FORMAT = 1
"""The store format this quarry reads and writes (in the marker); a newer one is refused."""
_FILES = (JSONL, SUMMARY, "lock", "sweep.dirty", STORE_MARKER, "extract.db")
_FANOUT = tuple(f"{i:02x}" for i in range(256))
"""The text folders ``extract/00`` .. ``extract/ff``."""
_NOT_OURS = (errno.EROFS, errno.EACCES, errno.EPERM)
"""Why a folder cannot take a store whatever is in it: read-only media, another's folder."""
KEPT = "history"
"""The folder of texts set aside (:meth:`Store.keep_text`)."""
_FOLDERS = ("extract", "tmp", KEPT)
_NAMES = (*_FILES, STAT_INDEX, *_FOLDERS)
"""Every name the store itself uses in its folder."""


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of ``extract.jsonl`` that is not a usable record."""

    line: int
    """Its 1-based line number."""
    why: str
    """Why it was not used, briefly (never the line itself)."""

    def __str__(self) -> str:
        return f"line {self.line:,}: {self.why}"


@dataclass(frozen=True, slots=True)
class Loaded:
    """The records of ``extract.jsonl`` and the lines that were not records."""

    records: list[Record]
    """Every usable record, in file order."""
    bad: tuple[BadLine, ...] = ()
    """The lines dropped, with why."""

    def left_out(self, where: str = JSONL) -> str:
        """The notice for the lines dropped (see :func:`left_out`)."""
        return left_out(len(self.bad), self.bad[:5], where)


def left_out(count: int, first: Sequence[object], where: str = JSONL) -> str:
    """The one line that says ``count`` lines of ``where`` were left out, not being records,
    and names the ``first`` few: ``quarry show``'s warning and the dashboard's notice."""
    named = "; ".join(map(str, first))
    more = count - len(first)
    also = f"; and {more:,} more" if more > 0 else ""
    lines = "line" if count == 1 else "lines"
    return f"{count:,} unreadable {lines} in {where} left out ({named}{also})"


# -- link-safe primitives -------------------------------------------------------------------
# A default store lives in the folder it describes, so whoever sends the folder (a tarball, a
# clone, a shared drive) chose every name in its store too: a link there would have a sweep
# write, empty or read whatever the link points to. Every open, creation, rename and removal
# inside a store goes through these: each folder is opened relative to the one above with
# O_NOFOLLOW (the store folder itself too; only the path above it, as given, is followed) and
# each file relative to its folder's descriptor with O_NOFOLLOW. A link met is ELOOP, said as
# LINKED; :meth:`Store.check` names it as a store-shape error before anything is changed.

LINKED = "a link where a store file or folder belongs (a store's links are never followed)"
"""The words of the OSError a link in a store gives."""
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW


def _open(name: str | os.PathLike[str], flags: int, mode: int, dir_fd: int | None) -> int:
    try:
        return os.open(name, flags, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, LINKED, os.fsdecode(name)) from None
        raise


def open_folder(
    base: str | os.PathLike[str], *parts: str, make: bool = False, dir_fd: int | None = None
) -> int:
    """A descriptor of the folder ``base/parts...`` (``base`` relative to ``dir_fd`` if
    given), neither ``base``'s last part nor any of ``parts`` a link: each part is opened
    relative to the one above. ``make`` creates missing parts. Raises OSError (ELOOP,
    :data:`LINKED`, for a link)."""
    fd = _open(base, _FOLDER, 0, dir_fd)
    try:
        for part in parts:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            inner = _open(part, _FOLDER, 0, fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


class TextFolders:
    """A store's text folders (``extract/<aa>``) as a run checks for texts other machines
    wrote: each opened once, no folder on the way through a link (as :meth:`Store.has_text`),
    and kept open, so that each look is one ``stat`` (three folders opened and closed a look
    cost ~15 us, 0.3 s of a 20,000-file sweep). :meth:`close` when done."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self._out = out
        self._fds: dict[str, int] = {}

    def has(self, sha256: str) -> bool:
        """Whether the text of ``sha256`` is in the store (as a file, not a link)."""
        if not is_sha256(sha256):
            raise ValueError(f"not a content hash: {sha256!r}")
        fd = self._fds.get(sha256[:2])
        if fd is None:
            try:
                fd = open_folder(self._out, "extract", sha256[:2])
            except OSError:
                return False  # not kept: the folder may come
            self._fds[sha256[:2]] = fd
        try:
            st = os.stat(f"{sha256}.txt", dir_fd=fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode)

    def close(self) -> None:
        """Close the folders opened so far (it may be used again: they open anew)."""
        fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _is_file(entry: os.DirEntry[str]) -> bool:
    return entry.is_file(follow_symlinks=False)


def _is_text_name(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    return name.endswith(".txt") and name[0] != "." and not entry.is_symlink()


def _listed(fd: int, sub: str, keep: Callable[[os.DirEntry[str]], bool]) -> list[str] | None:
    """The names of the entries ``keep`` keeps in the folder ``sub`` of ``fd`` (never through
    a link), or None if it cannot be listed. Without :func:`folder_of`: a sweep lists the 256
    text folders twice, and the context managers were two thirds of that time (8.6 ms of a
    store's listing, 2.8 ms without them)."""
    try:
        sfd = _open(sub, _FOLDER, 0, fd)
    except OSError:
        return None
    try:
        with os.scandir(sfd) as it:  # (tested before the close: without d_type, a stat in sfd)
            return [e.name for e in it if keep(e)]
    except OSError:
        return None
    finally:
        os.close(sfd)


@contextlib.contextmanager
def folder_of(
    base: str | os.PathLike[str], *parts: str, make: bool = False, dir_fd: int | None = None
) -> Iterator[int]:
    """:func:`open_folder`, closed on leaving."""
    fd = open_folder(base, *parts, make=make, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def open_in(folder: int, name: str, flags: int, mode: int = 0o644) -> int:
    """Open ``name`` in the folder ``folder`` (a descriptor), never through a link."""
    return _open(name, flags | _NOFOLLOW, mode, folder)


def open_regular(folder: int, name: str) -> int:
    """A descriptor, for reading, of the regular file ``name`` in ``folder``: a link, a
    folder or a FIFO in its place is OSError (O_NONBLOCK: a FIFO must not hang the open)."""
    fd = open_in(folder, name, os.O_RDONLY | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        folder = stat.S_ISDIR(mode)
        what = "a folder, not a file" if folder else "not a regular file"
        raise OSError(errno.EISDIR if folder else errno.EINVAL, what, name)
    return fd


def read_in(folder: int, name: str) -> bytes:
    """The bytes of the regular file ``name`` in ``folder`` (see :func:`open_regular`)."""
    with os.fdopen(open_regular(folder, name), "rb") as fh:
        return fh.read()


def read_file(path: Path) -> bytes:
    """The bytes of the store file ``path``: neither it nor its folder a link."""
    with folder_of(path.parent) as folder:
        return read_in(folder, path.name)


def _empty_folder(parent: int, name: str) -> None:
    """Remove the files in the folder ``name`` of ``parent`` (a worker's folder in ``tmp/``
    holds files only; a folder there is left, and so is its parent)."""
    with folder_of(name, dir_fd=parent) as fd:
        for inner in os.listdir(fd):
            with contextlib.suppress(OSError):
                os.unlink(inner, dir_fd=fd)


def temp_file(folder: int, prefix: str, suffix: str = ".tmp") -> tuple[int, str]:
    """A new file of this process's own in ``folder`` (a descriptor; opened for writing, mode
    0600) and its name, as ``tempfile.mkstemp`` makes one: the store's writes need no more of
    ``tempfile``, whose import (with ``shutil`` and ``random``) was a tenth of a quick
    sweep's imports."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL
    for _ in range(100):
        name = f"{prefix}{os.urandom(6).hex()}{suffix}"
        try:
            return open_in(folder, name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def write_in(
    folder: int,
    name: str,
    data: bytes | Iterable[bytes],
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write ``data`` as ``name`` in ``folder`` so that readers see the old file or the new,
    never half (a link in its place is replaced, never followed). ``before_replace`` runs
    once the new file is on disk, before it takes the name (an error there keeps the old)."""
    fd, tmp = temp_file(folder, f".{name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes | bytearray):
                fh.write(data)
            else:
                for chunk in data:
                    fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    with contextlib.suppress(OSError):
        os.fsync(folder)


def atomic_write(
    path: Path, data: bytes | Iterable[bytes], before_replace: Callable[[], None] | None = None
) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new, never half;
    ``path``'s folder (made if missing) is opened without following its last part.
    ``before_replace``: as for :func:`write_in`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with folder_of(path.parent) as folder:
        write_in(folder, path.name, data, before_replace)


def text_dest(store_dir: str, sha256: str) -> str:
    """Where the text of content ``sha256`` lives in the store at ``store_dir``."""
    return f"{store_dir}/extract/{sha256[:2]}/{sha256}.txt"


def text_ident(st: os.stat_result) -> str:
    """A stored text file's identity (inode, size, mtime): the text index notes it with the
    text it indexed, and indexes again a text whose file is no longer that one."""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


_OWN: dict[int, str] = {}
"""This process's own folder name in a store's ``tmp/`` (by pid: a forked child makes its own)."""


def own_tmp_name() -> str:
    """The name of this process's own folder in a store's ``tmp/``: ``w<pid>.<token>`` (the
    token tells apart processes of one pid on two machines writing into one store)."""
    pid = os.getpid()
    name = _OWN.get(pid)
    if name is None:
        name = _OWN[pid] = f"w{pid}.{os.urandom(4).hex()}"
    return name


def open_own_tmp(tmp_dir: str) -> tuple[int, str]:
    """A descriptor of this process's own folder in the store's ``tmp/`` folder ``tmp_dir``
    (made when missing; ``tmp_dir`` itself never is), and its path.

    Each worker creates its texts in a folder of its own: creating a file and renaming one
    out take the folder's lock, and with every worker in one ``tmp/`` they queued on it for
    each text (on ext4, spinning while another allocated an inode: the two workers of a cold
    sweep of 20,000 small files right after a delete spent a quarter of their CPU there).
    Neither ``tmp_dir``'s last part nor the folder may be a link."""
    name = own_tmp_name()
    try:
        return open_folder(tmp_dir, name), f"{tmp_dir}/{name}"
    except FileNotFoundError:  # (only the first text, or after a writer's clean_tmp)
        return open_folder(tmp_dir, name, make=True), f"{tmp_dir}/{name}"


class HeldFolders:
    """The folders a worker writes its texts through (its own ``tmp/`` folder, the store's
    ``extract/`` and each ``extract/<aa>``), opened once for a span of reads (a batch) and
    kept, rather than opened again, part by part from the root, for each text.

    Measured on a cold sweep of 20,000 small files (two workers): eight opens a file, most
    of them folders by their whole path, were a third of the workers' time, each path's
    lookup slowed by the other worker's renames. A folder held is the one opened when the
    span began, never a link (each is opened as :func:`open_folder` opens it); one removed
    meanwhile (a writer's ``clean_tmp``, a store deleted) fails its next use, which opens it
    anew once (:meth:`forget`), as the paths would have been.
    """

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def own_tmp(self, tmp_dir: str) -> tuple[int, str]:
        """:func:`open_own_tmp`, held (not to be closed by the caller)."""
        path = f"{tmp_dir}/{own_tmp_name()}"
        fd = self._fds.get(path)
        if fd is None:
            fd, path = open_own_tmp(tmp_dir)
            self._fds[path] = fd
        return fd, path

    def folder(self, path: str) -> int:
        """The folder at ``path`` as :func:`open_folder` opens it, held."""
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = open_folder(path)
        return fd

    def text_folder(self, store_dir: str, part: str, make: bool) -> int:
        """``store_dir/extract/part`` as :func:`open_folder` opens it, held; ``make``
        creates the last part when missing (the store's ``extract/`` never)."""
        path = f"{store_dir}/extract/{part}"
        fd = self._fds.get(path)
        if fd is None:
            top = self._fds.get(f"{store_dir}/extract")
            if top is None:
                top = self._fds[f"{store_dir}/extract"] = open_folder(store_dir, "extract")
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=top)
            fd = self._fds[path] = open_folder(part, dir_fd=top)
        return fd

    def forget(self) -> None:
        """Close every folder held: the next use opens them anew."""
        fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


_HELD: list[HeldFolders] = []
"""The span of reads in flight in this process (a worker reads one file at a time)."""


@contextlib.contextmanager
def folders_held() -> Iterator[HeldFolders]:
    """Within: the text writes of this process go through one :class:`HeldFolders`, closed
    on leaving (a worker's batch)."""
    held = HeldFolders()
    _HELD.append(held)
    try:
        yield held
    finally:
        _HELD.remove(held)
        held.forget()


def held_folders() -> HeldFolders | None:
    """The :class:`HeldFolders` of the span in flight, if any."""
    return _HELD[-1] if _HELD else None


def place_text(store_dir: str, tmp: str, sha256: str, *, make: bool = False) -> str:
    """Rename the finished text ``tmp`` (in the store's ``tmp/``) to its place in the store
    at ``store_dir``, no folder on either side followed through a link; its place. ``make``
    creates a missing text folder (a worker does not: a store gone meanwhile stays gone)."""
    held = held_folders()
    if held is not None:
        try:
            _place_held(held, store_dir, tmp, sha256, make)
        except FileNotFoundError:  # a folder held was removed: by its path, as without
            held.forget()
            _place_held(held, store_dir, tmp, sha256, make)
        return text_dest(store_dir, sha256)
    with (
        folder_of(os.path.dirname(tmp)) as src,
        folder_of(store_dir, "extract", sha256[:2], make=make) as dest,
    ):
        os.replace(os.path.basename(tmp), f"{sha256}.txt", src_dir_fd=src, dst_dir_fd=dest)
    return text_dest(store_dir, sha256)


def _place_held(held: HeldFolders, store_dir: str, tmp: str, sha256: str, make: bool) -> None:
    src = held.folder(os.path.dirname(tmp))
    dest = held.text_folder(store_dir, sha256[:2], make)
    os.replace(os.path.basename(tmp), f"{sha256}.txt", src_dir_fd=src, dst_dir_fd=dest)


def sync_fs(folder: Path) -> None:
    """Flush every write of the file system that holds ``folder`` to its disk.

    ``syncfs`` of that one file system (``os.sync`` flushes every file system of the machine,
    and waits for other programs' writes too); ``os.sync`` where ``syncfs`` is not to be had
    (not Linux, a libc without it) or fails.
    """
    syncfs = _syncfs()
    if syncfs is not None:
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                if syncfs(fd) == 0:
                    return
            finally:
                os.close(fd)
    os.sync()


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs``, or None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: the dashboard imports this module and never syncs

    try:
        fn = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int]
    fn.restype = ctypes.c_int
    return cast(Callable[[int], int], fn)


class Store:
    """One output folder: read freely, write only while holding :meth:`writer`."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.extract_dir = self.out / "extract"
        self.jsonl_path = self.out / JSONL
        self.summary_path = self.out / SUMMARY
        self.tmp_dir = self.out / "tmp"
        self._lock_fd: int | None = None
        self._lines = LineCache()

    # -- reading ------------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether a store has been written here."""
        return os.path.lexists(self.jsonl_path)

    def check(self, *, writing: bool = False) -> None:
        """Raise StoreUnusable, naming the problem, when this folder cannot serve as a store.

        A file in the way of the store folder, a folder where one of its files belongs (or
        the reverse), a link where any of its files or folders belongs (or the store folder
        itself a link), a store of a newer format. Reading checks what reading needs;
        ``writing`` checks everything a sweep will touch.
        """
        where = shown(str(self.out))
        try:
            mode = os.lstat(self.out).st_mode
        except OSError:
            return  # no store yet (or its parent cannot be read: writing says why)
        if stat.S_ISLNK(mode):
            raise StoreUnusable(
                f"the store {where} is a link: a store is never used through a link "
                "(name the folder it points to instead)"
            )
        if not stat.S_ISDIR(mode):
            raise StoreUnusable(f"a file is in the way of the store: {where} (use --out)")
        kinds: dict[str, int] = {}
        for name in _NAMES:
            with contextlib.suppress(OSError):  # (a name not there is no problem)
                kinds[name] = os.lstat(os.path.join(self.out, name)).st_mode
        for name, kind in kinds.items():
            if stat.S_ISLNK(kind):
                raise StoreUnusable(f"store {where}: {name} is {LINKED}")
        for name in _FILES if writing else (JSONL,):
            if name in kinds and stat.S_ISDIR(kinds[name]):
                raise StoreUnusable(f"store {where}: {name} is a folder where a file belongs")
        for name in _FOLDERS if writing else ():
            if name in kinds and not stat.S_ISDIR(kinds[name]):
                raise StoreUnusable(f"store {where}: {name} is a file where a folder belongs")
        if writing:
            self._check_not_foreign(where, kinds)
        if writing and "extract" in kinds:
            self._check_fanout(where)
        self._check_format()

    def _check_not_foreign(self, where: str, kinds: dict[str, int]) -> None:
        """A folder that is not a store holds no store's name among files of its own: the
        store's writer empties ``tmp/``, replaces ``extract.jsonl`` and ``lock``, collects
        ``extract/`` (``--out ~/docs`` where ``~/docs/tmp`` held the user's notes: they were
        deleted). A folder of a store's names alone is a store (another program's, a bare
        ``extract.jsonl``: it opens); a ``lock`` as a writer leaves it (empty or a pid:
        killed before it wrote the marker) is the store's own."""
        if looks_like_store(kinds):
            return
        taken = [name for name in kinds if name != "lock" or not self._lock_is_ours()]
        if not taken or not holds_others(self.out):
            return
        name = taken[0] + ("/" if stat.S_ISDIR(kinds[taken[0]]) else "")
        raise StoreUnusable(
            f"cannot write a store into {where}: it is not a store, and it holds "
            f"{shown(name)} among files of its own, a name the store's own files take (its "
            "writer would replace or empty it); name a new or empty folder (--out)"
        )

    def _lock_is_ours(self) -> bool:
        try:
            held = self.read_file("lock")
        except OSError:
            return False
        return len(held) <= 20 and (not held or held.strip().isdigit())

    def _check_fanout(self, where: str) -> None:
        """Each text folder ``extract/<aa>`` there is a folder, not a file or a link."""
        try:
            with folder_of(self.out, "extract") as fd, os.scandir(fd) as it:
                wrong = [
                    (e.name, e.is_symlink())
                    for e in it
                    if len(e.name) == 2 and not e.is_dir(follow_symlinks=False)
                ]
        except OSError as exc:
            raise StoreUnusable(f"cannot read the store {where}: {exc.strerror or exc}") from exc
        if wrong:
            name, linked = wrong[0]
            what = LINKED if linked else "a file where a folder belongs"
            raise StoreUnusable(f"store {where}: extract/{shown(name)} is {what}")

    def _check_format(self) -> None:
        try:
            marker = orjson.loads(self.read_file(STORE_MARKER))
        except (OSError, orjson.JSONDecodeError):
            return  # no marker (an older store) or a damaged one: the writer rewrites it
        fmt = marker.get("format") if isinstance(marker, dict) else None
        if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt > FORMAT:
            raise StoreUnusable(
                f"store {shown(str(self.out))} has format {fmt}, written by a newer quarry "
                f"(this one reads format {FORMAT})"
            )

    def read_file(self, name: str) -> bytes:
        """The bytes of the store's file ``name`` (OSError when missing, not a regular file,
        or a link)."""
        with folder_of(self.out) as fd:
            return read_in(fd, name)

    def write_file(self, name: str, data: bytes | Iterable[bytes]) -> None:
        """Replace the store's file ``name`` atomically (see :func:`atomic_write`)."""
        atomic_write(self.out / name, data)

    def open_jsonl(self) -> int:
        """A descriptor of ``extract.jsonl`` opened for reading (FileNotFoundError when there
        is none; OSError when it is a link, a folder or not a regular file). The dashboard
        reads the records through it."""
        with folder_of(self.out) as fd:
            return open_regular(fd, JSONL)

    def is_store(self) -> bool:
        """Whether the folder holds a store (its marker, or an older store's shape)."""
        try:
            return looks_like_store(os.listdir(self.out))
        except OSError:
            return False

    def load(self) -> Loaded:
        """Every usable record of ``extract.jsonl`` (none for a new store), and the bad lines.

        Raises StoreUnusable when the file exists but cannot be read.
        """
        try:
            data = self.read_file(JSONL)
        except FileNotFoundError:
            return Loaded([])
        except OSError as exc:
            raise StoreUnusable(
                f"cannot read {shown(str(self.jsonl_path))}: {exc.strerror or exc}"
            ) from exc
        return read_jsonl(data)

    def load_records(self) -> list[Record]:
        """Every usable record of ``extract.jsonl`` (see :meth:`load`)."""
        return self.load().records

    def load_summary(self) -> Summary | None:
        """The summary, or None for a new store; StoreCorrupt when it cannot be used."""
        try:
            return Summary.from_json(self.read_file(SUMMARY))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreCorrupt(f"{SUMMARY}: {exc.strerror or exc}") from exc
        except BadRecord as exc:
            raise StoreCorrupt(f"{SUMMARY}: {exc}") from exc

    def text_path(self, sha256: str) -> Path:
        """Where the text of content ``sha256`` lives (ValueError for anything but a hash)."""
        if not is_sha256(sha256):
            raise ValueError(f"not a content hash: {sha256!r}")
        return self.extract_dir / sha256[:2] / f"{sha256}.txt"

    def has_text(self, sha256: str) -> bool:
        """Whether the text of ``sha256`` is in the store (as a file, not a link)."""
        name = self.text_path(sha256).name
        try:
            with folder_of(self.out, "extract", sha256[:2]) as fd:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode)

    def open_text(self, sha256: str) -> BinaryIO:
        """The stored text of ``sha256``, opened for reading: OSError when it is absent, not a
        regular file, or a link (a text that is a link is missing, never its target)."""
        name = self.text_path(sha256).name
        with folder_of(self.out, "extract", sha256[:2]) as fd:
            return os.fdopen(open_regular(fd, name), "rb")

    def text_bytes(self, sha256: str, limit: int | None = None) -> bytes:
        """The stored text of ``sha256`` as bytes, its first ``limit`` of them if given
        (OSError as for :meth:`open_text`)."""
        with self.open_text(sha256) as fh:
            return fh.read() if limit is None else fh.read(limit)

    def read_text(self, sha256: str) -> str:
        """The stored text of ``sha256`` (OSError as for :meth:`open_text`)."""
        return self.text_bytes(sha256).decode("utf-8", errors="replace")

    def keep_text(self, sha256: str) -> str:
        """Keep the stored text of ``sha256`` aside before another replaces it: linked (no
        copy) as ``history/<aa>/<hash>.txt`` under its own hash, which is returned. OSError
        when it cannot be read or linked."""
        digest = hashlib.sha256()
        with self.open_text(sha256) as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
        kept = digest.hexdigest()
        name = self.text_path(sha256).name
        with (
            folder_of(self.out, "extract", sha256[:2]) as src,
            folder_of(self.out, KEPT, kept[:2], make=True) as dest,
            contextlib.suppress(FileExistsError),  # (the same text kept before)
        ):
            os.link(name, f"{kept}.txt", src_dir_fd=src, dst_dir_fd=dest, follow_symlinks=False)
        return kept

    def open_kept(self, text: str) -> BinaryIO:
        """A text kept aside (:meth:`keep_text`), opened for reading (OSError as for
        :meth:`open_text`)."""
        if not is_sha256(text):
            raise ValueError(f"not a text's hash: {text!r}")
        with folder_of(self.out, KEPT, text[:2]) as fd:
            return os.fdopen(open_regular(fd, f"{text}.txt"), "rb")

    def gc_kept(self, keep: set[str]) -> int:
        """Remove every text kept aside whose hash is not in ``keep``; how many went."""
        gone = 0
        for text in list(self.text_hashes(KEPT)):
            if text not in keep:
                with (
                    contextlib.suppress(OSError),
                    folder_of(self.out, KEPT, text[:2]) as folder,
                ):
                    os.unlink(f"{text}.txt", dir_fd=folder)
                    gone += 1
        return gone

    def _text_folders(self, where: str = "extract") -> tuple[int, list[str]] | None:
        """``extract/`` (or ``where``) opened and the names of its folders (not links), or
        None."""
        try:
            fd = open_folder(self.out, where)
        except OSError:
            return None
        try:
            with os.scandir(fd) as it:
                return fd, [e.name for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            os.close(fd)
            return None

    def text_hashes(self, where: str = "extract") -> Iterator[str]:
        """Hashes of every stored text (files only: a folder or a link in a text's place is
        not one); ``where``: of the texts in that folder of the store instead."""
        for _sub, hashes in self.text_hashes_by_folder(where):
            yield from hashes

    def text_hashes_by_folder(self, where: str = "extract") -> Iterator[tuple[str, list[str]]]:
        """:meth:`text_hashes` a text folder at a time: its name (the hashes' first two
        characters) and the hashes of the texts in it."""
        found = self._text_folders(where)
        if found is None:
            return
        fd, subs = found
        try:
            for sub in subs:
                names = _listed(fd, sub, _is_file)
                if names is None:
                    continue
                yield (
                    sub,
                    [
                        name[:-4]
                        for name in names
                        if name.endswith(".txt") and SHA256_RE.fullmatch(name, 0, len(name) - 4)
                    ],
                )
        finally:
            os.close(fd)

    def text_names(self) -> TextNames:
        """Which hashes have a stored text: one listing per text folder, no stat. A sweep
        asks whether known hashes are here: once, instead of once per ``ok`` record. A link
        in a text's place is no text (the listing says so without a stat), so the sweep
        reads its document again and the text replaces the link."""
        folders = self._text_folders()
        if folders is None:
            return TextNames.of(())
        fd, subs = folders
        try:
            return TextNames.of((sub, self._text_stems(fd, sub)) for sub in sorted(subs))
        finally:
            os.close(fd)

    @staticmethod
    def _text_stems(fd: int, sub: str) -> list[str]:
        """The names of the texts in the folder ``sub`` of ``fd``, without ``.txt``."""
        return [name[:-4] for name in _listed(fd, sub, _is_text_name) or ()]

    def text_folder_times(self) -> list[int]:
        """The mtime and ctime of each text folder (-1, -1 for a missing one): adding or
        removing a text changes them."""
        found: list[int] = []
        try:
            fd = open_folder(self.out, "extract")
        except OSError:
            return [-1] * (2 * len(_FANOUT))
        try:
            for name in _FANOUT:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    found += (-1, -1)
                else:
                    found += (st.st_mtime_ns, st.st_ctime_ns)
        finally:
            os.close(fd)
        return found

    def jsonl_identity(self) -> tuple[int, int, int, int]:
        """``extract.jsonl``'s size, mtime, ctime and inode ((-1, ...) when it is missing)."""
        try:
            st = os.stat(self.jsonl_path, follow_symlinks=False)
        except OSError:
            return (-1, -1, -1, -1)
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    # -- writing ------------------------------------------------------------------------

    @contextlib.contextmanager
    def writer(self) -> Iterator[Store]:
        """Hold the store's exclusive lock; a second writer gets StoreLocked at once.

        A store that cannot be written (its shape, a newer format, no permission, an
        immutable folder) is StoreUnusable before anything is read or changed.
        """
        self.check(writing=True)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            with folder_of(self.out) as folder:
                fd = open_in(folder, "lock", os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise self._unwritable(exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise StoreLocked(
                f"store {shown(str(self.out))} is in use by another quarry process "
                f"(pid {_pid_in(fd, self)})",
                str(self.out),
            ) from exc
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            self._prepare()
        except OSError as exc:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise self._unwritable(exc) from exc
        self._lock_fd = fd
        try:
            yield self
        finally:
            self._lock_fd = None
            self._tidy_tmp()
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _tidy_tmp(self) -> None:
        """Remove the workers' folders in ``tmp/`` that are empty (each worker's texts were
        renamed out of it): a store left by a writer has an empty ``tmp/``. A folder still
        holding a text stays for the next writer's :meth:`clean_tmp`."""
        with contextlib.suppress(OSError), folder_of(self.out, "tmp") as fd, os.scandir(fd) as it:
            for entry in list(it):
                if entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.rmdir(entry.name, dir_fd=fd)

    def _unwritable(self, exc: OSError) -> StoreUnusable:
        what = shown(exc.filename) if isinstance(exc.filename, str) else shown(str(self.out))
        # (read-only media, another user's folder: where the store goes by default, beside
        # the folder swept, is one the user may not write; the way out is one flag)
        hint = "; --out DIR keeps the store elsewhere" if exc.errno in _NOT_OURS else ""
        return StoreUnusable(f"cannot write the store: {what}: {exc.strerror or exc}{hint}")

    def _prepare(self) -> None:
        """Everything a sweep writes must be writable now, not after an hour of reading.
        The marker first: a folder a writer has touched says it is a store."""
        marker = orjson.dumps({"format": FORMAT, "written_by": "quarry"}) + b"\n"
        try:
            current = self.read_file(STORE_MARKER)
        except FileNotFoundError:
            current = b""
        if current != marker:
            self.write_file(STORE_MARKER, marker)
        else:  # proves the folder takes new files (an immutable folder does not)
            with folder_of(self.out) as folder:
                fd, probe = temp_file(folder, ".probe.")
                os.close(fd)
                os.unlink(probe, dir_fd=folder)
        self.clean_tmp()
        self._make_fanout()

    def _make_fanout(self) -> None:
        """Create ``extract/00`` .. ``extract/ff`` up front.

        A text renamed into a folder made a moment before is a move whose arrival a watcher
        of the root has not seen yet (it watches the new folder only once told of it);
        watchdog then holds the unmatched move for half a second, and every event behind it.
        With the folders there from the start, the store's renames never delay the events
        of the user's own files.
        """
        with folder_of(self.out, "extract", make=True) as fd:
            with os.scandir(fd) as it:  # one listing, not 256 mkdirs that fail (1.4 ms)
                there = {e.name for e in it if e.is_dir(follow_symlinks=False)}
            for name in _FANOUT:
                if name not in there:
                    os.mkdir(name, 0o777, dir_fd=fd)

    def clean_tmp(self) -> None:
        """Remove what a killed writer left: workers' texts in ``tmp/`` and its workers'
        folders there, and the temp files of interrupted atomic writes
        (``.extract.jsonl.*.tmp``, 8 MB at 20,000 records). Names are removed inside the
        store's own folders: a link among them goes, never what it points to."""
        with folder_of(self.out, "tmp", make=True) as fd, os.scandir(fd) as it:
            for entry in list(it):
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        _empty_folder(fd, entry.name)
                        os.rmdir(entry.name, dir_fd=fd)
                    else:
                        os.unlink(entry.name, dir_fd=fd)
        temps = tuple(f".{name}." for name in (JSONL, SUMMARY, STAT_INDEX, STORE_MARKER))
        with folder_of(self.out) as fd:
            for name in os.listdir(fd):
                if name.startswith(temps) and name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=fd)

    def lock_lost(self) -> str | None:
        """Why the lock this writer holds no longer guards the store; None while it does.

        The lock is an flock on ``out/lock``: once that file (or the whole folder) is removed
        or replaced, our lock guards nothing and a second writer can take a new one. None too
        when this store is not held as a writer.
        """
        fd = self._lock_fd
        if fd is None:
            return None
        held = os.fstat(fd)
        try:
            now = os.stat(self.out / "lock", follow_symlinks=False)
        except FileNotFoundError:
            what = "lock file" if self.out.is_dir() else "folder"
            return f"the store's {what} was removed ({shown(str(self.out))})"
        except OSError as exc:
            return f"the store's lock cannot be checked ({exc.strerror or exc})"
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return f"the store's lock file was replaced ({shown(str(self.out))})"
        return None

    def still_ours(self) -> None:
        """Raise StoreLost when the lock this writer holds no longer guards the store."""
        self._still_ours()

    def _still_ours(self) -> None:
        """Raise StoreLost rather than write into a store our lock no longer guards.

        Without this check a write would quietly make the folder again (``atomic_write``
        creates its parent): a store that no lock guards, naming texts that went with the old
        one.
        """
        why = self.lock_lost()
        if why is not None:
            raise StoreLost(why)

    @property
    def dirty_path(self) -> Path:
        """Marker present while a sweep may be adding texts that no record names yet."""
        return self.out / "sweep.dirty"

    def is_dirty(self) -> bool:
        """Whether :meth:`mark_dirty`'s marker is there (whatever it is: never followed)."""
        return os.path.lexists(self.dirty_path)

    def mark_dirty(self) -> None:
        """Say that texts are being added; a crash before :meth:`mark_clean` is detectable."""
        self._still_ours()
        if not self.is_dirty():
            with folder_of(self.out) as folder:
                os.close(open_in(folder, self.dirty_path.name, os.O_WRONLY | os.O_CREAT))
                os.fsync(folder)

    def mark_clean(self) -> None:
        """Every text in the store is named by a record again."""
        with contextlib.suppress(FileNotFoundError), folder_of(self.out) as folder:
            os.unlink(self.dirty_path.name, dir_fd=folder)

    def put_text_file(self, sha256: str, tmp: Path) -> None:
        """Move a finished (already fsynced) text file, in ``tmp/``, into place."""
        self._still_ours()
        self.text_path(sha256)  # a hash, nothing else, names the place
        place_text(str(self.out), str(tmp), sha256, make=True)

    def put_text(self, sha256: str, text: str) -> None:
        """Write ``text`` as the text of ``sha256``."""
        self._still_ours()
        name = self.text_path(sha256).name
        with folder_of(self.out, "extract", sha256[:2], make=True) as folder:
            write_in(folder, name, text.encode("utf-8"))

    def drop_text(self, sha256: str) -> None:
        """Remove the text of ``sha256`` if present (a folder in its place is left alone; a
        link in its place goes, never what it points to)."""
        name = self.text_path(sha256).name
        with (
            contextlib.suppress(FileNotFoundError, IsADirectoryError),
            folder_of(self.out, "extract", sha256[:2]) as folder,
        ):
            os.unlink(name, dir_fd=folder)

    def write_records(
        self, records: Iterable[Record], before_write: Callable[[], None] | None = None
    ) -> None:
        """Replace ``extract.jsonl`` with ``records`` sorted by (root, path).

        ``before_write`` is called once the lines are made, before the file is touched (a
        sweep waits there for the sync of its texts, which ran while the lines were made).

        Cheap when few records changed since the last write (a watch batch in a big store):
        unchanged records (the same objects) keep their serialised line and the sort order is
        patched rather than redone. The file is still replaced whole and atomically, so a
        reader always sees one consistent, sorted snapshot.
        """
        self._still_ours()
        data = self._lines.render(records)
        if before_write is not None:
            before_write()
        # The stat index describes the records it was written with: it goes first, so that
        # it never outlives them whatever the file system's clock (the sweep command writes
        # a new one after).
        self.drop_stat_index()
        atomic_write(self.jsonl_path, data)

    def write_lines(
        self, lines: Iterable[bytes], before_replace: Callable[[], None] | None = None
    ) -> None:
        """Replace ``extract.jsonl`` with ``lines`` (each a record's line with its newline,
        already in key order), streamed to disk: the index writes the file this way, so no
        process holds the whole file, or every record's line, in memory.

        ``before_replace`` is called once the new file is on disk, before it takes the name
        (a sweep waits there for the sync of its texts, which ran while the lines went out).
        """
        self._still_ours()
        self._lines.clear()  # the next write from records cannot trust what it last wrote
        self.drop_stat_index()  # (see write_records)
        atomic_write(self.jsonl_path, lines, before_replace)

    def drop_stat_index(self) -> None:
        """Remove the stat index (none there, or not a file, is no index either)."""
        with contextlib.suppress(OSError), folder_of(self.out) as folder:
            os.unlink(STAT_INDEX, dir_fd=folder)

    def write_summary(self, summary: Summary) -> None:
        """Replace ``extract.summary.json``."""
        self._still_ours()
        summary = replace(summary, store=str(self.out))
        atomic_write(self.summary_path, summary.to_json() + b"\n")

    def gc(self, keep: set[str] | Callable[[str], Container[str]]) -> tuple[int, list[str]]:
        """Remove every stored text whose hash is not in ``keep``: a set, or a function that
        gives the hashes to keep of one text folder (the two characters they start with),
        asked a folder at a time, so that neither every text's name nor every hash to keep
        is held at once (ten million of each are gigabytes).

        Returns how many went, and the texts that could not be removed (with why).
        """
        gone = 0
        stuck: list[str] = []
        for sub, hashes in self.text_hashes_by_folder():
            kept = keep(sub) if callable(keep) else keep
            for sha in hashes:
                if sha in kept:
                    continue
                try:
                    self.drop_text(sha)
                except OSError as exc:
                    stuck.append(f"extract/{sha[:2]}/{sha}.txt: {exc.strerror or exc}")
                else:
                    gone += 1
        return gone, stuck


def parse_jsonl(data: bytes) -> list[Record]:
    """The usable records of an ``extract.jsonl`` (see :func:`read_jsonl`)."""
    return read_jsonl(data).records


def read_jsonl(data: bytes) -> Loaded:
    """Parse the bytes of an ``extract.jsonl``: usable records, and the lines that are not.

    The common case, a file this quarry wrote (one record per line, each line ended), is one
    msgspec call over the whole buffer straight into Records, then a validation of the fields
    that become file names, in bulk. Anything else (a blank or torn line, a line that is not
    one record, a name kept as bytes, a foreign writer's fields) is read line by line through
    :meth:`Record.from_dict`.
    """
    count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    records = _in_one_call(data, count, lambda: [line for _n, line in _numbered(data)])
    return Loaded(records) if records is not None else _read_lines(_numbered(data))


def _in_one_call(buf: bytes, count: int, lines: Callable[[], list[bytes]]) -> list[Record] | None:
    """The records of ``buf`` (``count`` lines) when each line is one usable record: one
    msgspec call, a bulk check of the fields that become file names, and the few lines with
    names kept as bytes (``lines()`` gives them) read again by :meth:`Record.from_json`.
    None when any line needs judging alone."""
    try:
        records = _LINES_DECODER.decode_lines(buf)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: a line nested too deep
        return None
    # decode_lines takes any whitespace between records: as many records as lines, or there
    # are blank lines or two records on one line.
    if len(records) != count or not valid_in_bulk(records):
        return None
    if b'_b64"' in buf:
        for i, line in enumerate(lines()):
            if b'_b64"' in line:
                try:
                    records[i] = Record.from_json(line)
                except BadRecord:
                    return None
    return records


def _numbered(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) of every line that is not blank."""
    return [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def _read_lines(numbered: list[tuple[int, bytes]]) -> Loaded:
    """Each line judged by itself, a block of lines at a time: a block of good lines is one
    msgspec call, a block that holds a line that is not a record is read line by line (one
    torn line in a million no longer makes the whole store load 20 times slower)."""
    records: list[Record] = []
    bad: list[BadLine] = []
    for start in range(0, len(numbered), _BLOCK_LINES):
        block = numbered[start : start + _BLOCK_LINES]
        lines = [line for _n, line in block]
        fast = _in_one_call(b"\n".join(lines), len(lines), lines.copy)
        if fast is not None:
            records.extend(fast)
            continue
        for n, line in block:
            try:
                records.append(Record.from_json(line))
            except BadRecord as exc:
                bad.append(BadLine(n, str(exc)))
    return Loaded(records, tuple(bad))


_BLOCK_LINES = 1024
"""Lines of a store with a bad line that are tried as one msgspec call."""

_LINES_DECODER = msgspec.json.Decoder(Record)
# A path, between NUL separators, that starts with "/" or has an empty, "." or ".." part.
_BAD_PATH = re.compile("(?:\0|/)\\.{0,2}(?:/|\0)")


def valid_in_bulk(records: Sequence[Record] | Sequence[Any]) -> bool:
    """Whether every record's root, path, status and sha256 is usable (C-speed checks): the
    rules of :meth:`Record.from_dict`, for anything with those four attributes (the
    dashboard's rows too, so that it keeps exactly the lines the engine keeps)."""
    if not records:
        return True
    shas = [s for s in map(attrgetter("sha256"), records) if s is not None]
    if shas and not _all_hashes(shas):
        return False
    if not all(r.startswith("/") and "\0" not in r for r in set(map(attrgetter("root"), records))):
        return False
    if not all(set(map(attrgetter("status"), records))):
        return False
    paths = "\0".join(map(attrgetter("path"), records))
    if paths.count("\0") != len(records) - 1:
        return False  # a NUL inside a path
    return _BAD_PATH.search("\0" + paths + "\0") is None


def _all_hashes(shas: list[str]) -> bool:
    """Whether each of ``shas`` is 64 lowercase hex digits (as :data:`SHA256_RE` says): their
    lengths, then one pass over them all (a regex match per hash cost 4x as much)."""
    if set(map(len, shas)) != {64}:
        return False
    joined = "".join(shas)
    return joined.isascii() and not joined.encode("ascii").translate(None, _HEX_DIGITS)


_HEX_DIGITS = b"0123456789abcdef"


def _pid_in(_fd: int, store: Store) -> str:
    try:
        return store.read_file("lock").decode("utf-8", "replace").strip() or "?"
    except OSError:
        return "?"


_OWN_NAMES = STORE_ENTRIES | frozenset(_NAMES)
"""Every name a store (and SQLite beside its index) puts in its folder."""
_OWN_TEMPS = tuple(f".{name}." for name in (*_FILES, STAT_INDEX, "probe"))
"""How the temp files of a store's interrupted writes begin."""


def holds_others(folder: Path) -> bool:
    """Whether ``folder`` holds a name that is neither a store's (nor what a writer of one
    leaves: an interrupted write's temp file) nor a system's dropping: files of its own."""
    try:
        with os.scandir(folder) as it:
            for entry in it:
                name = entry.name
                if name in _OWN_NAMES or name.startswith(_OWN_TEMPS):
                    continue
                if not is_default_ignored(name, entry.is_dir(follow_symlinks=False)):
                    return True
    except OSError:
        return False  # (a writer says why it cannot use it)
    return False


def default_out(root: Path) -> Path:
    """The default output folder for one root."""
    return root / STORE_DIRNAME
