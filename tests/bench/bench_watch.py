"""Benchmark of watch mode. Run: ``python tests/bench/bench_watch.py [latency|big] [--poll]``.

- **latency**: a live watcher (native, or ``--poll``); N small files written one at a time;
  for each, the time from its close to its record being readable in the store's index
  (``extract.db``, what ``quarry show`` and a dashboard following the store read; p50/p95/
  max). The wait polls the index as such a reader would, through its own connection.
- **big**: a store of R records (synthetic records for files that need not exist: only the
  changed path is walked), then one file changed R times over; the cost of each incremental
  run against the store's size, twice: as a watch batch (the index takes the change in one
  transaction, ``extract.jsonl`` follows once changes settle), and as a run that also
  rewrites ``extract.jsonl`` (what every batch cost before the index). p50/p95.

Prints the machine and the command. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from engine.db import DB, IndexUnusable, RecordDB
from engine.records import Record, Status
from engine.session import Session
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from engine.watch import WatchOptions


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def latency(files: int, poll: bool, base: Path) -> list[float]:
    """Seconds from each file's close to its record in the store."""
    root = base / "latency"
    root.mkdir()
    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    session = Session([root], opts, watch_options=WatchOptions(poll=poll, poll_s=0.1))
    out: list[float] = []
    try:
        session.sweep_then_watch()
        reader = _reader(session.store.out / DB)
        for i in range(files):
            name = f"f{i:04d}.txt"
            with open(root / name, "w") as fh:
                fh.write(f"small file {i}\n")
            t0 = time.perf_counter()
            while reader.line(str(root.resolve()), name) is None:
                time.sleep(0.002)
            out.append(time.perf_counter() - t0)
        reader.close()
    finally:
        session.close()
    return out


def _reader(path: Path) -> RecordDB:
    """A reader of the index at ``path``, once the first sweep made it."""
    while True:
        try:
            return RecordDB.open_reader(path)
        except IndexUnusable:
            time.sleep(0.01)


def big(records: int, changes: int, base: Path, behind: bool) -> list[float]:
    """Seconds per incremental run changing one file in a store of ``records``; ``behind``:
    as a watch batch (``extract.jsonl`` left to follow), else rewriting the file each run."""
    root = base / f"big-{behind}"
    root.mkdir()
    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=base / f"store-{behind}")
    digest = hashlib.sha256
    with Store(opts.out or base).writer() as store:
        store.write_records(
            Record(
                root=str(root),
                path=f"d{i % 100:02d}/f{i:06d}.txt",
                size=100,
                mtime_ns=1_700_000_000_000_000_000 + i,
                status=Status.OK,
                sha256=digest(str(i).encode()).hexdigest(),
                mime="text/plain",
                extractor="text:utf-8",
                reader="text",
                v=1,
                chars=100,
                why="new",
                ms=1,
            )
            for i in range(records)
        )
    out: list[float] = []
    changed = root / "changed.txt"
    with Sweeper([root], opts) as sweeper:
        sweeper.write_behind_s = 2.0 if behind else None  # what a watching session sets
        for i in range(changes + 1):
            changed.write_text(f"version {i}\n")
            t0 = time.perf_counter()
            sweeper.run(only={str(root): ["changed.txt"]}, full=False)
            if i:  # the first run starts the worker pool
                out.append(time.perf_counter() - t0)
    return out


def _report(what: str, xs: list[float]) -> None:
    ms = [x * 1000 for x in xs]
    print(
        f"{what}: n={len(ms)} p50={_pct(ms, 50):.0f} ms p95={_pct(ms, 95):.0f} ms "
        f"max={max(ms):.0f} ms mean={statistics.fmean(ms):.0f} ms"
    )


def main() -> None:
    """Run the benchmarks named on the command line (default: both)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("which", nargs="*", default=["latency", "big"])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--poll", action="store_true")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--changes", type=int, default=20)
    args = ap.parse_args()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    )
    print("command: python " + " ".join(sys.argv))
    with tempfile.TemporaryDirectory(prefix="quarry-bench-watch-") as tmp:
        base = Path(tmp)
        if "latency" in args.which:
            mode = "polling 0.1 s" if args.poll else "native"
            _report(f"close -> record ({mode})", latency(args.files, args.poll, base))
        if "big" in args.which:
            for behind in (True, False):
                runs = big(args.records, args.changes, base, behind)
                how = "index, file behind" if behind else "index and extract.jsonl each run"
                _report(f"one changed file in a store of {args.records:,} records ({how})", runs)


if __name__ == "__main__":
    main()
