"""The filesystem side of the watcher: one watchdog observer per root, a handler that queues.

The handler runs in watchdog's dispatcher thread and does no I/O beyond the ignore rules'
cached ``.quarryignore`` reads: it maps each event to paths relative to its root, drops the
store's own folder and ignored paths (the walk's :class:`engine.walk.Ignorer`), and pushes
the rest to the :class:`engine.debounce.Debouncer`. A move pushes both of its ends (so the
sweep sees the old path gone and the new one present in the same batch, and reuses the text).

:func:`start_observer` starts the native observer (inotify on Linux) unless polling is asked
for, and falls back to polling when the native one cannot start (out of inotify watches or
instances, an unsupported filesystem). Polling is ours (:class:`LeanPollingObserver`, on
watchdog's observer and emitter classes): one number held a path, and a big folder polled
less often rather than without pause.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
    FileSystemMovedEvent,
)  # fmt: skip
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, EventEmitter, EventQueue, ObservedWatch

from engine.debounce import Debouncer
from engine.walk import IGNORE_FILE, Ignorer, WalkRules, is_default_ignored

EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent, DirCreatedEvent, FileModifiedEvent, FileAttribEvent, FileClosedEvent,
    FileDeletedEvent, DirDeletedEvent, FileMovedEvent, DirMovedEvent,
]  # fmt: skip
"""What we subscribe to: not opens, not closes without a write, not folder mtime changes."""


class QueueingHandler(FileSystemEventHandler):
    """Maps a root's events to relative paths and queues them; never raises, never blocks."""

    def __init__(
        self,
        root: Path,
        rules: WalkRules,
        debouncer: Debouncer,
        *,
        tracks_close: bool,
        on_rescan: Callable[[str], None],
    ) -> None:
        self.root = str(root)
        self.rules = rules
        self.debouncer = debouncer
        self.tracks_close = tracks_close
        self.on_rescan = on_rescan
        self.ignorer = Ignorer(root, rules)
        self._skip = tuple(os.path.normpath(d) for d in rules.skip_dirs)

    def dispatch(self, event: FileSystemEvent) -> None:
        """Queue the paths of ``event`` (watchdog's entry point, in its dispatcher thread)."""
        try:
            self._queue(event)
        except Exception as exc:  # a raising handler kills watchdog's thread
            self.on_rescan(f"the watcher could not handle an event ({exc!r})")

    def _queue(self, event: FileSystemEvent) -> None:
        writing: bool | None = None
        if isinstance(event, FileModifiedEvent) and self.tracks_close:
            writing = True
        elif isinstance(event, FileClosedEvent):
            writing = False
        self._push(os.fsdecode(event.src_path), event.is_directory, writing)
        if isinstance(event, FileSystemMovedEvent) and event.dest_path:
            self._push(os.fsdecode(event.dest_path), event.is_directory, None)

    def _push(self, path: str, is_dir: bool, writing: bool | None) -> None:
        if not path or _inside(path, self._skip):
            return
        rel = os.path.relpath(path, self.root)
        if rel.startswith(".."):
            return
        if rel == ".":
            self.on_rescan(f"the watched folder {self.root} itself changed")
            return
        rel = rel.replace(os.sep, "/")
        if rel.rsplit("/", 1)[-1] == IGNORE_FILE:
            self._rules_changed(rel)
            return
        if self._ignored(rel, is_dir):
            return
        self.debouncer.push(self.root, rel, writing=writing)

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            if self.ignorer.ignored("/".join(parts[:depth]), True):
                return True
        return self.ignorer.ignored(rel, is_dir)

    def _rules_changed(self, rel: str) -> None:
        """A ``.quarryignore`` changed: new rules, and its folder is swept again whole."""
        self.ignorer = Ignorer(Path(self.root), self.rules)
        folder = rel.rpartition("/")[0]
        if folder:
            self.debouncer.push(self.root, folder)
        else:
            self.on_rescan(f"{IGNORE_FILE} changed at the top of {self.root}")


def _inside(path: str, folders: tuple[str, ...]) -> bool:
    return any(path == f or path.startswith(f + os.sep) for f in folders)


FolderId = tuple[int, int]
"""A folder as the system knows it: (device, inode)."""


def folder_id(path: Path) -> FolderId | None:
    """The folder at ``path`` now; None when nothing is there, or no folder, or it cannot be
    looked at. An observer follows the folder it was given, not its name: a root moved away
    is still watched where it went, and one made again (or a share mounted again) at its
    name is not watched at all."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


@dataclass(frozen=True, slots=True)
class Started:
    """An observer that is running, and how."""

    observer: BaseObserver
    """The watchdog observer (stop and join it)."""
    polling: bool
    """True for the polling observer."""
    fallback: str | None = None
    """Why native watching could not start, when the polling observer replaced it."""
    folder: FolderId | None = None
    """The root's folder as it was when watching it started (:func:`folder_id`)."""


HandlerFactory = Callable[[bool], FileSystemEventHandler]
"""Makes the handler for a root; its argument says whether the observer reports closes."""


def start_observer(
    root: Path,
    make_handler: HandlerFactory,
    *,
    poll: bool,
    poll_s: float,
    skip_dirs: tuple[str, ...] = (),
    defaults: bool = True,
) -> Started:
    """Watch ``root`` recursively: natively unless ``poll``, else or on failure by polling.

    ``skip_dirs`` (the store), and the default-excluded folders unless ``defaults`` is
    False, are not even listed by the polling observer.

    Raises OSError only when the polling observer cannot start either (no such folder).
    """
    fallback = None
    folder = folder_id(root)  # (before the observer looks: a change after it is seen again)
    if not poll:
        observer = None
        try:
            observer = Observer()
            tracks_close = type(observer).__name__ == "InotifyObserver"
            observer.schedule(
                make_handler(tracks_close), str(root), recursive=True, event_filter=EVENT_TYPES
            )
            observer.start()
            return Started(observer, polling=False, folder=folder)
        except OSError as exc:
            fallback = f"native watching failed ({exc.strerror or exc}{_lift(exc)})"
            if observer is not None:
                observer.stop()
    skip = make_skip(skip_dirs, defaults)
    observer = LeanPollingObserver(_listdir(skip), polling_interval=poll_s)
    observer.schedule(make_handler(False), str(root), recursive=True, event_filter=EVENT_TYPES)
    observer.start()
    return Started(observer, polling=True, fallback=fallback, folder=folder)


INOTIFY_LIMITS = {
    errno.ENOSPC: "fs.inotify.max_user_watches",
    errno.EMFILE: "fs.inotify.max_user_instances",
}
"""The kernel's setting behind each limit native watching can reach (a folder a watch)."""


def _lift(exc: OSError) -> str:
    """How to lift the limit ``exc`` says native watching reached, if it is one: the
    operator of a big share reads why it is polled, and the one setting that ends it."""
    name = INOTIFY_LIMITS.get(exc.errno or 0)
    if name is None or "inotify" not in str(exc):
        return ""
    try:
        with open(f"/proc/sys/{name.replace('.', '/')}", encoding="ascii") as fh:
            now = int(fh.read())
    except (OSError, ValueError):
        return f": raise {name}"
    return f": {name} is {now:,}; 'sysctl {name}=N' raises it"


POLL_SHARE = 0.1
"""The most of its time a polling observer spends polling. A poll is a snapshot of every entry
and its comparison with the last, in Python: ~3 s at 200,000 files, where polled every second
the watch took 75% of a core and had the file server stat every file every 4 s."""


def poll_wait(cost: float, interval: float) -> float:
    """Seconds to wait before the next poll, the last having taken ``cost``: ``interval``,
    or longer when polls would otherwise take more than :data:`POLL_SHARE` of the time."""
    return max(interval, cost * (1 / POLL_SHARE - 1))


Signature = int
"""What a poll compares of a file: the hash of its inode, size, mtime and ctime (a same-size
edit whose mtime was put back still moves the ctime)."""


class LeanPollingEmitter(EventEmitter):
    """Polls a folder tree, holding one number a path: watchdog's polling emitter held two
    ``os.stat_result`` a path and compared them in Python (200,000 files: 417 MB and 3.8 s of
    CPU a poll; here ~40 MB and a second). Waits between polls as :func:`poll_wait` says.

    Says what a walk sees changed: files created, deleted or modified, folders created or
    deleted (a move is the deletion of the old path and the creation of the new: the sweep
    finds its text by content). A root that cannot be listed is left to the watcher (gone:
    it says so and watches the name again); a subfolder that cannot be, is kept as it was.
    """

    def __init__(
        self,
        event_queue: EventQueue,
        watch: ObservedWatch,
        *,
        timeout: float,
        event_filter: list[type[FileSystemEvent]] | None = None,
        listdir: Callable[[str], Iterator[os.DirEntry[str]]],
    ) -> None:
        super().__init__(event_queue, watch, timeout=timeout, event_filter=event_filter)
        self._listdir = listdir
        self._files: dict[str, Signature] = {}
        self._dirs: set[str] = set()
        self.cost = 0.0
        """How long the last poll took (seconds of wall time: its walk and comparison)."""

    def on_thread_start(self) -> None:
        """Walk the tree once: what later polls compare with."""
        began = time.monotonic()
        with contextlib.suppress(OSError):  # (a root not there: the watcher says so)
            self._files, self._dirs = self._walk()
        self.cost = time.monotonic() - began

    def queue_events(self, timeout: float) -> None:
        """Wait as :func:`poll_wait` says, walk, and queue what changed since the last walk."""
        if self.stopped_event.wait(poll_wait(self.cost, timeout)):
            return
        began = time.monotonic()
        try:
            files, dirs = self._walk()
        except OSError:  # the root: gone (the watcher sees it), or a share that hiccups
            return  # (the last walk kept: what changes meanwhile is seen once it answers)
        finally:
            self.cost = time.monotonic() - began
        old, self._files = self._files, files
        old_dirs, self._dirs = self._dirs, dirs
        for path in old.keys() - files.keys():
            self.queue_event(FileDeletedEvent(path))
        for path in old_dirs - dirs:
            self.queue_event(DirDeletedEvent(path))
        for path in dirs - old_dirs:
            self.queue_event(DirCreatedEvent(path))
        for path, _ in files.items() - old.items():  # (new, or its signature changed)
            self.queue_event(FileModifiedEvent(path) if path in old else FileCreatedEvent(path))

    def _walk(self) -> tuple[dict[str, Signature], set[str]]:
        """Every file's signature and every folder under the root; OSError when the root
        itself cannot be listed."""
        files: dict[str, Signature] = {}
        dirs: set[str] = set()
        unlisted: list[str] = []
        stack = [self.watch.path]
        while stack:
            folder = stack.pop()
            try:
                for entry in self._listdir(folder):
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            dirs.add(entry.path)
                            stack.append(entry.path)
                            continue
                        st = entry.stat(follow_symlinks=False)
                    except OSError:  # gone since the listing
                        continue
                    files[entry.path] = hash(
                        (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                    )
            except OSError:
                if folder == self.watch.path:
                    raise
                unlisted.append(folder + os.sep)
        if unlisted:  # what they held, as the last walk saw it (one pass for them all)
            under = tuple(unlisted)
            files.update((p, v) for p, v in self._files.items() if p.startswith(under))
            dirs.update(d for d in self._dirs if d.startswith(under))
        return files, dirs


class LeanPollingObserver(BaseObserver):
    """An observer of :class:`LeanPollingEmitter`: polls every ``polling_interval`` seconds,
    or less often as :func:`poll_wait` says."""

    def __init__(
        self,
        listdir: Callable[[str], Iterator[os.DirEntry[str]]],
        *,
        polling_interval: float,
    ) -> None:
        emitter = partial(LeanPollingEmitter, listdir=listdir)
        super().__init__(emitter, timeout=polling_interval)  # type: ignore[arg-type]


def make_skip(
    skip_dirs: tuple[str, ...], defaults: bool = True
) -> Callable[[os.DirEntry[str]], bool]:
    """The polling snapshot's folder filter: the store, and the default-excluded folder names
    while ``defaults`` holds, are not read."""
    store_parts = {os.path.normpath(d) for d in skip_dirs}

    def skip(entry: os.DirEntry[str]) -> bool:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            return False
        return is_dir and (
            (defaults and is_default_ignored(entry.name, True)) or entry.path in store_parts
        )

    return skip


def _listdir(
    skip: Callable[[os.DirEntry[str]], bool],
) -> Callable[[str], Iterator[os.DirEntry[str]]]:
    def listdir(path: str) -> Iterator[os.DirEntry[str]]:
        with os.scandir(path) as it:
            yield from (entry for entry in it if not skip(entry))

    return listdir


def healthy(observer: BaseObserver) -> bool:
    """Whether the observer and every emitter of it still run."""
    return observer.is_alive() and all(e.is_alive() for e in observer.emitters)
