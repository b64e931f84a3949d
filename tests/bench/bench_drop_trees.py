"""What dropping a big index's sort B-trees costs the writer: time and peak memory.

    python tests/bench/bench_drop_trees.py INDEX.db [--savepoint]

INDEX.db is an index with its sort B-trees (a store of a million records or more, as a sweep
leaves it); it is copied to a temporary file first and never changed. The copy is opened as
the writer opens it (:meth:`engine.db.RecordDB.open_writer`: the temporary store in memory),
a transaction begun, the trees dropped as a mass change drops them
(:meth:`engine.db.RecordDB._drop_sorted`) and committed. ``--savepoint``: the drop inside a
SAVEPOINT, as session 30 tried first: SQLite then keeps each page it frees in the statement
journal, in memory. Prints the peak resident memory and the seconds taken. Not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("index", type=Path)
    ap.add_argument("--savepoint", action="store_true")
    args = ap.parse_args()
    from engine.db import RecordDB

    print(f"# {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()}")
    print(f"# python {' '.join(sys.argv)}")
    with tempfile.TemporaryDirectory(dir=args.index.parent) as tmp:
        copy = Path(tmp) / "extract.db"
        shutil.copyfile(args.index, copy)
        db = RecordDB.open_writer(copy)
        trees, records = sorted(db.sorted_columns()), len(db)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        db._begin()
        if args.savepoint:
            db.con.execute("SAVEPOINT bench")
        db._drop_sorted()
        if args.savepoint:
            db.con.execute("RELEASE bench")
        db.commit()
        took = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        db.close()
    print(f"{records:,} records, trees {trees}")
    print(f"dropped in {took:.2f} s; peak {peak:.0f} MB (before the drop {before:.0f} MB)")


if __name__ == "__main__":
    main()
