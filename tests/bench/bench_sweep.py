"""Benchmark: cold and warm sweeps of a generated tree, against a bare scandir+stat walk.

    python tests/bench/bench_sweep.py [--files 100000] [--runs 3] [--dir /tmp/quarry-bench]

Prints the machine, the command, and medians: the bare walk, the warm sweep (nothing
changed: no file hashed or read) and its ratio to the bare walk, and the cold sweep's files/s.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
]


def make_tree(root: Path, files: int) -> None:
    """``files`` small text files, 100 per folder, with old mtimes (no racy re-hash)."""
    if root.exists():
        shutil.rmtree(root)
    for i in range(files):
        folder = root / f"d{i // 1000:03}" / f"s{(i // 100) % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{i:06}.txt"
        path.write_text(f"{i} " + " ".join(WORDS[(i + k) % 10] for k in range(20)) + "\n")
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def bare_walk(root: Path) -> int:
    """os.scandir + stat of every file: the floor a warm sweep is compared with."""
    n = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != ".quarry":
                        stack.append(e.path)
                else:
                    e.stat(follow_symlinks=False)
                    n += 1
    return n


def timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/quarry-bench"))
    args = ap.parse_args()
    root = args.dir / "tree"
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    )
    print(f"command: python tests/bench/bench_sweep.py --files {args.files} --runs {args.runs}")
    make_tree(root, args.files)
    opts = SweepOptions(tools=ToolSet.empty())
    colds = []
    for _ in range(args.runs):
        shutil.rmtree(root / ".quarry", ignore_errors=True)
        colds.append(timed(lambda: sweep([root], opts)))
    bares = [timed(lambda: bare_walk(root)) for _ in range(args.runs)]
    warms = [timed(lambda: sweep([root], opts)) for _ in range(args.runs)]
    cold, bare, warm = (statistics.median(x) for x in (colds, bares, warms))
    print(f"files: {args.files}")
    print(f"cold sweep : {cold:8.2f} s  {args.files / cold:8.0f} files/s (median of {args.runs})")
    print(f"bare walk  : {bare:8.3f} s")
    print(f"warm sweep : {warm:8.3f} s  = {warm / bare:.1f}x the bare walk")


if __name__ == "__main__":
    main()
