"""The watcher rewrites ``extract.jsonl`` in a thread of its own, from one snapshot of the
index, while the batches go on: a change made during the rewrite reaches the index at once,
and the rewrite concludes as what it is (the index in step with the new file, or still ahead
of it by the batches that came meanwhile, never claiming the file has them).

Each background write is held mid-stream by a gate the test opens (its first line written,
the rest waiting), so that a batch lands during it deterministically."""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from engine import history
from engine.db import DB, Agreement, standing
from engine.events import StoreHealth, StoreState
from engine.store import Store
from tests.engine.watchkit import WAIT_S, Watched, watched

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

WRITER = "quarry-write-behind"
"""The name of the background write's thread (only its writes are held)."""


class Gates:
    """Holds the background writes of ``extract.jsonl``, one gate each, in turn: the first
    line goes out, then the write waits until the test opens its gate. Writes past the last
    gate, and every write on another thread, go through."""

    def __init__(self, n: int) -> None:
        self.holding = [threading.Event() for _ in range(n)]
        self.release = [threading.Event() for _ in range(n)]
        self._next = 0

    def wrap(self, write: Callable[..., None]) -> Callable[..., None]:
        """``Store.write_lines`` with the background writes held."""

        def held(
            store: Store, lines: Iterable[bytes], before: Callable[[], None] | None = None
        ) -> None:
            if threading.current_thread().name == WRITER and self._next < len(self.holding):
                lines = self._gated(lines, self._next)
                self._next += 1
            write(store, lines, before)

        return held

    def _gated(self, lines: Iterable[bytes], n: int) -> Iterator[bytes]:
        it = iter(lines)
        yield from _first(it)
        self.holding[n].set()
        assert self.release[n].wait(WAIT_S), "the test never opened the gate"
        yield from it


def _first(it: Iterator[bytes]) -> Iterator[bytes]:
    for line in it:
        yield line
        return


@pytest.fixture
def gates(monkeypatch: pytest.MonkeyPatch) -> Gates:
    """Two held background writes; no history (a text no record names goes)."""
    monkeypatch.setenv(history.VERSIONS_ENV, "0")
    held = Gates(2)
    monkeypatch.setattr(Store, "write_lines", held.wrap(Store.write_lines))
    return held


def _agreement(w: Watched) -> Agreement:
    store = w.session.store
    return standing(store.out / DB, store.jsonl_path, lines=False).agreement


def _held(w: Watched, gates: Gates, n: int) -> None:
    w.until(f"background write {n} held mid-stream", gates.holding[n].is_set)


def test_a_batch_during_the_rewrite_is_indexed_at_once_and_the_file_follows(
    tmp_path: Path, gates: Gates
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "first.txt").write_text("first\n")
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        (root / "a.txt").write_text("before the rewrite\n")
        w.wait("a.txt in the index", lambda r: "a.txt" in r)
        _held(w, gates, 0)  # the rewrite (with a.txt) has begun and waits mid-stream
        (root / "b.txt").write_text("during the rewrite\n")
        w.wait("b.txt in the index while the rewrite waits", lambda r: "b.txt" in r)
        assert not gates.release[0].is_set()
        gates.release[0].set()
        # concluded: the new file (with a.txt) is the index's source, and the index is
        # ahead of it by b.txt's batch (not in step, and not untrusted)
        w.until(
            "the rewrite concluded ahead",
            lambda: "a.txt" in w.jsonl() and _agreement(w) is Agreement.AHEAD,
        )
        assert "b.txt" not in w.jsonl()
        assert "b.txt" in w.records()  # (readers read the index)
        assert w.session.sweeper.behind is not None  # another rewrite follows
        _held(w, gates, 1)
        gates.release[1].set()
        w.until(
            "the next rewrite, in step",
            lambda: "b.txt" in w.jsonl() and _agreement(w) is Agreement.IN_STEP,
        )
        w.until("nothing behind", lambda: w.session.sweeper.behind is None)
    assert {r.path for r in Store(w.session.store.out).load_records()} == {
        "first.txt",
        "a.txt",
        "b.txt",
    }


def test_a_text_unnamed_during_the_rewrite_stays_until_a_file_no_longer_names_it(
    tmp_path: Path, gates: Gates
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "keep.txt").write_text("the old text\n")
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        store = w.session.store
        old = w.records()["keep.txt"].sha256
        assert old is not None and store.text_path(old).exists()
        (root / "a.txt").write_text("something behind\n")
        _held(w, gates, 0)
        (root / "keep.txt").write_text("the new text, longer\n")
        w.wait("keep.txt changed in the index", lambda r: r["keep.txt"].sha256 != old)
        gates.release[0].set()
        w.until(
            "the rewrite concluded ahead",
            lambda: "a.txt" in w.jsonl() and _agreement(w) is Agreement.AHEAD,
        )
        assert w.jsonl()["keep.txt"].sha256 == old  # the file just written names it...
        assert store.text_path(old).exists()  # ...so its text stays
        _held(w, gates, 1)
        gates.release[1].set()
        w.until("the next rewrite, in step", lambda: _agreement(w) is Agreement.IN_STEP)
        assert w.jsonl()["keep.txt"].sha256 != old
        assert not store.text_path(old).exists()  # no file names it any more


def _no_temp_files(store: Store) -> None:
    left = [p.name for p in store.out.iterdir() if p.name.startswith(".extract.jsonl.")]
    assert not left, f"temporary files left: {left}"


def test_closing_during_the_rewrite_waits_for_it_then_writes_what_came_after(
    tmp_path: Path, gates: Gates
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "first.txt").write_text("first\n")
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        store = w.session.store
        (root / "a.txt").write_text("before the rewrite\n")
        _held(w, gates, 0)
        (root / "b.txt").write_text("during the rewrite\n")
        w.wait("b.txt in the index", lambda r: "b.txt" in r)
        closer = threading.Thread(target=w.session.close, name="closer")
        closer.start()
        gates.release[0].set()
        closer.join(WAIT_S)
        assert not closer.is_alive()
    # the background write was concluded, and closing wrote what came after it
    assert {r.path for r in Store(store.out).load_records()} == {"first.txt", "a.txt", "b.txt"}
    assert standing(store.out / DB, store.jsonl_path, lines=False).agreement is Agreement.IN_STEP
    _no_temp_files(store)


def test_a_failed_background_write_is_said_once_and_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("engine.session.retry_after", lambda tries: 0.2)
    write = Store.write_lines
    failures = [OSError(errno.ENOSPC, "No space left on device")] * 2

    def failing(
        store: Store, lines: Iterable[bytes], before: Callable[[], None] | None = None
    ) -> None:
        if threading.current_thread().name == WRITER and failures:
            lines = _failing(lines, failures.pop())  # mid-stream: a temporary file is there
        write(store, lines, before)

    monkeypatch.setattr(Store, "write_lines", failing)
    root = tmp_path / "root"
    root.mkdir()
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        (root / "a.txt").write_text("a change\n")
        w.wait("a.txt in the index", lambda r: "a.txt" in r)
        w.until("the file caught up", lambda: "a.txt" in w.jsonl())
        w.until("in step", lambda: _agreement(w) is Agreement.IN_STEP)
        assert not failures  # (it failed twice first)
        w.until("its end said", lambda: StoreState.OK in [e.state for e in _health(w)])
        health = _health(w)
        assert [e.state for e in health] == [StoreState.TROUBLE, StoreState.OK]
        assert "No space left" in health[0].message
        _no_temp_files(w.session.store)


def _failing(lines: Iterable[bytes], error: OSError) -> Iterator[bytes]:
    yield from _first(iter(lines))
    raise error


def _health(w: Watched) -> list[StoreHealth]:
    return [e for e in list(w.events) if isinstance(e, StoreHealth)]


def test_a_write_that_succeeds_again_while_batches_come_is_said_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk, then a background write that succeeds while a batch lands: the file is
    written again (said then, the retries' wait over), though still behind that batch: a
    folder that never settles would otherwise never hear it."""
    monkeypatch.setenv(history.VERSIONS_ENV, "0")
    monkeypatch.setattr("engine.session.retry_after", lambda tries: 0.2)
    gates = Gates(1)
    write = Store.write_lines
    held = gates.wrap(write)
    failures = [OSError(errno.ENOSPC, "No space left on device")]

    def failing_then_held(
        store: Store, lines: Iterable[bytes], before: Callable[[], None] | None = None
    ) -> None:
        if threading.current_thread().name == WRITER and failures:
            write(store, _failing(lines, failures.pop()), before)
        else:
            held(store, lines, before)

    monkeypatch.setattr(Store, "write_lines", failing_then_held)
    root = tmp_path / "root"
    root.mkdir()
    with watched(root, False, records_quiet_s=0.2, records_max_s=3600.0) as w:
        (root / "a.txt").write_text("a change\n")
        _held(w, gates, 0)  # (the write after the failure)
        (root / "b.txt").write_text("during the rewrite\n")
        w.wait("b.txt in the index", lambda r: "b.txt" in r)
        gates.release[0].set()
        w.until("the success said", lambda: StoreState.OK in [e.state for e in _health(w)])
        health = _health(w)
        assert [e.state for e in health] == [StoreState.TROUBLE, StoreState.OK]
        assert "written again" in health[1].message
        w.until("the file caught up", lambda: "b.txt" in w.jsonl())
