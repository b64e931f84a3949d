"""Benchmark: ``quarry ui --store`` following a store another process grows to a big one.

    python tests/bench/bench_follow_grow.py [--tree /tmp/m1/files] [--files 1000000]
                                            [--quarry .venv/bin/quarry] [--every 5]

``quarry sweep TREE --out NEW`` (a first sweep: every record new) runs in the background;
once its index holds a record, the real ``quarry ui --store NEW`` starts on a 160x50 pty
(pyte keeps its screen) and follows it. Every ``--every`` seconds the follower's resident
memory (VmRSS, and its peak VmHWM) is noted with how many records the sweep's index holds;
after the sweep ends, the follower is given until its header shows the whole store. Printed:
the sweep's time, the follower's RSS and CPU time over the sweep (every sample, then the
peak), whether it said it pages the store (the notice ``a big store``), and its screen at the
end. The store is left in ``follow-grow/`` beside the tree; the next invocation deletes it,
syncs and waits 61 s before it starts (as ``bench_sweep.py`` does: a sweep right after a
million texts were deleted creates its own more slowly).

The tree is made when missing as ``bench_watch_live.py`` makes it (``--files`` small files
in folders of a thousand). Not a test: nothing here asserts a time or a size.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[2]))

from bench_keys import drain  # noqa: E402
from bench_watch_live import status_kb  # noqa: E402

from tests.e2e.terminal import Terminal, quarry_command  # noqa: E402


def make_tree(tree: Path, files: int) -> None:
    """``files`` small text files in folders of a thousand (``dNNN/fNNN.txt``)."""
    print(f"making {tree}: {files:,} small files", flush=True)
    for d in range(max(1, files // 1000)):
        folder = tree / f"d{d:03d}"
        folder.mkdir(parents=True)
        for f in range(min(1000, files)):
            (folder / f"f{f:03d}.txt").write_text(f"small file {d} {f}\n")


def records_in(store: Path) -> int:
    """Records the store's index holds now (0 while there is none), read as any reader."""
    db = store / "extract.db"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            (n,) = con.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()
            return int(n)
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=Path("/tmp/m1/files"))
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--quarry", nargs="+", default=quarry_command())
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--settle", type=float, default=120.0, help="s after the sweep, at most")
    args = ap.parse_args()
    if not args.tree.is_dir():
        make_tree(args.tree, args.files)
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores; load {os.getloadavg()}")
    print(f"command: {' '.join(sys.argv)}", flush=True)
    work = args.tree.parent / "follow-grow"
    if work.exists():  # the last invocation's store: deleted before anything is timed
        shutil.rmtree(work)
        os.sync()
        time.sleep(61)  # (ext4 scans past inodes freed in the last minute: bench_sweep.py)
    work.mkdir()
    store = work / "store"
    began = time.monotonic()
    writer = subprocess.Popen(
        [*args.quarry, "sweep", str(args.tree), "--out", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while records_in(store) == 0:
        if writer.poll() is not None:
            raise SystemExit(f"the sweep ended ({writer.returncode}) before any record")
        time.sleep(0.2)
    term = Terminal([*args.quarry, "ui", "--store", str(store)], 160, 50, work)
    pid = term.proc.pid
    said = False
    print(f"{'s':>6} {'records':>10} {'RSS MB':>8} {'peak MB':>8} {'CPU s':>6}")
    next_at = time.monotonic()
    swept_at: float | None = None
    while True:
        drain(term, 0.2)
        said = said or "a big store" in term.text()
        now = time.monotonic()
        if now >= next_at:
            next_at = now + args.every
            n = records_in(store)
            rss, peak = status_kb(pid, "VmRSS") / 1024, status_kb(pid, "VmHWM") / 1024
            cpu = cpu_s(pid)
            print(f"{now - began:6.0f} {n:10,} {rss:8.0f} {peak:8.0f} {cpu:6.1f}", flush=True)
        if swept_at is None and writer.poll() is not None:
            swept_at = now
            print(f"sweep ended ({writer.returncode}) after {now - began:.0f} s", flush=True)
        total = f"{args.files:,}"
        if swept_at is not None and (total in term.text() or now - swept_at > args.settle):
            break
    drain(term, 1.0)
    peak = status_kb(pid, "VmHWM") / 1024
    print(
        f"follower peak RSS {peak:.0f} MB, {cpu_s(pid):.1f} s of CPU; said it pages the"
        f" store: {said}"
    )
    print(term.text())
    term.proc.terminate()
    term.proc.wait(10)  # (the store is left for the next invocation to delete)


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (its own, not its children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
