"""A run hands its executor a stream: reads are planned as the executor draws them.

Issues 26 and 27: "the engine feeds reads from the walk as it goes, so 10 million files never
become 10 million plans in memory". The executors here read in this process and draw from the
stream only as they have room, noting at each draw how far the run had got; what they see is
counted (plans made, hashes begun, tasks alive), never timed.
"""

from __future__ import annotations

import gc
import os
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.run as run_mod
from engine.errors import MachineFailure
from engine.events import Event, Notice
from engine.extract import Outcome, ReadTask, read_one
from engine.limits import Limits
from engine.records import Key, Record
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet


class Drawing:
    """Reads in this process, drawing from a stream given to :meth:`submit` only while fewer
    than ``room`` reads are in hand, and calling ``probe`` at each draw (its answers are kept
    in ``seen``, one per task drawn)."""

    def __init__(self, room: int = 1, probe: Callable[[], int] = lambda: 0) -> None:
        self.room = room
        self.probe = probe
        self.seen: list[int] = []
        self.drawn: list[str] = []
        """The hash of each task drawn ("": read unhashed)."""
        self.feeds: deque[Iterator[ReadTask]] = deque()
        self.queue: deque[ReadTask] = deque()

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self.feeds.append(iter(tasks))  # a list too: drawn from as a stream would be

    def _draw(self) -> None:
        while len(self.queue) < self.room and self.feeds:
            task = next(self.feeds[0], None)
            if task is None:
                self.feeds.popleft()
                continue
            self.seen.append(self.probe())
            self.drawn.append(task.sha256)
            self.queue.append(task)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        while True:
            self._draw()
            if not self.queue:
                return
            task = self.queue.popleft()
            yield task, read_one(task)
            if tick is not None:
                tick()

    def cancel(self) -> None:
        self.queue.clear()
        self.feeds.clear()

    def close(self) -> None:
        self.cancel()


class Eager(Drawing):
    """Takes the whole stream when it is given, as every executor did before the stream: the
    run then plans every file before any read."""

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self.queue.extend(tasks)


def _options(out: Path, executor: Drawing, **kw: object) -> SweepOptions:
    return SweepOptions(
        out=out,
        tools=ToolSet.empty(),
        workers=1,
        executor=lambda _limits, _workers: executor,
        **kw,  # type: ignore[arg-type]
    )


def _files(root: Path, n: int, body: Callable[[int], str]) -> None:
    root.mkdir(exist_ok=True)
    for i in range(n):
        (root / f"f{i:05d}.txt").write_text(body(i))


def test_reads_start_before_the_run_has_planned_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 40
    root = tmp_path / "docs"
    _files(root, n, lambda i: f"first version {i:05d}\n")
    with Sweeper([root], SweepOptions(out=tmp_path / "s", tools=ToolSet.empty())) as first:
        first.run()
    # Same sizes, new contents: every file is hashed (its size is known), planned, and read.
    _files(root, n, lambda i: f"other version {i:05d}\n")
    planned = [0]
    real_decide = run_mod.decide

    def counting_decide(*a: object, **kw: object) -> object:
        planned[0] += 1
        return real_decide(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(run_mod, "decide", counting_decide)
    drawing = Drawing(room=1, probe=lambda: planned[0])
    with Sweeper([root], _options(tmp_path / "s", drawing)) as second:
        second.run()
        records = second.records
    assert len(drawing.seen) == n
    # Before the stream the first read waited for all 40 plans; now it follows the first.
    assert drawing.seen[0] == 1, drawing.seen
    assert drawing.seen == list(range(1, n + 1))
    assert {r.why for r in records.values()} == {"changed"}
    assert all(r.chars == len("other version 00000\n") for r in records.values())


def test_files_of_unknown_size_are_read_while_the_others_are_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(6):  # sizes no other file has: read unhashed
        (root / f"cold{i}.txt").write_text("x" * (10 + i) + "\n")
    for i in range(4):  # copies of one size: hashed first, so that one read serves them
        (root / f"copy{i}.txt").write_text("the same words in each\n")
    monkeypatch.setattr(run_mod, "DEDUP_BYTES", 1)
    drawn = threading.Event()
    waits: list[bool] = []
    real_hash = run_mod._hash_file

    def hash_after_a_read(e: object) -> object:
        if not waits:
            # Bounded: on a run that hashes before it reads, this gives up and says so.
            waits.append(drawn.wait(30))
        return real_hash(e)  # type: ignore[arg-type]

    monkeypatch.setattr(run_mod, "_hash_file", hash_after_a_read)

    def probe() -> int:
        drawn.set()
        return len(waits)

    drawing = Drawing(room=1, probe=probe)
    with Sweeper([root], _options(tmp_path / "s", drawing)) as sweeper:
        sweeper.run()
        records = sweeper.records
    assert waits == [True]  # the first hash waited for a read to be drawn, and one was
    assert drawing.drawn[0] == ""  # a cold file, read unhashed
    copies = [r for r in records.values() if r.path.startswith("copy")]
    assert len(copies) == 4 and len({r.sha256 for r in copies}) == 1
    assert len([sha for sha in drawing.drawn if sha]) == 1  # the copies' one read
    assert len(records) == 10


def _alive(kind: type, old: frozenset[int] = frozenset()) -> int:
    """Objects of ``kind`` alive now, but those whose id is in ``old`` (alive before)."""
    return sum(1 for o in gc.get_objects() if type(o) is kind and id(o) not in old)


def _ids_of(*kinds: type) -> frozenset[int]:
    return frozenset(id(o) for o in gc.get_objects() if type(o) in kinds)


def test_the_reads_a_run_holds_stay_bounded_by_what_is_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 1500
    root = tmp_path / "docs"
    _files(root, n, lambda i: "w" * (i % 97 + 1) + f" {i}\n")
    with Sweeper([root], SweepOptions(out=tmp_path / "s", tools=ToolSet.empty())) as first:
        first.run()
    # Every file changed, keeping its size: every one is hashed, planned and read again.
    _files(root, n, lambda i: "v" * (i % 97 + 1) + f" {i}\n")
    draws = [0]

    def probe() -> int:
        draws[0] += 1
        if draws[0] % 250 != 1:
            return 0
        return _alive(ReadTask, before) + _alive(run_mod._ReadKey, before)

    drawing = Drawing(room=8, probe=probe)
    # Any other test's still alive are not counted: some went during the sweep (a thread of
    # another test ending), which took a count made against a baseline below zero.
    before = _ids_of(ReadTask, run_mod._ReadKey)
    with Sweeper([root], _options(tmp_path / "s", drawing)) as second:
        second.run()
        records = second.records
    assert len(drawing.seen) == n and len(records) == n
    held = max(drawing.seen)
    # Before the stream, every task and every read's key of the run were held at the first
    # draw (2 x 1,500); now: the ones in hand, and what the hashing ran ahead by.
    assert 0 < held <= 2 * (drawing.room + 2), drawing.seen[::250]
    assert {r.why for r in records.values()} == {"changed"}


def test_the_local_pool_draws_a_stream_as_it_has_room(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine import isolate

    feed = 256
    monkeypatch.setattr(isolate, "FEED_TASKS", feed, raising=False)
    made = [0]

    def stream(tmp: str) -> Iterator[ReadTask]:
        for i in range(3 * feed):
            path = os.path.join(tmp, f"{i}.txt")
            Path(path).write_text(f"file {i}\n")
            made[0] += 1
            yield ReadTask(path, "", Limits(), ToolSet.empty(), tmp, os.path.getsize(path))

    pool = isolate.ReadPool(Limits(), workers=1)
    ahead: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            pool.submit(stream(tmp))
            assert made[0] == 0  # nothing is drawn before the reads run
            for done, (_task, outcome) in enumerate(pool.finished(), start=1):
                assert outcome.error is None
                ahead.append(made[0] - done)  # drawn, not yet answered
        finally:
            pool.close()
    assert len(ahead) == 3 * feed == made[0]
    # Before, the pool took the whole stream when it was given; now a draw at a time.
    assert max(ahead) <= 2 * feed, max(ahead)


def test_the_local_pool_draws_a_while_then_goes_back_to_its_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine import isolate

    feed = 256
    monkeypatch.setattr(isolate, "FEED_TASKS", feed, raising=False)
    monkeypatch.setattr(isolate, "DRAW_S", -1.0, raising=False)  # every draw is past its time
    pool = isolate.ReadPool(Limits(), workers=1)
    made = [0]
    before_workers: list[int] = []

    def stream(tmp: str) -> Iterator[ReadTask]:
        for i in range(feed):
            if pool.started and not before_workers:
                before_workers.append(made[0])
            path = os.path.join(tmp, f"{i}.txt")
            Path(path).write_text(f"file {i}\n")
            made[0] += 1
            yield ReadTask(path, "", Limits(), ToolSet.empty(), tmp, os.path.getsize(path))

    with tempfile.TemporaryDirectory() as tmp:
        try:
            pool.submit(stream(tmp))
            answered = sum(1 for _ in pool.finished())
        finally:
            pool.close()
    assert answered == feed
    # A slow stream (here: past its time at once) is drawn 64 at a time, the workers seen to
    # in between; before, the first draw took the whole feed before any worker started.
    assert before_workers == [64]


# -- the same records as when every file was planned first ----------------------------------

CONTENTS = ["alpha\n", "bravo\n", "alpha alpha\n", "charlie delta\n", "<p>echo</p>\n", "zulu\n"]
NAMES = st.tuples(st.integers(0, 7), st.sampled_from([".txt", ".md", ".html", ".TXT"]))


def _write(root: Path, files: dict[tuple[int, str], int]) -> None:
    for old in root.iterdir():
        old.unlink()
    for (n, suffix), content in files.items():
        (root / f"f{n}{suffix}").write_text(CONTENTS[content])


def _state(sweeper: Sweeper) -> tuple[dict[Key, Record], list[str]]:
    records = {k: r.evolve(ms=0) for k, r in sweeper.records.items()}
    texts = sorted(sweeper.store.read_text(r.sha256) for r in records.values() if r.has_text)  # type: ignore[arg-type]
    return records, texts


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.dictionaries(NAMES, st.integers(0, len(CONTENTS) - 1), max_size=8),
    after=st.dictionaries(NAMES, st.integers(0, len(CONTENTS) - 1), min_size=1, max_size=10),
    chunk=st.integers(1, 3),
)
def test_streamed_reads_give_the_records_of_a_run_that_planned_first(
    before: dict[tuple[int, str], int], after: dict[tuple[int, str], int], chunk: int
) -> None:
    """Any mix of copies, names (``.txt`` and ``.TXT`` are read one way) and sizes, swept
    cold and then again after changes: reads drawn one at a time, copies planned after the
    read of their content was filed, give what a run that planned everything first gives."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(run_mod, "DEDUP_BYTES", 1),  # every copy of a cold sweep is hashed
        mock.patch.object(run_mod, "HASH_CHUNK", chunk),
        mock.patch.object(run_mod, "HASH_AHEAD", 1, create=True),
    ):
        root = Path(tmp) / "docs"
        root.mkdir()
        executors = (Eager(), Drawing(room=1))
        sweepers = [
            Sweeper([root], _options(Path(tmp) / str(n), ex)) for n, ex in enumerate(executors)
        ]
        states: list[list[tuple[dict[Key, Record], list[str]]]] = [[], []]
        with sweepers[0], sweepers[1]:
            for files in (before, after):
                _write(root, files)
                for sweeper, state in zip(sweepers, states, strict=True):
                    sweeper.run()
                    state.append(_state(sweeper))
        assert states[0] == states[1]


def test_a_stop_while_the_stream_is_drawn_decides_only_what_was_read(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    _files(root, 30, lambda i: "y" * (i + 1) + "\n")

    def probe() -> int:
        if len(drawing.seen) == 4:
            sweeper.stop.set()  # asked to stop while the run still plans
        return 0

    drawing = Drawing(room=1, probe=probe)
    with Sweeper([root], _options(tmp_path / "s", drawing)) as sweeper:
        result = sweeper.run()
        kept = dict(sweeper.records)
    assert result.interrupted
    assert len(kept) == len(drawing.seen) == 5  # read, each before the next was drawn
    assert all(r.status == "ok" for r in kept.values())


class Failing(Drawing):
    """Loses its machine after ``good`` reads, with the rest of the stream not drawn."""

    def __init__(self, good: int) -> None:
        super().__init__(room=2)
        self.good = good

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        for n, done in enumerate(super().finished(tick)):
            if n == self.good:
                raise MachineFailure("the cluster is gone")
            yield done


def test_a_machine_failure_mid_stream_keeps_every_earlier_record(tmp_path: Path) -> None:
    n = 30
    root = tmp_path / "docs"
    _files(root, n, lambda i: f"first version {i:05d}\n")
    with Sweeper([root], SweepOptions(out=tmp_path / "s", tools=ToolSet.empty())) as first:
        first.run()
        before = dict(first.records)
    _files(root, n, lambda i: f"other version {i:05d}\n")
    (root / "copy.txt").write_text("first version 00007\n")  # a copy of a kept content
    events: list[Event] = []
    failing = Failing(good=3)
    with Sweeper([root], _options(tmp_path / "s", failing), events.append) as second:
        second.run()
        after = dict(second.records)
    assert len(failing.seen) < n  # it failed with most of the stream not drawn
    read = [k for k, r in after.items() if r.why == "changed"]
    assert len(read) == 3
    kept = [k for k in before if k not in read]
    assert all(after[k] == before[k] for k in kept)  # every other file keeps its record
    assert after[(str(root), "copy.txt")].sha256 == before[(str(root), "f00007.txt")].sha256
    notices = [e for e in events if isinstance(e, Notice) and e.kind == "machine-failure"]
    assert [n.message for n in notices] == [
        f"{n - 3} files not read, earlier records kept: the cluster is gone"
    ]
