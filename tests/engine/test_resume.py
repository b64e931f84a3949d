"""A sweep killed at any moment resumes: what it committed to the index is not read again.

The killed sweep runs in a process of its own that SIGKILLs itself right after its k-th
commit (no timing: the moment is a count), as the OOM killer or a power cut would end it;
the next sweep must read exactly the files without a committed record, and leave the store
an uninterrupted sweep leaves (records but ``ms``/``why``/``reused``; texts byte for byte).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import dbindex
from engine import run as run_module
from engine.db import DB, RecordDB
from engine.events import Notice, RecordsChanged
from engine.records import Record
from engine.resume import Ledger
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult, sweep
from engine.tools import ToolSet
from engine.walk import Entry

NONE = ToolSet.empty()
FILES = 40

KILLER = """
import os, signal, sys
from pathlib import Path
from engine.resume import Ledger
from engine.run import Run
from engine.sweep import SweepOptions, SweepResult, sweep
from engine.tools import ToolSet

root, out, after = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
Run.BATCH = 4  # a commit every 4 records: many moments to die at
Ledger.COMMIT_S = 0.0
commits = 0
journal = Ledger.journal

def dying_journal(self, records):
    global commits
    journal(self, records)
    commits += 1
    if commits >= after:
        os.kill(os.getpid(), signal.SIGKILL)

Ledger.journal = dying_journal
sweep([root], SweepOptions(out=out, tools=ToolSet.empty(), workers=1))
"""


def _tree(where: Path) -> Path:
    root = where / "docs"
    root.mkdir(parents=True)
    for i in range(FILES):
        (root / f"d{i % 3}").mkdir(exist_ok=True)
        (root / f"d{i % 3}" / f"f{i:03}.txt").write_text(f"file {i}\n" + "words " * i)
    (root / "same.txt").write_text("file 7\n" + "words " * 7)  # a copy: one read, two records
    (root / "empty.txt").write_bytes(b"")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4\n broken beyond repair")  # an error verdict
    for n, path in enumerate(sorted(root.rglob("*"))):
        os.utime(path, ns=(1_600_000_000_000_000_000 + n, 1_600_000_000_000_000_000 + n))
    return root


def _kill_after(root: Path, out: Path, commits: int) -> int:
    """Run the killer; its read workers, orphaned as the OOM killer would leave them, go
    with its process group once it is dead."""
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(root), str(out), str(commits)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=Path(__file__).parents[2],
        start_new_session=True,
    )
    try:
        return proc.wait(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def _comparable(out: Path) -> list[Record]:
    return [r.evolve(root="/", ms=0, why=None, reused=False) for r in Store(out).load_records()]


def _texts(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / "extract").glob("*/*.txt")}


class Reference:
    """One uninterrupted sweep of the tree: its records and texts (a short repr for Hypothesis)."""

    def __init__(self, where: Path) -> None:
        root = _tree(where)
        sweep([root], SweepOptions(out=where / "out", tools=NONE, workers=1))
        self.records = _comparable(where / "out")
        self.texts = _texts(where / "out")

    def __repr__(self) -> str:
        return f"Reference({len(self.records)} records)"


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return Reference(tmp_path_factory.mktemp("reference"))


def _committed(out: Path) -> set[str]:
    reader = RecordDB.open_reader(out / DB)
    try:
        return {path for _root, path in reader.unfinished()}
    finally:
        reader.close()


def _sweep_reading(root: Path, out: Path) -> tuple[SweepResult, set[str], list[Notice]]:
    """Sweep; the result, the files whose records came from a read, and the notices."""
    read: set[str] = set()
    notices: list[Notice] = []

    def listen(event: object) -> None:
        if isinstance(event, RecordsChanged):
            read.update(r.path for r in event.records if r.why is not None and not r.reused)
        elif isinstance(event, Notice):
            notices.append(event)

    return sweep([root], SweepOptions(out=out, tools=NONE, workers=1), listen), read, notices


@pytest.mark.parametrize("kills", [[1], [4], [2, 3, 6], [30]])
def test_a_killed_sweep_resumes_and_ends_as_one_uninterrupted_sweep(
    tmp_path_factory: pytest.TempPathFactory, reference: Reference, kills: list[int]
) -> None:
    # each number: the commit the sweep is killed after (a count, not a time); a sweep with
    # fewer commits ends first (30), and the store must then be as if nothing happened
    where = tmp_path_factory.mktemp("killed")
    root, out = _tree(where), where / "out"
    killed = False
    for after in kills:
        if _kill_after(root, out, after) != -signal.SIGKILL:
            break  # the sweep ended before its k-th commit: nothing left to resume
        killed = True
    committed = _committed(out) if killed else set()
    assert committed or not killed
    _result, read, notices = _sweep_reading(root, out)
    if committed:
        # every file with a committed record is kept (its text was in the store before the
        # commit), only the others are read
        assert not read & committed, read & committed
        assert any("resuming" in n.message for n in notices), notices
    assert _comparable(out) == reference.records
    assert _texts(out) == reference.texts
    assert not (out / "sweep.dirty").exists()
    again, _read, _ = _sweep_reading(root, out)
    assert again.extracted <= 1  # a resumed store is a finished one: errors alone read again


def test_a_killed_first_sweep_reads_only_what_it_did_not_commit(tmp_path: Path) -> None:
    root, out = _tree(tmp_path), tmp_path / "out"
    assert _kill_after(root, out, 3) == -signal.SIGKILL
    assert not (out / "extract.jsonl").exists()  # killed before any write of the file
    committed = _committed(out)
    assert len(committed) >= 3
    _result, read, _ = _sweep_reading(root, out)
    assert not read & committed
    assert read  # the rest was read
    assert len(Store(out).load_records()) == FILES + 3


def test_an_index_lost_or_damaged_between_sweeps_is_rebuilt_with_nothing_lost(
    tmp_path: Path,
) -> None:
    root, out = _tree(tmp_path), tmp_path / "out"
    sweep([root], SweepOptions(out=out, tools=NONE))
    before = Store(out).load_records()
    for damage in ("delete", "delete the database only", "garbage", "truncate"):
        db = out / DB
        if damage == "delete":
            for name in (DB, DB + "-wal", DB + "-shm"):
                (out / name).unlink(missing_ok=True)
        elif damage == "delete the database only":  # its WAL left: never replayed
            (out / (DB + "-wal")).write_bytes(os.urandom(4096))
            db.unlink()
        elif damage == "garbage":
            db.write_bytes(os.urandom(8192))
        else:
            with open(db, "r+b") as f:
                f.truncate(db.stat().st_size // 2)
        result, _read, _ = _sweep_reading(root, out)
        assert result.extracted <= 1  # the error file only: nothing else is read again
        assert [r.evolve(reused=False, why=None, ms=0) for r in Store(out).load_records()] == [
            r.evolve(reused=False, why=None, ms=0) for r in before
        ]
        reader = RecordDB.open_reader(db)
        assert len(reader) == len(before)
        reader.close()


def test_a_link_where_the_index_belongs_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    root, out = _tree(tmp_path), tmp_path / "out"
    sweep([root], SweepOptions(out=out, tools=NONE))
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    for name in (DB + "-wal", DB + "-shm"):
        (out / name).unlink(missing_ok=True)
        os.symlink(victim, out / name)
    notices: list[Notice] = []
    sweep(
        [root],
        SweepOptions(out=out, tools=NONE),
        lambda e: notices.append(e) if isinstance(e, Notice) else None,
    )
    assert victim.read_bytes() == b"precious"
    assert any("was a link" in n.message for n in notices), notices
    shutil.rmtree(out)


def test_show_answers_from_the_index_and_never_from_a_stale_one(tmp_path: Path) -> None:
    root, out = _tree(tmp_path), tmp_path / "out"
    assert _kill_after(root, out, 3) == -signal.SIGKILL
    committed = sorted(_committed(out) - {"empty.txt"})
    show = [sys.executable, "-m", "engine", "show", "--store", str(out), "--json", "--no-text"]
    got = subprocess.run([*show, str(root / committed[0])], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr  # a killed first sweep's record, from the index
    assert f'"path":"{committed[0]}"' in got.stdout.replace(" ", "")
    sweep([root], SweepOptions(out=out, tools=NONE))
    # another writer replaces extract.jsonl without the index: the file is what is shown
    lines = (out / "extract.jsonl").read_bytes().splitlines(keepends=True)
    kept = [ln for ln in lines if b'"d1/f001.txt"' not in ln]
    (out / "extract.jsonl").write_bytes(b"".join(kept))
    got = subprocess.run([*show, str(root / "d1" / "f001.txt")], capture_output=True, text=True)
    assert got.returncode == 1 and "no record" in got.stderr, got.stderr


def _tally(out: Path) -> tuple[int, dict[str, int], dict[str, int], int]:
    summary = Store(out).load_summary()
    assert summary is not None
    return summary.files, summary.counts, summary.reasons, summary.chars


def test_a_killed_first_sweep_resumes_without_loading_a_record(
    tmp_path: Path, reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sweep of a big share, killed after hours: its millions of committed records
    are asked of the index file by file as the run comes to them, never read into memory
    together (the loading resume, and a read of every row, are made to fail here)."""
    root, out = _tree(tmp_path), tmp_path / "out"
    assert _kill_after(root, out, 3) == -signal.SIGKILL
    committed = _committed(out)

    def no_loading(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the resume loaded every record")

    monkeypatch.setattr(Ledger, "_resume", no_loading)
    monkeypatch.setattr(dbindex.ServedRecords, "read_all", no_loading)
    monkeypatch.setattr(dbindex.ServedRecords, "_batches", no_loading)
    result, read, notices = _sweep_reading(root, out)
    assert not read & committed
    assert any("resuming" in n.message and "3 files" not in n.message for n in notices)
    assert _comparable(out) == reference.records
    assert _texts(out) == reference.texts
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    sweep([root], SweepOptions(out=fresh, tools=NONE, workers=1))
    assert _tally(out) == _tally(fresh)  # the summary's counts, from what the run counted
    assert result.errors == 1


def test_a_resumed_sweep_drops_the_files_gone_since_and_keeps_other_roots(
    tmp_path: Path,
) -> None:
    """Between the kill and the resume, a file whose record was committed and one whose
    record was not are deleted: the resumed store is the one a sweep of what is left makes.
    A root the killed sweep walked and the resume does not keeps its records."""
    root, out = _tree(tmp_path), tmp_path / "out"
    other = tmp_path / "other"
    other.mkdir()
    (other / "kept.txt").write_text("another root's file\n")
    killer = KILLER.replace("sweep([root]", "sweep([Path(sys.argv[4]), root]")
    proc = subprocess.run(
        [sys.executable, "-c", killer, str(root), str(out), "4", str(other)],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        timeout=120,
        start_new_session=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    decided = _committed(out)
    assert "kept.txt" in decided  # (the other root is walked and read first)
    committed = sorted(p for p in decided if p.startswith("d"))
    assert committed
    (root / committed[0]).unlink()  # decided before the kill
    undecided = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.txt")
        if str(p.relative_to(root)) not in decided
    )
    (root / undecided[-1]).unlink()  # not decided yet
    result, _read, _ = _sweep_reading(root, out)
    assert result.removed == 1
    records = {(r.root, r.path) for r in Store(out).load_records()}
    assert (str(root), committed[0]) not in records
    assert (str(root), undecided[-1]) not in records
    fresh = tmp_path / "fresh"
    sweep([root], SweepOptions(out=fresh, tools=NONE, workers=1))
    mine = [r for r in _comparable(out) if r.path != "kept.txt"]
    assert mine == _comparable(fresh)
    assert (str(other), "kept.txt") in records  # not swept this time: kept
    files, counts, _reasons, _chars = _tally(out)
    assert files == len(records) == sum(counts.values())


def test_a_retry_after_a_killed_first_sweep_counts_every_record_it_keeps(
    tmp_path: Path,
) -> None:
    """A retry is not a whole sweep: it keeps the killed sweep's records as they are, and the
    summary it writes counts all of them, not only the file it read again."""
    root, out = _tree(tmp_path), tmp_path / "out"
    assert _kill_after(root, out, 3) == -signal.SIGKILL
    decided = _committed(out)
    target = sorted(p for p in decided if p.startswith("d"))[0]
    # (``quarry retry`` finds its roots in a summary, which a killed first sweep never wrote:
    # the sweeper is driven as the command drives it)
    with Sweeper([root], SweepOptions(out=out, tools=NONE, workers=1), once=True) as sweeper:
        sweeper.run(only={str(root): [target]}, force=[(str(root), target)], full=False)
    records = Store(out).load_records()
    assert {r.path for r in records} == decided
    files, counts, _reasons, chars = _tally(out)
    assert files == len(records) == sum(counts.values())
    assert chars == sum(r.chars or 0 for r in records)


def test_a_watching_session_resumes_a_killed_first_sweep_from_the_index(
    tmp_path: Path, reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quarry DIR`` on a store whose first sweep was killed: the session's first sweep
    resumes it as ``quarry sweep`` does, without loading what was committed, then watches."""
    from engine.session import Session

    root, out = _tree(tmp_path), tmp_path / "out"
    assert _kill_after(root, out, 3) == -signal.SIGKILL

    def no_loading(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the resume loaded every record")

    monkeypatch.setattr(Ledger, "_resume", no_loading)
    session = Session([root], SweepOptions(out=out, tools=NONE, workers=1))
    try:
        result = session.sweep_then_watch()
    finally:
        session.close()
    assert not result.interrupted
    assert _comparable(out) == reference.records
    assert _texts(out) == reference.texts


def _begun_at(out: Path, seconds: int) -> None:
    """Say in ``out``'s summary that its sweep began at ``seconds`` (after the tree's files
    were made, before they are changed): what a file changed since then is to that sweep."""
    path = out / "extract.summary.json"
    summary = json.loads(path.read_bytes())
    summary["started"] = dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()
    path.write_text(json.dumps(summary))


def _rewrite(root: Path) -> None:
    """Change every numbered file and the broken PDF (still broken), their times old ones:
    a sweep of the tree reads them all again, and trusts any file it finds as it left it."""
    for n, path in enumerate(sorted(root.rglob("f*.txt"))):
        path.write_text(f"changed {n}\n" + "other words " * n)
    (root / "bad.pdf").write_bytes(b"%PDF-1.4\n still broken, otherwise")
    for n, path in enumerate(sorted(root.rglob("*"))):
        os.utime(path, ns=(1_600_000_100_000_000_000 + n, 1_600_000_100_000_000_000 + n))
    # a time past the sweeps' starts (a skewed clock): its size and time never prove it
    # unchanged, it is hashed by every sweep
    ahead = time.time_ns() + 3_600_000_000_000
    os.utime(root / "bad.pdf", ns=(ahead, ahead))


def _killed_resweep(where: Path, after: int) -> tuple[Path, Path, Path, set[str]]:
    """A tree swept into two stores; every file then changed, one store swept again whole,
    the other's sweep killed after its ``after``-th commit: (root, killed, whole, the files
    the killed sweep committed)."""
    root, out, whole = _tree(where), where / "out", where / "whole"
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    sweep([root], SweepOptions(out=whole, tools=NONE, workers=1))
    for store in (out, whole):  # (the files are changed after these sweeps: 100 s after)
        _begun_at(store, 1_600_000_050)
    _rewrite(root)
    sweep([root], SweepOptions(out=whole, tools=NONE, workers=1))  # the same, uninterrupted
    assert _kill_after(root, out, after) == -signal.SIGKILL
    committed = _committed(out)
    assert committed
    return root, out, whole, committed


def _no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every way of loading the records fail: the loading resumes, ``extract.jsonl``,
    the index's rows read together."""

    def no_loading(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the resume loaded extract.jsonl or the index's records")

    monkeypatch.setattr(Ledger, "_resume", no_loading)
    monkeypatch.setattr(Ledger, "_resume_served", no_loading)
    monkeypatch.setattr(Store, "load", no_loading)
    monkeypatch.setattr(dbindex.ServedRecords, "read_all", no_loading)
    monkeypatch.setattr(dbindex.ServedRecords, "_batches", no_loading)


@pytest.mark.parametrize("after", [3, 12])  # (12: all decided, the error last, then killed)
def test_a_killed_sweep_of_a_store_with_records_resumes_without_loading_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    """A store swept before, then a sweep that found most files changed, killed part way
    (the OOM killer on a big share): the next sweep merges the walk with the index, keeps what
    the killed sweep decided (its errors too) without reading or hashing those files, reads
    the rest in a run that holds none of its records (nothing is loaded: ``extract.jsonl``,
    the index's rows), and leaves the store the same sweep uninterrupted leaves."""
    root, out, whole, committed = _killed_resweep(tmp_path, after)
    # a text the killed sweep wrote whose record it never committed (a worker had renamed it
    # into the store): collected by the resume
    orphan = out / "extract" / "ab" / ("ab" * 32 + ".txt")
    orphan.parent.mkdir(exist_ok=True)
    orphan.write_text("read, never recorded\n")
    hashed: list[str] = []
    hash_file = run_module._hash_file

    def hashing(e: Entry) -> object:
        hashed.append(e.path)
        return hash_file(e)

    _no_loading(monkeypatch)
    monkeypatch.setattr(run_module, "_hash_file", hashing)
    result, read, notices = _sweep_reading(root, out)
    monkeypatch.undo()
    assert not read & committed, read & committed
    # trusted from the killed sweep's start (the file dated ahead is hashed, not read)
    assert not set(hashed) & committed - {"bad.pdf"}
    changed = {str(p.relative_to(root)) for p in root.rglob("f*.txt")} | {"bad.pdf"}
    assert read == changed - committed  # what the killed sweep did not reach, alone
    assert result.extracted == len(read)  # (an error read again to the same verdict included)
    assert any("resuming a sweep" in n.message for n in notices), notices
    assert not result.interrupted and result.errors == 1
    assert _comparable(out) == _comparable(whole)
    assert _texts(out) == _texts(whole)  # (those the history keeps of the files before too)
    assert not (out / "sweep.dirty").exists()
    assert _tally(out) == _tally(whole)
    again, _read, _ = _sweep_reading(root, out)
    assert again.extracted <= 1  # a finished store: its error alone is read again


def test_a_resumed_sweep_of_a_store_with_records_drops_the_files_gone_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the kill and the resume, a file the killed sweep decided and one it did not
    reach are deleted: their records go, the summary counts what is left."""
    root, out, whole, committed = _killed_resweep(tmp_path, 3)
    decided = sorted(p for p in committed if p.startswith("d"))[0]
    undecided = sorted(
        str(p.relative_to(root))
        for p in root.rglob("f*.txt")
        if str(p.relative_to(root)) not in committed
    )[-1]
    (root / decided).unlink()
    (root / undecided).unlink()
    _no_loading(monkeypatch)
    result, _read, _ = _sweep_reading(root, out)
    monkeypatch.undo()
    assert result.removed == 2
    left = [r for r in _comparable(whole) if r.path not in (decided, undecided)]
    assert _comparable(out) == left
    files, counts, _reasons, chars = _tally(out)
    assert files == len(left) == sum(counts.values())
    assert chars == sum(r.chars for r in left)
    store = Store(out)
    assert all(store.has_text(r.sha256) for r in store.load_records() if r.has_text)
