"""A sweep of a big store whose files mostly changed holds none of its records (issue 26).

A folder copied without its times, restored from a backup or rewritten whole differs from
its index in every file: the merge of the walk with the index (:mod:`engine.merge`) finds
them all to look at. A store of at most :data:`engine.merge.HOLD_AT_MOST` records is then
loaded whole (a query a file costs more than one pass); a bigger one is swept by a lean run
(:attr:`engine.run.Run.lean`) that asks the index for each record and commits each decision,
remembering only its last reads for their copies. What it writes must be what a sweep
holding every record writes: the same records, texts and counts.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import merge
from engine import run as run_mod
from engine.db import RecordDB
from engine.resume import Ledger
from engine.sweep import Sweeper, SweepOptions, sweep
from tests.engine.test_dbindex import _count_loads
from tests.engine.test_lean_sweep import (
    BIG,
    NONE,
    Runs,
    _comparable,
    _counts,
    _no_record_without_text,
    _sweep_noting,
    _texts,
    _tree,
    failing_put,
)

LATER = 1_700_000_000_000_000_000
"""A time after every file's (``_tree`` sets them in 2020)."""


def _swept_twice(where: Path) -> tuple[Path, Path]:
    """The tree and its store, swept cold and once more (every record marked reused)."""
    root, out = _tree(where), where / "store"
    for _ in range(2):
        sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    return root, out


def _held_sweep(root: Path, out: Path, rehash: bool = False) -> None:
    """The reference: a sweeper that keeps its records holds them all."""
    opts = SweepOptions(out=out, tools=NONE, workers=1, rehash=rehash)
    with Sweeper([root], opts) as sweeper:
        sweeper.run()


def _copy_store(out: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(out, to, symlinks=True)
    return to


def _touch_all(root: Path, at: int = LATER) -> None:
    for n, path in enumerate(sorted(root.rglob("*"))):
        os.utime(path, ns=(at + n,) * 2, follow_symlinks=False)


def _lean_runs(monkeypatch: pytest.MonkeyPatch, memo: int = run_mod.LEAN_MEMO) -> Runs:
    monkeypatch.setattr(merge, "HOLD_AT_MOST", 10)  # (the tree's 67 records: a big store)
    monkeypatch.setattr(merge, "SAMPLE", 10)  # (where a small store's merge gives up)
    monkeypatch.setattr(run_mod, "LEAN_MEMO", memo)
    return Runs(monkeypatch)


def test_every_file_touched_is_hashed_not_read_and_no_record_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = _swept_twice(tmp_path)
    reference = _copy_store(out, tmp_path / "reference")
    _touch_all(root)
    _held_sweep(root, reference)
    runs = _lean_runs(monkeypatch)
    loads = _count_loads(monkeypatch)
    result = sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert loads == []  # merged with the index, and no record loaded after it
    ((lean, held, decided),) = runs.seen
    assert lean and held == 0 and decided == _counts(out)["files"]  # (each file decided)
    assert result.extracted <= 1  # (the broken PDF, read again by every full sweep)
    assert _comparable(out) == _comparable(reference)
    assert _texts(out) == _texts(reference)
    assert _counts(out) == _counts(reference)
    _no_record_without_text(out)


def test_a_store_of_few_records_is_still_loaded_whole_for_a_mass_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = _swept_twice(tmp_path)
    _touch_all(root)
    runs = Runs(monkeypatch)
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    ((lean, held, decided),) = runs.seen  # (67 records: under HOLD_AT_MOST, held)
    assert not lean and held == decided
    _touch_all(root, LATER + 10**12)
    monkeypatch.setattr(merge, "SAMPLE", 10)
    loads = _count_loads(monkeypatch)
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert loads == ["_load"]  # (most of the first rows differ: the merge gives up)


def _change(root: Path, edits: list[tuple[int, str]]) -> None:
    """Apply ``edits`` (file number, what) to ``_tree``'s files, then touch every file."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for n, (i, what) in enumerate(edits):
        f = files[i % len(files)]
        if what == "delete":
            f.unlink(missing_ok=True)
        elif what == "edit":
            f.write_text(f"edited {n}\n")
        elif what == "copy":  # a new copy of a file (its content: perhaps read this run)
            if f.exists():
                (f.parent / f"copy{n}-{f.name}").write_bytes(f.read_bytes())
        elif what == "big":  # new content, the big files' size: hashed, one read for copies
            f.write_bytes(str(n).encode().ljust(BIG, b"."))
    _touch_all(root)


_edits = st.lists(
    st.tuples(st.integers(0, 70), st.sampled_from(["edit", "delete", "copy", "big"])),
    max_size=40,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=_edits, memo=st.integers(1, 4))
@example(edits=[(n, "big") for n in range(0, 40, 4)] + [(n, "copy") for n in range(40)], memo=1)
def test_any_mass_change_gives_the_store_a_sweep_holding_every_record_gives(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    edits: list[tuple[int, str]],
    memo: int,
) -> None:
    tmp = tmp_path_factory.mktemp("mass")
    root, out = _swept_twice(tmp)
    reference = _copy_store(out, tmp / "reference")
    _change(root, edits)
    _held_sweep(root, reference)
    with monkeypatch.context() as patched:
        runs = _lean_runs(patched, memo)  # (a memo of 1 to 4 reads: copies read again)
        sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
        ((lean, held, _decided),) = runs.seen
    assert lean and held == 0
    assert _comparable(out) == _comparable(reference)
    assert _texts(out) == _texts(reference)
    assert _counts(out) == _counts(reference)
    _no_record_without_text(out)
    again: Any = sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert again.extracted <= 1  # every verdict stands (the broken PDF is read again)


def test_a_rehash_of_a_big_store_hashes_every_file_and_holds_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = _swept_twice(tmp_path)
    reference = _copy_store(out, tmp_path / "reference")
    hidden = root / "d1" / "f001.txt"  # changed, its size and time put back: only a hash sees
    was = hidden.stat()
    hidden.write_text(hidden.read_text().upper())
    os.utime(hidden, ns=(was.st_atime_ns, was.st_mtime_ns))
    _held_sweep(root, reference, rehash=True)
    runs = _lean_runs(monkeypatch)
    loads = _count_loads(monkeypatch)
    result = sweep([root], SweepOptions(out=out, tools=NONE, workers=1, rehash=True))
    assert loads == []
    ((lean, held, _decided),) = runs.seen
    assert lean and held == 0
    assert result.extracted <= 2  # the hidden change (and the broken PDF)
    records = {r.path: r for r in _comparable(out)}
    assert records["d1/f001.txt"].sha256 == hashlib.sha256(hidden.read_bytes()).hexdigest()
    assert _comparable(out) == _comparable(reference)
    assert _texts(out) == _texts(reference)
    assert _counts(out) == _counts(reference)


def test_an_index_failing_under_a_lean_mass_change_loses_nothing_a_later_sweep_cannot_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = _swept_twice(tmp_path)
    reference = _copy_store(out, tmp_path / "reference")
    _change(root, [(n, "edit") for n in range(0, 60, 3)])
    _held_sweep(root, reference)
    _lean_runs(monkeypatch)
    monkeypatch.setattr(run_mod.Run, "BATCH", 4)  # (committed often: it fails part way)
    monkeypatch.setattr(Ledger, "COMMIT_S", 0.0)
    put = failing_put(monkeypatch)
    result, notices = _sweep_noting(root, out)
    assert result.interrupted
    said = " ".join(n.message for n in notices)
    assert "index failed" in said and "read again by the next sweep" in said, said
    _no_record_without_text(out)
    monkeypatch.setattr(RecordDB, "put", put)
    sweep([root], SweepOptions(out=out, tools=NONE, workers=1))
    assert _comparable(out) == _comparable(reference)
    assert _texts(out) == _texts(reference)
