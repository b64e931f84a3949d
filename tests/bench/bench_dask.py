"""Benchmark: the local pool against a two-worker Dask LocalCluster, and one writer's ceiling.

    python tests/bench/bench_dask.py compare [--files 20000] [--corpus ../shared/corpus]
                                             [--no-corpus] [--runs 3] [--workers 2]
                                             [--dir /tmp/dask-bench]
    python tests/bench/bench_dask.py corpus [--corpus ../shared/corpus] [--ocr] [--runs 3]
                                            [--scheduler] [--against CHECKOUT]
    python tests/bench/bench_dask.py ceiling [--files 20000]

``compare``: cold sweeps with the real command (``python -m engine sweep TREE --out S``,
process and cluster start included) of ``--files`` small text files and of the corpus
(``--without tesseract``, as bench_sweep does), with the local pool (``--workers N``) and with
``--executor dask-local:N`` (N workers of one thread), taking turns ``--runs`` times: median,
min and max of each, the load, and Dask's files/s over the local pool's (issue 27 wants at
least 0.7x on 20,000 tiny files, 0.9x on the corpus).

``corpus``: the same comparison on the corpus alone (no tiny files made): ``--without
tesseract`` unless ``--ocr``, which keeps OCR (slow files of a few seconds each, where a task's
size and the last tasks' stragglers show).

``--scheduler`` (either comparison): Dask's side sweeps with ``--executor dask://...`` on a
cluster started once before the runs, as one is used (``dask scheduler`` and ``dask worker
--nworkers N --nthreads 1`` on 127.0.0.1), instead of a ``dask-local:N`` LocalCluster that
each sweep starts and closes.

``--against CHECKOUT`` (either comparison, with ``--scheduler``): another checkout (its own
``.venv``) sweeps too, each of its sweeps right after this one's of the same kind (local,
Dask, the other's local, the other's Dask, ``--runs`` times over), on a cluster of its own
code: on a machine whose load swings, sets run one after the other differ by more than the
change measured, where sweeps taking turns share each swing. Medians of each, and the ratios.

``ceiling``: how fast the one process that holds the store's lock can take results, whatever
runs the reads: a sweep whose executor answers every read at once (the texts already in the
store, as Dask workers leave them) measures walk, hash, plan, records and the final write.
Its files/s divided by one worker's files/s is how many workers one store writer can feed.

Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchkit import compiled  # noqa: E402 (this folder is the script's first path)

from engine.executor import Executor  # noqa: E402 (after the path insert)
from engine.extract import Outcome, ReadTask  # noqa: E402
from engine.limits import Limits  # noqa: E402
from engine.records import Status  # noqa: E402
from engine.store import Store  # noqa: E402
from engine.sweep import Sweeper, SweepOptions  # noqa: E402
from engine.tools import ToolSet  # noqa: E402
from tests.bench.bench_sweep import make_tree  # noqa: E402


def sweep_cmd(root: Path, store: Path, *extra: str, checkout: Path = REPO) -> float:
    """Seconds of one cold ``python -m engine sweep`` into an empty store (``checkout``'s
    engine, with its own venv's Python when it is another checkout)."""
    if store.exists():
        shutil.rmtree(store)
    cmd = [python_of(checkout), "-m", "engine", "sweep", str(root), "--out", str(store), "-q",
           *extra]  # fmt: skip
    began = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=checkout, check=False)
    took = time.perf_counter() - began
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return took


def compare(
    label: str, root: Path, work: Path, runs: int, workers: int, where: str, *extra: str
) -> None:
    """Cold sweeps of ``root``, local pool and Dask (``--executor where``) taking turns (a
    change of load hits both): median, min and max seconds of each, files/s at the median,
    and the ratio."""
    files = sum(1 for p in root.rglob("*") if p.is_file())
    local: list[float] = []
    dask: list[float] = []
    loads: list[float] = []
    for _ in range(runs):
        loads.append(os.getloadavg()[0])
        local.append(sweep_cmd(root, work / "local", "--workers", str(workers), *extra))
        loads.append(os.getloadavg()[0])
        dask.append(sweep_cmd(root, work / "dask", "--executor", where, *extra))
    lt, dt = statistics.median(local), statistics.median(dask)
    print(f"{label}: {files:,} files, {runs} run(s) each, load {min(loads):.1f}-{max(loads):.1f}")
    for name, times in ((f"local pool, {workers} workers", local),
                        (f"--executor {where}", dask)):  # fmt: skip
        med = statistics.median(times)
        print(f"  {name:<34}  median {med:6.1f} s  (min {min(times):.1f}, max {max(times):.1f})"
              f"  {files / med:7.0f} files/s")  # fmt: skip
    print(f"  Dask files/s over the local pool's  {lt / dt:.2f}x")


def python_of(checkout: Path) -> str:
    """The Python that runs ``checkout``'s engine: this one's, or that checkout's venv's."""
    return sys.executable if checkout == REPO else str(checkout / ".venv" / "bin" / "python")


def compare_against(
    label: str, root: Path, work: Path, runs: int, workers: int, wheres: dict[Path, str],
    *extra: str,
) -> None:  # fmt: skip
    """:func:`compare` for several checkouts at once, every sweep taking turns: local then
    Dask of this checkout, then of the other, ``runs`` times over."""
    files = sum(1 for p in root.rglob("*") if p.is_file())
    times: dict[tuple[Path, str], list[float]] = {}
    loads: list[float] = []
    for _ in range(runs):
        for checkout, where in wheres.items():
            for kind, args in (("local", ("--workers", str(workers))),
                               ("dask", ("--executor", where))):  # fmt: skip
                loads.append(os.getloadavg()[0])
                took = sweep_cmd(root, work / kind, *args, *extra, checkout=checkout)
                times.setdefault((checkout, kind), []).append(took)
    print(f"{label}: {files:,} files, {runs} run(s) each, every sweep taking turns, "
          f"load {min(loads):.1f}-{max(loads):.1f}")  # fmt: skip
    for checkout in wheres:
        name = "this checkout" if checkout == REPO else str(checkout)
        local, dask = times[(checkout, "local")], times[(checkout, "dask")]
        for kind, got in (("local pool", local), ("Dask", dask)):
            med = statistics.median(got)
            print(f"  {name:<16} {kind:<10}  median {med:6.1f} s  (min {min(got):.1f}, "
                  f"max {max(got):.1f})  {files / med:7.0f} files/s")  # fmt: skip
        pairs = sorted(lt / dt for lt, dt in zip(local, dask, strict=True))
        print(f"  {name:<16} Dask files/s over the local pool's  "
              f"{statistics.median(local) / statistics.median(dask):.2f}x (each run's: "
              f"{', '.join(f'{r:.2f}' for r in pairs)})")  # fmt: skip


class Instant:
    """An executor that answers every read at once, as if a cluster of any size had read it.

    Each text is put in the store at its final place beforehand (where Dask workers rename
    theirs), so the engine's side is exactly what it does for a Dask sweep.
    """

    def __init__(self, text: Path) -> None:
        self.text = text
        self._tasks: list[ReadTask] = []

    def submit(self, tasks: Iterable[ReadTask]) -> None:
        self._tasks.extend(tasks)

    def finished(
        self, tick: Callable[[], None] | None = None
    ) -> Iterator[tuple[ReadTask, Outcome]]:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            dest = Path(task.tmp_dir).parent / "extract" / task.sha256[:2] / f"{task.sha256}.txt"
            if not dest.exists():
                self._link(dest)
            yield task, Outcome(Status.OK, "text/plain", reader="text", v=1, extractor="text:utf-8",
                                chars=8, ms=1, text_file=str(dest))  # fmt: skip

    def _link(self, dest: Path) -> None:
        """A hard link to the one text; a fresh copy once a file system's link limit is hit."""
        try:
            os.link(self.text, dest)
        except OSError as exc:
            if exc.errno != errno.EMLINK:
                raise
            self.text = self.text.with_name(f"{self.text.stem}+.txt")
            self.text.write_text("a text.\n")
            os.link(self.text, dest)

    def cancel(self) -> None:
        self._tasks = []

    def close(self) -> None:
        self.cancel()


def ceiling(root: Path, work: Path) -> None:
    store = work / "ceiling"
    if store.exists():
        shutil.rmtree(store)
    store.mkdir(parents=True)
    text = work / "one.txt"
    text.write_text("a text.\n")
    files = sum(1 for p in root.rglob("*") if p.is_file())

    def make(_limits: Limits, _workers: int) -> Executor:
        return Instant(text)

    opts = SweepOptions(out=store, tools=ToolSet.empty(), executor=make)
    began = time.perf_counter()
    with Sweeper([root], opts) as s:
        result = s.run()
    took = time.perf_counter() - began
    assert result.extracted == files, result
    assert Store(store).exists()
    print(f"one store writer, {files:,} files answered at once: {took:.1f} s, "
          f"{files / took:,.0f} files/s (walk, hash, plan, records, final write)")  # fmt: skip


@contextlib.contextmanager
def dask_where(scheduler: bool, workers: int, work: Path, checkout: Path = REPO) -> Iterator[str]:
    """What ``--executor`` the Dask sweeps get: a LocalCluster of their own, or a cluster
    started here once (closed on leaving), of ``checkout``'s code."""
    if not scheduler:
        yield f"dask-local:{workers}"
        return
    from tests.engine.daskkit import external_cluster

    # A fresh folder: the scheduler's file of an earlier run would name a scheduler long gone.
    tmp = Path(tempfile.mkdtemp(dir=work))
    with external_cluster(tmp, workers, python=python_of(checkout), cwd=checkout) as cluster:
        yield "dask://" + cluster.address.removeprefix("tcp://")


def default_corpus() -> Path:
    """``../shared/corpus`` beside the checkout, as the other benches take it (the main
    checkout's), else ``/work/shared/corpus`` (a worktree's, one folder further down)."""
    for there in (REPO.parent / "shared" / "corpus", Path("/work/shared/corpus")):
        if there.is_dir():
            return there
    return REPO.parent / "shared" / "corpus"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("part", choices=["compare", "corpus", "ceiling"])
    p.add_argument("--files", type=int, default=20_000)
    p.add_argument("--corpus", type=Path, default=default_corpus())
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--no-corpus", action="store_true", help="the small files only")
    p.add_argument("--ocr", action="store_true", help="corpus: keep tesseract")
    p.add_argument("--scheduler", action="store_true", help="Dask: a cluster started once")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--dir", type=Path, default=None)
    p.add_argument("--against", type=Path, default=None, help="another checkout, taking turns")
    args = p.parse_args()
    if args.against is not None and not args.scheduler:
        p.error("--against needs --scheduler (each checkout's cluster runs its own code)")
    compiled(REPO, *([args.against.resolve()] if args.against is not None else []))
    work = args.dir or Path(tempfile.mkdtemp(prefix="dask-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    tree = work / "tree"
    if args.part != "corpus" and not (
        tree.exists() and sum(1 for _ in tree.rglob("*.txt")) == args.files
    ):
        make_tree(tree, args.files)
    try:
        if args.part == "ceiling":
            ceiling(tree, work)
            return
        if args.against is not None:
            against(args, tree, work)
            return
        with dask_where(args.scheduler, args.workers, work) as where:
            if args.part == "corpus":
                extra = () if args.ocr else ("--without", "tesseract")
                label = "corpus" + ("" if args.ocr else " (--without tesseract)")
                compare(label, args.corpus, work, args.runs, args.workers, where, *extra)
            else:
                compare(f"{args.files:,} small files", tree, work, args.runs, args.workers,
                        where)  # fmt: skip
                if args.corpus.is_dir() and not args.no_corpus:
                    compare("corpus (--without tesseract)", args.corpus, work, args.runs,
                            args.workers, where, "--without", "tesseract")  # fmt: skip
    finally:
        print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


def against(args: argparse.Namespace, tree: Path, work: Path) -> None:
    """``--against``: both checkouts' sweeps taking turns, each on a cluster of its own."""
    checkouts = (REPO, args.against.resolve())
    with contextlib.ExitStack() as stack:
        wheres = {
            c: stack.enter_context(dask_where(True, args.workers, work, c)) for c in checkouts
        }
        no_ocr = ("--without", "tesseract")
        if args.part == "compare":
            compare_against(f"{args.files:,} small files", tree, work, args.runs, args.workers,
                            wheres)  # fmt: skip
        if args.part == "corpus" or (args.corpus.is_dir() and not args.no_corpus):
            extra = () if args.ocr else no_ocr
            label = "corpus" + ("" if extra == () else " (--without tesseract)")
            compare_against(label, args.corpus, work, args.runs, args.workers, wheres, *extra)


if __name__ == "__main__":
    main()
