"""End-to-end sweeps: statuses over the fixtures, reuse, change, rename, determinism."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import engine.run as sweep_mod
from engine.events import Listener, ignore
from engine.isolate import ReadPool
from engine.readers import registry
from engine.records import Record, Status, Why
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult, sweep
from engine.tools import ToolSet, discover
from fixtures.generate import expected_all


def _records(root: Path) -> dict[str, Record]:
    return {r.path: r for r in Store(root / ".quarry").load_records()}


def _store_bytes(root: Path) -> dict[str, bytes]:
    out = root / ".quarry"
    files = {"extract.jsonl": (out / "extract.jsonl").read_bytes()}
    for p in sorted((out / "extract").rglob("*.txt")):
        files[str(p.relative_to(out))] = p.read_bytes()
    return files


def test_fixtures_sweep_gives_every_file_its_expected_verdict(sample: Path) -> None:
    tools = discover()
    result = sweep([sample], SweepOptions(tools=tools))
    records = _records(sample)
    expected = expected_all(tools)
    assert sorted(records) == sorted(expected), "one record per fixture file, no more"
    store = Store(sample / ".quarry")
    wrong = []
    for path, exp in expected.items():
        rec = records[path]
        got = (rec.status, rec.reason, rec.extractor if exp.extractor else None)
        want = (exp.status, exp.reason, exp.extractor)
        if got != want or (exp.mime and rec.mime != exp.mime):
            wrong.append(f"{path}: got {got} {rec.mime} ({rec.error}), want {want} {exp.mime}")
            continue
        if rec.status == Status.OK:
            assert rec.sha256
            text = store.read_text(rec.sha256)
            assert len(text) == rec.chars, path
            missing = [s for s in exp.contains if s not in text]
            if missing:
                wrong.append(f"{path}: text lacks {missing}")
        if exp.pages is not None and rec.pages != exp.pages:
            wrong.append(f"{path}: pages {rec.pages}, want {exp.pages}")
    assert not wrong, "\n".join(wrong)
    assert result.summary.files == len(expected)


def test_second_sweep_reads_and_hashes_nothing(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sweep([sample], SweepOptions(tools=ToolSet.empty()))
    # Error records are retried on every full sweep by design: leave those files out.
    for rec in _records(sample).values():
        if rec.status == Status.ERROR:
            (sample / rec.path).unlink()
    sweep([sample], SweepOptions(tools=ToolSet.empty()))
    hashed = _arm_no_reads(monkeypatch)
    result = _usual(sample, SweepOptions(tools=ToolSet.empty()))
    assert hashed == []
    assert result.extracted == 0
    records = _records(sample)
    assert records and all(r.reused for r in records.values() if r.sha256)


def _usual(root: Path, options: SweepOptions, on_event: Listener = ignore) -> SweepResult:
    """A sweep that loads the store and decides every file (never the stat index's quick way,
    which ``sweep`` takes when nothing changed): the warm path these tests are about."""
    with Sweeper([root], options, on_event) as sweeper:
        return sweeper.run()


def _arm_no_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    hashed: list[str] = []
    real_hash = sweep_mod._hash_file

    def counting_hash(entry: object) -> object:
        hashed.append(str(getattr(entry, "path", entry)))
        return real_hash(entry)  # type: ignore[arg-type]

    def no_reads(self: ReadPool, tasks: object) -> None:
        raise AssertionError("the sweep tried to read a file")

    monkeypatch.setattr(sweep_mod, "_hash_file", counting_hash)
    monkeypatch.setattr(ReadPool, "submit", no_reads)
    return hashed


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    (root / "sub" / "c.html").write_text("<p>charlie &amp; delta</p>")
    for p in root.rglob("*"):
        os.utime(p, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return root


def test_changed_content_is_read_again_alone(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    (root / "a.txt").write_text("alpha two\n")
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert result.extracted == 1
    assert records["a.txt"].why == Why.CHANGED and not records["a.txt"].reused
    assert records["b.txt"].reused and records["sub/c.html"].reused
    assert Store(root / ".quarry").read_text(records["a.txt"].sha256 or "") == "alpha two\n"


def test_touched_but_unchanged_file_is_hashed_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    os.utime(root / "b.txt", ns=(1_600_000_001_000_000_000, 1_600_000_001_000_000_000))
    hashed = _arm_no_reads(monkeypatch)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert hashed == ["b.txt"]
    assert _records(root)["b.txt"].mtime_ns == 1_600_000_001_000_000_000


def test_rename_reuses_text_without_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    before = _records(root)["sub/c.html"]
    (root / "sub" / "c.html").rename(root / "moved.html")
    _arm_no_reads(monkeypatch)
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert "sub/c.html" not in records
    moved = records["moved.html"]
    assert moved.reused and moved.sha256 == before.sha256 and moved.chars == before.chars
    assert result.removed == 1


def test_sweeps_are_byte_identical(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    second = _store_bytes(root)
    _usual(root, SweepOptions(tools=ToolSet.empty()))
    assert _store_bytes(root) == second
    assert sweep([root], SweepOptions(tools=ToolSet.empty())).quick
    assert _store_bytes(root) == second


def test_fresh_stores_of_one_folder_agree_but_for_timing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    a, b = tmp_path / "store-a", tmp_path / "store-b"
    sweep([root], SweepOptions(out=a, tools=ToolSet.empty()))
    sweep([root], SweepOptions(out=b, tools=ToolSet.empty()))
    ra = [r.evolve(ms=0) for r in Store(a).load_records()]
    rb = [r.evolve(ms=0) for r in Store(b).load_records()]
    assert ra == rb
    texts = lambda s: {p.name: p.read_bytes() for p in (s / "extract").rglob("*.txt")}  # noqa: E731
    assert texts(a) == texts(b)


def test_deleted_file_loses_record_and_orphan_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUARRY_HISTORY_VERSIONS", "0")  # no earlier record is kept
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    sha = _records(root)["a.txt"].sha256 or ""
    (root / "a.txt").unlink()
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert "a.txt" not in _records(root)
    assert not Store(root / ".quarry").has_text(sha)


def test_a_deleted_files_text_stays_while_its_history_keeps_it(tmp_path: Path) -> None:
    """The record of a deleted file is kept as history (what ``--since`` compares with), and
    so is the text it names: a kept record never names a text that is gone."""
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    before = _records(root)["a.txt"]
    (root / "a.txt").unlink()
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert "a.txt" not in _records(root)
    assert before.sha256 is not None
    assert Store(root / ".quarry").read_text(before.sha256)


def test_copies_share_one_text(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "copy.txt").write_text("alpha\n")
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert records["copy.txt"].sha256 == records["a.txt"].sha256
    assert len(list((root / ".quarry" / "extract").rglob("*.txt"))) == 3


def test_reader_version_bump_redoes_only_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    real = sweep_mod.reader_versions
    bumped = lambda: {**real(), "html": 99}  # noqa: E731
    # the registry's answer, wherever it was taken: the run's, and the served sweep's merge
    monkeypatch.setattr(sweep_mod, "reader_versions", bumped)
    monkeypatch.setattr(registry, "reader_versions", bumped)
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert result.extracted == 1
    assert records["sub/c.html"].why == Why.READER_CHANGED
    assert records["a.txt"].reused and records["b.txt"].reused


def test_errors_are_retried_every_full_sweep(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    first = sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert _records(root)["broken.pdf"].status == Status.ERROR
    assert first.errors == 1
    before = _records(root)["broken.pdf"]
    again = sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert again.extracted == 1  # read again...
    assert _records(root)["broken.pdf"] == before  # ...and the same verdict keeps its record
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages")
    os.utime(root / "broken.pdf", ns=(before.mtime_ns, before.mtime_ns))
    sweep([root], SweepOptions(tools=ToolSet.empty(), rehash=True))
    rec = _records(root)["broken.pdf"]
    assert rec.why == Why.CHANGED and not rec.reused


def test_two_sweeps_of_an_unchanged_folder_with_errors_are_byte_identical(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    (root / "empty.txt").write_bytes(b"")
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    store = root / ".quarry"
    first = (store / "extract.jsonl").read_bytes()
    texts = sorted(p.name for p in (store / "extract").glob("*/*.txt"))
    assert b'"status":"error"' in first
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert (store / "extract.jsonl").read_bytes() == first
    assert sorted(p.name for p in (store / "extract").glob("*/*.txt")) == texts


def test_forced_retry_reads_one_record(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    before = _records(root)
    with Sweeper([root], SweepOptions(tools=ToolSet.empty())) as s:
        key = (str(root), "b.txt")
        result = s.run(only={str(root): ["b.txt"]}, force=[key], full=False)
    records = _records(root)
    assert result.extracted == 1
    assert records["b.txt"].why == Why.FORCED
    assert records["a.txt"] == before["a.txt"] and len(records) == 3


def test_an_unchanged_sweep_reports_progress_but_no_changed_records(tmp_path: Path) -> None:
    from engine.events import Event, Progress, RecordsChanged

    root = _tree(tmp_path)
    os.symlink("a.txt", root / "link")  # a link and an empty file are no change either
    (root / "empty.txt").write_bytes(b"")
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    sweep([root], SweepOptions(tools=ToolSet.empty()))  # marks every record reused
    events: list[Event] = []
    _usual(root, SweepOptions(tools=ToolSet.empty()), events.append)
    changed = [r for e in events if isinstance(e, RecordsChanged) for r in e.records]
    assert changed == []
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress and progress[-1].done == progress[-1].total == 5
    (root / "b.txt").write_text("bravo two\n")
    events.clear()
    sweep([root], SweepOptions(tools=ToolSet.empty()), events.append)
    changed = [r.path for e in events if isinstance(e, RecordsChanged) for r in e.records]
    assert changed == ["b.txt"]


def test_new_files_of_unknown_size_are_hashed_by_the_worker_not_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    hashed: list[str] = []
    real_hash = sweep_mod._hash_file

    def counting_hash(entry: object) -> object:
        hashed.append(str(getattr(entry, "path", entry)))
        return real_hash(entry)  # type: ignore[arg-type]

    monkeypatch.setattr(sweep_mod, "_hash_file", counting_hash)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert hashed == []  # no record existed: nothing to reuse, nothing hashed in the engine
    text = Store(root / ".quarry").read_text(records["a.txt"].sha256 or "")
    assert records["a.txt"].sha256 == hashlib.sha256(b"alpha\n").hexdigest()
    assert text == "alpha\n"
    (root / "twin.txt").write_text("bravo\n")  # the size of a known record: maybe a copy
    (root / "other.txt").write_text("a size no record has\n")
    hashed.clear()
    # A sweep holding the records knows their sizes (one the index serves hashes every
    # file the merge found new: a few, and each may be a copy of a known content).
    with Sweeper([root], SweepOptions(tools=ToolSet.empty())) as sweeper:
        result = sweeper.run()
    assert hashed == ["twin.txt"]
    assert _records(root)["twin.txt"].reused and result.extracted == 1


def test_big_copies_in_one_cold_sweep_are_read_once(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    body = ("a line of a big text file\n" * (sweep_mod.DEDUP_BYTES // 20)).encode()
    for name in ("one.txt", "two.txt", "three.txt"):
        (root / name).write_bytes(body)
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = _records(root)
    assert result.extracted == 1
    assert {r.sha256 for r in records.values()} == {hashlib.sha256(body).hexdigest()}


def test_a_new_store_starts_the_workers_forkserver_before_the_lock_and_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    calls: list[str] = []
    monkeypatch.setattr(ReadPool, "warm", lambda self: calls.append("warm"))
    walk, writer = Sweeper._walk, Store.writer
    monkeypatch.setattr(Sweeper, "_walk", lambda self: calls.append("walk") or walk(self))
    monkeypatch.setattr(Store, "writer", lambda self: calls.append("lock") or writer(self))
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert calls == ["warm", "lock", "walk"]  # once, before the store's lock is taken
    calls.clear()
    sweep([root], SweepOptions(tools=ToolSet.empty()))  # records already: maybe nothing to read
    assert calls == ["lock", "walk"]


def test_warm_starts_the_forkserver_and_reads_still_work(tmp_path: Path) -> None:
    from multiprocessing import forkserver

    from engine.extract import ReadTask
    from engine.limits import Limits

    (tmp_path / "t").mkdir()
    src = tmp_path / "a.txt"
    src.write_text("hello\n", encoding="utf-8")
    pool = ReadPool(Limits(), workers=1)
    try:
        pool.warm()
        pool.warm()  # a second call leaves the running forkserver alone
        assert forkserver._forkserver._forkserver_pid is not None  # type: ignore[attr-defined]
        task = ReadTask(str(src), "", Limits(), ToolSet.empty(), str(tmp_path / "t"), 6)
        [(_task, outcome)] = list(pool.read([task]))
    finally:
        pool.close()
    assert outcome.status == Status.OK and outcome.chars == 6


def test_a_run_collects_garbage_less_and_puts_the_collector_back(tmp_path: Path) -> None:
    import gc

    from engine.gcpause import GC_YOUNG, fewer_collections, long_lived

    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    seen: list[tuple[int, int, int]] = []
    with fewer_collections():
        seen.append(gc.get_threshold())
        # a run freezes nothing: the cycles it leaves stay the collector's to free
        assert gc.get_freeze_count() == frozen_before
        with fewer_collections():  # another run at once (the watcher's thread, say)
            seen.append(gc.get_threshold())
        seen.append(gc.get_threshold())
    assert seen == [(max(before[0], GC_YOUNG), *before[1:])] * 3
    assert gc.get_threshold() == before
    with long_lived():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        # What the first froze stays frozen: an unfreeze would take the count back to
        # frozen_before. Not ">= frozen": a frozen object another thread lets go of leaves the
        # permanent generation by its refcount (CI saw 279,978 of 279,980).
        with long_lived():  # a second sweeper's load
            assert gc.get_freeze_count() > frozen // 2
        assert gc.get_freeze_count() > frozen // 2
    assert gc.get_freeze_count() == frozen_before
    root = _tree(tmp_path)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before


def test_a_small_sweep_makes_no_full_collection_and_a_big_drop_makes_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full collection walks every object of the process (the suite's own, a dashboard's):
    a sweep of a few files skips it, what held many files gives its memory back."""
    from engine import gcpause

    collections: list[int] = []
    monkeypatch.setattr(gcpause.gc, "collect", lambda *a: collections.append(1) or 0)
    root = _tree(tmp_path)
    for _ in range(2):  # a cold sweep, then one the index serves (the walk merged with it)
        sweep([root], SweepOptions(tools=ToolSet.empty()))
    assert collections == []
    gcpause.let_go(gcpause.LET_GO_FILES - 1)
    assert collections == []
    gcpause.let_go(gcpause.LET_GO_FILES)
    gcpause.let_go()  # (no count given: always)
    assert collections == [1, 1]


def test_an_executor_of_the_options_that_can_warm_is_warmed_before_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Dask executor starts its cluster while a cold sweep walks and plans (issue 27)."""
    from engine.executor import Executor
    from engine.limits import Limits

    root = _tree(tmp_path)
    calls: list[str] = []

    class Warms(ReadPool):
        def warm(self) -> None:
            calls.append("warm")

    def make(limits: Limits, workers: int) -> Executor:
        return Warms(limits, workers=workers)

    walk = Sweeper._entries
    monkeypatch.setattr(
        Sweeper, "_entries", lambda self, only: calls.append("walk") or walk(self, only)
    )
    sweep([root], SweepOptions(tools=ToolSet.empty(), executor=make))
    assert calls == ["warm", "walk"]
    assert _records(root)
