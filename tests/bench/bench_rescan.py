"""A watching session's rescan of a big folder: its time and what it adds to the peak memory.

    python tests/bench/bench_rescan.py [--files 200000] [--edits 10] [--runs 3]
        [--dir /tmp/rescan-bench] [--against CHECKOUT] [--after-cold]

A watcher rescans every root every five minutes (``--rescan``) and after the kernel's event
queue overflowed: every file walked, the store brought up to date, without a full sweep's
rules (an ``error`` keeps its verdict). Made once in ``--dir`` (kept for later runs): a tree
of ``--files`` small files (``bench_sweep.py``'s) and a store of it. Each run copies the store
(its texts and ``extract.jsonl`` hard-linked, as ``bench_killed_resweep.py`` does), writes
``--edits`` files of the tree anew, and in a process of its own opens the store as a watching
session does (``Sweeper``, the first sweep, then the records served by the index), then times
one rescan (``Sweeper.run(full=False)``, what ``Session.rescan`` runs). Printed per run and
as medians (min, max): the rescan's wall time, the process's peak RSS before it (the first
sweep's), and after it. ``--against CHECKOUT``: another checkout (its own ``.venv``) runs the
same, turn about. ``--after-cold``: the session's first sweep is a cold one, into an empty
store (``quarry watch`` on a folder never swept), and the rescan timed is the first after it,
which flags every record ``reused`` (the cold sweep read them all); the rescan after that one
(nothing left to flag) is timed too. What each told (records changed: a following dashboard's
rows) is printed beside its time. Not a test: nothing asserts a time or a size.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from bench_killed_resweep import _copy_store
from bench_sweep import make_tree

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import json, resource, sys, time
from collections.abc import Sequence
from pathlib import Path
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet

tree, store, mode, edits = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
from engine.events import RecordsChanged

opts = SweepOptions(out=store, tools=ToolSet.empty(), workers=2)
told = []
with Sweeper([tree], opts, quick=True, served=True) as sweeper:
    sweeper.from_index = True
    sweeper.run()
    if mode == "base":
        sys.exit(0)
    for path, text in json.loads(edits):  # (after the first sweep: the rescan finds them)
        Path(path).write_text(text)
    def tell(e):
        if isinstance(e, RecordsChanged):
            told.append(len(e.records))
    sweeper.on_event = tell
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    result = sweeper.run(full=False)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"s": took, "before": before, "after": after, "read": result.extracted}
    out["told"], told[:] = sum(told), []
    if mode == "cold":  # and the rescan after it, for comparison
        start = time.perf_counter()
        sweeper.run(full=False)
        out["s2"], out["told2"] = time.perf_counter() - start, sum(told)
print(json.dumps(out))
"""


def _child(
    checkout: Path, tree: Path, store: Path, mode: str, edits: Sequence[tuple[str, str]] = ()
) -> dict[str, float]:
    python = checkout / ".venv" / "bin" / "python"
    out = subprocess.run(
        [str(python), "-c", CHILD, str(tree), str(store), mode, json.dumps(list(edits))],
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out) if out.strip() else {}


def _edits(tree: Path, edits: int, run: str) -> list[tuple[str, str]]:
    """``edits`` files spread over the tree and their new text (each ``run``'s differs)."""
    folders = sorted(tree.iterdir())
    picked = [folders[n * len(folders) // edits] for n in range(edits)]
    return [(str(min(f.iterdir())), f"edited for run {run} {n}\n") for n, f in enumerate(picked)]


def main() -> None:
    """Make the tree and its store, then time each side's rescan."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--edits", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/rescan-bench"))
    ap.add_argument("--against", type=Path, help="another checkout, run turn about")
    ap.add_argument("--after-cold", action="store_true", help="the first sweep a cold one")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    tree, base = args.dir / "tree", args.dir / "base"
    make_tree(tree, args.files)
    if not args.after_cold and not (base / "extract.jsonl").exists():
        _child(REPO, tree, base, "base")
    sides = [REPO] + ([args.against.resolve()] if args.against else [])
    got: dict[Path, list[dict[str, float]]] = {side: [] for side in sides}
    loads: list[float] = []
    for run in range(args.runs):
        for side in sides:
            store = args.dir / "swept"
            if args.after_cold:
                shutil.rmtree(store, ignore_errors=True)  # (a cold first sweep each run)
            else:
                _copy_store(base, store)
            mode = "cold" if args.after_cold else "rescan"
            one = _child(side, tree, store, mode, _edits(tree, args.edits, f"{run} {side}"))
            loads.append(os.getloadavg()[0])
            got[side].append(one)
            then = f"the next {one['s2']:.2f} s, {one['told2']:.0f} told, " if "s2" in one else ""
            print(
                f"run {run + 1} {side}: rescan {one['s']:.2f} s, {one['read']:.0f} read, "
                f"{one['told']:.0f} records told, {then}"
                f"peak {one['before'] / 1024:.0f} MB before it, {one['after'] / 1024:.0f} MB "
                f"after, load {loads[-1]:.1f}",
                flush=True,
            )
    print(f"{args.files:,} files, {args.edits} edited, load {min(loads):.1f}-{max(loads):.1f}")
    for side, runs in got.items():
        parts = []
        keys = [("s", "s", 1.0), ("s2", "s", 1.0), ("before", "MB", 1024), ("after", "MB", 1024)]
        for key, unit, scale in keys:
            vals = [r[key] / scale for r in runs if key in r]
            if not vals:
                continue
            parts.append(
                f"{key} {statistics.median(vals):.1f} {unit} ({min(vals):.1f}-{max(vals):.1f})"
            )
        print(f"{side}: " + ", ".join(parts))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
