"""``quarry watch --poll`` on a big folder: what polling costs while nothing changes, and how long
a change waits to be seen. The real ``quarry`` on real files.

    python tests/bench/bench_poll.py [--files 200000] [--runs 3] [--window 30] [--edits 3]
        [--dir /tmp/poll-bench] [--against CHECKOUT]

``--dir`` holds a tree of ``--files`` small files in folders of 1,000 (made when missing) and a
store that swept it (swept first when missing). Each run starts ``python -m tui watch --poll
TREE --out STORE`` in a checkout, with its venv's Python (this checkout, and ``--against``'s
turn about: run by run the same tree and store), waits for its ``watching`` line and 10 s
more (its first polls),
then for ``--window`` seconds reads its CPU time (user + system, from /proc: polling runs in
the engine's own process) and samples its resident memory every 0.2 s. Then ``--edits`` files
get a line appended, one at a time, each timed from its close until the watch prints its
record's line (``ok  dNNN/fNNNN.txt``); the file is put back as it was, its record awaited
the same way. SIGINT ends the watch. Printed per run and as the median (min, max) of the runs
per side: the CPU share of one core while idle, the resident memory at the window's end and
its lifetime peak (VmHWM, the first sweep's included), each change's wait. Prints the
machine, the time (UTC) and the load before and after. Not a test: nothing here asserts a
time or a size.
"""

from __future__ import annotations

import argparse
import os
import platform
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TICK = os.sysconf("SC_CLK_TCK")
SETTLE_S = 10.0


def make_tree(tree: Path, files: int) -> None:
    """``files`` small files, 1,000 a folder (kept when already there)."""
    if (tree / ".made").exists():
        return
    for i in range(files):
        folder = tree / f"d{i // 1000:04d}"
        if i % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i % 1000:04d}.txt").write_text(f"file number {i}\n")
    (tree / ".made").write_text("")


def quarry(checkout: Path) -> list[str]:
    """The checkout's ``quarry``: its venv's Python on its own modules (run from the checkout:
    a venv installed in editable mode from another checkout would import that one's)."""
    return [str(checkout / ".venv" / "bin" / "python"), "-m", "tui"]


def cpu_s(pid: int) -> float:
    """The process's user + system CPU seconds so far."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def memory_kb(pid: int, what: str) -> int:
    """``VmRSS`` or ``VmHWM`` of the process, in kB."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(what + ":"):
                return int(line.split()[1])
    return 0


class Watch:
    """A ``quarry watch --poll`` in its own process group, its lines read in a thread."""

    def __init__(self, checkout: Path, tree: Path, store: Path) -> None:
        cmd = [*quarry(checkout), "watch", "--poll", str(tree), "--out", str(store)]
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            cwd=checkout,
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line))

    def wait_for(self, words: str, limit: float = 600.0) -> float:
        """When a line holding ``words`` came (monotonic)."""
        end = time.monotonic() + limit
        while True:
            at, line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            if words in line:
                return at

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)
        self.proc.wait(timeout=120)


def one_run(checkout: Path, tree: Path, store: Path, window: float, edits: int) -> dict[str, float]:
    watch = Watch(checkout, tree, store)
    try:
        watch.wait_for("watching")
        time.sleep(SETTLE_S)
        pid = watch.proc.pid
        first, rss = cpu_s(pid), []
        end = time.monotonic() + window
        while time.monotonic() < end:
            rss.append(memory_kb(pid, "VmRSS"))
            time.sleep(0.2)
        got = {"cpu": (cpu_s(pid) - first) / window, "rss": rss[-1] / 1024}
        got["peak"] = memory_kb(pid, "VmHWM") / 1024
        waits = []
        folders = max(1, sum(1 for _ in tree.glob("d*")))
        for i in range(edits):
            path = tree / f"d{(i * 37) % folders:04d}" / "f0500.txt"
            before = path.read_bytes()
            rel = path.relative_to(tree).as_posix()
            for content in (before + b"one more line\n", before):
                closed = time.monotonic()
                path.write_bytes(content)
                waits.append(watch.wait_for(rel) - closed)
        got["wait"] = statistics.median(waits)
        got["wait_max"] = max(waits)
    finally:
        watch.stop()
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--window", type=float, default=30.0)
    ap.add_argument("--edits", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/poll-bench"))
    ap.add_argument("--against", type=Path, help="another checkout, run turn about")
    args = ap.parse_args()
    tree, store = args.dir / "tree", args.dir / "store"
    make_tree(tree, args.files)
    if not (store / "extract.jsonl").exists():
        cmd = [*quarry(REPO), "sweep", "-q", str(tree), "--out", str(store)]
        subprocess.run(cmd, check=False, cwd=REPO)
    sides = [REPO] + ([args.against.resolve()] if args.against else [])
    now, load = datetime.now(UTC), os.getloadavg()[0]
    print(f"{platform.node()} {os.cpu_count()} cores, {now:%H:%M} UTC, load {load:.2f}")
    print(f"{args.files:,} files, window {args.window:g} s")
    got: dict[Path, list[dict[str, float]]] = {side: [] for side in sides}
    for run in range(args.runs):
        for side in sides:
            one = one_run(side, tree, store, args.window, args.edits)
            got[side].append(one)
            print(
                f"run {run + 1} {side}: CPU {100 * one['cpu']:.1f}% of a core, RSS "
                f"{one['rss']:.0f} MB (peak {one['peak']:.0f}), a change seen in "
                f"{one['wait']:.2f} s (max {one['wait_max']:.2f}); load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    for side, runs in got.items():

        def spread(key: str, scale: float = 1.0, runs: list[dict[str, float]] = runs) -> str:
            values = [r[key] * scale for r in runs]
            return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"

        print(
            f"{side}: CPU {spread('cpu', 100)}% of a core, RSS {spread('rss')} MB, peak "
            f"{spread('peak')} MB, a change seen in {spread('wait')} s (max {spread('wait_max')})"
        )
    print(f"done {datetime.now(UTC):%H:%M} UTC, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
