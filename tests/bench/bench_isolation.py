"""What isolation costs, and what it bounds. Run: ``python tests/bench/bench_isolation.py``.

Three measurements (each can be run alone: ``overhead``, ``hangs``, ``bomb``):

- **overhead**: files/s reading N tiny text files through the worker pool against calling
  ``read_one`` in a loop in this process; the ratio is the per-file cost of isolation.
- **hangs**: a sweep over a folder of which some files hang forever, against the same
  folder with those files clean; the extra time should be about
  ``hangs x (timeout + grace) / workers``.
- **bomb**: peak RSS of this (the engine's) process while a worker reads a DOCX whose
  document part inflates to 1 GiB, and one whose text runs to the 16 Mi character cap.
- **recycle**: N tiny files through a pool whose workers leave after a few reads (the drain
  race of issue 11): counts the reads blamed on a worker's death, which must be none.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from engine.extract import ReadTask, read_one
from engine.isolate import ReadPool, grace
from engine.limits import Limits
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet

MiB = 1024 * 1024


def tiny_files(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"note{i:05}.txt"
        p.write_text(f"tiny note number {i}\nwith two lines\n")
        paths.append(p)
    return paths


def overhead(work: Path, n: int, workers: int, rounds: int = 3) -> None:
    paths = tiny_files(work / "tiny", n)
    tmp = work / "tmp"
    tmp.mkdir()
    limits = Limits()
    tasks = [ReadTask(str(p), f"{i:064x}", limits, ToolSet.empty(), str(tmp), 40) for i, p in
             enumerate(paths)]  # fmt: skip
    pools = {w: ReadPool(limits, workers=w) for w in sorted({1, workers})}
    for pool in pools.values():
        list(pool.read(tasks[: pool.workers]))  # workers up, readers imported: not measured
    best: dict[str, float] = {}
    for _ in range(rounds):  # interleaved, best of each: other load on the machine hits all
        best["in-process"] = max(best.get("in-process", 0.0), _rate(tasks, tmp, None))
        for w, pool in pools.items():
            best[f"pool, {w} worker(s)"] = max(best.get(f"pool, {w} worker(s)", 0.0),
                                               _rate(tasks, tmp, pool))  # fmt: skip
    for pool in pools.values():
        pool.close()
    base = best["in-process"]
    print(f"overhead: {n} tiny text files, best of {rounds} interleaved rounds")
    for name, rate in best.items():
        print(f"  {name}: {rate:,.0f} files/s  (in-process / this = {base / rate:.2f}x)")


def _rate(tasks: list[ReadTask], tmp: Path, pool: ReadPool | None) -> float:
    t = time.perf_counter()
    if pool is None:
        for task in tasks:
            read_one(task)
    else:
        for _ in pool.read(tasks):
            pass
    rate = len(tasks) / (time.perf_counter() - t)
    _clear(tmp)
    return rate


def _clear(folder: Path) -> None:
    for f in folder.iterdir():
        f.unlink()


def hangs(work: Path, n: int, hanging: int, workers: int, timeout: float) -> None:
    from engine.readers import registry
    from tests.faultreader import SPEC, fixture

    registry.use_extra((SPEC,))
    limits = Limits(timeout_s=timeout)
    times = []
    for action in ("ok", "hang"):
        root = work / f"hangs-{action}"
        tiny_files(root, n - hanging)
        for i in range(hanging):
            (root / f"fault{i:02}.bin").write_bytes(fixture(action, str(i)))  # distinct content
        opts = SweepOptions(out=work / f"store-{action}", limits=limits, workers=workers,
                            tools=ToolSet.empty())  # fmt: skip
        with Sweeper([root], opts) as sweeper:
            list(sweeper.executor.finished())
            t = time.perf_counter()
            result = sweeper.run()
            times.append(time.perf_counter() - t)
        print(f"hangs: {n} files, {hanging} '{action}' faults, {workers} workers, timeout "
              f"{timeout:g} s: {times[-1]:.2f} s, errors {result.errors}")  # fmt: skip
    bound = hanging * (timeout + grace(limits)) / workers
    print(f"  extra time {times[1] - times[0]:.2f} s; hangs x (timeout + grace) / workers "
          f"= {bound:.2f} s")  # fmt: skip


def bomb_docx(path: Path, inflated: int, text: bool) -> None:
    """A DOCX whose document part inflates to ``inflated`` bytes."""
    head = b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/' \
           b'wordprocessingml/2006/main"><w:body>'  # fmt: skip
    tail = b"</w:body></w:document>"
    para = b"<w:p><w:r><w:t>" + b"all work and no play " * 40 + b"</w:t></w:r></w:p>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("word/document.xml", "w", force_zip64=True) as fh:
            fh.write(head)
            chunk = para * (MiB // len(para)) if text else b" " * MiB
            for _ in range(inflated // len(chunk)):
                fh.write(chunk)
            fh.write(tail)


def bomb(work: Path) -> None:
    root = work / "bombs"
    root.mkdir()
    bomb_docx(root / "gigabyte-of-spaces.docx", 1024 * MiB, text=False)
    bomb_docx(root / "sixty-mib-of-text.docx", 60 * MiB, text=True)
    sizes = ", ".join(f"{p.name} {p.stat().st_size / MiB:.1f} MiB" for p in sorted(root.iterdir()))
    print(f"bomb: {sizes}")
    # Default limits refuse both at once (ratio, member size); with the zip and XML limits
    # lifted the worker really inflates and parses all of it: the engine must not notice.
    lifted = Limits(zip_member_bytes=4096 * MiB, zip_ratio=10**9, xml_bytes=4096 * MiB)
    for name, limits in (("default limits", Limits()), ("zip/XML limits lifted", lifted)):
        before = _peak_mib()
        opts = SweepOptions(out=work / f"store-{len(name)}", limits=limits, workers=2,
                            tools=ToolSet.empty())  # fmt: skip
        with Sweeper([root], opts) as sweeper:
            t = time.perf_counter()
            sweeper.run()
            took = time.perf_counter() - t
            verdicts = {r.path: (r.status, r.reason, r.chars, r.ms) for r in
                        sweeper.records.values()}  # fmt: skip
        print(f"  {name}: sweep {took:.1f} s; engine peak RSS {before:.0f} MiB before, "
              f"{_peak_mib():.0f} MiB after")  # fmt: skip
        for path, verdict in sorted(verdicts.items()):
            print(f"    {path}: (status, reason, chars, ms) = {verdict}")


def recycle(work: Path, n: int, workers: int, max_reads: int = 3, rounds: int = 3) -> None:
    paths = tiny_files(work / "recycle", n)
    tmp = work / "recycle-tmp"
    tmp.mkdir()
    limits = Limits()
    tasks = [ReadTask(str(p), f"{i:064x}", limits, ToolSet.empty(), str(tmp), 40) for i, p in
             enumerate(paths)]  # fmt: skip
    for r in range(rounds):
        pool = ReadPool(limits, workers=workers, max_reads=max_reads)
        try:
            t = time.perf_counter()
            outcomes = [o for _task, o in pool.read(tasks)]
            took = time.perf_counter() - t
        finally:
            pool.close()
        crashed = sum(o.lost_worker for o in outcomes)
        print(f"recycle: round {r + 1}, {n} files, {workers} workers leaving after {max_reads} "
              f"reads ({pool.started} started): {crashed} blamed on a dead worker, "
              f"{took:.1f} s")  # fmt: skip
        for f in tmp.iterdir():
            f.unlink()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["overhead", "hangs", "bomb"])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--hang-files", type=int, default=1000)
    ap.add_argument("--hanging", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}")
    work = Path(tempfile.mkdtemp(prefix="quarry-bench-"))
    try:
        if "overhead" in args.parts:
            overhead(work, args.files, args.workers, args.rounds)
        if "hangs" in args.parts:
            hangs(work, args.hang_files, args.hanging, args.workers, args.timeout)
        if "bomb" in args.parts:
            bomb(work)
        if "recycle" in args.parts:
            recycle(work, args.files, args.workers, rounds=args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
