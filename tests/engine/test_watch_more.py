"""Watch mode under load and at its edges: bursts, slow writers, new tools, overflow, SIGTERM."""

from __future__ import annotations

import errno
import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.events import Notice, ToolsChanged
from engine.records import Reason, Status
from engine.store import Store
from engine.sweep import SweepOptions
from fixtures.gen import _raster as R
from tests.engine.watchkit import WAIT_S, ended, no_threads_left, watch_process, watched

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
POLL = pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])


@pytest.fixture(autouse=True)
def _threads_stopped() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    no_threads_left(before)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


@POLL
def test_burst_of_1000_files_is_a_few_batches(root: Path, poll: bool) -> None:
    with watched(root, poll) as w:
        mark = w.mark()
        for i in range(1000):
            (root / f"f{i:04d}.txt").write_text(f"file number {i}\n")
        w.wait("1,000 records", lambda r: len(r) == 1000)
        assert len(w.batches(mark)) <= 10


@POLL
def test_slow_append_is_read_once_and_whole(root: Path, poll: bool) -> None:
    with watched(root, poll) as w:
        mark = w.mark()
        lines = [f"line {i} of a slow scanner\n" for i in range(40)]
        with open(root / "scan.txt", "w") as fh:
            for line in lines:  # 2 s of appends, the file held open throughout
                fh.write(line)
                fh.flush()
                time.sleep(0.05)
        size = sum(map(len, lines))
        recs = w.wait("the whole file", lambda r: "scan.txt" in r and r["scan.txt"].size == size)
        assert recs["scan.txt"].chars == size
        assert w.reads_of("scan.txt", mark) == 1


@POLL
def test_a_tool_put_on_path_retries_what_it_unlocks(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, poll: bool
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # no tool at all, not even the real tesseract
    (root / "scan.png").write_bytes(R.png(R.render(["HI"])))
    (root / "note.txt").write_text("plain text\n")
    opts = SweepOptions(tools=None, workers=1)
    with watched(root, poll, sweep=opts, tools_recheck_s=0.3) as w:
        before = w.records()
        assert before["scan.png"].reason == Reason.NEEDS_TOOL
        mark = w.mark()
        fake = bin_dir / "tesseract"
        fake.write_text(
            '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "tesseract 5.9.1"; exit 0; fi\n'
            'echo "FAKE OCR TEXT"\n'
        )
        fake.chmod(0o755)
        recs = w.wait("the OCR retry", lambda r: r["scan.png"].status == Status.OK)
        assert recs["scan.png"].why == "tools-changed"
        assert w.session.store.read_text(recs["scan.png"].sha256 or "") == "FAKE OCR TEXT\n"
        assert recs["note.txt"] == before["note.txt"]  # exactly what the tool unlocks
        changed = [e for e in w.events[mark:] if isinstance(e, ToolsChanged)]
        assert changed and changed[0].appeared == ("tesseract",)


def test_overflow_triggers_a_rescan_that_finds_missed_files(root: Path) -> None:
    with watched(root, poll=False) as w:
        w.session._watcher.debouncer.push = lambda *a, **k: None  # type: ignore[union-attr]
        (root / "missed.txt").write_text("an event the kernel dropped\n")
        logging.getLogger("watchdog.observers.inotify_c").warning(
            "Inotify queue overflowed; filesystem events were lost"
        )
        w.wait("the rescan", lambda r: "missed.txt" in r)
        assert any(isinstance(e, Notice) and e.kind == "rescan" for e in w.events)


@POLL
def test_sigterm_finishes_and_leaves_a_consistent_store(root: Path, poll: bool) -> None:
    (root / "first.txt").write_text("there before\n")
    cmd = [sys.executable, "-m", "engine", "watch", str(root), "--workers", "1"]
    with watch_process([*cmd, *(["--poll"] if poll else [])]) as proc:
        (root / "second.txt").write_text("written while watching\n")
        store = Store(root / ".quarry")
        end = time.monotonic() + WAIT_S
        while "second.txt" not in {r.path for r in store.load_records()}:
            assert time.monotonic() < end, "the watcher never recorded second.txt"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0
    records = store.load_records()
    assert [r.key for r in records] == sorted(r.key for r in records)
    assert {r.path for r in records} == {"first.txt", "second.txt"}
    summary = store.load_summary()
    assert summary is not None and summary.files == 2
    assert all(store.has_text(r.sha256) for r in records if r.sha256)


@pytest.mark.parametrize(
    ("code", "words", "setting"),
    [
        (errno.ENOSPC, "inotify watch limit reached", "fs.inotify.max_user_watches"),
        (errno.EMFILE, "inotify instance limit reached", "fs.inotify.max_user_instances"),
    ],
)
def test_a_share_past_the_kernel_s_watch_limit_is_polled_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str, setting: str
) -> None:
    """Past ``max_user_watches`` (a folder a watch: a big share), native watching fails and
    the share is polled, which costs the file server a walk a poll: the warning said only
    "inotify watch limit reached", not the one setting that ends it."""
    from watchdog.events import FileSystemEventHandler

    from engine import watchfs

    class Refused:  # (an inotify observer whose schedule meets the kernel's limit)
        def schedule(self, *_args: object, **_kwargs: object) -> None:
            raise OSError(code, words)

        def stop(self) -> None:
            pass

    monkeypatch.setattr(watchfs, "Observer", Refused)
    started = watchfs.start_observer(
        tmp_path, lambda _closes: FileSystemEventHandler(), poll=False, poll_s=1.0
    )
    try:
        assert started.polling and started.fallback is not None
        assert words in started.fallback and f"'sysctl {setting}=N' raises it" in started.fallback
    finally:
        started.observer.stop()
        started.observer.join(WAIT_S)


def test_watch_quiet_says_no_file_and_still_records_it(root: Path) -> None:
    """``watch -q`` under a service manager: warnings and errors only (it was refused, and
    a watch said a line for every file it read)."""
    (root / "first.txt").write_text("there before\n")
    cmd = [sys.executable, "-m", "engine", "watch", "-q", str(root), "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        store = Store(root / ".quarry")
        end = time.monotonic() + WAIT_S
        while not store.summary_path.exists():  # (the first sweep is over: watching)
            assert proc.poll() is None and time.monotonic() < end, "no first sweep"
            time.sleep(0.02)
        (root / "second.txt").write_text("written while watching\n")
        while "second.txt" not in {r.path for r in store.load_records()}:
            assert time.monotonic() < end, "the watcher never recorded second.txt"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
        assert (proc.returncode, out, err) == (0, "", "")
    finally:
        ended(proc)
