"""Benchmark: what a big file that changes all day costs ``quarry watch`` (a log appended to).

    python tests/bench/bench_watch_churn.py [--mb 6] [--seconds 60] [--every 0.5] [--runs 3]
                                            [--dir /tmp/quarry-churn] [--quarry .venv/bin/quarry]
                                            [--against OTHER_QUARRY]

A folder of one log of ``--mb`` megabytes (lines of text) is swept, then the real ``quarry
watch`` follows it while this script appends a line every ``--every`` seconds for ``--seconds``;
then a SIGINT stops the watch (which applies what was queued) and the figures are read:

- ``reads``: the log's records the watch reported (its ``ok`` lines on stderr), each a read of
  the whole file, its text indexed and the text before it taken out of the index;
- ``CPU``: user and system time of the watch and every process under it (its read workers);
- ``texts``: the texts in the store's ``extract/`` once it stopped, and their size, with
  ``history/``'s and ``extract.db``'s: what the minute left on the disk;
- whether the store's record ends with the last line appended (nothing lost).

``--against`` names a second quarry command (another checkout's): its runs interleave with the
first's, run for run, so both see the same load. Each figure a median with min and max. Not a
test: nothing here asserts a time or a size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

LINE = "2026-12-07 12:00:{s:02d} INFO request {i} served in {ms} ms to user{u}\n"
WATCHING_S = 60.0
"""Longest wait for the watch to say it watches (a loaded machine)."""


def make_log(path: Path, mb: float) -> None:
    with path.open("w", encoding="utf-8") as f:
        i, size = 0, 0
        while size < mb * 1e6:
            line = LINE.format(s=i % 60, i=i, ms=(i * 37) % 500, u=(i * 13) % 999)
            f.write(line)
            size += len(line)
            i += 1


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def one_run(quarry: str, work: Path, args: argparse.Namespace) -> dict[str, float]:
    share, store = work / "share", work / "store"
    shutil.rmtree(work, ignore_errors=True)
    share.mkdir(parents=True)
    log = share / "app.log"
    make_log(log, args.mb)
    subprocess.run([quarry, "sweep", str(share), "--out", str(store)], check=True,
                   capture_output=True)  # fmt: skip
    err_path = work / "watch.err"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with err_path.open("w") as err:
        proc = subprocess.Popen([quarry, "watch", str(share), "--out", str(store)],
                                stdout=subprocess.DEVNULL, stderr=err)  # fmt: skip
    end = time.monotonic() + WATCHING_S
    while "watching" not in err_path.read_text(errors="replace"):
        if time.monotonic() > end or proc.poll() is not None:
            proc.kill()
            raise SystemExit(f"quarry watch never said it watches: {err_path.read_text()}")
        time.sleep(0.05)
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < args.seconds:
        n += 1
        with log.open("a", encoding="utf-8") as f:
            f.write(f"appended line {n}\n")
        time.sleep(args.every)
    proc.send_signal(signal.SIGINT)
    proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reads = sum(1 for line in err_path.read_text(errors="replace").splitlines()
                if line.startswith("ok") and "app.log" in line)  # fmt: skip
    texts = list((store / "extract").rglob("*.txt"))
    jsonl = [json.loads(x) for x in (store / "extract.jsonl").read_text().splitlines()]
    final = (store / "extract" / jsonl[0]["sha256"][:2] / f"{jsonl[0]['sha256']}.txt").read_text()
    return {
        "reads": reads,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "texts": len(texts),
        "texts_mb": sum(p.stat().st_size for p in texts) / 1e6,
        "history_mb": size_of(store / "history") / 1e6 if (store / "history").exists() else 0.0,
        "db_mb": size_of(store / "extract.db") / 1e6,
        "kept_last": float(final.endswith(f"appended line {n}\n")),
        "rc": proc.returncode,
    }


def show(side: str, runs: list[dict[str, float]]) -> None:
    def fig(key: str, fmt: str) -> str:
        vals = [r[key] for r in runs]
        med = statistics.median(vals)
        return f"{med:{fmt}} ({min(vals):{fmt}}-{max(vals):{fmt}})"

    print(f"{side}: reads {fig('reads', '.0f')}, CPU {fig('cpu', '.1f')} s, texts "
          f"{fig('texts', '.0f')} ({fig('texts_mb', '.0f')} MB), history/ "
          f"{fig('history_mb', '.0f')} MB, extract.db {fig('db_mb', '.0f')} MB; last line "
          f"in the store in {sum(int(r['kept_last']) for r in runs)} of {len(runs)} runs, "
          f"exit {sorted({int(r['rc']) for r in runs})}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=6.0, help="the log's size in megabytes")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long lines are appended")
    ap.add_argument("--every", type=float, default=0.5, help="seconds between two lines")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "quarry-churn"))
    ap.add_argument("--quarry", default=".venv/bin/quarry")
    ap.add_argument("--against", help="a second quarry command, run interleaved with --quarry")
    args = ap.parse_args()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {platform.python_version()}")
    print(f"/proc/loadavg at start: {Path('/proc/loadavg').read_text().strip()}")
    print(f"log {args.mb:g} MB, a line every {args.every:g} s for {args.seconds:g} s")
    sides = [("quarry", args.quarry)] + ([("against", args.against)] if args.against else [])
    got: dict[str, list[dict[str, float]]] = {side: [] for side, _ in sides}
    for _ in range(args.runs):
        for side, quarry in sides:
            got[side].append(one_run(quarry, Path(args.dir) / side, args))
    for side, runs in got.items():
        show(f"{side} ({dict(sides)[side]})", runs)
    print(f"/proc/loadavg at the end: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
