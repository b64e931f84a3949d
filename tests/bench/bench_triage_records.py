"""What the triage screens' records cost on a big store: the errors, unsupported, waiting and
suspect-text records of a generated store (bench_tui.py's: a tenth of its records errors, a
tenth unsupported), loaded as the dashboard loads it, then asked as each screen asks.

    python tests/bench/bench_triage_records.py [N] [--runs 3] [--store S]

N records (default 1,000,000) are generated with their index beside them (as a sweep leaves
it), or ``--store`` opens one made before (``bench_tui.py --keep S --index``). Printed: per
screen's question, the records found and the median time of the runs (min, max). Run it from
two checkouts on one store to compare them. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[2]))


def measure(store: Path, runs: int) -> None:
    from engine.store import Store
    from tui import triage
    from tui.loader import load_rows, open_rows
    from tui.model import RecordModel

    rows = open_rows(Store(store))
    model = RecordModel()
    model.data = rows.table
    for chunk in load_rows(rows):
        model.extend(chunk.rows)
    for name in ("error_records", "unsupported_records", "waiting_records", "quality_records"):
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            found = getattr(triage, name)(model)
            times.append(time.perf_counter() - started)
        print(
            f"{name}: {len(found):,} records, {statistics.median(times):.2f} s"
            f" (min {min(times):.2f}, max {max(times):.2f})",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("n", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--store", type=Path)
    args = ap.parse_args()
    print(f"# {os.cpu_count()} cores, load {os.getloadavg()}; python {' '.join(sys.argv)}")
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            import bench_tui

            store = Path(tmp) / "store"
            bench_tui.generate(store, args.n)
            bench_tui.write_index(store)
        measure(store, args.runs)
    print(f"# load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
