"""Soak benchmark of watch mode: the engine's memory over many changes.

    nice python tests/bench/bench_watch_soak.py [--changes 100000] [--paths 600] [--round 20]

The real ``quarry watch`` (``python -m engine watch``, one worker) follows a folder of
``--paths`` small files while this script changes them, ``--round`` changes at a time: most
are rewrites of a file with new content, some delete a file, create one that was deleted, or
rename a file to a free name, so the folder keeps about ``--paths`` files. After each round a
sentinel file gets new content, and the round ends when its record (its content's hash) is in
``extract.jsonl``: every change was seen before the next round starts, as a reader would see
them. The engine's resident set (``VmRSS`` of its process, not its read workers) is printed at
every tenth of the run and at 10,000, 50,000 and 100,000 changes, then how it grew from the
sample at 10,000 changes (or the first one) to the last.

Prints the machine, its load and the command. Not a test: nothing here asserts a size.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MARKS = (10_000, 50_000, 100_000)
"""Changes after which the engine's size is always reported."""
WAIT_S = 120.0
"""Longest wait for one round's sentinel record (a loaded machine); the bench fails past it."""


def rss_kib(pid: int) -> int:
    """The resident set of process ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


class Folder:
    """The watched folder and the changes made to it."""

    def __init__(self, root: Path, paths: int, seed: int) -> None:
        self.root = root
        self.rnd = random.Random(seed)
        self.present: list[str] = []
        self.absent: list[str] = []
        self.version = 0
        for i in range(paths):
            name = f"d{i % 20:02d}/f{i:05d}.txt"
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            self._write(name)
            self.present.append(name)
        self.absent = [f"d{i % 20:02d}/n{i:05d}.txt" for i in range(paths // 10)]

    def _write(self, name: str) -> None:
        self.version += 1
        words = " ".join(f"w{self.rnd.randrange(1000)}" for _ in range(self.rnd.randrange(5, 40)))
        (self.root / name).write_text(f"{name} version {self.version}: {words}\n")

    def change(self) -> None:
        """One change: mostly a rewrite; sometimes a delete, a create or a rename."""
        roll = self.rnd.random()
        if roll < 0.8 or not self.absent:
            self._write(self.rnd.choice(self.present))
        elif roll < 0.87:
            name = self.present.pop(self.rnd.randrange(len(self.present)))
            (self.root / name).unlink()
            self.absent.append(name)
        elif roll < 0.94:
            name = self.absent.pop(self.rnd.randrange(len(self.absent)))
            self._write(name)
            self.present.append(name)
        else:
            i = self.rnd.randrange(len(self.present))
            old = self.present[i]
            new = self.absent.pop(self.rnd.randrange(len(self.absent)))
            os.rename(self.root / old, self.root / new)
            self.present[i] = new
            self.absent.append(old)


def wait_for(jsonl: Path, digest: str, proc: subprocess.Popen[bytes]) -> None:
    """Poll ``extract.jsonl`` until a record names ``digest`` (bounded)."""
    needle = digest.encode()
    end = time.monotonic() + WAIT_S
    while True:
        try:
            if needle in jsonl.read_bytes():
                return
        except FileNotFoundError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"quarry watch ended with {proc.returncode}")
        if time.monotonic() > end:
            raise RuntimeError(f"no record of the sentinel {digest[:12]} after {WAIT_S:g} s")
        time.sleep(0.02)


def soak(base: Path, changes: int, paths: int, per_round: int) -> list[tuple[int, int]]:
    """(changes made, engine KiB) samples over a watch of ``changes`` changes."""
    root = base / "root"
    root.mkdir()
    folder = Folder(root, paths, seed=24)
    sentinel = root / "sentinel.txt"
    cmd = [sys.executable, "-m", "engine", "watch", str(root), "--workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    jsonl = root / ".quarry" / "extract.jsonl"
    samples: list[tuple[int, int]] = []
    marks = sorted(
        {*(m for m in MARKS if m <= changes), *range(0, changes + 1, max(1, changes // 10))}
    )
    try:
        done, rnd = 0, 0
        while True:
            rnd += 1
            text = f"sentinel round {rnd}\n"
            sentinel.write_text(text)
            wait_for(jsonl, hashlib.sha256(text.encode()).hexdigest(), proc)
            while marks and done >= marks[0]:
                samples.append((marks.pop(0), rss_kib(proc.pid)))
                print(f"{samples[-1][0]:>8,} changes: engine {samples[-1][1] / 1024:.1f} MiB",
                      flush=True)  # fmt: skip
            if done >= changes:
                return samples
            for _ in range(min(per_round, changes - done)):
                folder.change()
            done += min(per_round, changes - done)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    """Run the soak and print the samples and the growth."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--changes", type=int, default=100_000)
    ap.add_argument("--paths", type=int, default=600)
    ap.add_argument("--round", type=int, default=20, dest="per_round")
    args = ap.parse_args()
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]},"
        f" load {os.getloadavg()[0]:.1f}"
    )
    print("command: python " + " ".join(sys.argv))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quarry-bench-soak-") as tmp:
        samples = soak(Path(tmp), args.changes, args.paths, args.per_round)
    took = time.monotonic() - started
    ref = next(((n, k) for n, k in samples if n >= 10_000), samples[0])
    last = samples[-1]
    growth = (last[1] - ref[1]) / ref[1] * 100
    per_change = (last[1] - ref[1]) * 1024 / max(1, last[0] - ref[0])
    print(
        f"engine RSS {ref[1] / 1024:.1f} MiB at {ref[0]:,} changes -> {last[1] / 1024:.1f} MiB at "
        f"{last[0]:,}: {growth:+.1f}% ({per_change:+.0f} bytes a change); {took:.0f} s, load "
        f"{os.getloadavg()[0]:.1f} at the end"
    )


if __name__ == "__main__":
    main()
