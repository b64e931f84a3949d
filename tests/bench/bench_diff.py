"""``quarry diff`` of two synthetic stores of N records (default 1,000,000) differing in 1%.

    python tests/bench/bench_diff.py [--records N] [--runs 3] [--keep DIR]

Builds two stores of one root (``extract.jsonl`` and an index in step with it, as a sweep
leaves them): the second differs from the first in 1% of its files, spread evenly: 0.5%
whose content changed (another hash, another text, both texts in their stores), 0.2% status
flips (``ok -> error`` and back), 0.1% another reason, 0.1% gone and 0.1% new. Unchanged
records have another ``ms`` in 1 of 10 (``--fresh``: all of them, and another ``why``, as
two fresh sweeps of one folder). Texts are written only for the records the diff reads (the
others would be the same files in both stores, which the diff never opens).

Then times the real command, ``python -m engine diff A B --json > /dev/null`` (process start
included), ``--runs`` times: median with min and max of the wall time and of the command's
CPU time, its peak resident memory, and the load average before and after. Not a test:
nothing asserts a time. The goal (issue 28): at most 10 s at 1,000,000 records.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from engine.db import DB, RecordDB, identity_of
from engine.jsonl import line_of
from engine.quality import QUALITY_VERSION, Quality
from engine.records import Record

ROOT = "/srv/bench"
WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi",
]  # fmt: skip


def _record(i: int, *, sha: int = 0, **changes: object) -> Record:
    quality = Quality("good", QUALITY_VERSION, "en", "Latin", 0.5)
    rec = Record(
        ROOT, f"d{i // 1000:04d}/f{i:07d}.txt", 1000 + i % 97,
        1_700_000_000_000_000_000 + i, "ok", sha256=f"{i + sha:064x}", mime="text/plain",
        extractor="text:utf-8", reader="text", v=2, chars=200, ms=1, quality=quality,
    )  # fmt: skip
    return rec.evolve(**changes) if changes else rec


def _text(i: int, shift: int) -> str:
    return " ".join(WORDS[(i + k + shift) % len(WORDS)] for k in range(40))


FRESH = False
"""``--fresh``: every unchanged record has another ``ms`` and ``why`` in the second store
(two fresh sweeps of one folder), not one in ten."""


def _pair(i: int) -> tuple[Record | None, Record | None, str | None, str | None]:
    """The records of file ``i`` in the first and second store, and texts to store."""
    a = _record(i)
    which = i % 1000
    if which < 5:  # content changed: another hash and text
        b = _record(i, sha=10**12, chars=len(_text(i, 3)))
        a = a.evolve(chars=len(_text(i, 0)))
        return a, b, _text(i, 0), _text(i, 3)
    if which == 5:
        return (
            a,
            _record(i, status="error", reason="corrupt", sha=0, quality=None, chars=0),
            None,
            None,
        )
    if which == 6:
        return _record(i, status="error", reason="corrupt", quality=None, chars=0), a, None, None
    if which == 7:
        e = _record(i, status="error", reason="corrupt", quality=None, chars=0)
        return e, e.evolve(reason="timeout"), None, None
    if which == 8:
        return a, None, None, None
    if which == 9:
        return None, a, None, None
    if FRESH:
        return a, a.evolve(ms=2, why="new"), None, None
    return a, (a.evolve(ms=2) if which % 10 == 0 else a), None, None


def _side(n: int, side: int, texts: Path | None = None) -> Iterator[Record]:
    """The records of one store in key order (paths are made in ``i`` order); with
    ``texts``, the texts the diff reads are written into that store as they pass."""
    for i in range(n):
        pair = _pair(i)
        rec, text = pair[side], pair[2 + side]
        if rec is None:
            continue
        if texts is not None and text is not None and rec.sha256 is not None:
            _put(texts, rec.sha256, text)
        yield rec


def build(out: Path, n: int) -> tuple[Path, Path]:
    """The two stores under ``out`` (reused when already built for ``n``), written a record
    at a time: two million records are never held."""
    a, b = out / "A", out / "B"
    done = out / f"built-{n}{'-fresh' if FRESH else ''}"
    if done.exists():
        return a, b
    for side, where in ((0, a), (1, b)):
        where.mkdir(parents=True, exist_ok=True)
        jsonl = where / "extract.jsonl"
        with open(jsonl, "wb") as fh:
            for rec in _side(n, side, where):
                fh.write(line_of(rec))
        db = RecordDB.open_writer(where / DB)
        db.replace_all(_side(n, side), identity_of(jsonl))
        db.close()
    done.touch()
    return a, b


def _put(store: Path, sha: str, text: str) -> None:
    folder = store / "extract" / sha[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sha}.txt").write_text(text)


def _children_cpu() -> float:
    """CPU seconds (user + system) of the children waited for so far: steadier than the wall
    time on a machine others share."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Build the stores, then time the command ``--runs`` times."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the stores here and keep them")
    parser.add_argument("--fresh", action="store_true", help="every record's ms differs")
    args = parser.parse_args()
    global FRESH
    FRESH = args.fresh
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        t0 = time.perf_counter()
        a, b = build(out, args.records)
        print(f"stores of {args.records:,} records built in {time.perf_counter() - t0:.1f} s")
        times: list[float] = []
        cpus: list[float] = []
        load = os.getloadavg()[0]
        for _ in range(args.runs):
            used = _children_cpu()
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "engine", "diff", "--json", str(a), str(b)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            times.append(time.perf_counter() - t0)
            cpus.append(_children_cpu() - used)
            assert proc.returncode == 4, proc.stderr  # the flips ok -> error got worse
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(
            f"quarry diff --json, {args.records:,} records, 1% changed: median "
            f"{statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}) "
            f"over {len(times)} run(s); CPU (user + system) median "
            f"{statistics.median(cpus):.2f} s (min {min(cpus):.2f}, max {max(cpus):.2f}); "
            f"peak RSS {rss:.0f} MB; load {load:.2f} before, {os.getloadavg()[0]:.2f} after"
        )


if __name__ == "__main__":
    main()
