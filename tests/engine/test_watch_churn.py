"""A file that changes all day under watch (a log): what it costs the store and the machine.

Each change is a new text under its new content hash. The history keeps the last few records
a file had, and their texts; the texts it lets go are removed once ``extract.jsonl`` no longer
names them, while watching, not at the next full sweep (a 6 MB log appended every half second
left 28 texts, 177 MB, in one minute of ``quarry watch``, and 40 GB a day)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from engine import history
from engine.db import DB
from engine.events import Notice, NoticeKind
from engine.store import Store
from tests.engine.watchkit import watched

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
