"""The dashboard following a store another process writes: a one-file change, from the file
written to its record in the dashboard's model.

    python tests/bench/bench_follow.py [N] [--changes 20] [--runs 3] [--against DIR]

A store of N synthetic records (files that need not exist: only the changed path is walked),
written by a watcher's sweeper in another process (``write_behind_s`` set as a watching
session sets it: each batch goes to the index at once, ``extract.jsonl`` follows once changes
settle); ``quarry ui --store``'s app, headless (``App.run_test``), follows it. For each of
``--changes`` changes of one file, in one process the writer stamps the moment it wrote the
file and the moment its batch was committed; the follower stamps the moment the record is in
its model (the next frame draws it). Printed per run and as the median of the runs:

  index     file written -> its batch committed to the store's index
  dashboard file written -> its record in the dashboard's model
  app_rss   the dashboard process's peak resident memory; writer_rss: the writer's

``--against DIR``: the same runs, interleaved, with the checkout at DIR (its own ``.venv``):
the previous main, for the note's comparison. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
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
CHANGED = "changed.txt"


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def make_store(root: Path, out: Path, n: int) -> None:
    """``n`` synthetic records under ``root``, written as a sweep would."""
    from engine.records import Record, Status
    from engine.store import Store

    root.mkdir(parents=True)
    (root / CHANGED).write_text("version -1\n")
    with Store(out).writer() as store:
        store.write_records(
            Record(
                root=str(root),
                path=f"d{i % 1000:03d}/f{i:07d}.txt",
                size=100,
                mtime_ns=1_700_000_000_000_000_000 + i,
                status=Status.OK,
                sha256=hashlib.sha256(str(i).encode()).hexdigest(),
                mime="text/plain",
                extractor="text:utf-8",
                reader="text",
                v=1,
                chars=100,
                why="new",
                ms=1,
            )
            for i in range(n)
        )


def writer(root: Path, out: Path) -> None:
    """The watcher's side: on each line of stdin, change the file and run its batch."""
    from engine.sweep import Sweeper, SweepOptions
    from engine.tools import ToolSet

    opts = SweepOptions(tools=ToolSet.empty(), workers=1, out=out)
    only = {str(root): [CHANGED]}
    with Sweeper([root], opts) as sweeper:
        sweeper.write_behind_s = 3600.0  # extract.jsonl left behind: the index leads
        sweeper.run(only=only, full=False)  # the worker pool started, the index made
        print("ready", flush=True)
        for line in sys.stdin:
            i = int(line)
            written = time.time()
            (root / CHANGED).write_text("x" * i + "\n")
            sweeper.run(only=only, full=False)
            print(json.dumps([written, time.time(), _rss_kb()]), flush=True)


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def follower(out: Path, changes: int, python: str, cwd: Path) -> dict[str, object]:
    """Start the writer, open the dashboard on the store, time each change."""
    from tui.app import QuarryApp

    root = out.parent / "root"
    proc = subprocess.Popen(
        [python, str(HERE), "--writer", str(root), str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    index: list[float] = []
    dash: list[float] = []
    writer_rss = 0
    app = QuarryApp(out)
    async with app.run_test(size=(160, 50)) as pilot:
        while app.link.progress is not None or app.state == "loading" or not len(app.model):
            await asyncio.sleep(0.01)
        key = (str(root), CHANGED)
        for i in range(1, changes + 1):
            proc.stdin.write(f"{i}\n")
            proc.stdin.flush()
            give_up = time.monotonic() + 120
            while True:
                rid = app.model.ids.get(key)
                rec = app.model.record(rid) if rid is not None else None
                if rec is not None and rec.chars == i + 1:  # its x's and the newline
                    seen = time.time()
                    break
                if time.monotonic() > give_up:
                    sys.exit(f"change {i} never shown: {rec!r}, state {app.state}")
                await pilot.pause(0.002)
            written, committed, writer_rss = json.loads(proc.stdout.readline())
            index.append(committed - written)
            dash.append(seen - written)
    proc.stdin.close()
    proc.wait()
    return {"index": index, "dashboard": dash, "app_rss_mb": _rss_kb() / 1024,
            "writer_rss_mb": writer_rss / 1024, "records": len(app.model)}  # fmt: skip


def child(out: Path, changes: int, python: str, cwd: Path) -> None:
    print(json.dumps(asyncio.run(follower(out, changes, python, cwd))))


def one_run(tree: Path, python: str, out: Path, changes: int) -> dict[str, object]:
    done = subprocess.run(
        [python, str(HERE), "--child", str(out), "--changes", str(changes)],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        sys.exit(f"run failed in {tree}:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _line(name: str, r: dict[str, object]) -> str:
    idx = [x * 1000 for x in r["index"]]  # type: ignore[attr-defined]
    dash = [x * 1000 for x in r["dashboard"]]  # type: ignore[attr-defined]
    return (
        f"{name}: index p50 {_pct(idx, 50):.0f} p95 {_pct(idx, 95):.0f} ms; dashboard p50 "
        f"{_pct(dash, 50):.0f} p95 {_pct(dash, 95):.0f} max {max(dash):.0f} ms; app RSS "
        f"{r['app_rss_mb']:.0f} MB, writer RSS {r['writer_rss_mb']:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=200_000)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against", type=Path)
    ap.add_argument("--writer", nargs=2, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--make", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        return make_store(args.make[0], args.make[1], args.n)
    if args.writer:
        return writer(*args.writer)
    if args.child:
        return child(args.child, args.changes, sys.executable, Path.cwd())
    trees = [("this", HERE.parents[2])]
    if args.against:
        trees.append(("against", args.against.resolve()))
    print(f"# {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}")
    print(f"# python {' '.join(sys.argv)}")
    results: dict[str, list[dict[str, object]]] = {name: [] for name, _ in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for name, tree in trees:  # interleaved: the same load for both
                out = Path(tmp) / f"{name}-{run}" / "store"
                python = str(tree / ".venv" / "bin" / "python")
                subprocess.run(
                    [python, str(HERE), str(args.n), "--make", str(out.parent / "root"),
                     str(out)],
                    cwd=tree, check=True,
                )  # fmt: skip
                r = one_run(tree, python, out, args.changes)
                results[name].append(r)
                print(_line(f"run {run + 1} {name}", r), flush=True)
    for name, rs in results.items():
        p95 = [_pct([x * 1000 for x in r["dashboard"]], 95) for r in rs]  # type: ignore[attr-defined]
        p50 = [_pct([x * 1000 for x in r["dashboard"]], 50) for r in rs]  # type: ignore[attr-defined]
        ip95 = [_pct([x * 1000 for x in r["index"]], 95) for r in rs]  # type: ignore[attr-defined]
        rss = [r["app_rss_mb"] for r in rs]
        print(
            f"{name} ({args.n:,} records, {args.runs} runs x {args.changes} changes): "
            f"dashboard p50 median {statistics.median(p50):.0f} ms "
            f"(min {min(p50):.0f}, max {max(p50):.0f}); p95 median "
            f"{statistics.median(p95):.0f} ms (min {min(p95):.0f}, max {max(p95):.0f}); "
            f"index p95 median {statistics.median(ip95):.0f} ms; "
            f"app peak RSS median {statistics.median(rss):.0f} MB"  # type: ignore[type-var]
        )
    print(f"# load after: {os.getloadavg()}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path.cwd()))
    main()
