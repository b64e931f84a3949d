"""Key latency of the real dashboard: a key pressed in a terminal until its screen is drawn.

    python tests/bench/bench_keys.py [--store S | --dir DIR] [--busy 2] [--rounds 10]
                                     [--size 160x50] [--live]       (--help: usage)

Runs the installed ``quarry ui --store S`` (or ``quarry DIR`` with ``--live``: sweeping and
watching while keys are pressed) on a pty read through pyte (tests/e2e/terminal.py), with
``--busy`` processes spinning beside it (default two: a loaded two-core machine). Each round
presses a fixed tour of keys, each one awaited on what its screen must show:

    x (errors)  escape  u (unsupported)  escape  t (tools)  escape  ? (help)  escape
    / (the filter line)  a path fragment typed (the all tab's count falls)  escape (all again)

Each key is timed twice, from writing it to the pty:

- **answered**: until the dashboard's answer was read from the pty, the frame that shows
  what the key must (every byte waiting is read before any is parsed, and the time is that
  of the last read before the check passed: the dashboard's latency, to the terminal);
- **shown**: until pyte, the harness's terminal, has parsed it and the screen shows it (the
  harness reads the screen again only when the process wrote something).

The two differ by pyte: a terminal in Python, ~1 ms a KB on an idle machine and 4-5 ms at
load 8 beside the busy loops (it shares the two cores with them and the dashboard), where
a terminal emulator in C parses a frame in about a millisecond. Prints, per key and for all
keys together, the median, p95 and max in milliseconds of each, the median bytes the
dashboard wrote and the median CPU time its process used (all its threads, from
``/proc/PID/task/*/schedstat``) until then, the machine's load before and after, and the
number of presses. The bytes matter twice: a terminal parses them, and over SSH they are
the link. Not a test: the goal (150 ms p95 with two busy loops, DESIGN.md) is reported,
never asserted.

Without ``--store``/``--dir`` the bundled ``fixtures/`` are swept into a temporary store first.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.e2e.terminal import KEYS, Terminal, quarry_command  # noqa: E402

Check = Callable[[str], bool]


def shows(pattern: str) -> Check:
    """A check that the screen matches ``pattern`` (a regex)."""
    rx = re.compile(pattern)
    return lambda text: rx.search(text) is not None


RECORDS = shows(r"\bpath\b.*\bstatus\b.*\bmime\b")
"""The records screen: its table's header."""
ALL = re.compile(r"\ball ([\d,]+)")
"""The all tab's count."""


def tour(fragment: str, total: str) -> list[tuple[str, str, Check]]:
    """The keys of one round: (label, keys to send, what the screen must then show);
    ``total`` is the all tab's count with no filter."""
    every = shows(rf"\ball {total}\b")
    return [
        ("x errors", "x", shows(r"Errors \d")),
        ("escape", "escape", RECORDS),
        ("u unsupported", "u", shows(r"Unsupported \d")),
        ("escape", "escape", RECORDS),
        ("t tools", "t", shows(r"External tools")),
        ("escape", "escape", RECORDS),
        ("? help", "?", shows(r"Keys")),
        ("escape", "escape", RECORDS),
        ("/ open filter", "/", shows(r"field:value")),
        ("type filter", fragment, lambda text: "all " in text and not every(text)),
        ("escape", "escape", lambda text: every(text) and RECORDS(text)),
    ]


def cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process ``pid`` so far (0 where /proc cannot say)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return total / 1e9


class Pressed(NamedTuple):
    """One key: seconds until answered (read from the pty) and until shown (parsed), bytes
    written meanwhile, the dashboard's CPU seconds."""

    answered: float
    seconds: float
    written: int
    cpu: float


def drain(term: Terminal, wait: float) -> float | None:
    """Read every byte waiting on the pty (up to ``wait`` s for the first), then give them to
    the terminal; the time of the last read, or None when nothing came."""
    ready, _, _ = select.select([term.fd], [], [], wait)
    data = bytearray()
    last = None
    while ready:
        try:
            chunk = os.read(term.fd, 65536)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        data += chunk
        last = time.perf_counter()
        ready, _, _ = select.select([term.fd], [], [], 0)
    if data:
        term.raw += data
        term._feed(bytes(data))
    return last


def press(term: Terminal, keys: str, check: Check, timeout: float) -> Pressed:
    """Send ``keys`` and wait until the screen passes ``check``."""
    raw = KEYS.get(keys, keys).encode()
    before, cpu = len(term.raw), cpu_seconds(term.proc.pid)
    t0 = time.perf_counter()
    os.write(term.fd, raw)
    end = time.monotonic() + timeout
    while True:
        read = drain(term, 0.002)
        if read is not None and check(term.text()):
            seconds = time.perf_counter() - t0
            written = len(term.raw) - before
            return Pressed(read - t0, seconds, written, cpu_seconds(term.proc.pid) - cpu)
        if term.proc.poll() is not None:
            raise SystemExit(f"quarry exited {term.proc.returncode}:\n{term.text()}")
        if time.monotonic() > end:
            raise SystemExit(f"no answer to {keys!r} within {timeout} s:\n{term.text()}")


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that spin until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, help="an existing store (quarry ui --store S)")
    ap.add_argument("--dir", type=Path, help="with --live: the folder to sweep and watch")
    ap.add_argument("--live", action="store_true", help="quarry DIR (sweep + watch) instead")
    ap.add_argument("--busy", type=int, default=2, help="spinning processes beside (default 2)")
    ap.add_argument("--rounds", type=int, default=10, help="tours of the keys (default 10)")
    ap.add_argument("--size", default="160x50", help="terminal COLSxROWS (default 160x50)")
    ap.add_argument("--fragment", default="hostile", help="a path fragment to filter on")
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    cols, rows = (int(v) for v in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        if args.live:
            target = args.dir or REPO / "fixtures"
            argv_q = [*quarry_command(), str(target), "--out", f"{tmp}/store"]
        else:
            store = args.store
            if store is None:
                store = Path(tmp) / "store"
                subprocess.run(
                    [*quarry_command(), "sweep", str(REPO / "fixtures"), "--out", str(store), "-q"],
                    check=False, capture_output=True,
                )  # fmt: skip
            argv_q = [*quarry_command(), "ui", "--store", str(store)]
        term = Terminal(argv_q, cols, rows, Path(tmp))
        loops: list[subprocess.Popen[bytes]] = []
        try:
            first = term.wait_for(lambda text: RECORDS(text) and ALL.search(text) is not None)
            total = ALL.search(first).group(1)  # type: ignore[union-attr]
            loads = [os.getloadavg()[0]]
            loops = busy_loops(args.busy)
            time.sleep(1.0)  # let the loops take their cores before the first key
            per_key: dict[str, list[Pressed]] = {}
            for _ in range(args.rounds):
                for label, keys, check in tour(args.fragment, total):
                    per_key.setdefault(label, []).append(press(term, keys, check, 60.0))
            loads.append(os.getloadavg()[0])
        finally:
            for p in loops:
                p.kill()
                p.wait()
            term.close()
    everything = [v for values in per_key.values() for v in values]
    print(
        f"quarry {' '.join(argv_q[1:2])} at {cols}x{rows}, {args.busy} busy loops, "
        f"{args.rounds} rounds; cpus {os.cpu_count()}, load {loads[0]:.1f} -> {loads[1]:.1f}"
    )
    print(f"{'':<16}{'answered (read from the pty)':>28}{'shown (parsed by pyte)':>28}")
    print(
        f"{'key':<16}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}"
        f"{'median ms':>10}{'p95 ms':>9}{'max ms':>9}{'KB':>7}{'cpu ms':>8}{'n':>5}"
    )
    for label, pressed in [*per_key.items(), ("all keys", everything)]:
        cells = ""
        for values in ([p.answered for p in pressed], [p.seconds for p in pressed]):
            cells += f"{statistics.median(values) * 1e3:>10.0f}"
            cells += f"{percentile(values, 0.95) * 1e3:>9.0f}{max(values) * 1e3:>9.0f}"
        print(
            f"{label:<16}{cells}"
            f"{statistics.median(p.written for p in pressed) / 1024:>7.1f}"
            f"{statistics.median(p.cpu for p in pressed) * 1e3:>8.0f}{len(pressed):>5}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
