"""A big store's queries counted per status, as the dashboard paging from its index counts them.

    python tests/bench/bench_browse.py INDEX.db [--runs 3] [--query Q ...]

For each query (default: a path word, ``mime:pdf``, a number, two numbers, a status with a
field), :meth:`engine.browse.Browse.by_status` on the index at INDEX.db, then the first page
of 128 rows by path. Each is timed with the fields tree (``engine.db.FIELDS_TREE``, when the
index has it) and without it (what SQLite walks then: the table), the two taking turns run
for run. Medians, min and max in seconds, with the machine's load. Not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.browse import Browse, reads_of
from engine.query import Query
from engine.sqlquery import compile_where

QUERIES = ("file00001", "mime:pdf", "size:>10M", "size:>10K chars:<100", "status:error !mime:pdf")


def timed(browse: Browse, text: str, tree: bool) -> tuple[float, float, int]:
    """(count seconds, first page seconds, records kept) of ``text``."""
    query = Query.parse(text)
    where = compile_where(query, {}, browse.values())
    had, browse.fields_tree = browse.fields_tree, browse.fields_tree and tree
    try:
        t = time.perf_counter()
        counts = browse.by_status(where, reads_of(query))
        counted = time.perf_counter() - t
        window = browse.window(where, "path")
        window.counted(sum(counts.values()))
        t = time.perf_counter()
        window.rows(0, 128)
        return counted, time.perf_counter() - t, sum(counts.values())
    finally:
        browse.fields_tree = had


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path, help="a big store's extract.db")
    parser.add_argument("--runs", type=int, default=3, help="runs, medians printed (3)")
    parser.add_argument("--query", action="append", help="a query line (repeatable)")
    args = parser.parse_args(argv)
    browse = Browse(args.index)
    print(f"{len(browse):,} records; fields tree: {browse.fields_tree}")
    loads = [os.getloadavg()[0]]
    for text in args.query or QUERIES:
        got: dict[bool, list[tuple[float, float, int]]] = {True: [], False: []}
        for _ in range(args.runs):
            for tree in (True, False):
                got[tree].append(timed(browse, text, tree))
            loads.append(os.getloadavg()[0])
        for tree in (True, False):
            counts = [c for c, _p, _n in got[tree]]
            pages = [p for _c, p, _n in got[tree]]
            print(
                f"{text!r:28} {'tree' if tree else 'table':5} kept {got[tree][0][2]:>10,}"
                f"  count {statistics.median(counts):6.2f} s"
                f" ({min(counts):.2f}-{max(counts):.2f})"
                f"  first page {statistics.median(pages):6.3f} s"
                f" ({min(pages):.3f}-{max(pages):.3f})"
            )
    print(f"load {min(loads):.1f}-{max(loads):.1f}, cpus {os.cpu_count()}")
    browse.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
