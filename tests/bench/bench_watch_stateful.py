"""The stateful watch model, run long. Run: ``python tests/bench/bench_watch_stateful.py``.

Runs :class:`tests.engine.watchmodel.WatchMachine` (random file operations against a real
watcher; after each settle the watched store is compared with a fresh sweep) for many more
examples and steps than CI does, counting instead of stopping at the first difference, and
prints the counts: examples, operations, settles, differences (and how many of those differ
under an equal sha256: a verdict or text read from other bytes than were hashed, the run's
hash-then-read race, not a change the watcher missed).

Options: ``--examples N --steps N`` (default 20 x 40), ``--poll`` for the polling observer,
``--seed`` to repeat a run. Not a test: nothing here asserts; the counts go in the report.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.engine import watchmodel


class Counting(watchmodel.WatchMachine):
    """Counts differences and goes on (each example still starts from a fresh folder)."""

    strict = False


class CountingPolled(Counting):
    """The same, on the polling observer."""

    poll = True


def main() -> int:
    """Run the machine, print the machine's load and the tally."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--poll", action="store_true")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    machine = CountingPolled if args.poll else Counting
    config = settings(
        max_examples=args.examples,
        stateful_step_count=args.steps,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    if args.seed is not None:
        from hypothesis import seed

        machine.TestCase = seed(args.seed)(machine.TestCase)  # type: ignore[misc]
    print(f"# {platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# {' '.join(sys.argv)}")
    started = time.monotonic()
    run_state_machine_as_test(machine, settings=config)
    t = watchmodel.TALLY
    print(f"# load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"examples {t.examples}  operations {t.operations}  settles {t.settles}  "
        f"differences {len(t.differences)} (of them under an equal sha256: {t.same_sha})  "
        f"in {time.monotonic() - started:.0f} s"
    )
    for line in t.differences[:30]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
