"""Benchmark: a received tree of deep folders, swept by the real command.

    python tests/bench/bench_deep_tree.py [--depth 1500] [--runs 3] [--dir /tmp/quarry-deep]
                                          [--quarry .venv/bin/quarry] [--against OTHER]

A folder nested ``--depth`` times (one file at the top, one at the bottom: what a hostile
archive or a runaway script leaves) is swept into an empty store by ``quarry sweep TREE --out
S``, process start included; ``--against`` names a second quarry command (another checkout's),
the two taking turns run for run. Each figure is a median of ``--runs`` with min and max, and
the machine's load before and after. Session 36: each folder's ignore rules were rebuilt from
the root (the depth cubed): 1,500 levels took 20 s, now ~2 s. Not a test: nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchkit import checkout_of, compiled


def make_tree(root: Path, depth: int) -> None:
    """``root/d/d/.../d`` ``depth`` deep, ``top.txt`` at the top and ``bottom.txt`` below all."""
    if root.exists():
        return
    root.mkdir(parents=True)
    folder = os.fspath(root)
    for _ in range(depth):  # os.makedirs recurses: one level at a time, relative to the last
        folder = os.path.join(folder, "d")
        os.mkdir(folder)
    Path(folder, "bottom.txt").write_text("at the bottom\n")
    (root / "top.txt").write_text("at the top\n")


def remove_store(store: Path) -> None:
    if store.exists():
        shutil.rmtree(store)


def sweep_once(quarry: str, tree: Path, store: Path) -> float:
    """Seconds of one cold ``quarry sweep`` into an empty store (which must give 2 files)."""
    remove_store(store)
    begun = time.perf_counter()
    proc = subprocess.run(
        [quarry, "sweep", str(tree), "--out", str(store), "--quiet"],
        capture_output=True,
        check=False,
    )
    took = time.perf_counter() - begun
    if proc.returncode != 0:
        sys.exit(f"{quarry} failed ({proc.returncode}): {proc.stderr.decode()[-400:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/quarry-deep"))
    parser.add_argument("--quarry", default=str(Path(sys.prefix, "bin", "quarry")))
    parser.add_argument("--against", help="a second quarry command, run in turn")
    args = parser.parse_args()
    tree = args.dir / f"tree-{args.depth}"
    make_tree(tree, args.depth)
    sides = {"quarry": args.quarry, **({"against": args.against} if args.against else {})}
    compiled(*(c for c in map(checkout_of, sides.values()) if c is not None))
    print(f"load before: {os.getloadavg()[0]:.2f}; a tree {args.depth} folders deep")
    times: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.runs):
        for side, command in sides.items():
            times[side].append(sweep_once(command, tree, args.dir / f"store-{side}"))
    for side, got in times.items():
        print(
            f"{side} ({sides[side]}): {statistics.median(got):.2f} s "
            f"({min(got):.2f}-{max(got):.2f}) over {len(got)} runs"
        )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
