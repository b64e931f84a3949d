"""A sweep of a store that had records, killed part way, then resumed: time and peak memory.

    python tests/bench/bench_killed_resweep.py [--files 200000] [--kill-after 70] [--runs 2]
        [--dir /tmp/killed-resweep] [--quarry .venv/bin/quarry] [--against OTHER/.venv/bin/quarry]

The case of issue 26 a first sweep's resume does not cover: a share swept before, then a sweep
that finds most files changed (every file rewritten, a reader's new version: hours of reads),
killed by the OOM killer or a reboot. Made once in ``--dir`` (kept for later runs): a tree of
``--files`` small files (``bench_sweep.py``'s), swept whole; then every file rewritten (new
bytes, its time the moment the rewrite began: after that sweep, as a real change is); then
``quarry sweep`` of it SIGKILLed after ``--kill-after`` seconds. Each run copies that killed
store (its texts and ``extract.jsonl`` hard-linked) and times the ``quarry sweep`` that
resumes it: wall time and the peak RSS of the process (wait4's ru_maxrss), ``--runs`` a
side, interleaved with
``--against`` (another checkout's ``quarry``, resuming the same killed store). The killed
store is made by ``--quarry``. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench_sweep import make_tree
from benchkit import checkout_of, compiled, print_time_and_peak


def _rewrite(root: Path) -> None:
    """Every file changed: new bytes, each file's time the moment the rewrite began."""
    began = time.time_ns()
    for folder in sorted(root.iterdir()):
        for path in sorted(folder.iterdir()):
            path.write_text("changed " + path.read_text())
            os.utime(path, ns=(began, began))


def _copy_store(src: Path, dst: Path) -> None:
    """``cp -a`` of a store, its texts and ``extract.jsonl`` hard-linked, everything else
    copied. Neither is ever written in place (made by a rename, dropped by an unlink), and
    SQLite writes its files in place. The link keeps the file's identity (its inode among
    it), by which the index knows it agrees with the file: a copy of ``extract.jsonl`` is
    another file, and the index is rebuilt from it (the killed sweep's decisions lost, by
    either side). Seconds, where a copy of 200,000 texts takes minutes."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir()
    for entry in src.iterdir():
        flags = "-al" if entry.name in ("extract", "extract.jsonl") else "-a"
        subprocess.run(["cp", flags, str(entry), str(dst / entry.name)], check=True)


def _timed(cmd: list[str]) -> tuple[float, int, int]:
    """Run ``cmd``: (seconds, peak RSS in KB, exit status)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def _killed(args: argparse.Namespace, tree: Path) -> Path:
    """The killed store (made once)."""
    killed = args.dir / "killed"
    if killed.exists():
        return killed
    base, rewritten = args.dir / "base", args.dir / "rewritten"
    if not rewritten.exists():  # (else kept from an earlier try: killed too soon to commit)
        shutil.rmtree(base, ignore_errors=True)
        seconds, _rss, status = _timed([args.quarry, "sweep", str(tree), "--out", str(base)])
        print(f"the first sweep: {seconds:.1f} s (exit {status})")
        _rewrite(tree)
        rewritten.touch()
    making = args.dir / "killing"
    shutil.rmtree(making, ignore_errors=True)
    subprocess.run(["cp", "-a", str(base), str(making)], check=True)
    cmd = ["timeout", "-s", "KILL", str(args.kill_after), args.quarry, "sweep", str(tree)]
    seconds, _rss, status = _timed([*cmd, "--out", str(making)])
    print(f"the sweep after the rewrite, killed: {seconds:.1f} s (exit {status})")
    from engine.db import DB, RecordDB

    with RecordDB.open_reader(making / DB) as db:
        committed = db.unfinished_count()
    print(f"the killed sweep committed {committed:,} files")
    if committed:  # (none: killed before its first commit, nothing to resume; tried again)
        making.rename(killed)
    return killed


def main() -> None:
    """Make the killed store, then time its resume by each side."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--kill-after", type=float, default=70.0)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/killed-resweep"))
    ap.add_argument("--quarry", default=shutil.which("quarry") or ".venv/bin/quarry")
    ap.add_argument("--against", help="another checkout's quarry, run interleaved")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    sides = [args.quarry] + ([args.against] if args.against else [])
    compiled(*(c for c in map(checkout_of, sides) if c is not None))
    tree = args.dir / "tree"
    if not tree.exists():
        make_tree(tree, args.files)
    killed = _killed(args, tree)
    if not killed.exists():
        sys.exit("the killed sweep committed nothing: try a later --kill-after")
    got: dict[str, list[tuple[float, int]]] = {side: [] for side in sides}
    for run in range(args.runs):
        for side in sides:
            store = args.dir / "resumed"
            _copy_store(killed, store)
            seconds, rss, status = _timed([side, "sweep", str(tree), "--out", str(store)])
            load = os.getloadavg()[0]
            print(
                f"run {run + 1} {side}: {seconds:.2f} s, peak {rss / 1024:.0f} MB, "
                f"exit {status}, load {load:.1f}"
            )
            got[side].append((seconds, rss))
    print_time_and_peak(got)


if __name__ == "__main__":
    main()
