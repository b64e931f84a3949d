"""A one-file edit while watching a big folder, end to end: the real ``quarry`` on real files.

    python tests/bench/bench_watch_live.py [--mode engine|screen|both] [--runs 3] [--edits 20]
        [--tree /tmp/m1/files] [--store /tmp/m1/store] [--quarry PATH] [--gap 0.8]

Issue 26's goals, on a folder of 1,000,000 small files in 1,000 folders: a one-file edit while
watching is in the index within 300 ms p95 and on the dashboard's screen within 500 ms p95;
the engine's resident memory while watching them at most 300 MB; ``extract.jsonl`` current
within 10 s of the last change. ``--tree`` is such a folder (``dNNN/fNNN.txt``, as
``/tmp/m1/files``; made first when missing), ``--store`` a store that
swept it before (swept first when missing; used in place: each run starts over it, as a
user's next start does; nothing is copied). Each run, per mode:

- **engine**: ``quarry watch TREE --out STORE`` (a process of its own, its own session, as a
  shell starts it), timed from its start to its ``info: watching`` line (``ready``). Then
  ``--edits`` files, each in another folder, are appended a line one at a time (so their size,
  characters and hash change), ``--gap`` seconds apart once stored (each its own batch). Each
  is timed from its close to its new record in the store's index, read as a reader in another
  process reads it (``RecordDB.line``, this process's own connection, every 2 ms: the record's
  ``sha256`` no longer the old one; its ``chars`` is checked too). Meanwhile the watcher's
  resident memory (``VmRSS``) is sampled every 0.2 s, its own and its child processes'
  (summed) apart, with its lifetime peak (``VmHWM``, the first sweep's included). After the
  last edit: the time from its close until ``extract.jsonl`` holds its new line (the file's
  identity polled every 10 ms, then its line looked up in it; the time is that of the
  identity's change). Then each file gets its content back while watching (the store
  follows: only the edited files' mtimes differ from before) and the watcher is stopped with
  SIGINT to its process group, as a Ctrl-C in its terminal; timed until it exits.
- **screen**: the dashboard ``quarry TREE --out STORE`` on a 160x50 pty read through pyte
  (tests/e2e/terminal.py's ``Terminal``), timed from its start to its header saying
  ``● watching``. The table is narrowed with ``/`` to ``dNNN/f0`` (100 files, their first
  rows on the screen), then ``--edits`` of the files whose rows are shown are appended a line
  one at a time; each is timed from its close until the screen shows its row's new ``chars``
  (**shown**: parsed by pyte, the harness's terminal; and **answered**: the time of the pty
  read that brought it, before pyte parsed it). Then the files get their content back, the
  screen is awaited showing it, and ``q`` quits.

After each run the index's record of every edited file is compared with the file (its hash):
``in step`` says whether the store followed the edits and their undoing. Printed per run (with
each edit's figure, when each edit closed and when ``extract.jsonl`` was seen new, in seconds
after watching began: a slow edit beside a rewrite of the file waited for it) and as the
median of the runs (min, max); percentiles are nearest-rank (p95 of 20 edits: the 19th).
Prints the machine, the command, the time (UTC) and the load before and after. Not a test:
nothing here asserts a time or a size.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import mmap
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench_keys import drain  # noqa: E402  (read the pty, feed pyte: as bench_keys does)
from benchkit import checkout_of, compiled  # noqa: E402

from engine.db import DB, IndexUnusable, RecordDB  # noqa: E402
from tests.e2e.terminal import Terminal, quarry_command  # noqa: E402

WATCHING_LINE = re.compile(r"\binfo: watching \d+ folder")
"""What ``quarry watch`` writes on stderr once it watches."""
WATCHING_SCREEN = re.compile(r"●\s+watching\b")
"""What the dashboard's header says once it watches."""
EXTRACT = "extract.jsonl"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def wait_until(test: Callable[[], Any], timeout: float, what: str, every: float = 0.002) -> Any:
    """Poll ``test`` every ``every`` s until it returns something true and return that; after
    ``timeout`` s, TimeoutError naming ``what``."""
    end = time.monotonic() + timeout
    while True:
        got = test()
        if got:
            return got
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


# --- processes and their memory ------------------------------------------------------------


def status_kb(pid: int, field: str) -> int:
    """A ``/proc/PID/status`` field in kB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (children, theirs...), from ``/proc/*/stat``."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
            ppid = int(data[data.rfind(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Sampler(threading.Thread):
    """Samples, every ``every`` s until stopped, the resident memory of process ``pid`` and of
    its descendants (summed), and notes when it sees ``extract.jsonl`` new (polled four
    times as often)."""

    def __init__(self, pid: int, extract: Path, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.extract, self.every = pid, extract, every
        self.main: list[float] = []  # MB
        self.children: list[float] = []
        self.processes = 0  # most children seen at once
        self.rewrites: list[float] = []  # perf_counter
        self._done = threading.Event()

    def run(self) -> None:
        seen = identity(self.extract)
        tick = 0
        while not self._done.is_set():
            if tick % 4 == 0:
                self.main.append(status_kb(self.pid, "VmRSS") / 1024)
                kids = descendants(self.pid)
                self.processes = max(self.processes, len(kids))
                self.children.append(sum(status_kb(k, "VmRSS") for k in kids) / 1024)
            tick += 1
            now = identity(self.extract)
            if now != seen:
                self.rewrites.append(time.perf_counter())
                seen = now
            self._done.wait(self.every / 4)

    def stop(self) -> None:
        self._done.set()
        self.join(5)


class Output(threading.Thread):
    """The lines a pipe of the watcher gives, each with the time it was read."""

    def __init__(self, pipe: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.lines: list[tuple[float, str]] = []

    def run(self) -> None:
        for raw in iter(self.pipe.readline, b""):
            self.lines.append((time.perf_counter(), raw.decode("utf-8", "replace").rstrip()))

    def first(self, rx: re.Pattern[str]) -> float | None:
        """When the first line matching ``rx`` was read (None: none yet)."""
        return next((t for t, line in list(self.lines) if rx.search(line)), None)

    def tail(self, n: int = 15) -> str:
        return "\n".join(line for _, line in self.lines[-n:])


# --- the store as a reader sees it ---------------------------------------------------------


def identity(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime_ns) of ``path`` (None: none there)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def open_reader(store: Path, timeout: float = 60.0) -> RecordDB:
    """A reader of the store's index, as another process opens it."""

    def attempt() -> RecordDB | None:
        try:
            return RecordDB.open_reader(store / DB)
        except IndexUnusable:
            return None

    reader: RecordDB = wait_until(attempt, timeout, f"an index to read at {store / DB}", 0.05)
    return reader


def record(reader: RecordDB, root: str, path: str) -> dict[str, Any] | None:
    """The index's record of (root, path) as a reader reads it."""
    line = reader.line(root, path)
    return json.loads(line) if line is not None else None


def line_in_extract(extract: Path, path: str) -> dict[str, Any] | None:
    """The record of ``path`` in ``extract.jsonl`` (one root: the path's key is enough)."""
    needle = b'"path":' + json.dumps(path).encode()
    try:
        with open(extract, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            at = m.find(needle)
            if at < 0:
                return None
            start = m.rfind(b"\n", 0, at) + 1
            end = m.find(b"\n", at)
            return dict(json.loads(m[start : end if end >= 0 else len(m)]))
    except (OSError, ValueError):
        return None


def out_of_step(store: Path, root: str, tree: Path, paths: list[str]) -> list[str]:
    """The edited files whose record in the index does not hold the file's content."""
    reader = open_reader(store)
    try:
        wrong = []
        for path in dict.fromkeys(paths):
            got = record(reader, root, path)
            sha = hashlib.sha256((tree / path).read_bytes()).hexdigest()
            if got is None or got.get("sha256") != sha:
                wrong.append(path)
        return wrong
    finally:
        reader.close()


# --- edits -----------------------------------------------------------------------------------


class Edits:
    """The files a run appends to, each one's first content kept to be put back."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.original: dict[str, bytes] = {}
        self.restored = False

    def append(self, path: str, line: str) -> float:
        """Append ``line`` to ``path``; the time it was closed."""
        file = self.tree / path
        if path not in self.original:
            self.original[path] = file.read_bytes()
        with open(file, "a", encoding="utf-8") as fh:
            fh.write(line)
        return time.perf_counter()

    def restore(self) -> None:
        """Every edited file's first content back (its mtime stays new: the store follows)."""
        if self.restored:
            return
        for path, content in self.original.items():
            with open(self.tree / path, "wb") as fh:
                fh.write(content)
        self.restored = True


def engine_paths(run: int, n: int) -> list[str]:
    """``n`` files of the tree, each in another folder (as far as 1,000 folders go)."""
    return [
        f"d{(i * 1000 // n + 17 * run + 3) % 1000:03d}/f{(i * 37 + 101 * run + 5) % 1000:03d}.txt"
        for i in range(n)
    ]


def edit_line(mode: str, run: int, i: int) -> str:
    return f"quarry bench {mode} run {run} edit {i}\n"


# --- engine mode -------------------------------------------------------------------------------


def engine_run(args: argparse.Namespace, run: int) -> dict[str, Any]:
    tree, store = args.tree, args.store
    root = str(tree.resolve())
    argv = [*args.quarry, "watch", str(tree), "--out", str(store)]
    edits = Edits(tree)
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    out, err = Output(proc.stdout), Output(proc.stderr)
    out.start()
    err.start()
    got: dict[str, Any] = {"missed": 0, "chars_wrong": 0}
    sampler: Sampler | None = None
    reader: RecordDB | None = None
    try:

        def watching() -> float | None:
            if proc.poll() is not None:
                raise SystemExit(f"quarry watch exited {proc.returncode}:\n{err.tail()}")
            return err.first(WATCHING_LINE)

        at = wait_until(watching, args.start_timeout, "'info: watching'", 0.05)
        got["ready"], got["closes"] = at - started, []
        sampler = Sampler(proc.pid, store / EXTRACT)
        sampler.start()
        got["rss_at_watching"] = status_kb(proc.pid, "VmRSS") / 1024
        reader = db = open_reader(store)
        latencies: list[float] = []
        paths = engine_paths(run, args.edits)
        last_close, last_path, last_sha = 0.0, "", ""
        for i, path in enumerate(paths):
            old = record(reader, root, path)
            if old is None:
                raise SystemExit(f"{path}: no record in the index before its edit")
            line = edit_line("engine", run, i)
            closed = edits.append(path, line)
            got["closes"].append(closed - at)

            def stored(path: str = path, old: dict[str, Any] = old) -> Any:
                new = record(db, root, path)
                return new if new is not None and new["sha256"] != old["sha256"] else None

            try:
                new = wait_until(stored, args.edit_timeout, f"{path}'s new record in the index")
                latencies.append(time.perf_counter() - closed)
                if new["chars"] != old["chars"] + len(line):
                    got["chars_wrong"] += 1
                    print(f"  {path}: chars {new['chars']}, expected {old['chars'] + len(line)}")
                last_close, last_path, last_sha = closed, path, new["sha256"]
            except TimeoutError as exc:
                got["missed"] += 1
                print(f"  MISSED: {exc}; watcher stderr:\n{err.tail(5)}", flush=True)
            if i + 1 < len(paths):
                time.sleep(args.gap)
        got["index"] = latencies
        got["rss_main"] = list(sampler.main)
        got["rss_children"] = list(sampler.children)
        if last_path:
            extract = store / EXTRACT
            seen: list[tuple[int, int, int] | None] = [(-1, -1, -1)]  # the first look reads it

            def caught_up() -> float | None:
                """When the file was seen new holding the last edit's line (None: not yet)."""
                now, ident = time.perf_counter(), identity(extract)
                if ident == seen[0]:
                    return None
                seen[0] = ident
                rec = line_in_extract(extract, last_path)
                return now if rec is not None and rec.get("sha256") == last_sha else None

            what = f"{EXTRACT} holding {last_path}'s new line"
            got["extract"] = wait_until(caught_up, args.extract_timeout, what, 0.01) - last_close
        got["rss_main_end"] = status_kb(proc.pid, "VmRSS") / 1024
        got["hwm_main"] = status_kb(proc.pid, "VmHWM") / 1024
        edits.restore()

        def back() -> bool:
            return not out_of_step_open(db, root, tree, list(edits.original))

        try:
            wait_until(back, args.edit_timeout, "the index holding the restored files", 0.02)
        except TimeoutError as exc:
            print(f"  {exc}", flush=True)
        sampler.stop()
        got["rewrites"] = [t - at for t in sampler.rewrites]
        got["children"] = sampler.processes
        got["rss_main"] = sampler.main
        got["rss_children"] = sampler.children
    finally:  # the files first, then the watcher: whatever failed, neither is left behind
        edits.restore()
        got["stop"], got["exit"] = stop(proc, args.stop_timeout)
        if sampler is not None:
            sampler.stop()
        if reader is not None:
            reader.close()
        out.join(5)
        err.join(5)
    # a "sweep:" line a run, on stderr (stdout too, in case), the first sweep's included (a
    # restore of several files may be one batch)
    lines = [line for _, line in out.lines + err.lines]
    got["batches"] = sum(1 for line in lines if line.startswith("sweep:")) - 1
    got["in_step"] = not out_of_step(store, root, tree, list(edits.original))
    if got["exit"] != 0:
        print(f"  quarry watch exited {got['exit']}:\n{err.tail()}")
    return got


def out_of_step_open(reader: RecordDB, root: str, tree: Path, paths: list[str]) -> list[str]:
    """As :func:`out_of_step`, through an open reader."""
    wrong = []
    for path in paths:
        got = record(reader, root, path)
        sha = hashlib.sha256((tree / path).read_bytes()).hexdigest()
        if got is None or got.get("sha256") != sha:
            wrong.append(path)
    return wrong


def stop(proc: subprocess.Popen[bytes], timeout: float) -> tuple[float, int | None]:
    """SIGINT to the process group (a Ctrl-C); the seconds until it exited and its code."""
    if proc.poll() is not None:
        return 0.0, proc.returncode
    t0 = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        print(f"  quarry watch still running {timeout} s after SIGINT: killed")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    return time.perf_counter() - t0, proc.returncode


# --- screen mode -------------------------------------------------------------------------------

HEADER = re.compile(r"^path\b.*\bchars\b", re.MULTILINE)


def row_chars(text: str, path: str) -> int | None:
    """The ``chars`` cell of ``path``'s row on the screen (None: no such row)."""
    header = HEADER.search(text)
    if header is None:
        return None
    end = header.group(0).rindex("chars") + len("chars")
    for line in text.splitlines():
        if line.startswith(path + " "):
            cell = line[:end].split()[-1].replace(",", "")
            return int(cell) if cell.isdigit() else None
    return None


def visible_rows(text: str) -> dict[str, int]:
    """Each ``dNNN/fNNN.txt`` row shown, with its chars."""
    rows = {}
    for m in re.finditer(r"^(d\d{3}/f\d{3}\.txt) ", text, re.MULTILINE):
        chars = row_chars(text, m.group(1))
        if chars is not None:
            rows[m.group(1)] = chars
    return rows


def pump_for(term: Terminal, seconds: float) -> None:
    """Keep reading the dashboard's output for ``seconds`` (its pty never fills)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        drain(term, min(0.05, max(0.0, end - time.monotonic())))


def screen_run(args: argparse.Namespace, run: int) -> dict[str, Any]:
    tree, store = args.tree, args.store
    root = str(tree.resolve())
    folder = f"d{(777 + 101 * run) % 1000:03d}"
    fragment = f"{folder}/f0"
    edits = Edits(tree)
    got: dict[str, Any] = {"missed": 0}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        term = Terminal([*args.quarry, str(tree), "--out", str(store)], 160, 50, Path(tmp))
        sampler: Sampler | None = None
        try:
            term.wait_for(lambda text: WATCHING_SCREEN.search(text) is not None,
                          args.start_timeout)  # fmt: skip
            at = time.perf_counter()
            got["ready"], got["closes"] = at - started, []
            sampler = Sampler(term.proc.pid, store / EXTRACT)
            sampler.start()
            got["rss_at_watching"] = status_kb(term.proc.pid, "VmRSS") / 1024
            term.press("/")
            term.wait_for("field:value", 30)
            term.press(fragment)
            term.wait_for(r"\ball 100\b", 60)
            term.press("enter")
            first = f"{folder}/f000.txt"
            term.wait_for(lambda text: row_chars(text, first) is not None, 30)
            pump_for(term, 0.5)
            rows = visible_rows(term.text())
            names = sorted(r for r in rows if r.startswith(folder + "/"))
            if not names:
                raise SystemExit(f"no row of {folder} on the screen:\n{term.text()}")
            step = max(1, len(names) // max(1, args.edits))
            targets = [names[(i * step) % len(names)] for i in range(args.edits)]
            shown: list[float] = []
            answered: list[float] = []
            for i, path in enumerate(targets):
                old = row_chars(term.text(), path)
                assert old is not None, path
                line = edit_line("screen", run, i)
                expected = old + len(line)
                closed = edits.append(path, line)
                got["closes"].append(closed - at)
                end = time.monotonic() + args.edit_timeout
                while True:
                    read = drain(term, 0.002)
                    if read is not None and row_chars(term.text(), path) == expected:
                        shown.append(time.perf_counter() - closed)
                        answered.append(read - closed)
                        break
                    if term.proc.poll() is not None:
                        raise SystemExit(f"quarry exited {term.proc.returncode}:\n{term.tail()}")
                    if time.monotonic() > end:
                        got["missed"] += 1
                        print(f"  MISSED: {path} never showed {expected} chars "
                              f"({args.edit_timeout} s):\n{term.text()}", flush=True)  # fmt: skip
                        break
                if i + 1 < len(targets):
                    pump_for(term, args.gap)
            got["shown"], got["answered"] = shown, answered
            got["rss_main_end"] = status_kb(term.proc.pid, "VmRSS") / 1024
            got["hwm_main"] = status_kb(term.proc.pid, "VmHWM") / 1024
            edits.restore()
            want = {p: len(c.decode("utf-8")) for p, c in edits.original.items()}
            try:
                term.wait_for(
                    lambda text: all(row_chars(text, p) == n for p, n in want.items()),
                    args.edit_timeout,
                )
            except AssertionError as exc:
                print(f"  the restored files not shown: {str(exc)[:2000]}", flush=True)
            sampler.stop()
            got["rss_main"], got["rss_children"] = sampler.main, sampler.children
            got["children"] = sampler.processes
            got["rewrites"] = [t - at for t in sampler.rewrites]
            t0 = time.perf_counter()
            term.press("q")
            got["exit"] = term.exit_code(args.stop_timeout)
            got["stop"] = time.perf_counter() - t0
        finally:  # the files first, then the dashboard
            edits.restore()
            if sampler is not None:
                sampler.stop()
            if term.proc.poll() is None:  # a run that failed midway: as a Ctrl-C, then killed
                os.killpg(term.proc.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    term.proc.wait(args.stop_timeout)
            term.close()
    got["in_step"] = not out_of_step(store, root, tree, list(edits.original))
    return got


# --- report --------------------------------------------------------------------------------------


def ms3(xs: list[float]) -> str:
    """p50/p95/max in ms."""
    if not xs:
        return "none"
    ms = [x * 1000 for x in xs]
    return f"p50 {percentile(ms, 0.5):.0f} p95 {percentile(ms, 0.95):.0f} max {max(ms):.0f} ms"


def mb(xs: list[float]) -> str:
    """Median and max of RSS samples."""
    return f"{statistics.median(xs):.0f} (max {max(xs):.0f})" if xs else "-"


def run_line(mode: str, run: int, r: dict[str, Any]) -> str:
    parts = [f"run {run + 1} {mode}: watching after {r['ready']:.1f} s"]
    if mode == "engine":
        parts.append(f"index {ms3(r.get('index', []))} (n={len(r.get('index', []))})")
        if "extract" in r:
            parts.append(f"{EXTRACT} current {r['extract']:.2f} s after the last close")
    else:
        parts.append(f"shown {ms3(r.get('shown', []))} (n={len(r.get('shown', []))})")
        parts.append(f"answered {ms3(r.get('answered', []))}")
    parts.append(
        f"RSS MB main {mb(r.get('rss_main', []))} at watching {r.get('rss_at_watching', 0):.0f}"
        f" end {r.get('rss_main_end', 0):.0f} VmHWM {r.get('hwm_main', 0):.0f}"
        f", children ({r.get('children', 0)} at most) {mb(r.get('rss_children', []))}"
    )
    parts.append(
        f"missed {r['missed']}"
        + (f", chars wrong {r['chars_wrong']}" if "chars_wrong" in r else "")
        + (f", batches {r['batches']}" if "batches" in r else "")
        + f", {EXTRACT} rewrites seen {len(r.get('rewrites', []))}"
        + f", stop {r.get('stop', 0):.1f} s exit {r.get('exit')}, in step {r.get('in_step')}"
    )
    return "; ".join(parts)


def each(r: dict[str, Any], key: str) -> str:
    """A run's figures in ms, edit by edit, and when (s after watching began) each edit closed
    and ``extract.jsonl`` was seen new (its rewrites end then)."""
    xs = " ".join(f"{x * 1000:.0f}" for x in r.get(key, []))
    closes = " ".join(f"{t:.1f}" for t in r.get("closes", []))
    rewrites = " ".join(f"{t:.1f}" for t in r.get("rewrites", []))
    return (
        f"  {key} ms, edit by edit: {xs}\n  edits closed at +s: {closes}\n"
        f"  {EXTRACT} seen new at +s: {rewrites}"
    )


def spread(xs: list[float], fmt: str) -> str:
    """Median of the runs (min, max)."""
    if not xs:
        return "-"
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}-{max(xs):{fmt}})"


def summary(mode: str, rs: list[dict[str, Any]]) -> None:
    print(f"{mode}, median of {len(rs)} runs (min-max):")
    print(f"  watching after  {spread([r['ready'] for r in rs], '.1f')} s")
    keys = ["index"] if mode == "engine" else ["shown", "answered"]
    for key in keys:
        for name, q in (("p50", 0.5), ("p95", 0.95)):
            xs = [percentile(r[key], q) * 1000 for r in rs if r.get(key)]
            print(f"  {key} {name}  {spread(xs, '.0f')} ms")
        xs = [max(r[key]) * 1000 for r in rs if r.get(key)]
        print(f"  {key} max  {spread(xs, '.0f')} ms")
    if mode == "engine":
        xs = [r["extract"] for r in rs if "extract" in r]
        print(f"  {EXTRACT} current after the last close  {spread(xs, '.2f')} s")
    for key, label in (("rss_main", "main"), ("rss_children", "children")):
        med = [statistics.median(r[key]) for r in rs if r.get(key)]
        top = [max(r[key]) for r in rs if r.get(key)]
        print(f"  RSS {label} while watching: median {spread(med, '.0f')} MB,"
              f" max sampled {spread(top, '.0f')} MB")  # fmt: skip
    print(f"  VmHWM main (lifetime peak)  {spread([r.get('hwm_main', 0) for r in rs], '.0f')} MB")
    print(f"  missed {sum(r['missed'] for r in rs)}; in step after: "
          f"{[r.get('in_step') for r in rs]}; exits {[r.get('exit') for r in rs]}")  # fmt: skip


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--tree", type=Path, default=Path("/tmp/m1/files"))
    ap.add_argument("--store", type=Path, default=Path("/tmp/m1/store"))
    ap.add_argument("--edits", type=int, default=20, help="edits a run (default 20)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each mode (default 3)")
    ap.add_argument("--quarry", help="the quarry command (default: the one beside this Python)")
    ap.add_argument("--mode", choices=["engine", "screen", "both"], default="both")
    ap.add_argument("--gap", type=float, default=0.8, help="s between edits (default 0.8)")
    ap.add_argument("--start-timeout", type=float, default=900.0)
    ap.add_argument("--edit-timeout", type=float, default=30.0)
    ap.add_argument("--extract-timeout", type=float, default=120.0)
    ap.add_argument("--stop-timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    args.quarry = [args.quarry] if args.quarry else quarry_command()
    return args


def prepare(args: argparse.Namespace) -> None:
    """Make ``--tree`` when it is missing (1,000 folders of 1,000 small files, named as the
    edits expect: ~40 s), and sweep it into ``--store`` when that is missing (a cold sweep:
    3-8 min here); an existing tree or store is used as it is."""
    if not args.tree.exists():
        print(f"making {args.tree}: 1,000 folders of 1,000 small files", flush=True)
        for d in range(1000):
            folder = args.tree / f"d{d:03d}"
            folder.mkdir(parents=True)
            for f in range(1000):
                (folder / f"f{f:03d}.txt").write_text(f"small file {d} {f}\n")
    if not args.store.exists():
        print(f"sweeping {args.tree} into {args.store} (cold)", flush=True)
        command = [*args.quarry, "sweep", str(args.tree), "--out", str(args.store)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    checkout = checkout_of(args.quarry[0])
    if checkout is not None:
        compiled(checkout)
    prepare(args)
    modes = ["engine", "screen"] if args.mode == "both" else [args.mode]
    print(f"time: {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC")
    print(
        f"machine: {os.cpu_count()} cores, Linux {platform.release()}, "
        f"Python {sys.version.split()[0]}, load {os.getloadavg()}"
    )
    print(f"command: python {' '.join(sys.argv)}")
    print(f"quarry: {' '.join(args.quarry)}; tree {args.tree}; store {args.store}", flush=True)
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for run in range(args.runs):
        for mode in modes:  # interleaved: the same load for both
            r = (engine_run if mode == "engine" else screen_run)(args, run)
            results[mode].append(r)
            print(run_line(mode, run, r))
            print(each(r, "index" if mode == "engine" else "shown"), flush=True)
    for mode, rs in results.items():
        summary(mode, rs)
    print(f"load after: {os.getloadavg()}")
    print(f"time: {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
