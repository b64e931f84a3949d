"""A sweep killed at random moments and started again: what each restart reads again.

    python tests/bench/bench_resume.py [FOLDER] [--kills 10] [--seed 1] [--workers 2]

FOLDER defaults to ``../shared/corpus``. First one uninterrupted ``quarry sweep`` of FOLDER
(its duration D sets the range of the kill moments, and its store is the reference). Then a
new store: ``quarry sweep`` is started and SIGKILLed (with its read workers, as the OOM killer
would end it) after a time drawn uniformly from 0.02 D to 0.15 D, ``--kills`` times (so that
the kills fall inside the work of one sweep), and run a last time to its end. For each
restart it prints how many records the index held committed when it started and how many of
those the restart read again (a record of the index that it rewrote with a new read, ``why``
set and not reused: 0 is the promise), and at the end whether the final store equals the
reference: records but ``ms``/``why``/``reused``, texts byte for byte. Not a test: the
moments are random, and nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.db import DB, IndexUnusable, read_index
from engine.records import Record
from engine.store import Store

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def _sweep(folder: Path, out: Path, workers: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "engine", "sweep", str(folder), "--out", str(out)]
    cmd += ["--workers", str(workers)]
    return subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _index(out: Path) -> dict[tuple[str, str], Record]:
    try:
        return {r.key: r for r in read_index(out / DB)}
    except IndexUnusable:
        return {}


def _comparable(out: Path) -> list[Record]:
    return [r.evolve(ms=0, why=None, reused=False) for r in Store(out).load_records()]


def _texts(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / "extract").glob("*/*.txt")}


def main() -> None:
    """Run the kills and print what each restart read again."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("folder", nargs="?", type=Path, default=CORPUS)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"command: python {' '.join(sys.argv)}; load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="quarry-bench-resume-") as tmp:
        ref, out = Path(tmp) / "ref", Path(tmp) / "out"
        t0 = time.monotonic()
        _sweep(args.folder, ref, args.workers).wait()
        whole = time.monotonic() - t0
        print(f"uninterrupted sweep: {whole:.1f} s, {len(Store(ref).load_records())} records")
        for k in range(args.kills + 1):
            before = _index(out)
            proc = _sweep(args.folder, out, args.workers)
            if k < args.kills:
                # short lives, so that the kills fall inside one sweep's work: ten of them
                # add up to about the uninterrupted sweep's duration
                moment = rng.uniform(0.02, 0.15) * whole
                try:
                    proc.wait(timeout=moment)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            else:
                moment = float("nan")
                proc.wait()
            after = _index(out)
            again = sum(
                1
                for key, old in before.items()
                if (new := after.get(key)) is not None
                and new is not old
                and new.why is not None
                and not new.reused
                and (new.ms, new.why) != (old.ms, old.why)
            )
            end = "killed" if proc.returncode == -signal.SIGKILL else f"exit {proc.returncode}"
            print(
                f"run {k + 1:2}: {end:>8} at {moment:5.1f} s; committed when it started "
                f"{len(before):4}; read again {again}; committed after {len(after)}"
            )
        same = _comparable(out) == [r.evolve(root=r.root) for r in _comparable(ref)]
        print(f"final store equals the uninterrupted one: records {same}, ", end="")
        print(f"texts {_texts(out) == _texts(ref)}")


if __name__ == "__main__":
    main()
