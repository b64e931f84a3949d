"""A stateful model of a watched folder: random file operations against a real watcher.

:class:`WatchMachine` (a Hypothesis ``RuleBasedStateMachine``) starts a real
:class:`engine.session.Session` on a temporary folder, observers before the first sweep, and
applies random operations at random moments: while the first sweep runs, while a batch runs,
and between. Its ``settle`` rule waits (bounded) until the watcher has seen everything and is
idle, then holds the watched store equal to a fresh sweep of the same folder: same paths and,
per path, the same sha256, status, reason, size, chars and text bytes.

How "seen everything" is known without a sleep: the rule writes a fence file and waits until
the watcher has recorded its new content and is idle. Events reach the watcher in the order
they happened (one inotify queue, or one polling snapshot), so every operation before the
fence has been queued by then, and "idle" says the queue is empty and no batch runs.

``tests/engine/test_watch_stateful.py`` runs it briefly for CI; ``tests/bench/
bench_watch_stateful.py`` runs it long and reports its :class:`Tally`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from engine.events import Event, Notice
from engine.records import Record
from engine.session import Session
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from engine.watch import WatchOptions

FILES = (
    "a.txt", "b.txt", "c.md", "d/a.txt", "d/b.txt", "e/f/g.txt", "h/i.txt",
    "caf\udce9.txt", "d/\udcff\udcfe.txt", "\udcc3(/x.txt",
)  # fmt: skip
"""Names the operations pick from; three are not UTF-8 (lone surrogates carry their bytes)."""
DIRS = ("d", "e", "e/f", "h", "\udcc3(")
"""Folders the operations make, remove and move."""
FENCE = "zz-fence.txt"
SAME_SHA = "same sha256: "
"""Starts a difference under an equal sha256 (see :attr:`Tally.same_sha`)."""
SETTLE_S = 20.0
"""Longest one settle waits for the watcher (a loaded 2-core machine)."""

names = st.sampled_from(FILES)
dirs = st.sampled_from(DIRS)
texts = st.text(alphabet="abxyz \n\u00e9", max_size=40)


@dataclass
class Tally:
    """What a run of the machine did and found (the bench reports it)."""

    examples: int = 0
    operations: int = 0
    settles: int = 0
    differences: list[str] = field(default_factory=list)
    """One line per difference between the watched store and a fresh sweep."""
    same_sha: int = 0
    """Of them: same path and sha256, another verdict or text. The watcher hashed the right
    content, but the read filed under that hash saw other bytes (the run's hash-then-read
    race, which hashing in the worker removes), not a change the watcher missed."""


TALLY = Tally()


def _view(store: Store) -> dict[str, tuple[object, ...]]:
    """Path -> the fields a fresh sweep must agree on, text bytes included."""
    out: dict[str, tuple[object, ...]] = {}
    for r in store.load_records():
        out[r.path] = (*_fields(r), _text_bytes(store, r))
    return out


def _fields(r: Record) -> tuple[object, ...]:
    return (r.sha256, r.status, r.reason, r.size, r.chars)


def _text_bytes(store: Store, r: Record) -> bytes | None:
    if not r.has_text or r.sha256 is None:
        return None
    try:
        return store.text_path(r.sha256).read_bytes()
    except FileNotFoundError:
        return b"<missing text>"


def compare(watched: Store, fresh: Store) -> list[str]:
    """Differences between two stores of one folder, one line each."""
    a, b = _view(watched), _view(fresh)
    lines = [f"only in the watched store: {p!r}" for p in sorted(a.keys() - b.keys())]
    lines += [f"missing from the watched store: {p!r}" for p in sorted(b.keys() - a.keys())]
    for p in sorted(a.keys() & b.keys()):
        if a[p] == b[p]:
            continue
        prefix = SAME_SHA if a[p][0] == b[p][0] else ""
        lines.append(
            f"{prefix}{p!r}: watched {a[p][:5]} {a[p][5]!r:.60}, fresh {b[p][:5]} {b[p][5]!r:.60}"
        )
    return lines


class WatchMachine(RuleBasedStateMachine):
    """Random operations on a watched folder; after each settle, store == fresh sweep."""

    strict = True
    """Fail at the first difference (CI); the bench counts them instead."""
    poll = False

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="watcher-sm-"))
        self.root = self.tmp / "root"
        self.outside = self.tmp / "outside"
        self.root.mkdir()
        self.outside.mkdir()
        self.events: list[Event] = []
        self.session: Session | None = None
        self.first: threading.Thread | None = None
        self.first_error: BaseException | None = None
        self.fences = 0
        self.moved = 0
        TALLY.examples += 1

    # -- set-up and tear-down ---------------------------------------------------------------

    @initialize(bulk=st.integers(0, 60), seeds=st.lists(st.tuples(names, texts), max_size=4))
    def start(self, bulk: int, seeds: list[tuple[str, str]]) -> None:
        """Some files, then observers and the first sweep in the background."""
        for i in range(bulk):  # enough files that the operations land during the first sweep
            self._write(f"bulk/{i:03d}.txt", f"bulk file {i}\n" * (1 + i % 5))
        for name, text in seeds:
            self._write(name, text)
        opts = SweepOptions(out=self.tmp / "store", tools=ToolSet.empty(), workers=1)
        watch = WatchOptions(poll=self.poll, poll_s=0.1, rescan_s=3600.0, tools_recheck_s=3600.0)
        self.session = Session([self.root], opts, self.events.append, watch_options=watch)
        self.first = threading.Thread(target=self._first_sweep, name="watcher-sm-first")
        self.first.start()

    def _first_sweep(self) -> None:
        assert self.session is not None
        try:
            self.session.sweep_then_watch()
        except BaseException as exc:  # handed to the test thread at the next settle
            self.first_error = exc

    def teardown(self) -> None:
        """A last settle (every example ends checked), then stop and remove the folder."""
        try:
            if self.first is not None:
                self.settle()
        finally:
            try:
                if self.first is not None:
                    self.first.join()
                if self.session is not None:
                    self.session.close()
            finally:
                shutil.rmtree(self.tmp, ignore_errors=True)

    # -- operations -------------------------------------------------------------------------

    def _path(self, name: str) -> Path:
        return self.root / name

    def _write(self, name: str, text: str, mode: str = "w") -> None:
        path = self._path(name)
        if path.parent.exists() and not path.parent.is_dir():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, mode, encoding="utf-8") as fh:
            fh.write(text)

    def _op(self) -> None:
        TALLY.operations += 1

    @rule(name=names, text=texts)
    def create_or_overwrite(self, name: str, text: str) -> None:
        self._op()
        if not self._path(name).is_dir():
            self._write(name, text)

    @rule(name=names, text=texts)
    def append(self, name: str, text: str) -> None:
        self._op()
        if self._path(name).is_file():
            self._write(name, text, "a")

    @rule(name=names)
    def same_size_edit(self, name: str) -> None:
        """Change bytes, keep the size, put the mtime back: only an event can tell."""
        self._op()
        path = self._path(name)
        if not path.is_file() or path.stat().st_size == 0:
            return
        st_before = path.stat()
        data = bytearray(path.read_bytes())
        data[0] = ord("b") if data[0] == ord("a") else ord("a")
        path.write_bytes(bytes(data))
        os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))

    @rule(name=names, keep=st.integers(0, 10))
    def truncate(self, name: str, keep: int) -> None:
        self._op()
        path = self._path(name)
        if path.is_file():
            os.truncate(path, min(keep, path.stat().st_size))

    @rule(src=names, dst=names)
    def copy(self, src: str, dst: str) -> None:
        self._op()
        if src != dst and self._path(src).is_file() and not self._path(dst).is_dir():
            self._write(dst, "")
            shutil.copy2(self._path(src), self._path(dst))

    @rule(src=names, dst=names)
    def rename(self, src: str, dst: str) -> None:
        """A rename, or a rename over an existing file (an editor's atomic save)."""
        self._op()
        s, d = self._path(src), self._path(dst)
        if src == dst or not s.is_file() or d.is_dir():
            return
        if not d.parent.is_dir():
            if d.parent.exists():
                return
            d.parent.mkdir(parents=True)
        os.replace(s, d)

    @rule(name=names)
    def delete(self, name: str) -> None:
        self._op()
        if self._path(name).is_file():
            self._path(name).unlink()

    @rule(d=dirs)
    def mkdir(self, d: str) -> None:
        self._op()
        path = self._path(d)
        if not path.exists() and (path.parent.is_dir()):
            path.mkdir()

    @rule(d=dirs)
    def rmdir(self, d: str) -> None:
        """Remove a folder and everything in it."""
        self._op()
        if self._path(d).is_dir():
            shutil.rmtree(self._path(d))

    @rule(d=dirs)
    def move_out(self, d: str) -> None:
        self._op()
        if self._path(d).is_dir():
            self.moved += 1
            os.rename(self._path(d), self.outside / f"gone-{self.moved}")

    @rule(d=dirs, files=st.lists(st.tuples(st.sampled_from(["p.txt", "q/r.txt"]), texts)))
    def move_in(self, d: str, files: list[tuple[str, str]]) -> None:
        """A folder made outside, with files, moved in whole."""
        self._op()
        dest = self._path(d)
        if dest.exists() or not dest.parent.is_dir():
            return
        self.moved += 1
        made = self.outside / f"in-{self.moved}"
        made.mkdir()
        for rel, text in files:
            (made / rel).parent.mkdir(parents=True, exist_ok=True)
            (made / rel).write_text(text)
        os.rename(made, dest)

    @rule(seconds=st.sampled_from([0.0, 0.02, 0.1, 0.3]))
    def pause(self, seconds: float) -> None:
        """Let the watcher get on (the operations then land at other moments)."""
        time.sleep(seconds)

    @precondition(lambda self: self._started())
    @rule(name=names, text=texts, then=names)
    def during_a_batch(self, name: str, text: str, then: str) -> None:
        """Change a file, wait (bounded) until a batch runs, then change another."""
        self._op()
        self.create_or_overwrite(name, text)
        watcher = self.session.watcher if self.session else None
        end = time.monotonic() + 2.0
        while watcher is not None and not watcher.busy and time.monotonic() < end:
            time.sleep(0.002)
        self.same_size_edit(then)

    def _started(self) -> bool:
        return self.first is not None and not self.first.is_alive()

    # -- the check --------------------------------------------------------------------------

    @rule()
    def settle_now(self) -> None:
        """A second way in, so that settles come about as often as any two operations."""
        self.settle()

    @rule()
    def settle(self) -> None:
        """Wait until the watcher saw everything and is idle; then store == fresh sweep."""
        assert self.first is not None and self.session is not None
        self.first.join()
        if self.first_error is not None:
            raise self.first_error
        TALLY.settles += 1
        self.fences += 1
        text = f"fence {self.fences}\n"
        (self.root / FENCE).write_text(text)
        if not self._wait_idle(hashlib.sha256(text.encode()).hexdigest()):
            self._differ([f"the watcher never settled: {self._step_failed() or 'still busy'}"])
            return
        fresh = self.tmp / f"fresh-{self.fences}"
        sweep([self.root], SweepOptions(out=fresh, tools=ToolSet.empty(), workers=1))
        self._differ(compare(self.session.store, Store(fresh)), Store(fresh))
        shutil.rmtree(fresh)

    def _wait_idle(self, fence_sha: str) -> bool:
        assert self.session is not None
        watcher, store = self.session.watcher, self.session.store
        assert watcher is not None
        end = time.monotonic() + SETTLE_S
        while time.monotonic() < end:
            if watcher.failure is not None or self._step_failed():
                return False
            if watcher.idle():
                recs = {r.path: r for r in store.load_records()}
                fence = recs.get(FENCE)
                if fence is not None and fence.sha256 == fence_sha and watcher.idle():
                    return True
            time.sleep(0.01)
        return False

    def _step_failed(self) -> str | None:
        """A batch that raised (it is retried by a rescan, but the store is not right now)."""
        for e in list(self.events):
            if isinstance(e, Notice) and e.kind == "watch-error":
                return e.message
        return None

    def _differ(self, lines: list[str], fresh: Store | None = None) -> None:
        if not lines:
            return
        assert self.session is not None
        TALLY.differences.extend(lines)
        TALLY.same_sha += sum(1 for line in lines if line.startswith(SAME_SHA))
        if self.strict:
            raise AssertionError(
                "the watched store differs from a fresh sweep:\n" + "\n".join(lines[:20])
            )
