"""The default exclusions: editor, office and OS droppings and version-control folders get no
record, are counted in the summary (the file and the printed table), can be turned off with
``--no-default-excludes`` on every verb that sweeps, and a watched folder ends as a fresh sweep
of it with the same rules would leave it. A name that is only ``~`` is a document."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.records import Summary
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from tests.engine.watchkit import watched

QUARRY = [sys.executable, "-m", "engine"]
OLD_NS = 1_600_000_000_000_000_000
DROPPINGS = ["b.tmp", "c.tmp", "notes.txt~", ".DS_Store", "Thumbs.db", "x.part", "4913"]
LEFT_OUT = {"*.tmp": 2, "?*~": 1, ".DS_Store": 1, "Thumbs.db": 1, "*.part": 1, "4913": 1}


def _tree(root: Path) -> Path:
    root.mkdir()
    for name in ["a.txt", "~", *DROPPINGS]:
        (root / name).write_text(f"text of {name}\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [*QUARRY, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )


def _paths(out: Path) -> list[str]:
    return sorted(r.path for r in Store(out).load_records())


def _summary(out: Path) -> Summary:
    summary = Store(out).load_summary()
    assert summary is not None
    return summary


def test_a_sweep_counts_what_it_left_out_and_records_a_file_named_tilde(tmp_path: Path) -> None:
    root = _tree(tmp_path / "r")
    for p in [root, *root.rglob("*")]:  # long ago: a file modified just now is never trusted
        os.utime(p, ns=(OLD_NS, OLD_NS), follow_symlinks=False)
    opts = SweepOptions(tools=ToolSet.empty())
    sweep([root], opts)
    out = root / ".quarry"
    assert _paths(out) == ["a.txt", "~"]  # ~ is a document: 818 files, 818 records
    assert _summary(out).left_out == {**LEFT_OUT, ".git/": 1}
    # the quick sweep (nothing changed) writes the same counts, from its own walk
    # (the second sweep marks the records reused; the index then vouches for them)
    assert any(sweep([root], opts).quick for _ in range(3))
    assert _summary(out).left_out == {**LEFT_OUT, ".git/": 1}
    (root / "d.tmp").write_text("one more")
    sweep([root], opts)
    assert _summary(out).left_out["*.tmp"] == 3


def test_without_the_default_exclusions_every_name_gets_a_record(tmp_path: Path) -> None:
    root = _tree(tmp_path / "r")
    (root / ".quarryignore").write_text("nothing\n")  # the rules themselves: never a record
    sweep([root], SweepOptions(tools=ToolSet.empty(), default_excludes=False))
    out = root / ".quarry"
    assert _paths(out) == sorted([".git/HEAD", "a.txt", "~", *DROPPINGS])
    assert _summary(out).left_out == {}
    sweep([root], SweepOptions(tools=ToolSet.empty()))  # on again: their records go
    assert _paths(out) == ["a.txt", "~"]


def test_the_command_line_states_counts_and_turns_off_the_exclusions(tmp_path: Path) -> None:
    root = _tree(tmp_path / "r")
    for verb in ("sweep", "watch", "retry", "open"):
        helped = _run(verb, "--help")
        assert "--no-default-excludes" in helped.stdout and "Thumbs.db" in helped.stdout, verb
    done = _run("sweep", str(root), "--no-external")
    assert done.returncode == 0, done.stderr
    assert "left out by default: 7 files" in done.stdout
    assert "*.tmp 2" in done.stdout and ".git/ 1" in done.stdout
    assert "--no-default-excludes keeps them" in done.stdout
    as_json = _run("sweep", str(root), "--no-external", "--json")
    assert Summary.from_json(as_json.stdout.encode()).left_out == {**LEFT_OUT, ".git/": 1}
    # a retry of a dropping says why it has no record, and reads it when asked to
    kept_out = _run("retry", str(root / "b.tmp"), "--no-external")
    assert "left out" in kept_out.stdout and "*.tmp" in kept_out.stdout, kept_out.stdout
    assert "no longer exists" not in kept_out.stdout
    read = _run("retry", str(root / "b.tmp"), "--no-external", "--no-default-excludes")
    assert read.stdout.startswith("ok") and "b.tmp" in read.stdout, read.stdout
    everything = _run("sweep", str(root), "--no-external", "--no-default-excludes")
    assert everything.returncode == 0, everything.stderr
    assert "left out by default" not in everything.stdout
    assert len(_paths(root / ".quarry")) == 2 + len(DROPPINGS) + 1


@pytest.mark.parametrize("poll", [False, True], ids=["native", "polling"])
@pytest.mark.parametrize("defaults", [True, False], ids=["defaults", "no-defaults"])
def test_a_watched_folder_ends_as_a_fresh_sweep_with_the_same_rules(
    tmp_path: Path, defaults: bool, poll: bool
) -> None:
    root = _tree(tmp_path / "r")
    opts = SweepOptions(tools=ToolSet.empty(), workers=2, default_excludes=defaults)
    with watched(root, poll, opts) as w:
        # an editor's atomic save: a temp file renamed over the document a moment later
        (root / "doc.txt.tmp").write_text("new text\n")
        os.replace(root / "doc.txt.tmp", root / "doc.txt")
        (root / "~").write_text("the tilde document, edited\n")
        (root / "later.swp").write_text("swap")
        (root / ".git" / "ORIG_HEAD").write_text("x")
        (root / "zz-last.txt").write_text("written last: its record says all came before")
        w.wait("the last file", lambda recs: "zz-last.txt" in recs)
        watcher = w.session.watcher
        assert watcher is not None
        w.until("every change applied", watcher.idle)
        got = sorted(w.records())
    assert "doc.txt.tmp" not in got  # renamed before its batch: never a record
    fresh = tmp_path / "fresh"
    sweep([root], SweepOptions(out=fresh, tools=ToolSet.empty(), default_excludes=defaults))
    assert got == _paths(fresh)
    assert ("later.swp" in got) is not defaults and "~" in got
    assert (".git/ORIG_HEAD" in got) is not defaults  # the polling observer lists .git then
