"""Benchmark: quarry's cold and warm sweeps against their floors and against recollindex.

    python tests/bench/bench_sweep.py [--files 20000] [--runs 3] [--corpus ../shared/corpus]
                                      [--dir /tmp/quarry-bench] [--quarry .venv/bin/quarry]
                                      [--against OTHER_QUARRY] [--no-corpus | --corpus-only]

One run, one machine, one tree, each figure a median of ``--runs`` with min and max:

- ``quarry cold``: the real command (process start included), ``quarry sweep TREE --out S``
  into an empty store;
- ``quarry warm``: the same command again, nothing changed (no file hashed or read): the
  first re-sweep after a cold one, which marks every record ``reused`` and so rewrites
  ``extract.jsonl``;
- ``quarry warm again``: once more, nothing changed since the last sweep either (the records
  already say ``reused``: nothing is written but the summary), what a sweep of an unchanged
  folder costs from then on: the stat index's quick path (the walk and a comparison with
  ``extract.stat``, no record loaded; the first re-sweep wrote the index);
- ``floor``: one Python process doing the same work by hand: walk, read, sha256, write each
  text to its content-addressed file with a rename (no isolation, no detection, no records);
- ``bare walk``: ``os.scandir`` + ``lstat`` of every entry, the floor of a warm sweep, in
  the bench's own process; ``walk process``: the same walk as a command of its own (a fresh
  ``python -c``, interpreter start included), the floor of a warm ``quarry sweep``, which is
  a command too;
- ``recollindex``: a cold index of the same tree into an empty index, where it is installed.

``--against`` names a second quarry command (another checkout's, say): its cold and warm
sweeps run interleaved with the first's, run for run, so both see the same load.
``--cold-only`` times the cold sweeps alone (no warm sweep, floor, walk or recollindex: a
short run at 200,000 files on a shared machine); ``--sweeps-only`` the three sweeps without
the floor, the walks and recollindex. Beside each sweep's time is the peak RSS of the
``quarry`` process (``wait4``'s ``ru_maxrss``: the most of the process and of the children it
reaped; the engine's dominates).

Nothing is deleted while anything is timed: every run writes into a folder of its own under
``DIR/runs``, left there when the bench ends; the next invocation deletes it, syncs, and waits
61 s before it times anything (a tree of the right size is kept between invocations). On ext4
without a journal (this machine's disk) the kernel skips inodes freed in the last 60 s (360 s
while their inode table block is dirty) when it allocates one, scanning past each; a store of
20,000 texts deleted just before a cold sweep made every text the sweep created pay for that
scan (tens of microseconds of system time a file, and the floor alike). Other work on the
machine that deletes many files costs quarry's cold sweep the same way.

Then the same for ``--corpus`` (real documents: quarry runs ``--without tesseract``, recoll
without OCR), a quarry run and a recollindex run in turn, so that both see the same load, and
the ratio run for run besides the ratio of the medians (``--corpus-only``: this part alone).
Not a test: nothing here asserts a time.

Beside each quarry wall time the CPU time of the command and every process under it (its
forkserver and workers, adopted through PR_SET_CHILD_SUBREAPER) is reported: on a machine
shared with other work the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import inspect
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchkit import checkout_of, compiled

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]


def make_tree(root: Path, files: int, per_folder: int = 200) -> None:
    """``files`` text files of a few bytes, ``per_folder`` to a folder, with old mtimes (an
    existing tree of that many files is kept: deleting one just before the runs slows them)."""
    if root.exists():
        if bare_walk(root) == files:
            return
        shutil.rmtree(root)
    for i in range(files):
        folder = root / f"d{i // per_folder:04}"
        if i % per_folder == 0:
            folder.mkdir(parents=True)
        path = folder / f"f{i:06}.txt"
        path.write_text(f"{i} {WORDS[i % len(WORDS)]}\n")
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))


def bare_walk(root: Path) -> int:
    """os.scandir + lstat of every entry: what a warm sweep cannot avoid."""
    n = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != ".quarry":
                        stack.append(e.path)
                else:
                    e.stat(follow_symlinks=False)
                    n += 1
    return n


WALK_COMMAND = (
    "import os, sys\n"
    + inspect.getsource(bare_walk).replace("root: Path", "root").replace(" -> int", "")
    + "print(bare_walk(sys.argv[1]))\n"
)
"""``bare_walk`` as a command of its own (the same lines, in a fresh ``python -c``): what any
command that walks the tree starts from."""


def walk_process(root: Path) -> None:
    subprocess.run([sys.executable, "-c", WALK_COMMAND, str(root)], check=True, capture_output=True)


def floor(root: Path, out: Path) -> int:
    """Walk, read, hash and store each file's text by content with a rename: no isolation."""
    tmp = out / "tmp"
    tmp.mkdir(parents=True)
    for i in range(256):
        (out / "extract" / f"{i:02x}").mkdir(parents=True)
    n = 0
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                    continue
                with open(e.path, "rb") as f:
                    data = f.read()
                digest = hashlib.sha256(data).hexdigest()
                text = data.decode("utf-8", "replace")
                part = tmp / f"{n}.txt"
                part.write_text(text, encoding="utf-8")
                os.rename(part, out / "extract" / digest[:2] / f"{digest}.txt")
                n += 1
    os.sync()
    return n


def recoll(root: Path, confdir: Path) -> None:
    """A cold recollindex of ``root`` into an empty index (no OCR, no extra helpers)."""
    if confdir.exists():
        shutil.rmtree(confdir)
    confdir.mkdir(parents=True)
    (confdir / "recoll.conf").write_text(
        f"topdirs = {root}\nskippedNames+ = .quarry\nloglevel = 1\n", encoding="utf-8"
    )
    subprocess.run(
        ["recollindex", "-c", str(confdir), "-z"],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def become_subreaper() -> None:
    """Adopt the sweep's orphans (forkserver, workers): their CPU time counts once reaped."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap_orphans() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def cpu_of(
    fn: Callable[[], object], cpus: list[float], split: list[tuple[float, float]] | None = None
) -> Callable[[], None]:
    """``fn`` with the CPU time of the processes it ran (and their orphans) appended to
    ``cpus``, and its user and system parts apart to ``split``."""

    def run() -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        fn()
        reap_orphans()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
        cpus.append(user + system)
        if split is not None:
            split.append((user, system))

    return run


def quarry_sweep(
    quarry: str, root: Path, store: Path, *extra: str, rss: list[int] | None = None
) -> None:
    """Run ``quarry sweep``; its peak RSS in bytes is appended to ``rss`` (see the docstring)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [quarry, "sweep", str(root), "--out", str(store), "--json", *extra],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if rss is not None:
            rss.append(usage.ru_maxrss * 1024)
        if proc.returncode not in (0, 2):
            err.seek(0)
            tail = err.read().decode(errors="replace")[-400:]
            raise SystemExit(f"quarry sweep failed ({proc.returncode}): {tail}")


def report_rss(label: str, rss: list[int]) -> None:
    mb = sorted(r / 1e6 for r in rss)
    med = statistics.median(mb)
    print(f"{label:<22} {med:8.0f} MB peak RSS (min {mb[0]:.0f}, max {mb[-1]:.0f})", flush=True)


def report(
    label: str,
    times: list[float],
    files: int | None = None,
    base: float = 0.0,
    cpus: list[float] | None = None,
    split: list[tuple[float, float]] | None = None,
) -> float:
    med = statistics.median(times)
    line = f"{label:<22} {med:8.2f} s  (min {min(times):.2f}, max {max(times):.2f})"
    if files:
        line += f"  {files / med:8.0f} files/s"
    if base:
        line += f"  = {med / base:.2f}x"
    if cpus:
        line += f"  cpu {statistics.median(cpus):.2f} s"
    if split:
        user = statistics.median(u for u, _s in split)
        system = statistics.median(s for _u, s in split)
        line += f" (user {user:.2f}, sys {system:.2f})"
    print(line, flush=True)
    return med


def fresh(work: Path, name: str) -> Path:
    """A folder for one run's output that does not exist yet (outputs go at the end)."""
    runs = work / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=runs)) / "out"


def bench_tree(args: argparse.Namespace, work: Path) -> None:
    tree = work / "tree"
    make_tree(tree, args.files)
    n = args.files
    print(f"\n## {n} small text files in {n // 200} folders")
    quarries = [("quarry", args.quarry)] + ([("against", args.against)] if args.against else [])
    colds: dict[str, list[float]] = {label: [] for label, _q in quarries}
    warms: dict[str, list[float]] = {label: [] for label, _q in quarries}
    cold_cpu: dict[str, list[float]] = {label: [] for label, _q in quarries}
    cold_split: dict[str, list[tuple[float, float]]] = {label: [] for label, _q in quarries}
    cold_rss: dict[str, list[int]] = {label: [] for label, _q in quarries}
    warm_cpu: dict[str, list[float]] = {label: [] for label, _q in quarries}
    warm_rss: dict[str, list[int]] = {label: [] for label, _q in quarries}
    again_rss: dict[str, list[int]] = {label: [] for label, _q in quarries}
    agains: dict[str, list[float]] = {label: [] for label, _q in quarries}
    again_cpu: dict[str, list[float]] = {label: [] for label, _q in quarries}
    for _ in range(args.runs):
        for label, quarry in quarries:
            store = fresh(work, label)
            sweep = lambda q=quarry, s=store, r=None: quarry_sweep(q, tree, s, rss=r)  # noqa: E731
            cold = lambda q=quarry, s=store, r=cold_rss[label]: quarry_sweep(q, tree, s, rss=r)  # noqa: E731
            colds[label].append(timed(cpu_of(cold, cold_cpu[label], cold_split[label])))
            if args.cold_only:
                continue
            warm = lambda f=sweep, r=warm_rss[label]: f(r=r)  # noqa: E731
            again = lambda f=sweep, r=again_rss[label]: f(r=r)  # noqa: E731
            warms[label].append(timed(cpu_of(warm, warm_cpu[label])))
            agains[label].append(timed(cpu_of(again, again_cpu[label])))
    if args.cold_only:
        for label, _q in quarries:
            report(f"{label} cold", colds[label], n, cpus=cold_cpu[label], split=cold_split[label])
            report_rss(f"{label} cold", cold_rss[label])
        return
    if args.sweeps_only:
        for label, _q in quarries:
            report(f"{label} cold", colds[label], n, cpus=cold_cpu[label], split=cold_split[label])
            report_rss(f"{label} cold", cold_rss[label])
            report(f"{label} warm", warms[label], n, cpus=warm_cpu[label])
            report_rss(f"{label} warm", warm_rss[label])
            report(f"{label} warm again", agains[label], n, cpus=again_cpu[label])
            report_rss(f"{label} warm again", again_rss[label])
        return
    floors = [timed(lambda: floor(tree, fresh(work, "floor"))) for _ in range(args.runs)]
    walks = [timed(lambda: bare_walk(tree)) for _ in range(args.runs)]
    walk_cmds = [timed(lambda: walk_process(tree)) for _ in range(args.runs)]
    f = report("floor (1 process)", floors, n)
    w = report("bare walk", walks, n)
    wp = report("walk process", walk_cmds, n)
    for label, _q in quarries:
        report(f"{label} cold", colds[label], n, f, cold_cpu[label], cold_split[label])
        report_rss(f"{label} cold", cold_rss[label])
        report(f"{label} warm", warms[label], n, w, warm_cpu[label])
        report_rss(f"{label} warm", warm_rss[label])
        report(f"{label} warm again", agains[label], n, w, again_cpu[label])
        report_rss(f"{label} warm again", again_rss[label])
        for which, times in (("warm", warms[label]), ("warm again", agains[label])):
            print(f"{label} {which} / walk process: {statistics.median(times) / wp:.2f}")
    if shutil.which("recollindex"):
        recolls = [timed(lambda: recoll(tree, fresh(work, "recoll"))) for _ in range(args.runs)]
        r = report("recollindex cold", recolls, n)
        for label, _q in quarries:
            print(f"{label} cold / recollindex: {statistics.median(colds[label]) / r:.2f}")
    else:
        print("recollindex: not installed (apt install recollcmd)")


def bench_corpus(args: argparse.Namespace, work: Path) -> None:
    corpus = args.corpus.resolve()
    n = sum(1 for p in corpus.rglob("*") if p.is_file())
    print(f"\n## {corpus} ({n} files), quarry --without tesseract, recoll without OCR")
    quarries = [("quarry", args.quarry)] + ([("against", args.against)] if args.against else [])
    colds: dict[str, list[float]] = {label: [] for label, _q in quarries}
    cpus: dict[str, list[float]] = {label: [] for label, _q in quarries}
    split: dict[str, list[tuple[float, float]]] = {label: [] for label, _q in quarries}
    recolls: list[float] = []
    has_recoll = shutil.which("recollindex") is not None
    for _ in range(args.runs):  # run for run with recollindex: all see the same load
        for label, quarry in quarries:
            store = fresh(work, "corpus")
            sweep = lambda q=quarry, s=store: quarry_sweep(q, corpus, s, "--without", "tesseract")  # noqa: E731
            colds[label].append(timed(cpu_of(sweep, cpus[label], split[label])))
        if has_recoll:
            recolls.append(timed(lambda: recoll(corpus, fresh(work, "recoll-corpus"))))
    meds = {
        label: report(f"{label} cold", colds[label], n, cpus=cpus[label], split=split[label])
        for label, _q in quarries
    }
    if has_recoll:
        r = report("recollindex cold", recolls, n)
        for label, _q in quarries:
            ratios = sorted(q / rr for q, rr in zip(colds[label], recolls, strict=True))
            print(f"{label} cold / recollindex: {meds[label] / r:.2f}", end="")
            print(f"  (run for run: {' '.join(f'{x:.2f}' for x in ratios)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--corpus-only", action="store_true", help="skip the small-file tree")
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "quarry-bench")
    ap.add_argument("--quarry", default=shutil.which("quarry") or ".venv/bin/quarry")
    ap.add_argument("--against", help="a second quarry command, run interleaved with --quarry")
    ap.add_argument("--cold-only", action="store_true", help="time the cold sweeps alone")
    ap.add_argument(
        "--sweeps-only", action="store_true", help="the three sweeps: no floor, walk or recoll"
    )
    args = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"/proc/loadavg at start: {Path('/proc/loadavg').read_text().strip()}")
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}"
    )
    print(f"load average at start: {load:.2f}")
    print(f"command: python tests/bench/bench_sweep.py {' '.join(sys.argv[1:])}")
    args.dir.mkdir(parents=True, exist_ok=True)
    theirs = checkout_of(args.against) if args.against else None
    compiled(Path(__file__).resolve().parents[2], *([theirs] if theirs is not None else []))
    become_subreaper()
    if (args.dir / "runs").exists():
        # An earlier invocation's outputs go now, and their inodes age past the kernel's
        # "recently deleted" window before anything is timed (see the docstring).
        shutil.rmtree(args.dir / "runs", ignore_errors=True)
        os.sync()
        print("deleted the previous outputs; waiting 61 s", flush=True)
        time.sleep(61)
    if not args.corpus_only:
        bench_tree(args, args.dir)
    if not args.no_corpus and args.corpus.is_dir():
        bench_corpus(args, args.dir)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"/proc/loadavg at the end: {Path('/proc/loadavg').read_text().strip()}")
    print(f"outputs left in {args.dir / 'runs'} (the next invocation deletes them)")


if __name__ == "__main__":
    main()
