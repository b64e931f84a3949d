"""The quick sweep's judge, driven as data: a store, its roots and a walk, no sweeper.

:mod:`engine.quick` never sees the sweeper (an import contract says so); these tests hand it
what a sweeper would and read its verdicts.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine import quick
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from engine.walk import Listing, WalkRules, walk

OLD_NS = 1_600_000_000_000_000_000
NONE = ToolSet.empty()


def _settled_tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha bravo charlie\n")
    (root / "b.txt").write_text("delta echo foxtrot\n")
    for p in [root, *root.rglob("*")]:
        os.utime(p, ns=(OLD_NS, OLD_NS))
    for _ in range(2):  # a new record becomes `reused` once: twice settles the store
        sweep([root], SweepOptions(tools=NONE))
    return root.resolve()


def _given(root: Path, **kw: bool) -> quick.QuickInput:
    store = Store(root / ".quarry")
    return quick.QuickInput(store, (root,), NONE, kw.get("rehash", False), kw.get("verify", False))


def _walk(root: Path) -> list[Listing]:
    return [walk(root, WalkRules(skip_dirs=(str(root / ".quarry"),)))]


def test_the_judge_keeps_an_unchanged_walk_and_sees_an_edit(tmp_path: Path) -> None:
    root = _settled_tree(tmp_path)
    ready = quick.look(_given(root))
    assert ready is not None
    judged = ready.judge(_walk(root))
    assert judged is not None
    assert (judged.retry, judged.reused, judged.files) == ({}, 2, 2)
    (root / "a.txt").write_text("alpha bravo charlie, edited\n")
    assert ready.judge(_walk(root)) is None


def test_the_judge_declines_what_it_cannot_vouch_for(tmp_path: Path) -> None:
    root = _settled_tree(tmp_path)
    assert quick.look(_given(root, rehash=True)) is None
    assert quick.look(_given(root, verify=True)) is None
    other = tmp_path / "other"
    other.mkdir()
    given = _given(root)
    wider = quick.QuickInput(given.store, (root, other), NONE, False, False)
    assert quick.look(wider) is None  # a root the index never listed
