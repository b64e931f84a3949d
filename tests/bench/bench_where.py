"""The query line run by SQLite over a store's index: how long a filter takes at scale.

``quarry export --where`` runs a query as one statement over ``records``
(:mod:`engine.sqlquery`); a dashboard paging its rows from the index would run the same one
for a count and a first page. This times both over an existing index (a ten-million-record
store's, say; ``bench_tui.py`` makes such a store), each query ``--runs`` times, median (min,
max):

- *count*: ``SELECT count(*) ... WHERE`` (every row looked at);
- *first page*: the first 50 kept, in key order (stops as soon as it has them).

The few-valued fields (status, reason, quality) are decided once a value from the index's
``counts`` table, as ``quarry export --where`` does (:func:`engine.sqlquery.known_values`).

``--narrow DIR`` also copies the columns a filter reads (not the records' lines) into a table
of their own in ``DIR`` and times the same queries there: what a scan costs once the rows it
reads are not interleaved with each record's whole line (the design question for paging at
ten million rows). The copy has no ``counts`` table and no key index: every term runs row by
row there, and its first page is not timed (it would be a sort).

    python tests/bench/bench_where.py INDEX.db [--runs 3] [--narrow DIR] [QUERY...]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.query import Query
from engine.sqlquery import compile_where, known_values

QUERIES = ("size:>10M", "status:error", "mime:pdf", "d017", "path:/7$/")
"""A number, a status, a few-valued text, a path word, a regular expression."""
NARROW = (
    "id, root, path, status, reason, quality, mime, extractor, error, why, size, chars, ms, pages"
)


def _time(con: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> tuple[float, int]:
    start = time.perf_counter()
    rows = con.execute(sql, params).fetchall()
    return time.perf_counter() - start, len(rows) if len(rows) != 1 else rows[0][0]


def _figure(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} s ({min(times):.2f}-{max(times):.2f})"


def run(
    con: sqlite3.Connection, queries: list[str], runs: int, label: str, known: bool = True
) -> None:
    """Time each query's count and first page ``runs`` times, taking turns (``known``: the
    few-valued fields' values read from the index's counts first, as an export does)."""
    values = known_values(con) if known else None
    counts: dict[str, list[float]] = {q: [] for q in queries}
    pages: dict[str, list[float]] = {q: [] for q in queries}
    kept: dict[str, int] = {}
    for _ in range(runs):
        for q in queries:
            where = compile_where(Query.parse(q), None, values)
            where.install(con)
            took, n = _time(con, f"SELECT count(*) FROM records WHERE {where.sql}", where.params)
            counts[q].append(took)
            kept[q] = n
            first = f"SELECT path FROM records WHERE {where.sql} ORDER BY root, path LIMIT 50"
            if known:  # (the narrow copy has no key index: its first page is a sort)
                pages[q].append(_time(con, first, where.params)[0])
    for q in queries:
        page = f"; first page {_figure(pages[q])}" if pages[q] else ""
        print(f"{label} {q!r}: {kept[q]:,} kept; count {_figure(counts[q])}{page}")


def narrow_copy(index: Path, folder: Path) -> Path:
    """The filter's columns of ``index`` in a table of their own (made once, then reused)."""
    path = folder / "narrow.db"
    if path.exists():
        return path
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("ATTACH ? AS s", (f"file:{index}?mode=ro",))
    start = time.perf_counter()
    con.execute(f"CREATE TABLE records AS SELECT {NARROW} FROM s.records ORDER BY root, path")
    con.commit()
    con.close()
    print(f"narrow copy made in {time.perf_counter() - start:.1f} s: {path}")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path, help="a store's extract.db (opened read-only)")
    parser.add_argument("queries", nargs="*", default=list(QUERIES))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--narrow", type=Path, help="a folder for the narrow copy")
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}; sqlite {sqlite3.sqlite_version}")
    con = sqlite3.connect(f"file:{args.index}?mode=ro", uri=True)
    (total,) = con.execute("SELECT count(*) FROM records").fetchone()
    print(f"{total:,} records in {args.index}")
    run(con, args.queries, args.runs, "index")
    if args.narrow is not None:
        narrow = sqlite3.connect(f"file:{narrow_copy(args.index, args.narrow)}?mode=ro", uri=True)
        run(narrow, args.queries, args.runs, "narrow", known=False)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
