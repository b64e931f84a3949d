"""The index's side of a first re-sweep: every record kept, written back at a big store's size.

    python tests/bench/bench_kept_rows.py [--records 1000000] [--runs 3] [--dir /tmp/kept-rows]
                                          [--against OTHER_CHECKOUT]

The first sweep after a cold one finds every file unchanged and keeps its record, flagged
``reused``: each goes back to the index. This times that write alone, as a sweep makes it:
``RecordDB.put`` of every record kept, 4,096 at a time, a commit every eight batches (about a
second's), then what the run's end does (``run_ended``, ``make_sorted``: the sort B-trees a
run dropped are built again). Each side (this checkout, and ``--against`` another's, each in a
process of its own, with ``PYTHONPATH`` at that checkout) first builds a store index of
``--records`` records with its own code (``replace_all`` and ``make_sorted``, as a rebuild from
``extract.jsonl`` leaves a big store's), once; each run copies it and times the write, the
sides taking turns. Printed: each side's median (min-max) of the whole, of the puts and of the
end, and whether the run dropped the sort B-trees. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BATCH = 4096
"""Records a sweep journals at a time (``engine.sweep._Journaled.BATCH``)."""
COMMIT_EVERY = 8
"""Batches between commits (a sweep commits about once a second)."""


def _records(n: int) -> list:  # type: ignore[type-arg]
    from engine.records import Record

    return [
        Record(
            "/r",
            f"d{i // 1000:04d}/f{i:07d}.txt",
            10 + i % 100,
            1_700_000_000_000_000_000 + i,
            "ok",
            sha256=hashlib.sha256(str(i).encode()).hexdigest(),
            mime="text/plain",
            extractor="text:utf-8",
            reader="text",
            v=2,
            chars=10 + i % 100,
            ms=1,
        )
        for i in range(n)
    ]


def _build(path: Path, n: int) -> None:
    from engine.db import RecordDB

    with RecordDB.open_writer(path) as db:
        db.replace_all(_records(n), None)
        db.make_sorted()


def _resweep(path: Path, n: int) -> None:
    from engine.db import RecordDB

    kept = [r.evolve(reused=True) for r in _records(n)]
    with RecordDB.open_writer(path) as db:
        t0 = time.perf_counter()
        for batch, i in enumerate(range(0, n, BATCH), start=1):
            db.put(kept[i : i + BATCH])
            if batch % COMMIT_EVERY == 0:
                db.commit()
        db.commit()
        dropped = db.dropped_sorted
        db.run_ended()
        t1 = time.perf_counter()
        db.make_sorted()
        t2 = time.perf_counter()
    print(f"{t2 - t0:.3f} {t1 - t0:.3f} {t2 - t1:.3f} {int(dropped)}")


def _child(checkout: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def _report(side: str, runs: list[tuple[float, float, float, int]]) -> None:
    def fig(i: int) -> str:
        got = [r[i] for r in runs]
        return f"{statistics.median(got):.1f} s ({min(got):.1f}-{max(got):.1f})"

    dropped = sorted({r[3] for r in runs})
    print(
        f"{side}: whole {fig(0)}; puts {fig(1)}; end {fig(2)}; "
        f"sort B-trees dropped: {', '.join('yes' if d else 'no' for d in dropped)}"
    )


def main() -> None:
    """Build each side's store index once, then time the kept records' write, in turns."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        what, path, n = sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
        (_build if what == "build" else _resweep)(path, n)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/kept-rows"))
    parser.add_argument("--against", type=Path)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[2]
    sides = {"this checkout": here}
    if args.against is not None:
        sides[str(args.against)] = args.against.resolve()
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    print(f"command: python {' '.join(sys.argv)}; {os.cpu_count()} cores")
    print(f"load at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    bases: dict[str, Path] = {}
    for n, (side, checkout) in enumerate(sides.items()):
        bases[side] = args.dir / f"base{n}.db"
        t0 = time.perf_counter()
        _child(checkout, "build", str(bases[side]), str(args.records))
        print(
            f"{side}: a store index of {args.records:,} records built in "
            f"{time.perf_counter() - t0:.1f} s"
        )
    got: dict[str, list[tuple[float, float, float, int]]] = {side: [] for side in sides}
    for run in range(args.runs):
        for side, checkout in sides.items():
            path = args.dir / f"run{run}-{len(got[side])}-{list(sides).index(side)}.db"
            shutil.copyfile(bases[side], path)
            whole, puts, end, dropped = _child(
                checkout, "resweep", str(path), str(args.records)
            ).split()
            got[side].append((float(whole), float(puts), float(end), int(dropped)))
            path.unlink()
    for side, runs in got.items():
        _report(side, runs)
    print(f"load at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
