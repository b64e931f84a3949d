"""What an mbox of many short messages costs to read (issue 24): one read, in this process.

    python tests/bench/bench_mbox.py                      # 50,000 messages, 3 runs
    python tests/bench/bench_mbox.py --messages 200000 --runs 1

Each message is a realistic short one (Return-Path, Message-ID, From, To, Date, Subject,
MIME-Version, Content-Type, a one-line body). Prints the read's wall and CPU time, medians
with (min, max), and the verdict: the read must end ``ok`` with every message.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from engine.extract import ReadTask, read_one
from engine.limits import DEFAULT_LIMITS
from engine.tools import ToolSet


def mailbox(messages: int) -> bytes:
    """``messages`` short messages in mbox form."""
    return "".join(
        f"From sender{i}@example.org Mon Jan  1 00:00:00 2024\n"
        f"Return-Path: <sender{i}@example.org>\nMessage-ID: <{i}@example.org>\n"
        f"From: Sender {i} <sender{i}@example.org>\nTo: Bob <bob@example.org>\n"
        f"Date: Mon, 1 Jan 2024 00:00:{i % 60:02d} +0000\nSubject: note {i}\n"
        "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n"
        f"short body {i}\n\n"
        for i in range(messages)
    ).encode()


def main() -> None:
    """Build the mailbox, read it ``--runs`` times, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "box.mbox"
        path.write_bytes(mailbox(args.messages))
        walls, cpus = [], []
        for _ in range(args.runs):
            task = ReadTask(str(path), "", DEFAULT_LIMITS, ToolSet.empty(), tmp)
            wall, cpu = time.perf_counter(), time.process_time()
            outcome = read_one(task)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            print(f"  {outcome.status} {outcome.pages} messages, error={outcome.error}")
        size = path.stat().st_size / 1e6
    for name, values in (("wall", walls), ("cpu", cpus)):
        med = statistics.median(values)
        print(
            f"{args.messages:,} messages ({size:.1f} MB): {name} {med:.2f} s "
            f"({min(values):.2f}, {max(values):.2f}), {args.messages / med:,.0f} messages/s"
        )


if __name__ == "__main__":
    main()
