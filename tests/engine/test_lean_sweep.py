"""A cold sweep holds none of its records (issue 26: ten million files must fit).

A whole sweep into a store with no record, by a sweeper that lets its records go after it
(``quarry sweep``, :func:`engine.sweep.sweep`), commits each record to the index as it
decides it and keeps only a count and a tally (:attr:`engine.run.Run.lean`): the records of
hashed reads alone are held, for the copies planned after them. What it writes must be what
a sweep holding every record writes: the same records, texts, counts and stat index. Its
index failing or deleted under it must lose nothing a later sweep cannot find again, and
never leave a record without its text.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import run as run_mod
from engine.db import DB, RecordDB
from engine.events import Notice
from engine.records import Record, Status
from engine.resume import Ledger
from engine.statindex import NAME as STAT_INDEX
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult, sweep
from engine.tools import ToolSet

NONE = ToolSet.empty()
BIG = run_mod.DEDUP_BYTES + 10


def _tree(where: Path) -> Path:
    root = where / "docs"
    for i in range(60):
        folder = root / f"d{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:03}.txt").write_text(f"file {i}\n" + "words " * i)
    (root / "same.txt").write_text("file 7\n" + "words " * 7)  # a copy of d3/f007.txt
    big = b"big " * (BIG // 4)
    for name in ("big1.txt", "big2.txt", "big3.log"):  # same size: hashed before read
        (root / name).write_bytes(big)
    (root / "empty.txt").write_bytes(b"")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4\n broken beyond repair")
    (root / "link.txt").symlink_to(root / "same.txt")
    for n, path in enumerate(sorted(root.rglob("*"))):
        os.utime(path, ns=(1_600_000_000_000_000_000 + n,) * 2, follow_symlinks=False)
    return root


def _comparable(out: Path) -> list[Record]:
    return [r.evolve(root="/", ms=0, why=None) for r in Store(out).load_records()]


def _verdicts(out: Path) -> list[Record]:
    """The records as a resumed sweep compares with an uninterrupted one (``reused`` too)."""
    return [r.evolve(reused=False) for r in _comparable(out)]


def _texts(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / "extract").glob("*/*.txt")}


def _counts(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "extract.summary.json").read_text())
    keys = ("files", "counts", "chars", "reasons", "quality", "readers", "read_without")
    return {k: summary[k] for k in keys}


def _no_record_without_text(out: Path) -> None:
    for r in Store(out).load_records():
        if r.status == Status.OK and r.sha256:
            assert (out / "extract" / r.sha256[:2] / f"{r.sha256}.txt").is_file(), r.path


def _often_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """The tree, an uninterrupted sweep of it (the reference), and where the next goes: its
    runs committing every 4 records (many moments for the index to go)."""
    root = _tree(tmp_path)
    reference = tmp_path / "reference"
    sweep([root], SweepOptions(out=reference, tools=NONE, workers=1))
    monkeypatch.setattr(run_mod.Run, "BATCH", 4)
    monkeypatch.setattr(Ledger, "COMMIT_S", 0.0)
    return root, reference, tmp_path / "out"


def _sweep_noting(root: Path, out: Path) -> tuple[SweepResult, list[Notice]]:
    notices: list[Notice] = []
    result = sweep(
        [root],
        SweepOptions(out=out, tools=NONE, workers=1),
        lambda e: notices.append(e) if isinstance(e, Notice) else None,
    )
    return result, notices


def _full_disk() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL
    return exc


def failing_put(monkeypatch: pytest.MonkeyPatch, at: int = 5, exc: Exception | None = None) -> Any:
    """The index's writes failing at the ``at``-th batch (``exc``: a disk I/O error unless
    given); the real one returned, to put back."""
    put, calls = RecordDB.put, [0]

    def failing(db: RecordDB, records: Any) -> None:
        calls[0] += 1
        if calls[0] == at:
            raise exc or sqlite3.OperationalError("disk I/O error")
        put(db, records)

    monkeypatch.setattr(RecordDB, "put", failing)
    return put


class Runs:
    """The runs a sweep made, caught as they end (``lean``, what each held)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[bool, int, int]] = []
        execute = run_mod.Run.execute

        def caught(run: run_mod.Run) -> Any:
            new = execute(run)
            self.seen.append((run.lean, len(new), run.decided))
            return new

        monkeypatch.setattr(run_mod.Run, "execute", caught)


def test_a_cold_sweep_holds_no_record_and_writes_what_a_sweep_holding_them_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    runs = Runs(monkeypatch)
    held, lean = tmp_path / "held", tmp_path / "lean"
    # a sweeper that keeps its records for another run holds them all (the reference)
    with Sweeper([root], SweepOptions(out=held, tools=NONE, workers=1)) as sweeper:
        by_held = sweeper.run()
    by_lean = sweep([root], SweepOptions(out=lean, tools=NONE, workers=1))
    assert by_lean.extracted == by_held.extracted  # (one read for the copies, not three)
    (was_lean, kept, decided), (now_lean, held_now, decided_now) = runs.seen
    assert not was_lean and kept == decided
    # the lean run held none of its 66 records (the three big files, hashed before their
    # read, are remembered only for the copies planned after them)
    assert now_lean and decided_now == decided and held_now == 0, held_now
    assert _comparable(lean) == _comparable(held)
    assert _texts(lean) == _texts(held)
    assert _counts(lean) == _counts(held)
    assert (lean / STAT_INDEX).exists() == (held / STAT_INDEX).exists()
    _no_record_without_text(lean)
    # the copies took one read's verdict, as a held run gives them
    recs = {r.path: r for r in Store(lean).load_records()}
    assert recs["big1.txt"].sha256 == recs["big2.txt"].sha256 == recs["big3.log"].sha256
    again = sweep([root], SweepOptions(out=lean, tools=NONE, workers=1))
    assert again.extracted <= 1  # (the broken PDF, read again by every full sweep)


@pytest.mark.parametrize(
    ("exc", "why"),
    [(None, "the store's index failed (disk I/O error)"),
     (_full_disk(), "No space left on device")],
)  # fmt: skip
def test_an_index_that_fails_mid_sweep_loses_nothing_a_later_sweep_cannot_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception | None, why: str
) -> None:
    """The run stops there and the sweep fails as the machine's (``quarry sweep`` exits 3
    saying why: a first sweep onto a disk that filled said "interrupted" and exited 130, as
    if Ctrl-C had stopped it, and "decided and written" of records that went with the
    index)."""
    root, reference, out = _often_committed(tmp_path, monkeypatch)
    put = failing_put(monkeypatch, exc=exc)
    result, notices = _sweep_noting(root, out)
    assert result.interrupted
    assert result.failed.startswith(f"cannot write the store {out}: {why}; "), result.failed
    said = " ".join(n.message for n in notices)
    assert "index failed" in said and "read again by the next sweep" in said, said
    assert "decided and written" not in said, said
    if (out / "extract.jsonl").exists():
        _no_record_without_text(out)
    monkeypatch.setattr(RecordDB, "put", put)
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _verdicts(out) == _verdicts(reference)
    assert _texts(out) == _texts(reference)  # (the texts no record named: collected)


def _index_deleted_at_third_commit(monkeypatch: pytest.MonkeyPatch, out: Path) -> list[int]:
    """The store's index removed right after the sweep's third commit, as an operator (or a
    cleaner) might; the commits counted in the list returned."""
    journal = Ledger.journal
    calls = [0]

    def deleting(ledger: Ledger, records: Any) -> None:
        journal(ledger, records)
        calls[0] += 1
        if calls[0] == 3:
            for name in (DB, f"{DB}-wal", f"{DB}-shm"):
                (out / name).unlink(missing_ok=True)

    monkeypatch.setattr(Ledger, "journal", deleting)
    return calls


def test_an_index_deleted_mid_sweep_is_rebuilt_with_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, reference, out = _often_committed(tmp_path, monkeypatch)
    calls = _index_deleted_at_third_commit(monkeypatch, out)
    result, notices = _sweep_noting(root, out)
    assert calls[0] > 3 and not result.interrupted
    assert any("deleted or replaced" in n.message for n in notices), notices
    assert _verdicts(out) == _verdicts(reference)
    assert _texts(out) == _texts(reference)
    with RecordDB.open_reader(out / DB) as db:  # rebuilt from the records, all of them
        assert len(db) == len(_comparable(reference))


def test_an_index_deleted_and_unreadable_mid_sweep_stops_the_sweep_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index deleted under the sweep, and the file it still has open failing to read
    back: nothing crashes, the sweep stops there saying why (not "interrupted", as if Ctrl-C
    had stopped it), no record is written without its text, and the next sweep finds the
    rest."""
    from engine import dbindex

    root, reference, out = _often_committed(tmp_path, monkeypatch)
    _index_deleted_at_third_commit(monkeypatch, out)

    def unreadable(self: Any, size: int = 50_000) -> Any:
        raise dbindex.IndexGone("the store's index failed: disk I/O error")

    monkeypatch.setattr(dbindex.ServedRecords, "_batches", unreadable)
    result, notices = _sweep_noting(root, out)
    assert result.interrupted and "its index was deleted or replaced" in result.failed
    assert any("index failed during the sweep" in n.message for n in notices), notices
    _no_record_without_text(out)
    monkeypatch.undo()
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _verdicts(out) == _verdicts(reference)
    assert _texts(out) == _texts(reference)
