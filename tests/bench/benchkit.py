"""What a benchmark that starts ``quarry`` does first: each checkout's modules compiled.

A user's install has its bytecode: pip compiles a package as it installs it, and a checkout's
first run writes it. Where ``PYTHONDONTWRITEBYTECODE`` is set (this project's sandbox) nothing
ever writes it, so every process a benchmark started compiled each module it imported again
(~0.25 s of CPU a process: the dashboard's first frame, a Dask worker's read server), and the
figure counted a cost no user pays. Compiling is written to the terminal, so a note says it.
"""

from __future__ import annotations

import compileall
import statistics
from pathlib import Path

PACKAGES = ("engine", "tui")


def compile_project(checkout: Path) -> None:
    """Compile the project's modules of ``checkout`` (those up to date are left as they are;
    a tree that cannot be written is left quietly: what starts from it compiles as before)."""
    for package in PACKAGES:
        compileall.compile_dir(checkout / package, quiet=2)


def compiled(*checkouts: Path) -> None:
    """Compile each checkout's modules, saying so."""
    for checkout in checkouts:
        compile_project(checkout)
        print(f"bytecode: {checkout} compiled, as an install has it")


def checkout_of(script: str) -> Path | None:
    """The checkout whose ``.venv/bin/quarry`` ``script`` is (None for another command)."""
    path = Path(script).resolve() if "/" in script else None
    if path is None or path.parent.name != "bin" or path.parents[1].name != ".venv":
        return None
    return path.parents[2]


def print_time_and_peak(got: dict[str, list[tuple[float, int]]]) -> None:
    """Each side's median wall time and peak RSS (ru_maxrss, KB), with min and max."""
    for side, runs in got.items():
        if not runs:
            continue
        times = [t for t, _ in runs]
        peaks = [r / 1024 for _, r in runs]
        print(
            f"{side}: {statistics.median(times):.2f} s ({min(times):.2f}-{max(times):.2f}), "
            f"peak {statistics.median(peaks):.0f} MB ({min(peaks):.0f}-{max(peaks):.0f})"
        )
