"""``quarry sweep`` of a folder that changed since the last sweep merges the walk with the
store's index, as a watcher's first sweep does: only what differs is read, no record is loaded,
and the store it leaves is the one a sweep that loads every record would leave."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.records import Record
from engine.store import Store
from engine.sweep import Sweeper
from tests.engine.test_dbindex import _count_loads


def _sweep_json(root: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["sweep", str(root), "--out", str(out), "--json", "--no-external"])
    summary: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == (2 if summary["counts"].get("error") else 0)
    return summary


def _comparable(records: list[Record]) -> dict[tuple[str, str], Record]:
    """Records as two ways of sweeping the same folder must agree on them (not on how long a
    read took, why a file was last read, or whether this sweep kept it)."""
    return {r.key: r.evolve(ms=0, why=None, reused=False) for r in records}


def _tree(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    for i in range(12):
        (root / ("sub" if i % 2 else "") / f"f{i:02d}.txt").write_text(f"file {i}\n")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 not really")  # an error: read again each sweep
    an_hour_ago = time.time() - 3600
    for f in [*root.iterdir(), *(root / "sub").iterdir()]:
        os.utime(f, (an_hour_ago, an_hour_ago))


def test_quarry_sweep_of_a_changed_folder_loads_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, out = tmp_path / "root", tmp_path / "store"
    _tree(root)
    for _ in range(2):  # a cold sweep, then one that marks every record reused
        _sweep_json(root, out, capsys)
    (root / "f00.txt").write_text("edited while away\n")
    (root / "sub" / "new.txt").write_text("new while away\n")
    (root / "sub" / "f01.txt").unlink()
    loads = _count_loads(monkeypatch)
    summary = _sweep_json(root, out, capsys)
    assert loads == []  # merged with the index: no record held
    monkeypatch.undo()
    assert summary["files"] == 13 and summary["counts"]["ok"] == 12
    assert summary["counts"]["error"] == 1
    records = {r.path: r for r in Store(out).load_records()}
    assert records["f00.txt"].chars == len("edited while away\n")
    assert "sub/f01.txt" not in records and "sub/new.txt" in records
    assert sum(r.reused for r in records.values()) == 12 - 2  # f00 edited, f01 gone
    # the store is the one a sweep that loads every record leaves from the same start
    assert _comparable(list(records.values())) == _loaded_sweep(root, tmp_path)


def _loaded_sweep(root: Path, tmp_path: Path) -> dict[tuple[str, str], Record]:
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet

    out = tmp_path / "loaded"
    opts = SweepOptions(tools=ToolSet.empty(), out=out)
    with Sweeper([root], opts) as sweeper:
        sweeper.run()
    return _comparable(Store(out).load_records())


_edits = st.lists(
    st.tuples(st.integers(0, 14), st.sampled_from(["edit", "delete", "add"])), max_size=6
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=_edits)
def test_any_changes_meanwhile_give_the_store_a_loaded_sweep_gives(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    edits: list[tuple[int, str]],
) -> None:
    tmp = tmp_path_factory.mktemp("served")
    root, out = tmp / "root", tmp / "store"
    _tree(root)
    _sweep_json(root, out, capsys)
    _sweep_json(root, out, capsys)
    for n, (i, what) in enumerate(edits):
        f = root / ("sub" if i % 2 else "") / f"f{i:02d}.txt"
        if what == "delete":
            f.unlink(missing_ok=True)
        else:
            f.write_text(f"{what} {n}\n")
    summary = _sweep_json(root, out, capsys)
    records = Store(out).load_records()
    assert summary["files"] == len(records)
    assert _comparable(records) == _loaded_sweep(root, tmp)
    again = _sweep_json(root, out, capsys)  # and the next sweep keeps every verdict
    assert again["counts"] == summary["counts"]
    assert _comparable(Store(out).load_records()) == _comparable(records)
