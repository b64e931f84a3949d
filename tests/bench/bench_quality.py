"""Benchmark: what quality scoring adds to a cold sweep, and what scoring alone costs.

    python tests/bench/bench_quality.py CORPUS [--runs 3]

Sweeps CORPUS (the shared corpus: ``../shared/corpus`` from the main checkout) with the
real ``quarry sweep`` command into a
fresh store, ``--without tesseract``, ``--runs`` times with scoring and as many without
(``QUARRY_NO_QUALITY=1``), interleaved so load on the machine falls on both alike; prints the
median of each and the difference. Then scores every stored text in this process (the cost of
re-scoring a store after a rules change) and prints the verdicts by format.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import collections
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

# run as a script, this folder is on sys.path: the sweep bench's helpers are shared
from bench_sweep import become_subreaper, reap_orphans

from engine.quality import OFF_ENV, score_file
from engine.store import Store


def one_sweep(corpus: Path, out: Path, scoring: bool) -> tuple[float, float]:
    """Wall time and CPU time (the command and every process under it) of one cold
    ``quarry sweep`` into ``out``. On a loaded machine the CPU time is the steadier figure."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    env.pop(OFF_ENV, None)
    if not scoring:
        env[OFF_ENV] = "1"
    cmd = [sys.executable, "-m", "engine", "sweep", str(corpus), "--out", str(out)]
    cmd += ["--without", "tesseract", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode not in (0, 2):  # 2: the store has error records, as the corpus does
        raise SystemExit(f"sweep failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return took, cpu


def rescore(out: Path) -> None:
    """Score every stored text of ``out`` in this process; print the time and the verdicts."""
    store = Store(out)
    records = [r for r in store.load_records() if r.has_text and r.sha256]
    start = time.perf_counter()
    verdicts: collections.Counter[tuple[str, str]] = collections.Counter()
    for r in records:
        assert r.sha256 is not None
        q = score_file(store.text_path(r.sha256), r.mime, chars=r.chars, pages=r.pages)
        verdicts[(q.verdict, r.mime)] += 1
    took = time.perf_counter() - start
    print(f"re-score {len(records)} stored texts in one process: {took:.2f} s")
    totals = collections.Counter(v for v, _m in verdicts.elements())
    print("verdicts:", dict(totals))
    for (verdict, mime), n in sorted(verdicts.items()):
        if verdict != "good":
            print(f"  {verdict:8} {n:3}  {mime}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"load average: {os.getloadavg()[0]:.1f}")
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="quality-bench-") as tmp:
        out = Path(tmp) / "store"
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(args.runs):
            for scoring in (False, True):
                runs[scoring].append(one_sweep(args.corpus, out, scoring))
        print(f"cold sweep --without tesseract, median of {args.runs}:")
        for i, what in ((0, "wall"), (1, "CPU ")):
            off = [r[i] for r in runs[False]]
            on = [r[i] for r in runs[True]]
            without, with_ = statistics.median(off), statistics.median(on)
            print(f"  {what} without scoring {without:6.2f} s  {sorted(round(t, 2) for t in off)}")
            print(f"  {what} with scoring    {with_:6.2f} s  {sorted(round(t, 2) for t in on)}")
            pct = (with_ / without - 1) * 100
            print(f"  {what} scoring adds {with_ - without:+.2f} s ({pct:+.1f}%)")
        print(f"load average: {os.getloadavg()[0]:.1f}")
        rescore(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
