"""A window onto a big store's records (:mod:`engine.window`): what a paging viewer would wait.

Over an existing index (opened read-only; ``bench_sorted.py`` leaves one of two million
records in its cache folder, with the sort B-trees), for each query and sort column, both
ways, each step ``--runs`` times, median (min-max) in milliseconds:

- *count*: the records the query keeps;
- *first*: the first 50 rows; *next*: the 50 after them (a walk from the first page's end);
- *middle*: 50 rows at half the count (a jump: ``OFFSET`` in the order's B-tree);
- *last*: the last 50 (read backwards from the end);
- *position*: a record's place (the middle page's first: a count of the rows before it).

    python tests/bench/bench_window.py INDEX.db [--runs 3] [--columns path,ms,status]
        [QUERY...]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.query import Query
from engine.sqlquery import compile_where, known_values
from engine.window import Window

QUERIES = ("", "status:error", "mime:pdf", "d017")
"""Every record; a status (a few-valued field, from the counts); a MIME word; a path word."""
STEPS = ("count", "first", "next", "middle", "last", "position")


def _ms(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    got = call()
    return (time.perf_counter() - start) * 1000, got


def _one(con: sqlite3.Connection, query: str, column: str, reverse: bool) -> dict[str, float]:
    """One round of every step over a new window (nothing remembered from a round before)."""
    where = compile_where(Query.parse(query), None, known_values(con))
    window = Window(con, where, column, reverse=reverse)
    took: dict[str, float] = {}
    took["count"], n = _ms(window.count)
    took["first"], _ = _ms(lambda: window.rows(0, 50))
    took["next"], _ = _ms(lambda: window.rows(50, 50))
    took["middle"], middle = _ms(lambda: window.rows(n // 2, 50))
    took["last"], _ = _ms(lambda: window.rows(max(0, n - 50), 50))
    if middle:
        took["position"], _ = _ms(lambda: window.position((middle[0][0], middle[0][1])))
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path, help="a store's extract.db (opened read-only)")
    parser.add_argument("queries", nargs="*", default=list(QUERIES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--columns", default="path,ms,status")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}; sqlite {sqlite3.sqlite_version}")
    con = sqlite3.connect(f"file:{args.index}?mode=ro", uri=True)
    trees = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'sort%'")]
    (total,) = con.execute("SELECT coalesce(sum(n), 0) FROM counts").fetchone()
    print(f"{total:,} records in {args.index}; sort B-trees: {', '.join(trees) or 'none'}")
    for query in args.queries:
        for column in args.columns.split(","):
            for reverse in (False, True):
                runs = [_one(con, query, column, reverse) for _ in range(args.runs)]
                figures = []
                for step in STEPS:
                    times = [r[step] for r in runs if step in r]
                    if times:
                        med = statistics.median(times)
                        figures.append(f"{step} {med:.0f} ({min(times):.0f}-{max(times):.0f})")
                way = "desc" if reverse else "asc"
                print(f"{query or '(all)'!r} by {column} {way}: " + ", ".join(figures) + " ms")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
