"""What starting a watcher again costs on a folder that did not change since the last sweep.

    python tests/bench/bench_watch_restart.py [N] [--runs 3] [--change K] [--against DIR] [--sweep]

N tiny files in folders of 1,000 (made once, an hour old), swept twice with ``python -m
engine sweep`` (a cold sweep, then a warm one that leaves the stat index). Then, per run and
per checkout (interleaved), a process of the checkout's own starts a watching session on the
folder as ``quarry DIR`` and ``quarry watch`` do (``Session.sweep_then_watch``) and stops it
once it watches. Printed per run and as the median of the runs (min, max):

  ready     process start to watching (imports, the first sweep, the observers)
  peak      the process's peak resident memory
  watching  its resident memory once it watches

``--change K``: before each start, K files (the same ones each time) are written again with
other bytes, as a share changes while nothing watches it: the stat index no longer speaks for
the folder, and the start must find what changed.

``--sweep``: each run is ``quarry sweep DIR`` instead (``python -m engine sweep``, the
checkout's own, timed from its start to its exit, its peak memory taken by ``/usr/bin/time``);
``ready`` is then the whole sweep and ``watching`` is not measured.

``--after-cold``: the folder is swept once (cold), and each run starts on a copy of the store
as that sweep left it (its texts hard-linked, its index told the copy's ``extract.jsonl`` is
the one it is in step with): the first start after a cold sweep, whose merge flags every
record reused (session 30: on a store of a million records, whose index has the sort B-trees,
that merge made the index fail and the sweep load every record).

``--against DIR``: the same runs, interleaved, with the checkout at DIR (its own ``.venv``);
both open the same store, which neither changes. Not a test: nothing here asserts a time or a
size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
PER_FOLDER = 1000


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def make_tree(root: Path, n: int) -> None:
    """``n`` tiny text files, ``PER_FOLDER`` a folder, all an hour old (a sweep trusts them)."""
    old = time.time() - 3600
    for i in range(n):
        folder = root / f"d{i // PER_FOLDER:05d}"
        if i % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        f = folder / f"f{i:07d}.txt"
        f.write_text(f"file {i}\n")
        os.utime(f, (old, old))


def watcher(root: Path, out: Path, started: float) -> None:
    """One run, in the checkout's own process: prints one JSON line."""
    from engine.session import Session
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet
    from engine.watch import WatchOptions

    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=out)
    session = Session([root], opts, watch_options=WatchOptions(rescan_s=3600.0))
    try:
        result = session.sweep_then_watch()
        ready = time.time() - started
        watching = _rss_mb()
    finally:
        session.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    quick = bool(getattr(result, "quick", False))
    print(json.dumps({"ready": ready, "peak": peak, "watching": watching, "quick": quick}))


def change(root: Path, n: int, k: int, stamp: int) -> None:
    """Write ``k`` of the ``n`` files again (spread over the folders), other bytes each time."""
    for i in range(0, n, max(1, n // k) if k else n + 1)[:k]:
        f = root / f"d{i // PER_FOLDER:05d}" / f"f{i:07d}.txt"
        f.write_text(f"file {i} changed {stamp}\n")


def copy_store(src: Path, dst: Path) -> None:
    """A copy of the store at ``src`` as it is: its texts hard-linked (a text is never changed
    in place), its other files copied, the copy's index told that the copy's
    ``extract.jsonl`` is the one it is in step with (an index knows its file by inode too)."""
    import sqlite3

    from engine.db import DB, identity_of

    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir()
    for item in src.iterdir():
        if item.name == "extract":
            subprocess.run(["cp", "-al", str(item), str(dst / item.name)], check=True)
        elif item.is_dir():
            shutil.copytree(item, dst / item.name)
        else:
            shutil.copy2(item, dst / item.name)
    con = sqlite3.connect(dst / DB)
    with con:
        ident = ",".join(map(str, identity_of(dst / "extract.jsonl")))
        con.execute("UPDATE meta SET value = ? WHERE key = 'source'", (ident,))
    con.close()


def one_sweep(tree: Path, root: Path, out: Path) -> dict[str, object]:
    """``quarry sweep`` of the checkout at ``tree``, as a user runs it (exit 2: errors)."""
    python = str(tree / ".venv" / "bin" / "python")
    command = [python, "-m", "engine", "sweep", str(root), "--out", str(out), "-q"]
    started = time.time()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *command, "--no-external"],
        cwd=tree, capture_output=True, text=True,
    )  # fmt: skip
    took = time.time() - started
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{tree}: exit {proc.returncode}: {proc.stderr}")
    peak = int(proc.stderr.strip().splitlines()[-1]) / 1024
    return {"ready": took, "peak": peak, "watching": 0.0, "quick": "n/a"}


def one_run(tree: Path, root: Path, out: Path) -> dict[str, object]:
    python = str(tree / ".venv" / "bin" / "python")
    proc = subprocess.run(
        [python, str(HERE), "--watcher", str(root), str(out), str(time.time())],
        cwd=tree, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _median(rs: list[dict[str, object]], key: str, fmt: str = ".0f") -> str:
    xs = [float(r[key]) for r in rs]  # type: ignore[arg-type]
    return f"{statistics.median(xs):{fmt}} (min {min(xs):{fmt}}, max {max(xs):{fmt}})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--change", type=int, default=0)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--after-cold", action="store_true")
    ap.add_argument("--watcher", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.watcher:
        return watcher(Path(args.watcher[0]), Path(args.watcher[1]), float(args.watcher[2]))
    trees = [("this", HERE.parents[2])]
    if args.against:
        trees.append(("against", args.against.resolve()))
    print(f"# {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}")
    print(f"# python {' '.join(sys.argv)}")
    results: dict[str, list[dict[str, object]]] = {name: [] for name, _ in trees}
    with tempfile.TemporaryDirectory() as tmp:
        root, out = Path(tmp) / "root", Path(tmp) / "store"
        make_tree(root, args.n)
        python = str(HERE.parents[2] / ".venv" / "bin" / "python")
        cold = Path(tmp) / "cold"
        for _ in range(1 if args.after_cold else 2):  # cold, then warm: the warm one leaves
            sweep = [python, "-m", "engine", "sweep", str(root), "--out", str(out), "-q"]
            subprocess.run([*sweep, "--no-external"], cwd=HERE.parents[2], check=True)
        if args.after_cold:
            out.rename(cold)
        for run in range(args.runs):
            for name, tree in trees:  # interleaved: the same load for both
                if args.change:
                    change(root, args.n, args.change, len(results[name]) * 10 + len(name))
                if args.after_cold:
                    copy_store(cold, out)
                r = (one_sweep if args.sweep else one_run)(tree, root, out)
                results[name].append(r)
                print(
                    f"run {run + 1} {name}: ready {r['ready']:.2f} s, peak {r['peak']:.0f} MB,"
                    f" watching {r['watching']:.0f} MB, quick sweep {r['quick']}",
                    flush=True,
                )
    for name, rs in results.items():
        print(
            f"{name} ({args.n:,} files, {args.change} changed, {args.runs} runs): ready"
            f" {_median(rs, 'ready', '.2f')} s; peak {_median(rs, 'peak')} MB;"
            f" watching {_median(rs, 'watching')} MB"
        )
    print(f"# load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
