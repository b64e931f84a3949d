"""A watching session's rescan merges the walk with the index (issue 26).

A rescan (every five minutes, and after the kernel's event queue overflowed) walks every
root and brings the store up to date without being a full sweep: an ``error`` keeps its
verdict. Its store's records are served by the index (:mod:`engine.dbindex`), and the rescan
used to read every one of them into memory first (a million records: gigabytes, every five
minutes) and make an entry and a key of every file walked. It now merges the walk with the
index in key order (:mod:`engine.merge`) and runs only the files that differ; what it
writes must be what the rescan holding every record wrote.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import dbindex
from engine import run as run_mod
from engine.dbindex import IndexedRecords
from engine.records import Record
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions, SweepResult
from engine.tools import ToolSet

OPTS = SweepOptions(tools=ToolSet.empty(), workers=1)


def _tree(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    for i in range(12):
        (root / ("sub" if i % 2 else "") / f"f{i:02d}.txt").write_text(f"file {i}\n")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 not really")  # an error: kept by a rescan
    (root / "empty.txt").write_bytes(b"")
    an_hour_ago = time.time() - 3600
    for f in [*root.iterdir(), *(root / "sub").iterdir()]:
        os.utime(f, (an_hour_ago, an_hour_ago))


def _edit(root: Path, edits: list[tuple[int, str]]) -> None:
    for n, (i, what) in enumerate(edits):
        f = root / ("sub" if i % 2 else "") / f"f{i:02d}.txt"
        if what == "delete":
            f.unlink(missing_ok=True)
        elif what == "touch":
            if f.exists():
                os.utime(f, (time.time() - 60 + n, time.time() - 60 + n))
        elif what == "copy":
            (root / f"copy{n}.txt").write_text(f"file {i}\n")  # another file's content
        else:
            f.write_text(f"{what} {n}\n")


class _Watched:
    """A sweeper as a watching session holds it: its first sweep, then its records served
    by the index (none held)."""

    def __init__(self, root: Path, out: Path) -> None:
        self.sweeper = Sweeper([root], replace(OPTS, out=out), quick=True, served=True)
        self.sweeper.__enter__()
        self.sweeper.from_index = True
        self.sweeper.run()
        assert isinstance(self.sweeper.index, IndexedRecords)

    def rescan(self) -> SweepResult:
        return self.sweeper.run(full=False)

    def close(self) -> dict[tuple[str, str], Record]:
        out = self.sweeper.store.out
        self.sweeper.__exit__(None, None, None)
        return {r.key: r.evolve(ms=0) for r in Store(out).load_records()}


def _by_path(records: dict[tuple[str, str], Record]) -> dict[str, Record]:
    return {path: r.evolve(root="/") for (_root, path), r in records.items()}


class _Spies:
    """What a rescan asked of the index, and the files its run was given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read_all = 0
        self.run_files: list[int] = []
        read_all, init = dbindex.ServedRecords.read_all, run_mod.Run.__init__

        def counted(records: Any) -> None:
            self.read_all += 1
            read_all(records)

        def made(run: run_mod.Run, ctx: Any, entries: Any, *a: Any, **k: Any) -> None:
            self.run_files.append(len(entries))
            init(run, ctx, entries, *a, **k)

        monkeypatch.setattr(dbindex.ServedRecords, "read_all", counted)
        monkeypatch.setattr(run_mod.Run, "__init__", made)


_edits = st.lists(
    st.tuples(st.integers(0, 13), st.sampled_from(["edit", "delete", "touch", "copy", "add"])),
    max_size=6,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=_edits)
@example(edits=[])
@example(edits=[(1, "edit"), (2, "delete"), (3, "touch"), (5, "copy"), (13, "add")])
def test_a_rescan_reads_no_record_and_leaves_what_a_rescan_holding_them_leaves(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, str]]
) -> None:
    tmp = tmp_path_factory.mktemp("rescan")
    root = tmp / "root"
    _tree(root)
    served, held = _Watched(root, tmp / "served"), _Watched(root, tmp / "held")
    _edit(root, edits)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Sweeper, "_rescan_served", lambda self: None)  # (as before)
        spies = _Spies(patched)
        by_held = held.rescan()
        walked = sum(1 for p in root.rglob("*") if p.is_file())
        assert spies.read_all == 1 and spies.run_files[-1] == walked  # every record, every file
    with pytest.MonkeyPatch.context() as patched:
        spies = _Spies(patched)
        by_served = served.rescan()
        assert spies.read_all == 0  # no record read but those of the files that differ
        assert spies.run_files[-1] <= len(edits) + 1  # (and the error, looked at again)
    assert (by_served.extracted, by_served.reused, by_served.removed, by_served.errors) == (
        by_held.extracted,
        by_held.reused,
        by_held.removed,
        by_held.errors,
    )
    assert _by_path(served.close()) == _by_path(held.close())
    shutil.rmtree(tmp)


def test_a_merge_failing_part_way_leaves_the_usual_rescan_to_count_what_it_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import sweep as sweep_mod

    root = tmp_path / "root"
    _tree(root)
    served, held = _Watched(root, tmp_path / "served"), _Watched(root, tmp_path / "held")
    (root / "f00.txt").write_text("edited\n")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Sweeper, "_rescan_served", lambda self: None)
        by_held = held.rescan()
    real = sweep_mod.rows_of

    def failing(db: Any, of: str, past: int | None = None) -> Any:
        for n, row in enumerate(real(db, of, past)):
            if n == 6:  # (after records flagged reused were committed, a batch of one)
                raise sqlite3.DatabaseError("database disk image is malformed")
            yield row

    monkeypatch.setattr(sweep_mod._Journaled, "BATCH", 1)
    monkeypatch.setattr(sweep_mod, "rows_of", failing)
    spies = _Spies(monkeypatch)
    by_served = served.rescan()
    assert spies.read_all == 1  # (the usual rescan, after the merge failed)
    assert by_served.summary.reused == by_held.summary.reused > 0
    assert by_served.summary.counts == by_held.summary.counts
    assert _by_path(served.close()) == _by_path(held.close())
