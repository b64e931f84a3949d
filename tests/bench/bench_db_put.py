"""What the store's index costs a sweep per record: 20,000 records put 256 at a time.

    python tests/bench/bench_db_put.py [N]

Times, in this process, N records written into a fresh index as a sweep's runs write them
(``RecordDB.put`` per batch of 256, one commit at the end): as the engine does, without the
counts triggers, without the tombstone delete, and the serialising of the lines alone. Each
a median of 3 with min and max. Not a test: nothing asserts a time.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from engine import db as index
from engine.jsonl import line_of
from engine.records import Record


def _records(n: int) -> list[Record]:
    return [
        Record(
            "/r",
            f"d{i % 100}/f{i:06d}.txt",
            100,
            1_700_000_000_000_000_000 + i,
            "ok",
            sha256=f"{i:064x}",
            mime="text/plain",
            extractor="text:utf-8",
            reader="text",
            v=2,
            chars=100,
            ms=1,
        )
        for i in range(n)
    ]


def _put_all(records: Sequence[Record], prepare: Callable[[index.RecordDB], None]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        db = index.RecordDB.open_writer(Path(tmp) / index.DB)
        db.replace_all([], None)
        prepare(db)
        t0 = time.perf_counter()
        for i in range(0, len(records), 256):
            db.put(records[i : i + 256])
        db.commit()
        took = time.perf_counter() - t0
        db.close()
    return took


def _no_triggers(db: index.RecordDB) -> None:
    for name in ("counts_in", "counts_out", "counts_change"):
        db.con.execute(f"DROP TRIGGER {name}")


def _no_tombstones(db: index.RecordDB) -> None:
    def put(records: Sequence[Record]) -> None:
        seq = db._begin()
        db.con.executemany(index._UPSERT, [index.row_of(r, seq) for r in records])

    db.put = put  # type: ignore[method-assign]


def _report(what: str, times: list[float]) -> None:
    print(
        f"{what:28} {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"
    )


def main() -> None:
    """Time the variants, three runs each, interleaved."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    records = _records(n)
    print(f"command: python {' '.join(sys.argv)}; {n:,} records; load {os.getloadavg()[0]:.1f}")
    variants: dict[str, Callable[[index.RecordDB], None]] = {
        "as the engine writes": lambda db: None,
        "without the triggers": _no_triggers,
        "without the tombstone delete": _no_tombstones,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    lines: list[float] = []
    for _ in range(3):
        for name, prepare in variants.items():
            times[name].append(_put_all(records, prepare))
        t0 = time.perf_counter()
        for r in records:
            line_of(r)
        lines.append(time.perf_counter() - t0)
    for name, got in times.items():
        _report(name, got)
    _report("serialising the lines alone", lines)


if __name__ == "__main__":
    main()
