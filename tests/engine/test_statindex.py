"""The stat index: a quick sweep is taken only when the usual one would change nothing, and
then gives what the usual one gives.

The usual sweep is the oracle: each test runs the quick sweeper (the ``sweep`` command's) and
holds its outcome to a plain sweeper's on the same tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import ClassVar

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import statindex
from engine.events import Notice, Progress, SweepFinished, SweepStarted
from engine.extract import Outcome, ReadTask, read_one
from engine.limits import Limits
from engine.readers.registry import reader_versions
from engine.records import Record, Status
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult, sweep
from engine.tools import Tool, ToolSet

OLD_NS = 1_600_000_000_000_000_000
NONE = ToolSet.empty()


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha bravo charlie\n")
    (root / "b.txt").write_text("delta echo foxtrot\n")
    (root / "sub" / "c.html").write_text("<p>golf &amp; hotel</p>")
    (root / "sub" / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (root / "empty.txt").write_bytes(b"")
    os.symlink("a.txt", root / "link")
    _age(root)
    return root


def _age(root: Path) -> None:
    """Every file modified long ago (a file modified just before a sweep is not trusted)."""
    for p in [root, *root.rglob("*")]:
        os.utime(p, ns=(OLD_NS, OLD_NS), follow_symlinks=False)


def _sweep(root: Path, **opts: object) -> SweepResult:
    return sweep([root], SweepOptions(tools=NONE, **opts))  # type: ignore[arg-type]


def _settled(root: Path, **opts: object) -> None:
    """Sweep until every record is kept as it is (a new record becomes ``reused`` once)."""
    _sweep(root, **opts)
    _sweep(root, **opts)


def _no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Store) -> object:
        raise AssertionError("a quick sweep loaded the records")

    monkeypatch.setattr(Store, "load", refuse)


def _store(root: Path) -> Path:
    return root / ".quarry"


def _summary_sans_times(root: Path) -> dict[str, object]:
    summary = Store(_store(root)).load_summary()
    assert summary is not None
    d = asdict(summary)
    for key in ("started", "finished", "seconds", "jsonl_written"):
        d.pop(key)
    return d


def test_an_unchanged_folder_is_swept_from_the_index_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    _settled(root)
    jsonl = (_store(root) / "extract.jsonl").read_bytes()
    summary = _summary_sans_times(root)
    assert (_store(root) / statindex.NAME).is_file()
    _no_loading(monkeypatch)
    result = _sweep(root)
    assert result.quick
    assert (result.extracted, result.removed, result.errors) == (0, 0, 0)
    # the files whose verdict is kept: not the link (skipped) nor the empty file
    assert result.reused == 4
    assert (_store(root) / "extract.jsonl").read_bytes() == jsonl
    assert _summary_sans_times(root) == summary
    assert _sweep(root).quick  # and again: the summary it wrote keeps the index valid


def test_a_quick_sweep_tells_its_listener_what_the_usual_one_does(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _settled(root)
    events: list[object] = []
    result = sweep([root], SweepOptions(tools=NONE), events.append)
    assert result.quick
    started, progress, finished = events
    assert isinstance(started, SweepStarted) and started.files == 6
    assert isinstance(progress, Progress) and progress.done == progress.total == 6
    assert isinstance(finished, SweepFinished) and finished.summary == result.summary
    assert (finished.extracted, finished.reused) == (0, 4)


def test_the_sweep_command_prints_the_same_summary_quick_or_not(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    def quarry(*args: str) -> dict[str, object]:
        proc = subprocess.run(
            [sys.executable, "-m", "engine", "sweep", str(root), "--no-external", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        summary: dict[str, object] = orjson.loads(proc.stdout) if proc.stdout else {}
        for key in ("started", "finished", "seconds", "jsonl_written"):
            summary.pop(key, None)
        return summary

    quarry("--quiet")
    usual = quarry("--json")  # every record becomes reused: the last usual sweep
    jsonl = _store(root) / "extract.jsonl"
    stamp = jsonl.stat().st_mtime_ns
    assert quarry("--json") == usual  # quick
    assert jsonl.stat().st_mtime_ns == stamp
    _tear_index(root)
    assert quarry("--json") == usual  # a torn index: the usual way, the same answer
    assert statindex.load(_store(root)) is not None  # and a good index again
    table = subprocess.run(
        [sys.executable, "-m", "engine", "sweep", str(root), "--no-external"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert table.returncode == 0 and "read 0, reused 5" in table.stdout, table.stdout


Change = Callable[[Path], None]


def _edit(root: Path) -> None:
    (root / "a.txt").write_text("alpha bravo charlie delta\n")
    os.utime(root / "a.txt", ns=(OLD_NS + 5, OLD_NS + 5))


def _touch(root: Path) -> None:
    os.utime(root / "b.txt", ns=(OLD_NS + 7, OLD_NS + 7))


def _add(root: Path) -> None:
    (root / "sub" / "new.txt").write_text("india juliet\n")
    os.utime(root / "sub" / "new.txt", ns=(OLD_NS, OLD_NS))


def _remove(root: Path) -> None:
    (root / "b.txt").unlink()


def _drop_text(root: Path) -> None:
    record = _records(root)["a.txt"]
    assert record.sha256
    Store(_store(root)).text_path(record.sha256).unlink()


def _replace_jsonl(root: Path) -> None:
    path = _store(root) / "extract.jsonl"
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # the same records, written by another hand


def _dirty(root: Path) -> None:
    (_store(root) / "sweep.dirty").touch()


def _fresh(root: Path) -> None:
    (root / "fresh.txt").write_text("kilo lima\n")  # modified now: its mtime proves nothing yet


def _tear_index(root: Path) -> None:
    path = _store(root) / statindex.NAME
    path.write_bytes(path.read_bytes()[:-20])


def _garble_index(root: Path) -> None:
    path = _store(root) / statindex.NAME
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _earlier_summary(root: Path) -> None:
    path = _store(root) / "extract.summary.json"
    text = path.read_text()
    start = text.index('"started": "') + len('"started": "')
    path.write_text(text[:start] + "2001-01-01T00:00:00+00:00" + text[start + 32 :])


def _ignore(root: Path) -> None:
    (root / ".quarryignore").write_text("*.html\n")


CHANGES: dict[str, Change] = {
    "edited": _edit,
    "touched": _touch,
    "added": _add,
    "removed": _remove,
    "text dropped": _drop_text,
    "extract.jsonl rewritten": _replace_jsonl,
    "killed sweep": _dirty,
    "fresh file": _fresh,
    "torn index": _tear_index,
    "garbled index": _garble_index,
    "earlier summary": _earlier_summary,
    "ignore rules": _ignore,
}


def _records(root: Path) -> dict[str, Record]:
    return {r.path: r for r in Store(_store(root)).load_records()}


def _plain(root: Path, out: Path, **opts: object) -> SweepResult:
    options = SweepOptions(out=out, tools=NONE, **opts)  # type: ignore[arg-type]
    with Sweeper([root], options) as sweeper:
        return sweeper.run()


def _outcome(result: SweepResult) -> tuple[object, ...]:
    return (result.extracted, result.reused, result.removed, result.errors, result.repaired)


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_any_change_the_index_cannot_vouch_for_sends_the_sweep_the_usual_way(
    tmp_path: Path, name: str
) -> None:
    root = _tree(tmp_path)
    _settled(root)
    CHANGES[name](root)
    twin = tmp_path / "twin"
    shutil.copytree(_store(root), twin, symlinks=True)
    result = _sweep(root)
    assert not result.quick, name
    want = _plain(root, twin)  # the usual way, from the same store
    assert _outcome(result) == _outcome(want)
    assert _comparable(_store(root)) == _comparable(twin)
    _settled(root)
    assert _sweep(root).quick or name == "fresh file", "a new index after the usual sweeps"


def test_other_tools_send_the_sweep_the_usual_way(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _settled(root)
    tools = ToolSet((Tool("pdftotext", "/usr/bin/pdftotext", "24.02.0"),))
    result = sweep([root], SweepOptions(tools=tools))
    assert not result.quick
    assert sweep([root], SweepOptions(tools=tools)).quick


def test_a_lower_max_bytes_sends_the_sweep_the_usual_way(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _settled(root)
    result = _sweep(root, max_bytes=10)
    assert not result.quick
    assert _records(root)["a.txt"].reason == "too_large"
    assert _sweep(root, max_bytes=10).quick
    assert not _sweep(root, max_bytes=11).quick  # the verdict names the limit


class _Flaky:
    """Reads in this process, and fails the files named in ``FAILING`` (a read that failed
    once and may not fail again: a tool that timed out under load, say)."""

    FAILING: ClassVar[dict[str, str]] = {}
    """File name -> the error its read gives."""

    def __init__(self, limits: Limits, workers: int) -> None:
        self.queue: list[ReadTask] = []

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self.queue.extend(tasks)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        while self.queue:
            task = self.queue.pop(0)
            why = self.FAILING.get(Path(task.path).name)
            if why is not None:
                v = reader_versions()["text"]
                yield task, Outcome(Status.ERROR, "text/plain", "timeout", "text", v, error=why)
            else:
                yield task, read_one(task)

    def cancel(self) -> None:
        self.queue.clear()

    def close(self) -> None:
        self.cancel()


def _flaky(root: Path, out: Path | None = None) -> SweepResult:
    return sweep([root], SweepOptions(out=out, tools=NONE, executor=_Flaky))


def test_a_store_with_errors_reads_just_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    _age(root)
    _settled(root)
    jsonl = (_store(root) / "extract.jsonl").read_bytes()
    twin = tmp_path / "twin"
    shutil.copytree(_store(root), twin)
    with monkeypatch.context() as m:
        _no_loading(m)
        result = _sweep(root)  # every full sweep retries an error: this one reads just it
    assert result.quick and (result.extracted, result.reused, result.errors) == (1, 4, 1)
    assert (_store(root) / "extract.jsonl").read_bytes() == jsonl
    assert not (_store(root) / "sweep.dirty").exists()
    want = _plain(root, twin)
    assert _outcome(result) == _outcome(want)
    assert _comparable(_store(root)) == _comparable(twin)


@pytest.mark.parametrize("now", [None, "timed out after 60 s"], ids=["reads well", "other error"])
def test_an_error_read_again_to_another_verdict_is_written_as_the_usual_sweep_writes_it(
    tmp_path: Path, now: str | None
) -> None:
    root = _tree(tmp_path)
    _Flaky.FAILING = {"b.txt": "timed out after 30 s"}
    try:
        for _ in range(2):
            _flaky(root)
        assert _records(root)["b.txt"].status == Status.ERROR
        assert (_store(root) / statindex.NAME).exists()
        twin = tmp_path / "twin"
        shutil.copytree(_store(root), twin)
        _Flaky.FAILING = {"b.txt": now} if now else {}
        result = _flaky(root)
        with Sweeper([root], SweepOptions(out=twin, tools=NONE, executor=_Flaky)) as plain:
            want = plain.run()
        assert not result.quick and result.extracted == 1
        record = _records(root)["b.txt"]
        assert record.status == (Status.ERROR if now else Status.OK) and record.error == now
        assert _outcome(result) == _outcome(want)
        assert _comparable(_store(root)) == _comparable(twin)
        _flaky(root)  # (b.txt's record becomes reused when it reads well)
        assert _flaky(root).quick
    finally:
        _Flaky.FAILING = {}


def test_rehash_verify_and_retries_never_take_the_index(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _settled(root)
    assert not _sweep(root, rehash=True).quick
    assert not _sweep(root, verify=True).quick
    with Sweeper([root], SweepOptions(tools=NONE), quick=True) as sweeper:
        assert not sweeper.run(force=[(str(root), "a.txt")]).quick


def test_a_root_of_its_own_store_leaves_the_index_out_of_its_files(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    for _ in range(3):
        result = sweep([root], SweepOptions(out=root, tools=NONE))
    assert result.quick
    assert statindex.NAME not in _records(root) and "extract.jsonl" not in _records(root)


def test_a_store_whose_index_cannot_be_written_still_sweeps(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (_store(root)).mkdir()
    (_store(root) / statindex.NAME).mkdir()  # a folder in the index's place
    _settled(root)
    result = _sweep(root)
    assert not result.quick and result.summary.files == 6


# -- the usual sweep as the oracle, over random histories -----------------------------------

_NAMES = st.sampled_from(
    [
        "a.txt",
        "b.txt",
        "sub/c.txt",
        "sub/d.html",
        "e.bin",
        "sub/f.txt",
        "h.pdf",
        os.fsdecode(b"g\xe9.txt"),
    ]
)
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "none",
                "none",
                "write",
                "broken",
                "touch",
                "remove",
                "drop text",
                "empty",
                "link",
                "limit",
            ]
        ),
        _NAMES,
        st.binary(min_size=0, max_size=40),
    ),
    min_size=1,
    max_size=8,
)


def _comparable(out: Path) -> tuple[dict[str, dict[str, object]], dict[str, object], set[str]]:
    store = Store(out)
    records = {}
    for r in store.load_records():
        d = asdict(r)
        d.pop("ms")
        records[r.path] = d
    summary = store.load_summary()
    assert summary is not None
    s = asdict(summary)
    for key in ("started", "finished", "seconds", "jsonl_written", "store"):  # (two stores)
        s.pop(key)
    return records, s, set(store.text_hashes())


def _apply(root: Path, stores: tuple[Path, Path], step: tuple[str, str, bytes], n: int) -> int:
    what, name, data = step
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    limit = 1 << 30
    if what == "write":
        if path.is_symlink():
            path.unlink()
        path.write_bytes(data or b"x")
        os.utime(path, ns=(OLD_NS + n, OLD_NS + n))
    elif what == "touch" and path.exists() and not path.is_symlink():
        os.utime(path, ns=(OLD_NS + 1000 + n, OLD_NS + 1000 + n))
    elif what == "remove" and (path.exists() or path.is_symlink()):
        path.unlink()
    elif what == "empty" and not path.is_symlink():
        path.write_bytes(b"")
        os.utime(path, ns=(OLD_NS + n, OLD_NS + n))
    elif what == "link" and not path.exists() and not path.is_symlink():
        os.symlink("elsewhere", path)
        os.utime(path, ns=(OLD_NS + n, OLD_NS + n), follow_symlinks=False)
    elif what == "drop text":
        for out in stores:
            for r in Store(out).load_records():
                if r.path == name and r.has_text and r.sha256:
                    Store(out).text_path(r.sha256).unlink(missing_ok=True)
    elif what == "broken":  # an error record: every full sweep reads it again
        if path.is_symlink():
            path.unlink()
        path.write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog" + data[:4])
        os.utime(path, ns=(OLD_NS + n, OLD_NS + n))
    elif what == "limit":
        limit = 8
    return limit


class _InProcess(_Flaky):
    """Reads in this process, none failing: the oracle's sweeps are many, and a pool's start
    for each was most of its time (74 s alone, past the suite's 120 s with two suites at once)."""

    FAILING: ClassVar[dict[str, str]] = {}


def _served(root: Path, **opts: object) -> SweepResult:
    """A watching session's first sweep: quick when it can be, else the walk merged with the
    index (engine.merge), else the records loaded."""
    options = SweepOptions(tools=NONE, **opts)  # type: ignore[arg-type]
    with Sweeper([root], options, quick=True, served=True) as sweeper:
        return sweeper.run()


# 15 examples: 30 took 114 s on a loaded two-core machine and CI's run past the suite's
# 120 s per test (stop 51); each is up to eight steps of two sweeps and a comparison.
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=_STEPS)
def test_a_quick_sweep_gives_what_the_usual_sweep_gives(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, bytes]]
) -> None:
    _oracle(tmp_path_factory, steps, served=False)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=_STEPS)
def test_a_sweep_merged_with_the_index_gives_what_the_usual_sweep_gives(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, bytes]]
) -> None:
    _oracle(tmp_path_factory, steps, served=True)


def _oracle(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, bytes]], served: bool
) -> None:
    base = tmp_path_factory.mktemp("oracle")
    root = base / "docs"
    root.mkdir()
    (root / "keep.txt").write_text("a file that never changes\n")
    _age(root)
    quick_out, plain_out = base / "quick", base / "plain"
    for n, step in enumerate([("none", "a.txt", b""), *steps, ("none", "a.txt", b"")]):
        limit = _apply(root, (quick_out, plain_out), step, n)
        # Three sweeps after every step: after a change the third is a quick one, so the next
        # step meets a valid index (a change it would miss is a change the quick sweep misses).
        for _ in range(3):
            if served:
                got = _served(root, out=quick_out, max_bytes=limit, executor=_InProcess)
            else:
                quick = SweepOptions(
                    out=quick_out, tools=NONE, max_bytes=limit, executor=_InProcess
                )
                got = sweep([root], quick)
            want = _plain(root, plain_out, max_bytes=limit, executor=_InProcess)
            assert _outcome(got) == _outcome(want), step
            assert _comparable(quick_out) == _comparable(plain_out), step
    # sweeps of nothing new: the last one was quick (errors and all)
    assert got.quick, "never quick"


def test_the_index_records_the_time_of_its_sweep(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = time.time_ns()
    _settled(root)
    index = statindex.load(_store(root))
    assert index is not None
    assert before - 2_000_000_000 <= index.started_ns <= time.time_ns()


def test_a_file_modified_by_its_sweeps_time_is_not_trusted_by_its_size_and_mtime(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path)
    path = root / "a.txt"
    future = time.time_ns() + 3600 * 10**9  # never older than a sweep's start
    os.utime(path, ns=(future, future))
    _settled(root)
    path.write_text("ALPHA BRAVO CHARLIE\n")  # the same size, the same mtime
    os.utime(path, ns=(future, future))
    result = _sweep(root)
    assert not result.quick and result.extracted == 1
    record = _records(root)["a.txt"]
    assert record.sha256
    assert "ALPHA" in Store(_store(root)).read_text(record.sha256)


def test_texts_scored_by_no_rules_are_scored_once_the_rules_are_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.quality import OFF_ENV

    root = _tree(tmp_path)
    _settled(root)
    store = Store(_store(root))
    with store.writer():  # a record scored by no rules (quality off when it was read)
        records = store.load_records()
        store.write_records(r.evolve(quality=None) if r.path == "a.txt" else r for r in records)
    monkeypatch.setenv(OFF_ENV, "1")  # the engine scores no stored text either
    _settled(root)
    assert _records(root)["a.txt"].quality is None
    assert _sweep(root).quick  # while texts are not scored, an unscored one is kept as it is
    monkeypatch.delenv(OFF_ENV)
    result = _sweep(root)
    assert not result.quick
    assert _records(root)["a.txt"].quality is not None


def test_a_text_missing_from_a_root_not_swept_keeps_that_root_out_of_the_index(
    tmp_path: Path,
) -> None:
    one, two = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    out = tmp_path / "store"
    both = SweepOptions(out=out, tools=NONE)
    for _ in range(2):
        sweep([one, two], both)
    lost = next(r for r in Store(out).load_records() if r.root == str(two) and r.has_text)
    assert lost.sha256
    Store(out).text_path(lost.sha256).unlink()
    (one / "a.txt").write_text("a change in the other root\n")
    _age(one)
    sweep([one], both)  # the usual way: it writes the index of both roots
    result = sweep([two], both)
    assert not result.quick and result.repaired == 1
    assert Store(out).text_path(lost.sha256).is_file()


def test_names_that_are_not_utf8_are_held_exactly(tmp_path: Path) -> None:
    root = Path(os.fsdecode(bytes(tmp_path) + b"/d\xe9j\xe0"))  # the root's own name too
    root.mkdir()
    for name in (b"caf\xe9.txt", b"\xff\xfe.txt", b"plain.txt"):
        (Path(os.fsdecode(bytes(root) + b"/" + name))).write_text("some words here\n")
    os.symlink(os.fsdecode(b"\xe9lsewhere"), os.fsdecode(bytes(root) + b"/l\xe9nk"))
    _age(root)
    _settled(root)
    result = _sweep(root)
    assert result.quick and result.summary.files == 4
    os.utime(os.fsdecode(bytes(root) + b"/caf\xe9.txt"), ns=(OLD_NS + 9, OLD_NS + 9))
    assert not _sweep(root).quick


def test_a_fault_writing_the_index_is_said_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    _settled(root)

    def broken(*_args: object, **_kw: object) -> bool:
        raise TypeError("a bug")

    monkeypatch.setattr(statindex, "write", broken)
    _edit(root)
    events: list[object] = []
    result = sweep([root], SweepOptions(tools=NONE), events.append)
    assert result.extracted == 1 and not result.quick
    said = [e for e in events if isinstance(e, Notice) and e.kind == "stat-index"]
    assert said and "TypeError: a bug" in said[0].message
    assert not (_store(root) / statindex.NAME).exists()
    assert _records(root)["a.txt"].size == len("alpha bravo charlie delta\n")  # written
    monkeypatch.undo()
    _settled(root)
    assert _sweep(root).quick


def test_a_quarantined_error_is_left_alone_quick_or_not(tmp_path: Path) -> None:
    from engine.plan import CRASH_QUARANTINE

    root = _tree(tmp_path)
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    _age(root)
    _settled(root)
    store = Store(_store(root))
    with store.writer():  # it lost its worker three sweeps running
        records = store.load_records()
        store.write_records(
            r.evolve(crashes=CRASH_QUARANTINE) if r.path == "broken.pdf" else r for r in records
        )
    _settled(root)
    result = _sweep(root)
    assert result.quick and result.extracted == 0 and result.errors == 1


def test_every_write_of_the_records_removes_the_index_first(tmp_path: Path) -> None:
    # whatever the file system's clock: a watcher's or the dashboard's write leaves none
    root = _tree(tmp_path)
    _settled(root)
    index = _store(root) / statindex.NAME
    assert index.exists()
    _edit(root)
    with Sweeper([root], SweepOptions(tools=NONE)) as sweeper:  # as the watcher's
        sweeper.run(only={str(root): ["a.txt"]}, rehash=True)
    assert not index.exists()
    _settled(root)
    assert index.exists() and _sweep(root).quick


def test_the_readers_are_compared_only_when_their_sources_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    _settled(root)
    compared: list[str] = []
    real = statindex.readers_table

    def table() -> str:
        compared.append("readers")
        return real()

    monkeypatch.setattr(statindex, "readers_table", table)
    assert _sweep(root).quick and compared == []  # no reader imported
    monkeypatch.setattr(statindex, "sources", lambda: "an upgrade that touched no reader")
    assert _sweep(root).quick and compared == ["readers"]  # the same readers
    index = statindex.load(_store(root))
    assert index is not None and index.sources == "an upgrade that touched no reader"
    assert _sweep(root).quick and compared == ["readers"]  # renewed: not compared again


def test_other_readers_send_the_sweep_the_usual_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    _settled(root)
    real = statindex.readers_table
    monkeypatch.setattr(statindex, "sources", lambda: "an upgrade")
    monkeypatch.setattr(statindex, "readers_table", lambda: real() + "\nnew=1:text/x-new")
    assert not _sweep(root).quick
    assert _sweep(root).quick


def test_the_sources_name_every_reader_and_each_import_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.readers

    before = statindex.sources()
    for module in Path(engine.readers.__file__).parent.glob("*.py"):
        assert f"{module}:{module.stat().st_size}:" in before
    library = tmp_path / "site"
    library.mkdir()
    os.utime(library, ns=(OLD_NS, OLD_NS))
    monkeypatch.syspath_prepend(str(library))
    with_folder = statindex.sources()
    assert with_folder != before
    (library / "newlib").mkdir()  # a library installed there
    assert statindex.sources() != with_folder
    from engine.readers import registry

    registry.use_extra(("tests.fake:READERS",))
    try:
        assert statindex.sources() == ""  # extra readers: the table itself is compared
    finally:
        registry.use_extra(())


def test_an_engine_whose_files_cannot_be_listed_compares_the_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    _settled(root)
    monkeypatch.setattr(statindex, "__file__", str(tmp_path / "quarry.zip" / "engine" / "x.py"))
    assert statindex.sources() == ""
    assert _sweep(root).quick


def test_a_readers_table_that_does_not_read_leaves_the_summary_to_the_registry(
    tmp_path: Path,
) -> None:
    import msgspec

    root = _tree(tmp_path)
    _settled(root)
    summary = _summary_sans_times(root)
    index = statindex.load(_store(root))
    assert index is not None
    garbled = msgspec.structs.replace(index, readers="text=two:text/plain\nno version here")
    statindex._write(Store(_store(root)), garbled)  # (its checksum is right: a hand's edit)
    assert _sweep(root).quick
    assert _summary_sans_times(root) == summary  # the readers' versions as they are


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=20))
def test_the_index_holds_a_walks_numbers_little_endian_on_any_machine(numbers: list[int]) -> None:
    """What the index compares a walk's sizes and times with is the same bytes whichever
    machine packed them (a store on a share is swept from others)."""
    from array import array
    from struct import pack

    assert statindex.packed(array("q", numbers)) == pack(f"<{len(numbers)}q", *numbers)


def test_an_index_of_the_version_before_is_not_used_and_is_written_again(
    tmp_path: Path,
) -> None:
    """An index written by the quarry before (version 3: sizes and mtimes as lists of
    numbers) is not read as this one's, never a crash: the sweep goes the usual way and
    writes this version's."""
    import zlib

    import msgspec

    root = _tree(tmp_path)
    _settled(root)
    path = _store(root) / statindex.NAME
    head = len(b"quarry-stat\n")
    old = msgspec.msgpack.decode(path.read_bytes()[head + 4 :])
    old["v"] = 3
    for files in old["roots"]:
        files[2] = list(array("q", files[2]))  # (this machine's order: little-endian here)
        files[3] = list(array("q", files[3]))
    payload = msgspec.msgpack.encode(old)
    path.write_bytes(b"quarry-stat\n" + zlib.crc32(payload).to_bytes(4, "big") + payload)
    assert statindex.load(_store(root)) is None
    result = _sweep(root)
    assert not result.quick and result.extracted == 0
    index = statindex.load(_store(root))
    assert index is not None and index.v == statindex.VERSION
    assert _sweep(root).quick
