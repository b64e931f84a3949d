"""The walk ahead: a plain ``quarry sweep``'s walk, made by a forked child while the engine is
imported, is taken only when it is the very walk the sweep would make, and then is that walk.

These tests fork the test process (as the ``quarry`` script forks itself); everything the
child runs (:mod:`engine.walk`) is imported here first, so the child imports nothing.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import engine.sweep
import engine.walk
from engine import ahead
from engine.cli import build_parser, main, options_from
from engine.errors import UsageError
from engine.store import Store
from engine.summary import started_ns
from engine.sweep import Sweeper
from engine.tools import ToolSet
from engine.walk import Listing, WalkRules, walk
from tests.waiting import alive, until

OLD_NS = 1_600_000_000_000_000_000

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux's memfd_create")


@pytest.fixture(autouse=True)
def _no_child_left() -> Iterator[None]:
    yield
    ahead.discard()


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "sub" / "b.html").write_text("<p>bravo</p>")
    (root / "sub" / "deep" / "c.log").write_text("charlie\n")
    (root / "empty.txt").write_bytes(b"")
    (root / "notes.txt~").write_text("a dropping")
    (root / "sub" / ".quarryignore").write_text("*.html\n")
    (root / os.fsdecode(b"caf\xe9.txt")).write_text("not UTF-8 in its name")
    os.symlink("a.txt", root / "link")
    os.mkfifo(root / "pipe")
    other = root / "old" / ".quarry"  # another store: never entered
    other.mkdir(parents=True)
    (other / "quarry-store.json").write_text("{}")
    return root


def _rules(argv: list[str]) -> WalkRules:
    wanted = ahead.plan(argv)
    assert wanted is not None
    return ahead.rules_of(wanted)


def test_the_walk_ahead_is_the_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    ahead.start(["sweep", str(root), "--exclude", "*.log", "-q"])
    wanted = ahead.plan(["sweep", str(root), "--exclude", "*.log"])
    assert wanted is not None
    rules = ahead.rules_of(wanted)
    got = ahead.take([str(root)], rules)
    assert got is not None
    listings, started = got
    assert [ahead.columns(x) for x in listings] == [ahead.columns(walk(root, rules))]
    assert os.fsdecode(b"caf\xe9.txt") in listings[0].paths
    assert "sub/deep/c.log" not in listings[0].paths  # the exclude was the child's too
    assert listings[0].left_out == {"?*~": 1}  # counted by the child, for the summary
    assert started <= os.stat(root).st_mtime + 1e9  # a time, taken before the child forked
    assert ahead.take([str(root)], rules) is None  # once


def test_another_walk_is_not_taken_and_its_child_is_ended(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    ahead.start(["sweep", str(root)])
    pending = ahead._pending
    assert pending is not None
    assert ahead.take([str(root)], WalkRules(("*.txt",), (str(root / ".quarry"),))) is None
    with pytest.raises(ChildProcessError):  # killed and reaped: no child is left walking
        os.waitpid(pending.pid, 0)


def test_a_child_that_fails_leaves_the_walk_to_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)

    def broken(*_: object) -> Listing:
        raise OSError("the child's walk failed")

    monkeypatch.setattr(engine.walk, "walk", broken)  # before the fork: the child's walk
    ahead.start(["sweep", str(root)])
    monkeypatch.undo()
    rules = _rules(["sweep", str(root)])  # the very walk: only the child's failure says no
    assert ahead.take([str(root)], rules) is None


def test_a_sweep_takes_the_walk_made_ahead_and_starts_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    for p in [root, *root.rglob("*")]:  # long ago: a file modified just now is never trusted
        os.utime(p, ns=(OLD_NS, OLD_NS), follow_symlinks=False)
    out = tmp_path / "store"
    argv = ["sweep", str(root), "--out", str(out), "--no-external", "-q"]
    loads: list[bool] = []
    load = Sweeper._load
    monkeypatch.setattr(Sweeper, "_load", lambda self: (loads.append(True), load(self))[1])

    def swept_ahead() -> bool:
        """One sweep with a walk made ahead, which it must take (its own walk would fail);
        whether it was a quick one."""
        loads.clear()
        ahead.start(argv)
        pending = ahead._pending
        assert pending is not None
        with monkeypatch.context() as m:
            m.setattr(engine.sweep, "walk", _no_walk)  # after the fork: the parent's own
            assert main(argv) == 0
        assert ahead._pending is None
        summary = Store(out).load_summary()
        assert summary is not None
        # the racy reference is never after the walk (to the summary's microsecond)
        assert started_ns(summary) <= pending.started * 1e9 + 1000
        return not loads

    assert not swept_ahead()  # the first sweep: a usual one, which writes the stat index
    for _ in range(3):
        if swept_ahead():
            break
    else:
        pytest.fail("no quick sweep")


def _no_walk(*_: object) -> Listing:
    raise AssertionError("the sweep walked again")


def test_the_plain_forms_are_walked_ahead(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    for argv in (
        ["sweep", str(root)],
        ["sweep", str(root), "--json"],
        ["sweep", str(root), "-q", "--out", str(tmp_path / "s")],
        ["sweep", str(root), str(tmp_path), "--out=" + str(tmp_path / "s")],
        ["sweep", "--exclude", "*.log", str(root), "--workers", "2", "--without", "tesseract"],
        ["sweep", str(root), "--no-default-excludes"],
    ):
        assert ahead.plan(argv) is not None, argv
    for argv in (
        # The watcher's observers start before its first walk (a file changed during the
        # walk is caught): a walk made before them could miss one.
        ["watch", str(root)],
        ["open", str(root)],
        [str(root)],  # quarry DIR: open
        [],
        ["show", str(root)],
        ["--version"],
        ["sweep"],
        ["sweep", str(root), str(tmp_path)],  # several folders need --out
        ["sweep", str(root), "--max-bytes", "1k"],
        ["sweep", str(root), "--qui"],  # an abbreviation: argparse's to judge
        ["sweep", str(root), "--out"],
        ["sweep", "--", str(root)],
    ):
        assert ahead.plan(argv) is None, argv


_DIRS = ["docs", "docs/", "./docs/sub/..", "docs/sub", "", "~/docs", "missing", "docs/a.txt"]
_FLAGS = ["-q", "--quiet", "--json", "--verify", "--rehash", "--no-external", "--forget-missing"]
_FLAGS += ["--no-default-excludes"]
_ODD = ["--qui", "-qq", "--json=1", "--", "-x", "--verbose", "--max-bytes=1k", "--read-only"]
_ODD += ["--no-default-excludes=1", "--no-default"]
_VALUES = {
    "--out": ["store", "docs", "docs/.quarry", "~/s", "./a/../s", "-q", ""],
    "--exclude": ["*.log", "sub/", "a b", "-x"],
    "--without": ["tesseract", "nothing"],
    "--timeout": ["5", "x", "-1"],
    "--workers": ["2", "-1"],
    "--memory": ["1G", "lots"],
    "--executor": ["local"],
}


@st.composite
def _argvs(draw: st.DrawFn) -> list[str]:
    """``sweep`` with folders, flags and options in any order, mostly ones the parser takes
    (so that most examples get as far as the walk), a few that it refuses or that no plan
    covers."""
    groups: list[list[str]] = [[d] for d in draw(st.lists(st.sampled_from(_DIRS), max_size=2))]
    groups += [[f] for f in draw(st.lists(st.sampled_from(_FLAGS), max_size=2))]
    for name in draw(st.lists(st.sampled_from(sorted(_VALUES)), max_size=3)):
        value = draw(st.sampled_from(_VALUES[name]))
        groups.append([f"{name}={value}"] if draw(st.booleans()) else [name, value])
    if draw(st.integers(0, 9)) == 0:
        groups.append([draw(st.sampled_from(_ODD))])
    return ["sweep", *(w for g in draw(st.permutations(groups)) for w in g)]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(argv=_argvs())
@example(argv=["sweep", "docs", "docs", "--out", "store"])  # a folder twice is one root
def test_whenever_the_sweep_walks_the_plan_is_its_walk(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The guess is never trusted, but it must be right whenever the command gets as far as
    its walk: the roots and rules of the plan are the sweeper's own, as the real parser made
    them (else the child walked for nothing)."""
    if not (tmp_path / "docs").exists():
        _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    wanted = ahead.plan(argv)
    if wanted is None:
        return
    try:
        args = build_parser().parse_args(argv)
        options = dataclasses.replace(options_from(args), tools=ToolSet.empty())
        sweeper = Sweeper(args.dirs, options)
    except (SystemExit, UsageError):
        capsys.readouterr()
        return  # the command stops before it walks
    assert tuple(map(str, sweeper.roots)) == wanted.roots
    assert sweeper.rules == ahead.rules_of(wanted)


def test_the_pool_starts_ahead_only_for_a_sweep_that_reads_everything_here(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path)
    store = tmp_path / "s"
    new = ahead.plan(["sweep", str(root), "--out", str(store)])
    assert new is not None and new.pool  # no store yet: every file will be read
    elsewhere = ahead.plan(["sweep", str(root), "--out", str(store), "--executor", "dask-local"])
    assert elsewhere is not None and not elsewhere.pool  # read by Dask's workers
    assert main(["sweep", str(root), "--out", str(store), "--no-external", "-q"]) == 0
    again = ahead.plan(["sweep", str(root), "--out", str(store)])
    assert again is not None and not again.pool  # a store with records: the reads are few


def test_a_child_reaped_by_another_leaves_the_walk_to_the_sweep(tmp_path: Path) -> None:
    # A parent that ignores SIGCHLD has its children reaped for it: no status to read.
    root = _tree(tmp_path)
    ahead.start(["sweep", str(root)])
    pending = ahead._pending
    assert pending is not None
    os.waitpid(pending.pid, 0)  # reaped before the sweeper asks
    assert ahead.take([str(root)], _rules(["sweep", str(root)])) is None


def test_a_walk_ahead_ends_with_the_command_that_started_it(tmp_path: Path) -> None:
    # A sweep killed while it imports (kill -9) leaves no walk going on without it.
    root = _tree(tmp_path)
    code = (
        "import sys, time\n"
        "import engine.walk\n"
        "from engine import ahead\n"
        "engine.walk.walk = lambda *a: time.sleep(600)\n"
        f"ahead.start(['sweep', {str(root)!r}])\n"
        "print(ahead._pending.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        assert alive(child)
        proc.kill()
        proc.wait(timeout=60)
        until(lambda: not alive(child), "the walk ahead to end with its parent")


def test_a_walk_ahead_without_the_default_exclusions_is_that_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    argv = ["sweep", str(root), "--no-default-excludes"]
    ahead.start(argv)
    rules = _rules(argv)
    assert not rules.defaults
    assert ahead.take([str(root)], WalkRules(rules.excludes, rules.skip_dirs)) is None  # not it
    ahead.start(argv)
    got = ahead.take([str(root)], rules)
    assert got is not None
    assert "notes.txt~" in got[0][0].paths and got[0][0].left_out == {}


def test_the_walk_ahead_reads_the_parsers_own_flag_table() -> None:
    """engine.flags is the one table: every flag of the sweep verb's parser is in it, as a
    switch or valued as argparse takes it, and nothing else is."""
    import argparse

    from engine import flags

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices["sweep"]
    options = {
        name: action.nargs != 0
        for action in parser._actions
        for name in action.option_strings
        if name not in ("-h", "--help")
    }
    table = flags.by_name(flags.SWEEP_VERB + flags.SWEEPING)
    assert options == {name: flag.valued for name, flag in table.items()}
    for name, flag in table.items():  # a flag the walk ahead takes as leaving it alone is
        argv = ["sweep", "docs", name, *(["local"] if flag.valued else [])]
        walked = ahead.plan(argv) is not None  # walked ahead; one that changes it is not
        assert walked == (flag.walk is not flags.Walk.OTHER), name
