"""Closing a session: quitting never waits for a whole folder, and nothing runs after it.

The dashboard's ``q`` closes its session from a thread while the first sweep may still be
running, or before it has begun; these drive :class:`engine.session.Session` the same way.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from engine.errors import SessionClosed
from engine.events import Event, Progress, RecordsChanged
from engine.run import Run
from engine.session import Session
from engine.store import Store
from engine.sweep import SweepOptions
from engine.tools import ToolSet

FILES = 2000  # a worker's batch is at most 256 files: the first records come long before the end


def _folder(tmp_path: Path, n: int = FILES) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(n):
        (root / f"note-{i:04d}.txt").write_text(f"note number {i}\n" * 3)
    return root


def _lock_is_free(out: Path) -> bool:
    with Store(out).writer():
        return True


def test_closing_during_the_first_sweep_stops_it_and_keeps_what_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Run, "FLUSH_S", 0.0)  # records are announced as they come, not per 0.1 s
    root = _folder(tmp_path)
    closer: list[threading.Thread] = []
    session: Session

    def on_event(event: Event) -> None:
        # The first records read: quit now, as an operator pressing q would, from another
        # thread; the sweep goes on only once close() has asked it to stop.
        if isinstance(event, Progress | RecordsChanged) and not closer:
            closer.append(threading.Thread(target=session.close))
            closer[0].start()
            assert session.sweeper.stop.wait(30), "close() must ask the sweep to stop"

    session = Session([root], SweepOptions(tools=ToolSet.empty()), on_event)
    result = session.sweep_then_watch()
    closer[0].join(30)
    assert not closer[0].is_alive(), "close() must return once the sweep has stopped"
    assert result.interrupted, "the first sweep must end early, not read the whole folder"
    assert session.watcher is not None and not session.watcher.started
    records = Store(session.store.out).load_records()
    assert 0 < len(records) < FILES, "what was read is written; the rest waits for next time"
    assert all(r.status == "ok" for r in records)
    assert _lock_is_free(session.store.out)


def test_a_session_closed_before_its_sweep_began_writes_nothing(tmp_path: Path) -> None:
    root = _folder(tmp_path, 3)
    session = Session([root], SweepOptions(tools=ToolSet.empty()))
    session.close()
    assert _lock_is_free(session.store.out)
    for call in (session.sweep_then_watch, session.sweep, session.rescan, session.recheck_tools):
        with pytest.raises(SessionClosed):
            call()
    with pytest.raises(SessionClosed):
        session.retry([(str(root), "note-0000.txt")])
    assert session.watcher is None, "no observer may start after close (none would stop it)"
    assert not session.store.jsonl_path.exists(), "a closed session must not write the store"
    session.close()  # twice is harmless


def test_another_writer_can_take_the_store_once_closed(tmp_path: Path) -> None:
    root = _folder(tmp_path, 3)
    session = Session([root], SweepOptions(tools=ToolSet.empty()))
    session.sweep()
    session.close()
    second = Session([root], SweepOptions(tools=ToolSet.empty()))
    try:
        assert second.sweep().reused == 3
    finally:
        second.close()
