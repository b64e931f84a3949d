"""What the store's index costs a sweep: CPU per record written, this tree against another.

    python tests/bench/bench_index_writes.py [N] [--runs 3] [--against CHECKOUT]

Generates ``N`` plausible records (default 100,000; a sweep's, sorted by key, with a content
hash, a quality verdict, a MIME type), then, each in a process of its own and from each
checkout's own sources (its ``PYTHONPATH``), times:

  put          a cold sweep's writes: ``RecordDB.put`` of 256 records at a time into a new
               index, committed every second, as the run journals its decisions
  replace_all  the rebuild of an index from ``extract.jsonl``'s records, in one transaction

as CPU microseconds per record (``time.process_time``: the writing process's own CPU, the
figure the machine's load disturbs least). With ``--against``, the runs alternate between
the two checkouts, run for run. Prints the median, min and max of each, and the load before
and after. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def records(n: int) -> list[object]:
    """``n`` records like a sweep's, in key order."""
    from engine.quality import Quality
    from engine.records import Record

    mimes = ["application/pdf", "text/plain", "text/html", "image/png", "application/zip"]
    statuses = ["ok"] * 6 + ["empty", "unsupported", "error", "skipped"]
    out = []
    for i in range(n):
        status = statuses[i % 10]
        ok = status == "ok"
        quality = Quality(verdict="suspect" if i % 50 == 0 else "good", v=3) if ok else None
        out.append(
            Record(
                root="/data/corpus",
                path=f"d{i // 10000:03d}/file{i:07d}.pdf",
                size=(i * 7919) % 5_000_000,
                mtime_ns=1_700_000_000 * 10**9 + i,
                status=status,
                sha256=f"{i * 2654435761:064x}"[-64:],
                mime=mimes[i % 5],
                reason=None if ok else "corrupt",
                extractor="pypdf" if ok else None,
                chars=(i * 37) % 100_000 if ok else 0,
                pages=i % 40 or None,
                ms=i % 900,
                error=None if ok else "startxref not found",
                quality=quality,
            )
        )
    return out


def child(n: int, folder: Path) -> dict[str, float]:
    """One run of both measures, in this process (the tree on its path)."""
    from engine.db import RecordDB

    recs = records(n)
    path = folder / "extract.db"
    db = RecordDB.open_writer(path)
    cpu, last = time.process_time(), time.monotonic()
    for i in range(0, len(recs), 256):
        db.put(recs[i : i + 256])  # type: ignore[arg-type]
        if time.monotonic() - last > 1.0:
            db.commit()
            last = time.monotonic()
    db.commit()
    put = (time.process_time() - cpu) / n * 1e6
    db.close()
    db = RecordDB.open_writer(path)
    cpu = time.process_time()
    db.replace_all(recs, (1, 2, 3))  # type: ignore[arg-type]
    rebuild = (time.process_time() - cpu) / n * 1e6
    db.close()
    return {"put_us": put, "replace_all_us": rebuild}


def _run(tree: Path, n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, str(HERE), "--child", str(n), tmp]
        env = {**os.environ, "PYTHONPATH": str(tree)}
        proc = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
        return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str]) -> int:
    """Run the children, alternating trees, and print the figures."""
    if argv and argv[0] == "--child":
        print(json.dumps(child(int(argv[1]), Path(argv[2]))))
        return 0
    parser = argparse.ArgumentParser(prog="bench_index_writes.py")
    parser.add_argument("records", nargs="?", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another checkout, run alternately")
    args = parser.parse_args(argv)
    trees = {"this tree": HERE.parents[2]}
    if args.against is not None:
        trees[str(args.against)] = args.against.resolve()
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    load = [os.getloadavg()[0]]
    for _ in range(args.runs):
        for name, tree in trees.items():
            results[name].append(_run(tree, args.records))
    load.append(os.getloadavg()[0])
    print(f"{args.records:,} records, {args.runs} runs each, load {load[0]:.1f} -> {load[1]:.1f}")
    for name, runs in results.items():
        for key in runs[0]:
            values = sorted(r[key] for r in runs)
            print(
                f"{name:<24}{key:<16}{statistics.median(values):7.1f} us/record"
                f"  ({values[0]:.1f}-{values[-1]:.1f})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
