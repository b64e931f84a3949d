"""The memory of a watching engine over a big store, and what a batch and the catch-up of
``extract.jsonl`` cost there.

    python tests/bench/bench_watch_memory.py [N] [--batches 20] [--runs 3] [--against DIR]

A store of N synthetic records (bench_follow's: files that need not exist, only the changed
path is walked) is opened by a sweeper in a process of its own, as a watching session opens
it: the store loaded, a first batch, then (where the checkout has it) the records served by
the index from then on (``Sweeper.serve_from_index``). Then ``--batches`` one-file changes,
each a watch batch, and ``extract.jsonl`` written behind them. Printed per run and as the
median of the runs (min, max):

  peak      the process's peak resident memory (the load of the store is in it)
  watching  its resident memory after the batches (what a watcher holds while it waits)
  batch     one batch: the file written -> its record committed to the index (p50, p95)
  catch-up  extract.jsonl written from the batches behind it

``--against DIR``: the same runs, interleaved, with the checkout at DIR (its own ``.venv``).
Not a test: nothing here asserts a time or a size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
FOLLOW = HERE.parent / "bench_follow.py"
CHANGED = "changed.txt"  # (bench_follow's)


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def watcher(root: Path, out: Path, batches: int) -> None:
    """One run, in the checkout's own process: prints one JSON line."""
    from engine.sweep import Sweeper, SweepOptions
    from engine.tools import ToolSet

    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=out)
    only = {str(root): [CHANGED]}
    times: list[float] = []
    with Sweeper([root], opts) as sweeper:
        sweeper.write_behind_s = 3600.0  # as a watching session: the file follows later
        sweeper.run(only=only, full=False)
        serve = getattr(sweeper, "serve_from_index", None)
        if serve is not None:
            serve()
        for i in range(batches):
            (root / CHANGED).write_text("x" * (i + 1) + "\n")
            t = time.perf_counter()
            sweeper.run(only=only, full=False)
            times.append(time.perf_counter() - t)
        watching = _rss_mb()
        t = time.perf_counter()
        sweeper.write_behind()
        catch_up = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"peak": peak, "watching": watching, "batch": times, "catch_up": catch_up}))


def one_run(tree: Path, n: int, batches: int, tmp: Path) -> dict[str, object]:
    python = str(tree / ".venv" / "bin" / "python")
    root, out = tmp / "root", tmp / "store"
    subprocess.run(
        [python, str(FOLLOW), str(n), "--make", str(root), str(out)], cwd=tree, check=True
    )
    proc = subprocess.run(
        [python, str(HERE), "--watcher", str(root), str(out), "--batches", str(batches)],
        cwd=tree, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _line(name: str, r: dict[str, object]) -> str:
    batch = [x * 1000 for x in r["batch"]]  # type: ignore[attr-defined]
    return (
        f"{name}: peak {r['peak']:.0f} MB, watching {r['watching']:.0f} MB; batch p50 "
        f"{_pct(batch, 50):.0f} ms p95 {_pct(batch, 95):.0f} ms; catch-up "
        f"{r['catch_up']:.2f} s"
    )


def _median(rs: list[dict[str, object]], key: str, scale: float = 1.0) -> str:
    xs = [float(r[key]) * scale for r in rs]  # type: ignore[arg-type]
    return f"{statistics.median(xs):.0f} (min {min(xs):.0f}, max {max(xs):.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--watcher", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.watcher:
        return watcher(*args.watcher, args.batches)
    trees = [("this", HERE.parents[2])]
    if args.against:
        trees.append(("against", args.against.resolve()))
    print(f"# {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}")
    print(f"# python {' '.join(sys.argv)}")
    results: dict[str, list[dict[str, object]]] = {name: [] for name, _ in trees}
    for run in range(args.runs):
        for name, tree in trees:  # interleaved: the same load for both
            with tempfile.TemporaryDirectory() as tmp:
                r = one_run(tree, args.n, args.batches, Path(tmp))
            results[name].append(r)
            print(_line(f"run {run + 1} {name}", r), flush=True)
    for name, rs in results.items():
        p95 = [{"p95": _pct(list(r["batch"]), 95)} for r in rs]  # type: ignore[call-overload]
        print(
            f"{name} ({args.n:,} records, {args.runs} runs x {args.batches} batches): peak "
            f"{_median(rs, 'peak')} MB; watching {_median(rs, 'watching')} MB; batch p95 "
            f"{_median(p95, 'p95', 1000)} ms; catch-up {_median(rs, 'catch_up', 1000)} ms"
        )
    print(f"# load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
