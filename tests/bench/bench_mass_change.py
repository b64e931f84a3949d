"""A sweep of a store whose every file changed since its last sweep: time and peak memory.

    python tests/bench/bench_mass_change.py [--files 200000] [--change touch|rewrite]
        [--runs 3] [--dir /tmp/mass-change] [--quarry .venv/bin/quarry]
        [--against OTHER/.venv/bin/quarry]

The case of issue 26 where the merge of the walk with the index finds every file to look at:
a share copied without its times (``--change touch``: every file's time moved, its bytes the
same: each is hashed, none read), or rewritten whole (``--change rewrite``: new bytes in
every file: each is read). Made once in ``--dir`` (kept for later runs): a tree of ``--files``
small files (``bench_sweep.py``'s), swept whole into a base store by ``--quarry``, then the
change made to the tree (once: the base store's records stay those of before it). Each run
copies the base store (its texts and ``extract.jsonl`` hard-linked, as
``bench_killed_resweep.py`` does) and times ``quarry sweep`` of the changed tree into it: wall
time and the peak RSS of the process (wait4's ru_maxrss), ``--runs`` a side, interleaved with
``--against`` (another checkout's ``quarry``). Not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from bench_killed_resweep import _copy_store, _timed
from bench_sweep import make_tree
from benchkit import checkout_of, compiled, print_time_and_peak


def _change(tree: Path, how: str) -> None:
    """Every file's time moved past the base sweep; with ``rewrite``, its bytes too."""
    began = time.time_ns()
    for folder in sorted(tree.iterdir()):
        for path in sorted(folder.iterdir()):
            if how == "rewrite":
                path.write_text("changed " + path.read_text())
            os.utime(path, ns=(began, began))


def _base(args: argparse.Namespace) -> tuple[Path, Path]:
    """The changed tree and the store of it from before the change (made once)."""
    where = args.dir / args.change
    where.mkdir(parents=True, exist_ok=True)
    tree, base, changed = where / "tree", where / "base", where / "changed"
    if not changed.exists():
        shutil.rmtree(base, ignore_errors=True)
        make_tree(tree, args.files)
        seconds, rss, status = _timed([args.quarry, "sweep", str(tree), "--out", str(base)])
        print(f"the base sweep: {seconds:.1f} s, peak {rss / 1024:.0f} MB (exit {status})")
        _change(tree, args.change)
        changed.touch()
    return tree, base


def main() -> None:
    """Make the tree and its base store, then time each side's sweep of the change."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--change", choices=["touch", "rewrite"], default="touch")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/mass-change"))
    ap.add_argument("--quarry", default=shutil.which("quarry") or ".venv/bin/quarry")
    ap.add_argument("--against", help="another checkout's quarry, run interleaved")
    args = ap.parse_args()
    sides = [args.quarry] + ([args.against] if args.against else [])
    compiled(*(c for c in map(checkout_of, sides) if c is not None))
    tree, base = _base(args)
    got: dict[str, list[tuple[float, int]]] = {side: [] for side in sides}
    loads: list[float] = []
    for run in range(args.runs):
        for side in sides:
            store = args.dir / "swept"
            _copy_store(base, store)
            seconds, rss, status = _timed([side, "sweep", str(tree), "--out", str(store)])
            loads.append(os.getloadavg()[0])
            print(
                f"run {run + 1} {side}: {seconds:.2f} s, peak {rss / 1024:.0f} MB, "
                f"exit {status}, load {loads[-1]:.1f}",
                flush=True,
            )
            got[side].append((seconds, rss))
    if not loads:
        return  # (--runs 0: the tree and its base store made, for later runs)
    print(f"{args.files:,} files, --change {args.change}, load {min(loads):.1f}-{max(loads):.1f}")
    print_time_and_peak(got)


if __name__ == "__main__":
    main()
