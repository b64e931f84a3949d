"""Benchmark: the CPU a command costs, by process tree, with a Dask cluster's share apart.

    python tests/bench/bench_cpu_tree.py [--runs N] -- quarry sweep DIR --out S [...]

Runs the command ``--runs`` times; while it runs, every process's CPU (user + system, from
``/proc``) is read every 20 ms, and each process counted in the tree it belongs to: the
command's own (the engine, its read pool while it is its child), a ``dask scheduler``'s, the
``dask worker`` processes' (nannies, workers, their read forkservers and children), or
``other`` (the rest of the machine, and processes that were reparented before their last
reading: a local pool's forkserver children can end up here). A process's count is its last
reading less what it had before the run. Prints each run's wall time and CPU by tree.

Started beside a cluster (``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 1``),
it shows what a ``--executor dask://...`` sweep costs the machine against a local one taking
turns with it (issue 27: the cluster's own CPU on cores the reads already fill). Not a test:
nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import time

TICK = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, int, int, str]]:
    """pid -> (CPU ticks, parent pid, start time, command line) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        found[int(entry)] = (ticks, int(fields[1]), int(fields[19]), cmd)
    return found


def roots_of(procs: dict[int, tuple[int, int, int, str]]) -> dict[int, str]:
    """The Dask processes running now, by the tree they head."""
    roots = {}
    for pid, (_t, _p, _s, cmd) in procs.items():
        if "dask scheduler" in cmd or "dask-scheduler" in cmd:
            roots[pid] = "scheduler"
        elif "dask worker" in cmd or "dask-worker" in cmd:
            roots[pid] = "dask workers"
    return roots


def one_run(argv: list[str]) -> tuple[float, collections.Counter[str]]:
    before = processes()
    roots = roots_of(before)
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    roots[child.pid] = "command"
    spent: dict[tuple[int, int], int] = {}
    parent: dict[int, int] = {}
    while True:
        done = child.poll() is not None
        for pid, (ticks, ppid, started, _cmd) in processes().items():
            had = before.get(pid)
            base = had[0] if had is not None and had[2] == started else 0
            spent[(pid, started)] = ticks - base
            parent[pid] = ppid
        if done:
            break
        time.sleep(0.02)
    wall = time.monotonic() - start

    def tree(pid: int) -> str:
        for _ in range(64):
            if pid in roots:
                return roots[pid]
            if pid <= 1 or pid not in parent:
                break
            pid = parent[pid]
        return "other"

    by: collections.Counter[str] = collections.Counter()
    for (pid, _started), ticks in spent.items():
        by[tree(pid)] += ticks
    return wall, by


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- the command")
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    for n in range(1, args.runs + 1):
        wall, by = one_run(argv)
        parts = ", ".join(f"{k} {v / TICK:.2f}" for k, v in by.most_common() if v)
        print(f"run {n}: wall {wall:.2f} s; CPU s by tree: {parts}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
