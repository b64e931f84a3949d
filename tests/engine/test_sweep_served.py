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


def test_quarry_sweep_verify_of_a_changed_folder_checks_every_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--verify`` checks every text: the merge, which keeps a record unseen when its file
    and text are there, is not taken (it was, once ``quarry sweep`` merged)."""
    root, out = tmp_path / "root", tmp_path / "store"
    _tree(root)
    for _ in range(2):
        _sweep_json(root, out, capsys)
    sha = {r.path: r for r in Store(out).load_records()}["f02.txt"].sha256 or ""
    Store(out).text_path(sha).write_text("not what f02.txt holds\n")
    (root / "f04.txt").write_text("edited\n")  # the folder changed too: no quick sweep
    code = main(["sweep", str(root), "--out", str(out), "--verify", "--quiet", "--no-external"])
    assert code == 2  # (bad.pdf)
    assert Store(out).read_text(sha) == "file 2\n"


def test_the_sweeps_after_a_merge_leave_the_stat_index_and_drop_only_unnamed_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merged sweep wrote new records (kept as they are only once a sweep marks them
    reused); the sweep after it leaves ``extract.stat`` from its walk, so the next is quick.
    Without listing every text, each merged sweep drops the texts its changes left unnamed
    once the history (here one version a file) lets them go, and no other."""
    from engine import history, merge
    from engine.statindex import NAME
    from engine.sweep import SweepOptions, sweep
    from engine.tools import ToolSet

    monkeypatch.setenv(history.VERSIONS_ENV, "1")
    monkeypatch.setattr(merge, "READ_ALL_ABOVE", 1.0)  # (a change of 13 files is not few)
    root, out = tmp_path / "root", tmp_path / "store"
    _tree(root)
    opts = SweepOptions(tools=ToolSet.empty(), out=out)
    sweep([root], opts)
    assert not sweep([root], opts).quick and (out / NAME).is_file()
    assert sweep([root], opts).quick
    texts = sorted(p.name for p in (out / "extract").glob("*/*.txt"))

    def sha(path: str) -> str:
        return {r.path: r for r in Store(out).load_records()}[path].sha256 or ""

    def edit(name: str, text: str) -> None:
        (root / name).write_text(text)
        an_hour_ago = time.time() - 3600 + len(text)  # (older than the sweep's racy margin)
        os.utime(root / name, (an_hour_ago, an_hour_ago))

    first_text = sha("f04.txt")
    edit("f04.txt", "edited\n")
    loads = _count_loads(monkeypatch)
    gc = _count_calls(monkeypatch, Store, "gc")
    first = sweep([root], opts)  # merged: f04 read; its first text kept by the history
    assert not first.quick and first.extracted == 2  # (f04 and bad.pdf)
    assert Store(out).has_text(first_text) and not (out / NAME).exists()  # (not yet reused)
    second_text = sha("f04.txt")
    edit("f04.txt", "edited again\n")
    second = sweep([root], opts)  # merged: the history keeps the second text, not the first
    assert not Store(out).has_text(first_text) and Store(out).has_text(second_text)
    (root / "f06.txt").unlink()
    third = sweep([root], opts)  # f04 marked reused, f06's record gone: the index left
    assert not third.quick and (out / NAME).is_file()
    assert sweep([root], opts).quick
    assert loads == [] and gc == []  # no record loaded, no text listed
    now = sorted(p.name for p in (out / "extract").glob("*/*.txt"))
    gone = {f"{first_text}.txt"}
    added = {f"{second_text}.txt", f"{sha('f04.txt')}.txt"}
    assert set(now) == (set(texts) - gone) | added
    assert second.summary.counts == first.summary.counts


def _count_calls(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[str]:
    calls: list[str] = []
    real = getattr(cls, name)

    def counted(self: object, *args: Any, _real: Any = real) -> Any:
        calls.append(name)
        return _real(self, *args)

    monkeypatch.setattr(cls, name, counted)
    return calls


def test_a_new_file_gone_before_it_is_read_leaves_no_record_and_no_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The merge hands the run a file the index has no record of; it is deleted before the
    run reads it, so the run decides nothing for it: nothing to drop (the sweep once looked
    its record up to drop it and failed with a KeyError)."""
    from engine import merge

    root, out = tmp_path / "root", tmp_path / "store"
    _tree(root)
    for _ in range(2):
        _sweep_json(root, out, capsys)
    (root / "new.txt").write_text("here for the walk only\n")
    real = merge.merge

    def then_deleted(*args: Any, **kwargs: Any) -> merge.Merged:
        merged = real(*args, **kwargs)
        (root / "new.txt").unlink()
        return merged

    monkeypatch.setattr(merge, "merge", then_deleted)
    summary = _sweep_json(root, out, capsys)
    assert summary["files"] == 13
    assert "new.txt" not in {r.path for r in Store(out).load_records()}
