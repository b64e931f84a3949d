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

import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.events import Level, Notice, NoticeKind
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from tests.engine.watchkit import WAIT_S, Watched, no_threads_left, watched

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
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # bounded by the test timeout
            if "watching" in line:
                break
        shutil.rmtree(root)
        for line in proc.stderr:
            if "is gone" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 1
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
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
        w.until("the empty folder walked", lambda: w.session.not_current() is not None)
        assert "gone or empty" in (w.session.not_current() or "")
        assert set(w.records()) == {"old.txt"}  # kept
        root.rmdir()
        (tmp_path / "mounted").rename(root)  # mounted again
        w.until("the share walked again", lambda: w.session.not_current() is None)
        assert set(w.records()) == {"old.txt"}
