"""A big store's records in any order: ``quarry export --sort C --desc --limit 5`` timed.

A store of :data:`engine.db.SORTED_FROM` records or more has a B-tree per sort column, so a
first page in any order is a walk of a few rows; without one, SQLite sorts every row for it
(a top-N sort). This generates a store of ``--records`` records (``bench_tui.py``'s: no
index beside it, as the seed's extract stage leaves one), then for each side (this checkout's
``quarry`` and ``--against`` another's, each with a cache folder of its own):

- *build*: the first ``quarry export`` of it, which builds its index in the user's cache
  (the sort B-trees included on this side): wall time and peak RSS;
- *sort C*: ``quarry export --sort C --desc --limit 5 --format csv``, ``--runs`` times a
  column, the sides taking turns: median (min-max) and peak RSS.

    python tests/bench/bench_sorted.py [--records 2000000] [--store DIR] [--runs 3]
        [--against OTHER/.venv/bin/quarry] [--columns ms,size,status,quality]

Not a test: figures for the README, with the machine's load printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tui import generate
from benchkit import checkout_of, compiled

HERE = Path(__file__).resolve().parents[2]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KB) of ``cmd``, run to its end (its output dropped)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)  # (this child's own peak, not the largest)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd[0]} exited {proc.returncode}")
    return took, usage.ru_maxrss


def _figure(runs: list[tuple[float, int]]) -> str:
    times = [t for t, _ in runs]
    peak = max(p for _, p in runs) / 1024
    return (
        f"{statistics.median(times):.2f} s ({min(times):.2f}-{max(times):.2f}), peak {peak:.0f} MB"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--store", type=Path, default=Path("/tmp/bench-sorted/store"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against", help="another checkout's quarry, taking turns")
    ap.add_argument("--columns", default="ms,size,status,quality")
    args = ap.parse_args(argv)
    sides = {"this": str(HERE / ".venv" / "bin" / "quarry")}
    if args.against:
        sides["against"] = args.against
    compiled(*(c for c in map(checkout_of, sides.values()) if c is not None))
    if not (args.store / "extract.jsonl").exists():
        start = time.perf_counter()
        generate(args.store, args.records)
        print(f"generated {args.records:,} records in {time.perf_counter() - start:.0f} s")
    print(f"load before: {os.getloadavg()[0]:.1f}")
    envs: dict[str, dict[str, str]] = {}
    for side, quarry in sides.items():
        cache = args.store.parent / f"cache-{side}"
        subprocess.run(["rm", "-rf", str(cache)], check=True)
        envs[side] = {**os.environ, "XDG_CACHE_HOME": str(cache)}
        build = _timed([quarry, "export", "--store", str(args.store), "--limit", "1"], envs[side])
        print(f"{side}: build {_figure([build])}")
    got: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for column in args.columns.split(","):
        for _ in range(args.runs):
            for side, quarry in sides.items():
                cmd = [quarry, "export", "--store", str(args.store), "--sort", column, "--desc"]
                cmd += ["--limit", "5", "--format", "csv"]
                got.setdefault((side, column), []).append(_timed(cmd, envs[side]))
    for (side, column), runs in got.items():
        print(f"{side}: sort {column} {_figure(runs)}")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
