"""What `E` (export the view) costs on a store: the dashboard opened on it, a query typed, then
`E` until the box shows and the export's worker until the file is written.

    python tests/bench/bench_export_view.py STORE [--query mime:pdf] [--tree CHECKOUT]

STORE: a store made before (``bench_tui.py 10000000 --keep S --index``: paged from its index
from a million records). The dashboard runs in a child process (``App.run_test`` at 160x50)
from this checkout's sources, or ``--tree``'s, so two checkouts can take turns on one store.
Printed: seconds until the box showed, seconds to write the file (JSONL, in a temporary
folder, removed after), the lines written, the child's peak RSS. Not a test: nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


async def child(store: Path, query: str, out: Path) -> dict[str, float]:
    """One export, timed (run in the child, from the checkout on ``PYTHONPATH``)."""
    from textual.widgets import Input

    from tui.app import QuarryApp
    from tui.screens.export import ExportScreen

    app = QuarryApp(store)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        screen = app.records_screen
        screen.set_filter(query)
        while screen._searching is not None:  # (a paged store's query counted in a worker)
            await asyncio.sleep(0.01)
        await pilot.pause()
        t = time.perf_counter()
        await pilot.press("E")
        while not isinstance(app.screen, ExportScreen):
            await asyncio.sleep(0.005)
        box_s = time.perf_counter() - t
        app.screen.query_one(Input).value = str(out)
        t = time.perf_counter()
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        write_s = time.perf_counter() - t
    with open(out, "rb") as fh:
        lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"box_s": box_s, "write_s": write_s, "lines": lines, "peak_rss_mb": peak}


def main(argv: list[str]) -> int:
    """Run one export in a child process and print what it measured."""
    if argv and argv[0] == "--child":
        got = asyncio.run(child(Path(argv[1]), argv[2], Path(argv[3])))
        print(json.dumps(got))
        return 0
    parser = argparse.ArgumentParser(prog="bench_export_view.py", description=__doc__)
    parser.add_argument("store", type=Path)
    parser.add_argument("--query", default="mime:pdf")
    parser.add_argument("--tree", type=Path, default=HERE.parents[2])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "view.jsonl"
        env = {**os.environ, "PYTHONPATH": str(args.tree.resolve())}
        load = os.getloadavg()[0]
        proc = subprocess.run(
            [sys.executable, str(HERE), "--child", str(args.store), args.query, str(out)],
            capture_output=True, text=True, check=True, env=env, cwd=tmp,
        )  # fmt: skip
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"{args.tree}: {args.query!r} box {got['box_s']:.2f} s, written {got['write_s']:.1f} s,"
        f" {got['lines']:,} lines, peak {got['peak_rss_mb']:.0f} MB (load {load:.1f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
