"""SQLite as the store's index of records: the premises of issue 26, measured on this machine.

    python tests/bench/bench_sqlite.py [N] [--dir D] [--keep]     (default N: 1,000,000)

Before the store moves its records from ``extract.jsonl`` into SQLite (the standard library's
``sqlite3``, WAL), this measures what the dashboard and the watcher would ask of it at size N,
with the records of ``bench_tui.py``'s generator (plausible statuses, MIME types, sizes):

  build          one transaction of N inserts, then the indexes (the first index of a store
                 written so far, from its ``extract.jsonl``); the file's size after
  open+counts    a new connection (another process's, as the dashboard's) reads the counts
                 per status and reason from the counts table triggers keep (no recount)
  page <col>     the first 50 rows sorted by a column, and the 50 after a keyset deep in it
  filter         ``status='error' AND mime LIKE '%pdf%'`` sorted by path, first 50 rows, and
                 its count; ``path LIKE '%file0004%'`` (a substring: a scan) the same
  upsert         one record changed in one transaction, as a watch batch (synchronous=NORMAL)
  rss            this process's peak resident memory while reading (not while building)

Each timed query runs 5 times on the warm file: the median and the max are printed. Not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

STATUSES = ["ok"] * 6 + ["empty", "unsupported", "error", "skipped"]
MIMES = ["application/pdf", "text/plain", "text/html", "image/png", "application/zip"]
SORTS = ("path", "status", "mime", "size", "chars", "ms")

SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE records (
    id INTEGER PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, mime TEXT, extractor TEXT, size INTEGER, mtime_ns INTEGER, sha256 TEXT,
    chars INTEGER, pages INTEGER, ms INTEGER, why TEXT, quality TEXT, line BLOB NOT NULL
);
CREATE TABLE counts (status TEXT NOT NULL, reason TEXT NOT NULL, n INTEGER NOT NULL,
                     PRIMARY KEY (status, reason)) WITHOUT ROWID;
"""
INDEXES = [
    "CREATE UNIQUE INDEX by_key ON records (root, path)",
    *(f"CREATE INDEX by_{c} ON records ({c}, root, path)" for c in SORTS if c != "path"),
]
TRIGGERS = """
CREATE TRIGGER counts_in AFTER INSERT ON records BEGIN
  INSERT INTO counts VALUES (new.status, coalesce(new.reason, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER counts_out AFTER DELETE ON records BEGIN
  UPDATE counts SET n = n - 1 WHERE status = old.status AND reason = coalesce(old.reason, '');
END;
CREATE TRIGGER counts_change AFTER UPDATE OF status, reason ON records BEGIN
  UPDATE counts SET n = n - 1 WHERE status = old.status AND reason = coalesce(old.reason, '');
  INSERT INTO counts VALUES (new.status, coalesce(new.reason, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
"""


def rows(n: int) -> Iterator[tuple[object, ...]]:
    """N plausible records, in key order (the generator of bench_tui.py, as columns)."""
    for i in range(n):
        status = STATUSES[i % 10]
        ok = status == "ok"
        path = f"d{i // 10000:03d}/file{i:07d}.pdf"
        line = f'{{"root":"/data/corpus","path":"{path}","status":"{status}"}}'.encode()
        yield (
            "/data/corpus", path, status, None if ok else "corrupt", MIMES[i % 5],
            "pypdf" if ok else None, (i * 7919) % 5_000_000, 1_700_000_000 * 10**9 + i,
            f"{i * 2654435761:064x}"[-64:], (i * 37) % 100_000 if ok else 0, i % 40 or None,
            i % 900, "new", "good" if ok else None, line,
        )  # fmt: skip


def build(db: Path, n: int) -> dict[str, float]:
    """Write the database of N records; its build time and size."""
    t0 = time.perf_counter()
    con = sqlite3.connect(db, isolation_level=None)
    con.executescript(SCHEMA)
    con.executescript(TRIGGERS)
    con.execute("BEGIN")
    con.executemany(
        "INSERT INTO records (root, path, status, reason, mime, extractor, size, mtime_ns,"
        " sha256, chars, pages, ms, why, quality, line) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        rows(n),
    )
    con.execute("COMMIT")
    inserted = time.perf_counter() - t0
    for ddl in INDEXES:
        con.execute(ddl)
    con.execute("ANALYZE")
    con.close()
    return {
        "insert_s": inserted,
        "build_s": time.perf_counter() - t0,
        "size_mb": sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6,
    }


def timed(fn: Callable[[], object], runs: int = 5) -> tuple[float, float]:
    """Median and max seconds of ``runs`` calls."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times)


def queries(db: Path, n: int) -> dict[str, tuple[float, float]]:
    """The dashboard's and the watcher's questions, each timed."""
    out: dict[str, tuple[float, float]] = {}
    t0 = time.perf_counter()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.execute("SELECT status, reason, n FROM counts").fetchall()
    out["open+counts"] = (time.perf_counter() - t0, time.perf_counter() - t0)
    out["counts"] = timed(lambda: con.execute("SELECT status, reason, n FROM counts").fetchall())
    for col in SORTS:
        order = f"{col}, root, path" if col != "path" else "root, path"
        first = f"SELECT id, root, path, status, mime, size FROM records ORDER BY {order} LIMIT 50"
        out[f"page {col}"] = timed(lambda q=first: con.execute(q).fetchall())
        deep_key = con.execute(
            f"SELECT {order} FROM records ORDER BY {order} LIMIT 1 OFFSET ?", (n // 2,)
        ).fetchone()
        keys = ", ".join(order.split(", "))
        marks = ", ".join("?" * len(deep_key))
        deep = (
            f"SELECT id, root, path, status, mime, size FROM records WHERE ({keys}) > ({marks})"
            f" ORDER BY {order} LIMIT 50"
        )
        out[f"page {col} deep"] = timed(lambda q=deep, k=deep_key: con.execute(q, k).fetchall())
    where = "status = 'error' AND mime LIKE '%pdf%'"
    out["filter rows"] = timed(
        lambda: con.execute(
            f"SELECT id, path FROM records WHERE {where} ORDER BY root, path LIMIT 50"
        ).fetchall()
    )
    out["filter count"] = timed(
        lambda: con.execute(f"SELECT count(*) FROM records WHERE {where}").fetchone()
    )
    sub = "path LIKE '%file0004%'"
    out["substring rows"] = timed(
        lambda: con.execute(
            f"SELECT id, path FROM records WHERE {sub} ORDER BY root, path LIMIT 50"
        ).fetchall()
    )
    out["substring count"] = timed(
        lambda: con.execute(f"SELECT count(*) FROM records WHERE {sub}").fetchone()
    )
    con.close()
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA synchronous = NORMAL")
    flips = iter(range(10**9))

    def upsert() -> None:
        i = next(flips)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "UPDATE records SET status = ?, reason = ?, size = ?, line = ? WHERE root = ? AND"
            " path = ?",
            ("error" if i % 2 else "ok", "corrupt" if i % 2 else None, i, b"{}", "/data/corpus",
             f"d000/file{i % 10000:07d}.pdf"),
        )  # fmt: skip
        writer.execute("COMMIT")

    out["upsert"] = timed(upsert, runs=21)
    writer.close()
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path, help="where the database goes (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        db = Path(tmp) / "index.sqlite"
        load = os.getloadavg()[0]
        built = build(db, args.records)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        asked = queries(db, args.records)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(
            f"{args.records:,} records, SQLite {sqlite3.sqlite_version}, cpus {os.cpu_count()},"
            f" load {load:.1f} -> {os.getloadavg()[0]:.1f}"
        )
        print(f"build: inserts {built['insert_s']:.1f} s, with indexes {built['build_s']:.1f} s,"
              f" {built['size_mb']:.0f} MB")  # fmt: skip
        print(f"{'query':<22}{'median ms':>10}{'max ms':>9}")
        for name, (median, worst) in asked.items():
            print(f"{name:<22}{median * 1e3:>10.1f}{worst * 1e3:>9.1f}")
        print(f"peak rss {rss / 1024:.0f} MB (after the build: {rss_before / 1024:.0f} MB)")
        if args.keep:
            kept = Path(tempfile.mkdtemp()) / db.name
            os.replace(db, kept)
            print(f"kept {kept}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
