"""Dashboard at scale: a generated store of N records (default 1,000,000), opened headless.

    python tests/bench/bench_tui.py [N] [--runs 3] [--terminal] [--index]    (--help: usage)
    python tests/bench/bench_tui.py --store S [--tree T] [--runs 3] [--terminal]

``--index`` writes the store's index beside ``extract.jsonl`` as a sweep leaves it (in step
with the file); without it the store is one the seed's extract stage (or another writer)
left, whose first opening builds an index in the user's cache. ``--store`` opens a store
made before (``--keep`` keeps the generated one there), ``--tree`` runs the dashboard from
another checkout's sources (its ``PYTHONPATH``), to compare two versions on one store.

Each run is its own process (clean peak memory). Measured per run:
  first_frame   QuarryApp started -> the records screen drawn with its first rows
  rows_loaded   QuarryApp started -> the last chunk of rows in the model (table complete)
  full_load     QuarryApp started -> every record in the model (StoreLoaded handled, including
                whatever other StoreLoaded handlers do on the UI thread)
  cursor_down   one ``cursor_down`` action + message drain + forced frame (mean of 50)
  page_down     one ``page_down`` the same way (mean of 20)
  tab_error     status tab ``error`` (key 5) + frame
  filter        path filter "file00042" + frame;  filter_clear: back to all + frame
  field_filter  query "mime:pdf" + frame;  two_terms: "status:error !mime:pdf" + frame
  number_terms  query "size:>10K chars:<100" + frame
  sort_chars    sort by chars + frame;  last_row: the cursor to the last row + frame;
  reverse       the sort reversed + frame;  sort_size: sort by size;  tab_error_sorted: the
                error tab, sorted by size (a query counted in a worker is timed until shown)
  errors_screen, unsupported_screen, tools_screen   ``x``, ``u``, ``t``: the screen shown
                and its groups drawn (counted in a worker for a paged store: until drawn)
  peak_rss      the process's peak resident memory
With ``--terminal``, each run is instead the real ``quarry ui --store S`` on a 160x50 pty read
through pyte (tests/e2e/terminal.py), timed from the process start, as a user meets it:
  first_frame   process start -> the first record's row on the screen
  full_count    process start -> the ``all`` tab showing every record and the header saying
                ``following`` (the whole store read: with an index, the tab counts come
                from it at once, so the header is what says the load is over)
  app_cpu       CPU of ``quarry`` and its helper processes;  harness_cpu: this process's own
``--first-frame`` ends each terminal run at its first frame (ten million records: minutes each);
``--quit-after S`` presses ``q`` S seconds after it and times the exit (``quit_s``).
Keys are timed by calling the actions and forcing a compositor frame, not with Pilot.press
(which sleeps ~60 ms per key). Prints the median of the runs as a table. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from benchkit import compiled

STATUSES = ["ok"] * 6 + ["empty", "unsupported", "error", "skipped"]
MIMES = ["application/pdf", "text/plain", "text/html", "image/png", "application/zip"]


def _quality(i: int) -> dict[str, object]:
    """A scored text's quality as the engine writes it (one in 50 suspect)."""
    suspect = i % 50 == 0
    return {
        "verdict": "suspect" if suspect else "good", "v": 3, "lang": "en", "script": "Latin",
        "common": 0.21 if suspect else 0.52, "noise": 0.0, "repl": 0.0, "odd": 0.0,
        "mojibake": 0.0, "per_page": None, "run": 12, "signals": ["common"] if suspect else [],
    }  # fmt: skip


def generate(out: Path, n: int) -> None:
    """Write an ``extract.jsonl`` of ``n`` plausible records (sorted by key) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "extract.jsonl", "wb") as fh:
        for i in range(n):
            status = STATUSES[i % 10]
            ok = status == "ok"
            fh.write(
                orjson.dumps(
                    {
                        "root": "/data/corpus",
                        "path": f"d{i // 10000:03d}/file{i:07d}.pdf",
                        "size": (i * 7919) % 5_000_000,
                        "mtime_ns": 1_700_000_000 * 10**9 + i,
                        "status": status,
                        "sha256": f"{i * 2654435761:064x}"[-64:],
                        "mime": MIMES[i % 5],
                        "reason": None if ok else "corrupt",
                        "extractor": "pypdf" if ok else None,
                        "reader": "pdf",
                        "v": 1,
                        "chars": (i * 37) % 100_000 if ok else 0,
                        "pages": i % 40 or None,
                        "error": None if ok else "startxref not found",
                        "needs": [],
                        "tools": None,
                        "reused": i % 3 == 0,
                        "why": "new",
                        "ms": i % 900,
                        "crashes": 0,
                        "quality": _quality(i) if ok else None,
                    }
                )
                + b"\n"
            )


async def frame(pilot) -> None:  # type: ignore[no-untyped-def]
    """Drain the message queues and render one frame now."""
    await pilot._wait_for_screen()  # the research harness's direct-frame method
    pilot.app.screen._on_timer_update()


async def child(store: Path) -> dict[str, float]:
    """One measured run."""
    from tui.app import QuarryApp
    from tui.model import RecordModel
    from tui.widgets.record_table import RecordTable

    last_rows = [0.0]
    extend = RecordModel.extend

    def timed_extend(model: RecordModel, *args: object) -> None:
        extend(model, *args)  # type: ignore[arg-type]
        last_rows[0] = time.perf_counter()

    RecordModel.extend = timed_extend  # type: ignore[method-assign]
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    app = QuarryApp(store)
    async with app.run_test(size=(160, 50)) as pilot:
        while not len(app.model) or not app.screen.query(RecordTable):
            await asyncio.sleep(0.001)
        await frame(pilot)
        out["first_frame_s"] = time.perf_counter() - t0
        while app.link.progress is not None:
            await asyncio.sleep(0.005)
        out["rows_loaded_s"] = (last_rows[0] or time.perf_counter()) - t0  # (paged: none)
        await frame(pilot)
        out["full_load_s"] = time.perf_counter() - t0
        out["records"] = len(app.model)
        table = app.screen.query_one(RecordTable)
        screen = app.records_screen

        async def timed(action, n: int) -> float:  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            for _ in range(n):
                action()
                # a query counted in a worker (a store paged from its index) is shown once
                # counted: timed until then
                while screen._searching is not None:
                    await asyncio.sleep(0.002)
                await frame(pilot)
            return (time.perf_counter() - t) / n

        out["cursor_down_ms"] = 1000 * await timed(table.action_cursor_down, 50)
        out["page_down_ms"] = 1000 * await timed(table.action_page_down, 20)
        out["tab_error_ms"] = 1000 * await timed(lambda: screen.action_tab("error"), 1)
        out["tab_all_ms"] = 1000 * await timed(lambda: screen.action_tab("all"), 1)
        out["filter_ms"] = 1000 * await timed(lambda: screen.set_filter("file00042"), 1)
        out["filtered_rows"] = len(app.model.view)
        out["filter_clear_ms"] = 1000 * await timed(lambda: screen.set_filter(""), 1)
        out["field_filter_ms"] = 1000 * await timed(lambda: screen.set_filter("mime:pdf"), 1)
        out["field_rows"] = len(app.model.view)
        screen.set_filter("")
        two = "status:error !mime:pdf"
        out["two_terms_ms"] = 1000 * await timed(lambda: screen.set_filter(two), 1)
        out["two_terms_rows"] = len(app.model.view)
        screen.set_filter("")
        numbers = "size:>10K chars:<100"
        out["number_terms_ms"] = 1000 * await timed(lambda: screen.set_filter(numbers), 1)
        out["number_terms_rows"] = len(app.model.view)
        screen.set_filter("")
        for name, line in (("error", "error:startxref"), ("why", "why:new"), ("word", "file")):
            query = functools.partial(screen.set_filter, line)
            out[f"{name}_term_ms"] = 1000 * await timed(query, 1)
            out[f"{name}_term_rows"] = len(app.model.view)
            screen.set_filter("")
        out["sort_chars_ms"] = 1000 * await timed(lambda: screen.action_sort("chars"), 1)
        out["last_row_ms"] = 1000 * await timed(table.action_last, 1)
        out["reverse_ms"] = 1000 * await timed(screen.action_reverse_sort, 1)
        out["sort_size_ms"] = 1000 * await timed(lambda: screen.action_sort("size"), 1)
        out["tab_error_sorted_ms"] = 1000 * await timed(lambda: screen.action_tab("error"), 1)

        async def shown(action) -> float:  # type: ignore[no-untyped-def]
            """A triage screen shown and its groups drawn (a paged store's counted in a
            worker: timed until drawn), then gone back from."""
            t = time.perf_counter()
            action()
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            await frame(pilot)
            took = time.perf_counter() - t
            app.pop_screen()
            await frame(pilot)
            return took

        out["errors_screen_ms"] = 1000 * await shown(app.action_show_errors)
        out["unsupported_screen_ms"] = 1000 * await shown(app.action_show_unsupported)
        out["tools_screen_ms"] = 1000 * await shown(app.action_show_tools)
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def terminal_run(
    store: Path, n: int, first_only: bool = False, quit_after: float | None = None
) -> dict[str, float]:
    """One run of the real command on a pty, timed from its start.

    The screen is read again only when the process wrote something: a harness that rebuilt
    pyte's screen text every 2 ms whatever came took most of a core at nice 0, from the
    dashboard's helpers (nice 10) on a two-core machine. ``app_cpu_s`` is the CPU of the
    command and its helpers; ``harness_cpu_s`` this process's own while it watched.
    ``first_only``: stop at the first frame (a store whose full count takes minutes).
    ``quit_after``: ``quit_after`` s after the first frame, press ``q`` and time the exit."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.e2e.terminal import Terminal, quarry_command

    full = f"all {n:,}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = time.process_time()
    t0 = time.perf_counter()
    term = Terminal([*quarry_command(), "ui", "--store", str(store)], 160, 50, store.parent)
    out: dict[str, float] = {}
    try:
        seen_first: float | None = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            written = len(term.raw)
            term.pump(0.05)
            if len(term.raw) == written:
                continue
            text = term.text()
            if seen_first is None and "file0000000" in text:
                seen_first = time.perf_counter() - t0
                if quit_after is not None:
                    out = {"first_frame_s": seen_first, "quit_s": _quit(term, quit_after)}
                    break
                if first_only:
                    out = {"first_frame_s": seen_first}
                    break
            if full in text and "following" in text:
                out = {"first_frame_s": seen_first or 0.0, "full_count_s": time.perf_counter() - t0}
                break
        else:
            raise AssertionError(f"no {full!r} within 300 s:\n{term.text()}")
        out["harness_cpu_s"] = time.process_time() - mine
    finally:
        term.kill()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["app_cpu_s"] = sum(
        getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime")
    )  # the command and its helpers (their CPU until it was killed)
    return out


def _quit(term: Any, after: float) -> float:
    """Wait ``after`` s (reading the screen), press ``q``: seconds until the process exits."""
    end = time.monotonic() + after
    while time.monotonic() < end:
        term.pump(0.05)
    t = time.perf_counter()
    term.press("q")
    term.exit_code(timeout=600)
    return time.perf_counter() - t


def _records(text: str) -> int:
    """A record count: a positive whole number (``1000000``, ``1_000_000``)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {n}")
    return n


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="bench_tui.py",
        description="Time the dashboard over a generated store of N records (not a test).",
    )
    parser.add_argument(
        "records", nargs="?", type=_records, default=1_000_000,
        help="records in the generated store (default 1,000,000)",
    )  # fmt: skip
    parser.add_argument("--runs", type=_records, default=3, help="runs, medians printed (3)")
    parser.add_argument(
        "--terminal", action="store_true",
        help="run the real `quarry ui --store` on a 160x50 pty, timed from process start",
    )  # fmt: skip
    parser.add_argument(
        "--first-frame", action="store_true",
        help="--terminal: stop each run at its first frame (no full count)",
    )  # fmt: skip
    parser.add_argument(
        "--quit-after", type=float, metavar="S",
        help="--terminal: S seconds after the first frame press q and time the exit",
    )  # fmt: skip
    parser.add_argument(
        "--index", action="store_true",
        help="write the generated store's index beside it, as a sweep leaves it",
    )  # fmt: skip
    parser.add_argument("--store", type=Path, help="open this store (made before) instead")
    parser.add_argument("--keep", type=Path, help="generate the store here and keep it")
    parser.add_argument(
        "--tree", type=Path, help="run the dashboard from this checkout's sources"
    )  # fmt: skip
    return parser.parse_args(argv)


def write_index(store: Path) -> None:
    """The store's index, in step with its ``extract.jsonl``, as the tree run writes it."""
    from engine.db import DB, RecordDB, identity_of
    from engine.readindex import BUILD_BLOCK, LeftOut, records_in

    # a block of lines at a time, as the engine builds a reader's index (ten million records
    # loaded at once took over 12 GB)
    with open(store / "extract.jsonl", "rb") as fh, RecordDB.open_writer(store / DB) as db:
        blocks = iter(lambda: fh.read(BUILD_BLOCK), b"")
        db.replace_all(records_in(blocks, LeftOut()), identity_of(store / "extract.jsonl"))
        if db.wants_sorted():  # a whole sweep's end sorts a big store's index by each column
            db.make_sorted()


def main(argv: list[str]) -> int:
    """Generate once, run the children, print medians."""
    if argv and argv[0] == "--child":
        print(json.dumps(asyncio.run(child(Path(argv[1])))))
        return 0
    if argv and argv[0] == "--write-index":
        write_index(Path(argv[1]))
        return 0
    args = parse_args(argv)
    n = args.records
    tree = args.tree.resolve() if args.tree else Path(__file__).resolve().parents[2]
    os.environ["PYTHONPATH"] = str(tree)  # (the pty's command inherits it)
    compiled(tree)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or args.keep or Path(tmp) / "store"
        if args.store is None:
            t = time.perf_counter()
            generate(store, n)
            size = (store / "extract.jsonl").stat().st_size
            took = time.perf_counter() - t
            print(f"generated {n:,} records ({size / 1e6:.0f} MB) in {took:.1f} s")
            if args.index:
                t = time.perf_counter()
                # (in a process of its own, from the tree run: its index version)
                argv = [sys.executable, __file__, "--write-index", str(store)]
                subprocess.run(argv, check=True, env={**os.environ})
                print(f"index written in {time.perf_counter() - t:.1f} s")
        else:
            with open(store / "extract.jsonl", "rb") as fh:
                n = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))
        env = {**os.environ}
        results = []
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):
            if args.terminal:
                results.append(terminal_run(store, n, args.first_frame, args.quit_after))
            else:
                proc = subprocess.run(
                    [sys.executable, __file__, "--child", str(store)],
                    capture_output=True, text=True, check=True, env=env,
                )  # fmt: skip
                results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            loads.append(os.getloadavg()[0])
    shown_loads = f"{min(loads):.1f}-{max(loads):.1f}"
    print(f"{'measure':<18}{'median':>12}   runs (cpus: {os.cpu_count()}, load {shown_loads})")
    for key in results[0]:
        values = [r[key] for r in results]
        shown = " ".join(f"{v:.3f}" for v in values)
        print(f"{key:<18}{statistics.median(values):>12.3f}   {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
