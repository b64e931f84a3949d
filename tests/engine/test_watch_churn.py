"""A file that changes all day under watch (a log): what it costs the store and the machine.

Each change is a new text under its new content hash. The history keeps the last few records
a file had, and their texts; the texts it lets go are removed once ``extract.jsonl`` no longer
names them, while watching, not at the next full sweep (a 6 MB log appended every half second
left 28 texts, 177 MB, in one minute of ``quarry watch``, and 40 GB a day).

And a file whose read is costly rests between reads (``WatchOptions.rest_ratio``): that log
was read 28 times in the minute, 54 CPU-s of the machine's 120."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from engine import history
from engine.db import DB
from engine.debounce import Debouncer, Timing
from engine.events import Notice, NoticeKind
from engine.session import CHAR_S
from engine.store import Store
from tests.engine.watchkit import Watched, watched

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


def _texts(store: Path) -> list[Path]:
    return sorted((store / "extract").rglob("*.txt"))


def test_a_log_changing_under_watch_keeps_only_the_texts_its_history_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(history.VERSIONS_ENV, "2")
    root = tmp_path / "root"
    root.mkdir()
    log = root / "app.log"
    log.write_text("line 0\n")
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        store = w.session.store
        for i in range(1, 7):
            with log.open("a") as f:
                f.write(f"line {i}\n")
            # extract.jsonl written at each: the history still kept the text the change
            # replaced then, and lets it go at a later change
            n = 7 * (i + 1)
            w.until(f"version {i} in extract.jsonl", lambda n=n: w.jsonl()["app.log"].chars == n)
        # the current text and the two its history keeps; not the seven it ever had
        w.until("the texts the history let go removed", lambda: len(_texts(store.out)) == 3)
        with contextlib.closing(sqlite3.connect(store.out / DB)) as con:
            kept = history.kept_texts(con)
        assert {p.stem for p in _texts(store.out)} == {w.records()["app.log"].sha256, *kept}
        assert len(kept) == 2


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _debouncer(clock: Clock) -> Debouncer:
    # the wall clock far ahead: every file's mtime is old, so a quiet path is settled
    return Debouncer(Timing(quiet_s=0.1, settle_max_s=5.0), clock, wall=lambda: 2e10)


def test_a_resting_path_is_ready_when_its_rest_ends_not_at_its_events(tmp_path: Path) -> None:
    (tmp_path / "log").write_text("x")
    (tmp_path / "other").write_text("y")
    clock = Clock()
    d = _debouncer(clock)
    root = str(tmp_path)
    d.rest((root, "log"), clock.now + 30.0)
    d.push(root, "log")
    d.push(root, "other")
    clock.now += 1.0
    assert d.take().batch == {root: ["other"]}
    assert d.next_due() == pytest.approx(29.0)
    assert d.resting() == {(root, "log")}
    for _ in range(10):  # written all through its rest, past settle_max_s: still resting
        clock.now += 2.0
        d.push(root, "log")
        clock.now += 0.5
        assert not d.take()
    clock.now = 130.0
    ready = d.take()
    assert ready.batch == {root: ["log"]}
    assert ready.changing == ()  # it waited for its rest, not for its writer
    assert not d.resting()
    d.push(root, "log")  # the rest is over: its next change is read at once
    clock.now += 0.2
    assert d.take().batch == {root: ["log"]}


def test_a_stop_hands_over_a_resting_path(tmp_path: Path) -> None:
    (tmp_path / "log").write_text("x")
    clock = Clock()
    d = _debouncer(clock)
    d.rest((str(tmp_path), "log"), clock.now + 300.0)
    d.push(str(tmp_path), "log")
    assert d.drain().batch == {str(tmp_path): ["log"]}


def _big(n: int) -> str:
    line = "2026-12-07 12:00:00 INFO a request served\n"
    return line * (n // len(line) + 1)


def _rests(w: Watched) -> list[Notice]:
    return [e for e in w.events if isinstance(e, Notice) and e.kind is NoticeKind.RESTING]


def test_a_costly_file_that_keeps_changing_waits_for_its_rest_and_is_not_lost(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = root / "app.log"
    log.write_text("first\n")
    (root / "small.txt").write_text("small\n")
    big = _big(int(0.5 / CHAR_S))  # half a second of work, by the engine's own measure
    with watched(root, False, rest_ratio=1e6, rest_max_s=3600.0) as w:
        log.write_text(big)
        w.wait("the log read", lambda r: r["app.log"].chars == len(big))
        w.until("its rest said", lambda: len(_rests(w)) == 1)
        assert "app.log" in _rests(w)[0].message and "every 3600 s" in _rests(w)[0].message
        with log.open("a") as f:
            f.write("one more line\n")
        (root / "small.txt").write_text("small, changed after the log\n")
        records = w.wait("small.txt read", lambda r: r["small.txt"].chars == 29)
        assert records["app.log"].chars == len(big)  # resting: its change waits
        watcher = w.session.watcher
        assert watcher is not None and (str(root), "app.log") in watcher.debouncer.resting()
        store = w.session.store.out
    # the stop reads what waited: nothing the watch was told of is lost
    final = {r.path: r for r in Store(store).load_records()}
    assert final["app.log"].chars == len(big) + 14


def test_a_rest_ends_and_the_change_that_waited_is_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = root / "app.log"
    log.write_text("first\n")
    big = _big(int(0.5 / CHAR_S))
    with watched(root, False, rest_ratio=1e6, rest_max_s=1.0) as w:
        log.write_text(big)
        w.wait("the log read", lambda r: r["app.log"].chars == len(big))
        with log.open("a") as f:
            f.write("one more line\n")
        w.wait("the change read after the rest", lambda r: r["app.log"].chars == len(big) + 14)
        changing = [
            e for e in w.events if isinstance(e, Notice) and e.kind is NoticeKind.STILL_CHANGING
        ]
        assert not changing and len(_rests(w)) == 1  # said once, however many rests


def test_cheap_files_never_rest(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with watched(root, False) as w:  # the product's own ratio
        for i in range(3):
            (root / "note.txt").write_text(f"version {i}\n")
            w.wait(f"version {i}", lambda r, i=i: "note.txt" in r and r["note.txt"].chars == 10)
        assert not _rests(w)


def test_a_change_still_queued_when_the_watch_stops_is_stored(tmp_path: Path) -> None:
    """The stop applies what waits (its quiet period not over): the session holds the store
    until that last batch is in it."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("before\n")
    with watched(root, False, debounce_s=3600.0, batch_max_s=3600.0, settle_max_s=3600.0) as w:
        (root / "a.txt").write_text("changed just before the stop\n")
        watcher = w.session.watcher
        assert watcher is not None
        w.until("the change queued", lambda: len(watcher.debouncer) == 1)
        store = w.session.store.out
    assert {r.path: r.chars for r in Store(store).load_records()} == {"a.txt": 29}
    failed = [e for e in w.events if isinstance(e, Notice) and e.kind is NoticeKind.WATCH_ERROR]
    assert not failed
