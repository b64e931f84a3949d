"""The walk: links, special files, size cap, ignore rules, the store folder."""

from __future__ import annotations

import os
from pathlib import Path

from engine.records import Reason, Status
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from engine.walk import WalkRules, walk


def _paths(root: Path, rules: WalkRules | None = None) -> dict[str, str]:
    return {e.path: e.kind for e in walk(root, rules or WalkRules())}


def test_links_and_special_files_are_recorded_never_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "dirlink").symlink_to(tmp_path / "outside")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    os.mkfifo(tmp_path / "pipe")
    kinds = _paths(tmp_path)
    assert kinds["link.txt"] == "link" and kinds["dirlink"] == "link" and kinds["loop"] == "link"
    assert kinds["pipe"] == "special"
    assert "dirlink/secret.txt" not in kinds


def test_sweep_records_skips_with_reasons(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "big.txt").write_text("y" * 2000)
    (root / "ok.txt").write_text("fine")
    (root / "l").symlink_to(root / "ok.txt")
    os.mkfifo(root / "fifo")
    sweep([root], SweepOptions(max_bytes=1000, tools=ToolSet.empty()))
    recs = {r.path: r for r in Store(root / ".quarry").load_records()}
    assert (recs["big.txt"].status, recs["big.txt"].reason) == (Status.SKIPPED, Reason.TOO_LARGE)
    assert (recs["l"].status, recs["l"].reason) == (Status.SKIPPED, Reason.LINK)
    assert (recs["fifo"].status, recs["fifo"].reason) == (Status.SKIPPED, Reason.SPECIAL)
    assert recs["ok.txt"].status == Status.OK
    assert "max-bytes" in (recs["big.txt"].error or "")


def test_excludes_and_quarryignore_files(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("k")
    (tmp_path / "drop.log").write_text("d")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("o")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("a")
    (tmp_path / "sub" / "b.md").write_text("b")
    (tmp_path / ".quarryignore").write_text("build/\n# comment\n")
    (tmp_path / "sub" / ".quarryignore").write_text("b.md\n")
    kinds = _paths(tmp_path, WalkRules(excludes=("*.log",)))
    assert sorted(kinds) == ["keep.txt", "sub/a.md"]


def test_editor_temp_files_are_ignored(tmp_path: Path) -> None:
    for name in ("doc.txt", "doc.txt~", ".#doc.txt", ".doc.txt.swp", "~$report.docx", "4913"):
        (tmp_path / name).write_text("t")
    assert sorted(_paths(tmp_path)) == ["doc.txt"]


def test_walk_never_enters_the_store(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    paths = [r.path for r in Store(tmp_path / ".quarry").load_records()]
    assert paths == ["a.txt"]


def test_store_elsewhere_is_not_entered_either(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    out = tmp_path / "custom-store"
    sweep([tmp_path], SweepOptions(out=out, tools=ToolSet.empty()))
    sweep([tmp_path], SweepOptions(out=out, tools=ToolSet.empty()))
    assert [r.path for r in Store(out).load_records()] == ["a.txt"]


def test_output_is_sorted_by_root_and_path(tmp_path: Path) -> None:
    for name in ("b.txt", "a/z.txt", "a/b.txt", "C.txt"):
        p = tmp_path / name
        p.parent.mkdir(exist_ok=True)
        p.write_text(name)
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    lines = (tmp_path / ".quarry" / "extract.jsonl").read_text().splitlines()
    paths = [line.split('"path":"')[1].split('"')[0] for line in lines]
    assert paths == sorted(paths)
