"""The store: content-addressed texts, ``extract.jsonl`` and ``extract.summary.json``.

Layout under the output folder (default ``<root>/.quarry``)::

    extract/<aa>/<sha256>.txt   one normalised UTF-8 text per distinct content hash
    extract.jsonl               one record per walked file, sorted by (root, path)
    extract.summary.json        counts, tools, readers, timing
    lock                        held (flock) by the one writer
    tmp/                        workers' texts before they are renamed into place

Every file is written atomically (temp file, fsync, rename, fsync of the folder), so a crash
leaves the last good store. Readers never take the lock and never block.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec
import orjson

from engine.errors import StoreCorrupt, StoreLocked, StoreLost
from engine.jsonl import LineCache
from engine.names import shown
from engine.records import Record, Summary

STORE_DIRNAME = ".quarry"
JSONL = "extract.jsonl"
SUMMARY = "extract.summary.json"


def atomic_write(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes | bytearray):
                fh.write(data)
            else:
                for chunk in data:
                    fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
        self._unprimed: tuple[list[Record], bytes] | None = None

    # -- reading ------------------------------------------------------------------------

    def exists(self) -> bool:
        """Whether a store has been written here."""
        return self.jsonl_path.exists()

    def load_records(self) -> list[Record]:
        """Every record of ``extract.jsonl`` (empty for a new store).

        The writer (holding :meth:`writer`) keeps the lines it read, so that rewriting the
        file after a small change serialises only the records that changed.
        """
        try:
            data = self.jsonl_path.read_bytes()
        except FileNotFoundError:
            return []
        records = parse_jsonl(data, str(self.jsonl_path))
        if self._lock_fd is not None:
            # Primed on the first write: a sweep that changes nothing never pays for it.
            self._unprimed = (records, data)
        return records

    def load_summary(self) -> Summary | None:
        """The summary, or None for a new store."""
        try:
            return Summary.from_json(self.summary_path.read_bytes())
        except FileNotFoundError:
            return None
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise StoreCorrupt(f"{self.summary_path}: {exc}") from exc

    def text_path(self, sha256: str) -> Path:
        """Where the text of content ``sha256`` lives."""
        return self.extract_dir / sha256[:2] / f"{sha256}.txt"

    def has_text(self, sha256: str) -> bool:
        """Whether the text of ``sha256`` is in the store."""
        return self.text_path(sha256).exists()

    def read_text(self, sha256: str) -> str:
        """The stored text of ``sha256`` (raises FileNotFoundError when absent)."""
        return self.text_path(sha256).read_text(encoding="utf-8")

    def text_hashes(self) -> Iterator[str]:
        """Hashes of every stored text."""
        if not self.extract_dir.is_dir():
            return
        for sub in self.extract_dir.iterdir():
            if sub.is_dir():
                for f in sub.iterdir():
                    if f.suffix == ".txt" and not f.name.startswith("."):
                        yield f.stem

    # -- writing ------------------------------------------------------------------------

    @contextlib.contextmanager
    def writer(self) -> Iterator[Store]:
        """Hold the store's exclusive lock; a second writer gets StoreLocked at once."""
        self.out.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.out / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise StoreLocked(
                f"store {self.out} is in use by another quarry process (pid {_pid_in(fd, self)})"
            ) from exc
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd
        try:
            self.clean_tmp()
            self._make_fanout()
            yield self
        finally:
            self._lock_fd = None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _make_fanout(self) -> None:
        """Create ``extract/00`` .. ``extract/ff`` up front.

        A text renamed into a folder made a moment before is a move whose arrival a watcher
        of the root has not seen yet (it watches the new folder only once told of it);
        watchdog then holds the unmatched move for half a second, and every event behind it.
        With the folders there from the start, the store's renames never delay the events
        of the user's own files.
        """
        for i in range(256):
            (self.extract_dir / f"{i:02x}").mkdir(parents=True, exist_ok=True)

    def clean_tmp(self) -> None:
        """Remove what a killed writer left: workers' texts in ``tmp/`` and the temp files of
        interrupted atomic writes (``.extract.jsonl.*.tmp``, 8 MB at 20,000 records)."""
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        for stale in self.tmp_dir.iterdir():
            with contextlib.suppress(OSError):
                stale.unlink()
        for name in (JSONL, SUMMARY):
            for stale in self.out.glob(f".{name}.*.tmp"):
                with contextlib.suppress(OSError):
                    stale.unlink()

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
            now = os.stat(self.out / "lock")
        except FileNotFoundError:
            what = "lock file" if self.out.is_dir() else "folder"
            return f"the store's {what} was removed ({shown(str(self.out))})"
        except OSError as exc:
            return f"the store's lock cannot be checked ({exc.strerror or exc})"
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return f"the store's lock file was replaced ({shown(str(self.out))})"
        return None

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

    def mark_dirty(self) -> None:
        """Say that texts are being added; a crash before :meth:`mark_clean` is detectable."""
        self._still_ours()
        if not self.dirty_path.exists():
            self.dirty_path.touch()
            fsync_dir(self.out)

    def mark_clean(self) -> None:
        """Every text in the store is named by a record again."""
        with contextlib.suppress(FileNotFoundError):
            self.dirty_path.unlink()

    def put_text_file(self, sha256: str, tmp: Path) -> None:
        """Move a finished (already fsynced) text file into place."""
        self._still_ours()
        dest = self.text_path(sha256)
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, dest)

    def put_text(self, sha256: str, text: str) -> None:
        """Write ``text`` as the text of ``sha256``."""
        self._still_ours()
        atomic_write(self.text_path(sha256), text.encode("utf-8"))

    def drop_text(self, sha256: str) -> None:
        """Remove the text of ``sha256`` if present."""
        with contextlib.suppress(FileNotFoundError):
            self.text_path(sha256).unlink()

    def write_records(self, records: Iterable[Record]) -> None:
        """Replace ``extract.jsonl`` with ``records`` sorted by (root, path).

        Cheap when few records changed since the last write (a watch batch in a big store):
        unchanged records (the same objects) keep their serialised line and the sort order is
        patched rather than redone. The file is still replaced whole and atomically, so a
        reader always sees one consistent, sorted snapshot.
        """
        self._still_ours()
        if self._unprimed is not None:
            self._lines.prime(*self._unprimed)
            self._unprimed = None
        atomic_write(self.jsonl_path, self._lines.render(records))

    def write_summary(self, summary: Summary) -> None:
        """Replace ``extract.summary.json``."""
        self._still_ours()
        atomic_write(self.summary_path, summary.to_json() + b"\n")

    def gc(self, keep: set[str]) -> int:
        """Remove every stored text whose hash is not in ``keep``; return how many went."""
        gone = 0
        for sha in list(self.text_hashes()):
            if sha not in keep:
                self.drop_text(sha)
                gone += 1
        return gone


def parse_jsonl(data: bytes, name: str = "extract.jsonl") -> list[Record]:
    """Parse the bytes of an ``extract.jsonl``."""
    lines = [line for line in data.splitlines() if line.strip()]
    try:
        # One msgspec call over the whole file, straight into Records (unknown keys from a
        # newer writer are ignored): several times faster than a dict per line.
        return _DECODER.decode(b"[" + b",".join(lines) + b"]")
    except msgspec.DecodeError:
        pass
    out: list[Record] = []
    for n, line in enumerate(lines, 1):
        try:
            out.append(Record.from_dict(orjson.loads(line)))
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise StoreCorrupt(f"{name}:{n}: {exc}") from exc
    return out


_DECODER = msgspec.json.Decoder(list[Record])


def _pid_in(_fd: int, store: Store) -> str:
    try:
        return (store.out / "lock").read_text().strip() or "?"
    except OSError:
        return "?"


def default_out(root: Path) -> Path:
    """The default output folder for one root."""
    return root / STORE_DIRNAME
