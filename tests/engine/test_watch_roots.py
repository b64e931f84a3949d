"""A watched folder that goes away and comes back (a share unmounted and mounted again, a folder
moved aside and made again, deleted and restored): the watcher says so once, keeps its records,
and follows the folder at the root's name once one is there again, without waiting for the
periodic rescan (an hour here).

Found by hand: with the store elsewhere (``--out``), ``quarry watch /tmp/u3`` with the folder
moved away said nothing, watched the moved folder under the old name, never watched the folder
made again at /tmp/u3 (its files got records only at the next periodic rescan, five minutes
on, and its later changes none until the one after), and said "the store is up to date" as it
stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from engine.events import Level, Notice, NoticeKind
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from engine.watchfs import (
    POLL_SHARE,
    LeanPollingEmitter,
    LeanPollingObserver,
    _listdir,
    make_skip,
    poll_wait,
)
from tests.engine.watchkit import WAIT_S, Watched, no_threads_left, watch_process, watched

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
POLL = pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])


@pytest.fixture(autouse=True)
def _threads_stopped() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    no_threads_left(before)


def _gone(root: Path) -> None:
    shutil.rmtree(root)


def _moved(root: Path) -> None:
    root.rename(root.with_name("moved-away"))


def _notices(w: Watched, kind: NoticeKind) -> list[Notice]:
    return [e for e in list(w.events) if isinstance(e, Notice) and e.kind is kind]


@POLL
@pytest.mark.parametrize("away", [_gone, _moved], ids=["deleted", "moved"])
def test_a_root_that_goes_is_said_once_kept_and_followed_when_it_is_there_again(
    tmp_path: Path, poll: bool, away: Callable[[Path], None]
) -> None:
    root = tmp_path / "share"
    root.mkdir()
    for i in range(3):
        (root / f"old{i}.txt").write_text(f"there before {i}\n")
    sweep = SweepOptions(tools=ToolSet.empty(), workers=1, out=tmp_path / "store")
    with watched(root, poll, sweep=sweep) as w:
        w.wait("the first sweep", lambda r: len(r) == 3)
        watcher = w.session.watcher
        assert watcher is not None and w.session.not_current() is None
        away(root)
        w.until("the root said gone", lambda: bool(_notices(w, NoticeKind.ROOT_GONE)))
        said = _notices(w, NoticeKind.ROOT_GONE)[0]
        assert said.level is Level.WARNING and "is gone" in said.message
        assert "records are kept" in said.message
        gone = w.session.not_current()
        assert gone is not None and str(root) in gone and "gone" in gone
        moved = tmp_path / "moved-away"
        if moved.exists():  # a change where the folder went is no change of the root
            (moved / "old0.txt").write_text("edited where it went\n")
        assert set(w.records()) == {"old0.txt", "old1.txt", "old2.txt"}  # kept

        root.mkdir()  # a folder at the name again (mounted again, restored)
        (root / "new.txt").write_text("in the folder made again\n")
        w.wait("the folder made again, rescanned", lambda r: set(r) == {"new.txt"})
        assert w.session.not_current() is None
        (root / "later.txt").write_text("written once it is watched again\n")
        w.wait("a change in it, followed", lambda r: set(r) == {"new.txt", "later.txt"})
        assert len(_notices(w, NoticeKind.ROOT_GONE)) == 1  # said once, not at each look
        assert len(_notices(w, NoticeKind.ROOT_BACK)) == 1
        assert not _notices(w, NoticeKind.ROOT_MISSING)  # nor by a sweep of a batch or rescan


@POLL
def test_a_root_replaced_by_another_folder_is_followed_at_once(tmp_path: Path, poll: bool) -> None:
    """A folder swapped in at the name between two looks (a rename over it, a remount): never
    seen gone, it is another folder all the same."""
    root = tmp_path / "share"
    root.mkdir()
    (root / "old.txt").write_text("in the first folder\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "swapped.txt").write_text("in the folder swapped in\n")
    sweep = SweepOptions(tools=ToolSet.empty(), workers=1, out=tmp_path / "store")
    with watched(root, poll, sweep=sweep) as w:
        w.wait("the first sweep", lambda r: set(r) == {"old.txt"})
        root.rename(tmp_path / "first")
        other.rename(root)
        w.wait("the folder swapped in", lambda r: set(r) == {"swapped.txt"})
        (root / "later.txt").write_text("a change in it\n")
        w.wait("a change in it", lambda r: set(r) == {"swapped.txt", "later.txt"})


def test_quarry_watch_says_a_gone_root_as_it_stops_and_exits_1(tmp_path: Path) -> None:
    root = tmp_path / "share"
    root.mkdir()
    (root / "first.txt").write_text("there before\n")
    cmd = [sys.executable, "-m", "engine", "watch", str(root), "--workers", "1"]
    cmd += ["--out", str(tmp_path / "store")]
    with watch_process(cmd) as proc:
        assert proc.stderr is not None
        shutil.rmtree(root)
        for line in proc.stderr:  # bounded by the test timeout
            if "is gone" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 1
        rest = proc.stderr.read()
    assert "NOT up to date" in rest and f"{root} is gone" in rest, rest
    assert "store is up to date" not in rest


def test_a_share_unmounted_under_the_watch_keeps_its_records_and_is_not_up_to_date(
    tmp_path: Path,
) -> None:
    """Unmounted, a share leaves its mount point: an empty folder at the root's name. Its
    records are kept (it is not a deletion of every file), and until it is mounted again
    the session does not call the store up to date."""
    root = tmp_path / "share"
    root.mkdir()
    (root / "old.txt").write_text("on the share\n")
    sweep = SweepOptions(tools=ToolSet.empty(), workers=1, out=tmp_path / "store")
    with watched(root, False, sweep=sweep) as w:
        w.wait("the first sweep", lambda r: set(r) == {"old.txt"})
        root.rename(tmp_path / "mounted")  # (unmounted: the mount point stays, empty)
        root.mkdir()
        # (the watcher may see the root gone for a moment first: "is gone", until the empty
        # folder is there and walked)
        w.until(
            "the empty folder walked", lambda: "gone or empty" in (w.session.not_current() or "")
        )
        assert set(w.records()) == {"old.txt"}  # kept
        root.rmdir()
        (tmp_path / "mounted").rename(root)  # mounted again
        w.until("the share walked again", lambda: w.session.not_current() is None)
        assert set(w.records()) == {"old.txt"}


@given(st.floats(0, 1e4), st.floats(0.01, 60))
def test_a_poll_waits_its_interval_or_long_enough_to_take_a_tenth_of_the_time(
    cost: float, interval: float
) -> None:
    """A poll of 200,000 files took ~3 s: polled every second, the watch took 75% of a core
    (and the file server a stat of every file every 4 s)."""
    wait = poll_wait(cost, interval)
    assert wait >= interval
    assert cost <= POLL_SHARE * (cost + wait) * (1 + 1e-9)
    if cost * 9 <= interval:
        assert wait == interval  # a small folder is polled as often as asked


def test_the_polling_observer_paces_its_polls_by_what_they_cost(tmp_path: Path) -> None:
    """The real observer, each listing of its walks slowed (a slow file server): a poll
    costs at least its listing's sleep, and the next waits nine times as long. (Bounds from
    below only: a loaded machine makes the gaps longer, never shorter.)"""
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("x")
    polls: list[float] = []

    def slow_listdir(path: str) -> Iterator[os.DirEntry[str]]:
        polls.append(time.monotonic())
        time.sleep(0.05)
        with os.scandir(path) as it:
            yield from it

    observer = LeanPollingObserver(slow_listdir, polling_interval=0.001)  # (start_observer's)
    observer.schedule(FileSystemEventHandler(), str(tmp_path), recursive=True)
    observer.start()
    try:
        end = time.monotonic() + 60
        while len(polls) < 4 and time.monotonic() < end:
            time.sleep(0.01)
    finally:
        observer.stop()
        observer.join(timeout=10)
    assert len(polls) >= 4, "the observer never polled again"
    # a listing of at least 50 ms a poll: a poll and its wait take at least 10 x 50 ms
    gaps = [b - a for a, b in itertools.pairwise(polls)]
    assert min(gaps) >= 10 * 0.05 * 0.99


@contextlib.contextmanager
def _polled(
    root: Path, listdir: Callable[[str], Iterator[os.DirEntry[str]]], interval: float
) -> Iterator[list[tuple[str, str]]]:
    """The lean polling observer on ``root``, yielded once its first walk is done: the list
    of its events as (kind, path) as they come. Stopped at the end."""
    seen: list[tuple[str, str]] = []

    class Seen(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            seen.append((event.event_type, os.fsdecode(event.src_path)))

    observer = LeanPollingObserver(listdir, polling_interval=interval)
    observer.schedule(Seen(), str(root), recursive=True)
    observer.start()
    try:
        emitter = next(iter(observer.emitters))
        assert isinstance(emitter, LeanPollingEmitter)
        end = time.monotonic() + WAIT_S
        while not emitter.is_alive() or emitter.cost == 0.0:  # its first walk done
            assert time.monotonic() < end
            time.sleep(0.01)
        yield seen
    finally:
        observer.stop()
        observer.join(timeout=10)


def test_the_polling_observer_says_what_changed_and_nothing_else(tmp_path: Path) -> None:
    """Created, modified (a same-size edit with its mtime put back too), deleted, moved,
    folders made and removed: each path once, as what it is; nothing for what did not change."""
    (tmp_path / "keep.txt").write_text("unchanged\n")
    (tmp_path / "edit.txt").write_text("before\n")
    (tmp_path / "gone.txt").write_text("to delete\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "inside.txt").write_text("in a folder\n")
    (tmp_path / "moved.txt").write_text("to move\n")
    with _polled(tmp_path, _listdir(make_skip(())), 0.05) as seen:
        end = time.monotonic() + WAIT_S
        st = (tmp_path / "edit.txt").stat()
        (tmp_path / "edit.txt").write_text("after!\n")  # same size
        os.utime(tmp_path / "edit.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
        (tmp_path / "gone.txt").unlink()
        shutil.rmtree(tmp_path / "old")
        (tmp_path / "new").mkdir()
        (tmp_path / "new" / "made.txt").write_text("new\n")
        (tmp_path / "moved.txt").rename(tmp_path / "there.txt")
        want = {
            ("modified", "edit.txt"), ("deleted", "gone.txt"), ("deleted", "old"),
            ("deleted", "old/inside.txt"), ("created", "new"), ("created", "new/made.txt"),
            ("deleted", "moved.txt"), ("created", "there.txt"),
        }  # fmt: skip

        def got() -> set[tuple[str, str]]:
            return {(kind, os.path.relpath(path, tmp_path)) for kind, path in list(seen)}

        while not want <= got():
            assert time.monotonic() < end, f"seen {sorted(got())}"
            time.sleep(0.02)
    assert got() == want  # nothing for keep.txt (a poll may fall between two of the changes:
    # a path said twice is no harm, the debouncer takes it once)


def test_a_subfolder_the_poll_cannot_list_keeps_what_it_held(tmp_path: Path) -> None:
    """A share's folder that answers nothing for a while (permissions changed, a server's
    hiccup): its files and folders are as the last walk saw them, not said deleted."""
    (tmp_path / "locked" / "deeper").mkdir(parents=True)
    (tmp_path / "locked" / "a.txt").write_text("a\n")
    (tmp_path / "locked" / "deeper" / "b.txt").write_text("b\n")
    refuse = threading.Event()

    def listdir(path: str) -> Iterator[os.DirEntry[str]]:
        if refuse.is_set() and path == str(tmp_path / "locked"):
            raise PermissionError(13, "Permission denied", path)
        with os.scandir(path) as it:
            yield from it

    with _polled(tmp_path, listdir, 0.02) as seen:
        end = time.monotonic() + WAIT_S
        refuse.set()
        (tmp_path / "new.txt").write_text("seen: the walk went on past the locked folder\n")
        while ("created", str(tmp_path / "new.txt")) not in seen:
            assert time.monotonic() < end, seen
            time.sleep(0.02)
    assert not [e for e in seen if "locked" in e[1]], seen
