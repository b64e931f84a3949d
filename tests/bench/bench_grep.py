"""Full-text search (issue 29): what the text index costs and how fast it answers.

    python tests/bench/bench_grep.py corpus [FOLDER] [--runs 3] [--without tesseract]
    python tests/bench/bench_grep.py synthetic [--texts 1000000] [--runs 3] [--dir D]
    python tests/bench/bench_grep.py scan --keep D [--records 200000] [--runs 3]
        [--quarry Q] [--against Q2]

``corpus`` (FOLDER defaults to ``../shared/corpus``): cold ``quarry sweep``s of FOLDER into
fresh stores, with the text index and with ``--no-text-index``, taking turns ``--runs``
times; for each, the wall time and the CPU time of the command and all its processes
(``perf stat``'s task-clock: the read workers are not this process's children), and the
index's size (``extract.db`` after a checkpoint) against the
texts' own. Then the index built for a store swept without it (what the first ``quarry
grep`` or sweep of an older store pays), and queries on the indexed store: a word and a
phrase found in its texts, through :func:`engine.grep.search` in this process (open the
index, the FTS candidates, the pattern on each, the records that name them) and through the
real ``quarry grep`` (process start included).

``synthetic``: a store's index of N texts made directly (records, ``text_rows`` and the FTS
table filled in one transaction, no text files: a sweep of a million files is not what is
measured here), each text 30 words drawn from a vocabulary of 50,000 made-up words with
Zipf-like frequencies (~240 characters); then a rare word, a middling word, a frequent word
and a phrase through :func:`engine.grep.search`. ``--texts`` says how many (the issue asks a
million; the build takes minutes). Medians of ``--runs`` with min and max; the load average
before and after.

``scan``: ``quarry grep --no-text-index`` (every text read, no text index) on a store made
by hand in ``--keep`` (made once, reused after): ``--records`` records of ``extract.jsonl``
only, each with its one-line text in ``extract/`` (one in a thousand holds ``needle``), as
another program's store is. The real command ``--quarry`` (default this checkout's) and
``--against`` (another checkout's, to compare) take turns ``--runs`` times, each with an
empty user cache (the first grep of such a store builds a reading index there) and then
with the cache left by the run before; the peak RSS (the child's ``ru_maxrss``) and the wall
time of each, medians with min and max, and that both printed the same lines. Not a test.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.db import DB, RecordDB, identity_of
from engine.grep import matching_keys, search
from engine.store import Store
from engine.textindex import TextIndex
from engine.textsearch import parse

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
QUARRY = [sys.executable, "-m", "engine"]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _fmt(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return f"{statistics.median(v):.3f} {unit} ({min(v):.3f}-{max(v):.3f})"


def _sweep(folder: Path, out: Path, extra: list[str]) -> tuple[float, float]:
    """(wall, CPU of the command and all its processes) of one cold sweep.

    The CPU is ``perf stat``'s task-clock, which counts every descendant: the read workers
    are the forkserver's children, and ``RUSAGE_CHILDREN`` of this process misses them."""
    cmd = [*QUARRY, "sweep", str(folder), "--out", str(out), "--quiet", *extra]
    counts = out.parent / f"{out.name}.perf"
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["perf", "stat", "-x,", "-e", "task-clock", "-o", str(counts), *cmd],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 2):
        raise SystemExit(f"sweep failed ({proc.returncode}): {proc.stderr}")
    line = next(ln for ln in counts.read_text().splitlines() if "task-clock" in ln)
    return wall, float(line.split(",")[0]) / 1e3


def _db_size(out: Path) -> int:
    con = sqlite3.connect(out / DB)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    return sum(os.path.getsize(out / n) for n in (DB, DB + "-wal") if (out / n).exists())


def _text_bytes(out: Path) -> int:
    return sum(f.stat().st_size for f in (out / "extract").rglob("*.txt"))


def _timed(
    fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.perf_counter
) -> tuple[list[float], object]:
    times, got = [], None
    for _ in range(runs):
        t0 = clock()
        got = fn()
        times.append(clock() - t0)
    return times, got


def _search_count(store: Store, words: str) -> int:
    return sum(1 for _ in search(store, parse(words), build=False))


def corpus(args: argparse.Namespace) -> None:
    folder = Path(args.folder)
    if shutil.which("perf") is None:
        raise SystemExit("perf is needed: it counts the CPU of every process of a sweep")
    extra = [a for t in args.without for a in ("--without", t)]
    print(f"corpus {folder}, {args.runs} runs each, taking turns; {' '.join(extra) or 'all tools'}")
    print(f"load before: {_load()}")
    base = Path(tempfile.mkdtemp(prefix="bench-grep-", dir=args.dir))
    rows: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
    sizes: dict[str, int] = {}
    for n in range(args.runs):
        for arm in ("with", "without") if n % 2 == 0 else ("without", "with"):
            out = base / f"{arm}{n}"
            flags = extra + ([] if arm == "with" else ["--no-text-index"])
            rows[arm].append(_sweep(folder, out, flags))
            sizes[arm] = _db_size(out)
    for arm, got in rows.items():
        walls, cpus = [w for w, _ in got], [c for _, c in got]
        print(f"cold sweep {arm:>7} text index: wall {_fmt(walls)}, CPU {_fmt(cpus)}")
    cpu_with = statistics.median(c for _, c in rows["with"])
    cpu_without = statistics.median(c for _, c in rows["without"])
    print(f"CPU with / without: {cpu_with / cpu_without:.3f}x ({cpu_with - cpu_without:+.2f} s)")
    store_out = base / "with0"
    texts = _text_bytes(store_out)
    print(
        f"extract.db {sizes['with'] / 1e6:.2f} MB with the text index, "
        f"{sizes['without'] / 1e6:.2f} MB without: the index adds "
        f"{(sizes['with'] - sizes['without']) / 1e6:.2f} MB for {texts / 1e6:.2f} MB of texts"
    )
    builds = []
    for n in range(args.runs):
        out = base / f"without{n}"
        store = Store(out)
        with store.writer(), RecordDB.open_writer(out / DB) as db:
            index = TextIndex(db, store)
            t0 = resource.getrusage(resource.RUSAGE_SELF)
            index.ensure()
            t1 = resource.getrusage(resource.RUSAGE_SELF)
        builds.append((t1.ru_utime - t0.ru_utime) + (t1.ru_stime - t0.ru_stime))
    print(f"the index built for a store swept without it: CPU {_fmt(builds)}")
    store = Store(store_out)
    for label, words in (("word", args.word), ("phrase", args.phrase)):
        _search_count(store, words)  # warm the file's pages, as a second query finds them
        times, hits = _timed(lambda w=words: _search_count(store, w), args.runs)
        print(f"{label} {words!r}: {hits} match(es); engine {_fmt(times, 'ms', 1e3)}")
        cli = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(
                [*QUARRY, "grep", words, "--store", str(store_out)],
                capture_output=True,
                check=False,
            )
            cli.append(time.perf_counter() - t0)
        print(f"    quarry grep (process start included) {_fmt(cli, 'ms', 1e3)}")
    print(f"load after: {_load()}; stores in {base}")


# -- the synthetic store --------------------------------------------------------------------


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 10))))
    return sorted(words)


def synthetic(args: argparse.Namespace) -> None:
    from engine.db import row_of
    from engine.records import Record

    rng = random.Random(1)
    vocab = _vocabulary(rng, 50_000)
    cum, total = [], 0.0
    for i in range(len(vocab)):  # Zipf: word i has weight 1/(i+1)
        total += 1.0 / (i + 1)
        cum.append(total)
    if args.keep is not None and (Path(args.keep) / ".quarry" / "phrase").exists():
        store = Store(Path(args.keep) / ".quarry")
        print(f"synthetic store kept in {store.out}; load before: {_load()}")
        _queries(store, vocab, (store.out / "phrase").read_text(), args.runs)
        return
    base = (
        Path(args.keep)
        if args.keep
        else Path(tempfile.mkdtemp(prefix="bench-grep-syn-", dir=args.dir))
    )
    store = Store(base / ".quarry")
    store.out.mkdir(parents=True)
    (store.out / "extract.jsonl").write_bytes(b"")
    print(f"synthetic store of {args.texts:,} texts in {store.out}; load before: {_load()}")
    t0 = time.perf_counter()
    with RecordDB.open_writer(store.out / DB) as db:
        TextIndex(db, store).ensure()  # the text index's tables, empty
        con = db.con
        con.execute("BEGIN")
        phrase = ""
        batch = 10_000
        for start in range(0, args.texts, batch):
            n = min(batch, args.texts - start)
            bodies = [" ".join(rng.choices(vocab, cum_weights=cum, k=30)) + "\n" for _ in range(n)]
            if not phrase:
                phrase = " ".join(bodies[0].split()[10:12])
            shas = [f"{start + i:064x}" for i in range(n)]
            records = [
                Record(
                    root="/syn",
                    path=f"d{(start + i) // 1000:04d}/f{start + i:07d}.txt",
                    size=len(b),
                    mtime_ns=0,
                    status="ok",
                    sha256=s,
                    mime="text/plain",
                    chars=len(b),
                )
                for i, (s, b) in enumerate(zip(shas, bodies, strict=True))
            ]
            con.executemany(
                "INSERT INTO records (root, path, status, reason, quality, mime, extractor,"
                " size, mtime_ns, chars, ms, sha256, seq, line) VALUES"
                " (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [row_of(r, 1) for r in records],
            )
            con.executemany(
                "INSERT INTO text_rows (id, sha256, ident) VALUES (?, ?, '')",
                [(start + i + 1, s) for i, s in enumerate(shas)],
            )
            con.executemany(
                "INSERT INTO text_fts (rowid, body) VALUES (?, ?)",
                [(start + i + 1, b) for i, b in enumerate(bodies)],
            )
            if (start // batch) % 10 == 0:
                print(f"  {start + n:,} texts, {time.perf_counter() - t0:.0f} s", flush=True)
        con.execute("UPDATE meta SET value = 1 WHERE key IN ('seq', 'text_seq')")
        con.execute("COMMIT")
        db.in_step(identity_of(store.jsonl_path), finished=True)
        con.execute(  # (no companion wrote it: the text index agrees with what was put)
            "INSERT OR REPLACE INTO meta"
            " VALUES ('text_seq', (SELECT value FROM meta WHERE key = 'seq'))"
        )
    build = time.perf_counter() - t0
    (store.out / "phrase").write_text(phrase)
    print(f"built in {build:.1f} s; extract.db {_db_size(store.out) / 1e6:.1f} MB")
    _queries(store, vocab, phrase, args.runs)


def _queries(store: Store, vocab: list[str], phrase: str, runs: int) -> None:
    queries = [
        ("rare word", vocab[40_000]),
        ("middling word", vocab[2_000]),
        ("frequent word", vocab[20]),
        ("phrase", phrase),
    ]
    for label, words in queries:
        _search_count(store, words)
        times, hits = _timed(lambda w=words: _search_count(store, w), runs)
        cpu, _ = _timed(lambda w=words: _search_count(store, w), runs, time.process_time)
        print(
            f"{label} {words!r}: {hits:,} match(es); grep's search {_fmt(times, 'ms', 1e3)},"
            f" CPU {_fmt(cpu, 'ms', 1e3)}"
        )
        term = parse(words, ignore_case=True)  # (the dashboard's text:"word", all lowercase)
        times, keys = _timed(lambda t=term: matching_keys(store, t), runs)
        cpu, _ = _timed(lambda t=term: matching_keys(store, t), runs, time.process_time)
        n = len(keys) if isinstance(keys, frozenset) else 0
        print(
            f"    the dashboard's text: answer, {n:,} record(s): {_fmt(times, 'ms', 1e3)},"
            f" CPU {_fmt(cpu, 'ms', 1e3)}"
        )
    print(f"load after: {_load()}")


def _hand_store(out: Path, records: int) -> None:
    """``records`` records in ``out``'s ``extract.jsonl`` with their texts, no index."""
    import hashlib

    from engine.jsonl import line_of
    from engine.records import Record

    for i in range(256):
        (out / "extract" / f"{i:02x}").mkdir(parents=True, exist_ok=True)
    with open(out / "extract.jsonl.part", "wb") as lines:
        for i in range(records):
            needle = " needle" if i % 1000 == 0 else ""
            body = f"file {i} of the store, words words words{needle}\n"
            sha = hashlib.sha256(body.encode()).hexdigest()
            (out / "extract" / sha[:2] / f"{sha}.txt").write_text(body)
            path = f"d{i // 1000:04d}/f{i:07d}.txt"
            record = Record("/syn", path, len(body), 0, "ok", sha, "text/plain", chars=len(body))
            lines.write(line_of(record))
    os.replace(out / "extract.jsonl.part", out / "extract.jsonl")


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KB) and standard output of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read() if proc.stdout is not None else b""
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0, (cmd, proc.returncode)
    return time.perf_counter() - start, usage.ru_maxrss, out


def scan(args: argparse.Namespace) -> None:
    store = Path(args.keep) / "store"
    if not (store / "extract.jsonl").exists():
        store.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        _hand_store(store, args.records)
        print(f"made {args.records:,} records in {store} in {time.perf_counter() - t0:.0f} s")
    mine = args.quarry or str(Path(sys.executable).parent / "quarry")
    commands = {"this": mine, **({"against": args.against} if args.against else {})}
    cache = Path(args.keep) / "cache"
    runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
    said: dict[str, bytes] = {}
    print(f"load before: {_load()}")
    for _ in range(args.runs):
        for name, quarry in commands.items():
            env = {**os.environ, "XDG_CACHE_HOME": str(cache / name)}
            for when in ("empty cache", "cache kept"):
                if when == "empty cache":
                    shutil.rmtree(cache / name, ignore_errors=True)
                cmd = [quarry, "grep", "--no-text-index", "needle", "--store", str(store)]
                wall, rss, out = _timed(cmd, env)
                runs.setdefault((name, when), []).append((wall, rss))
                said[name] = out
    print(f"load after: {_load()}")
    for (name, when), got in runs.items():
        walls = [w for w, _ in got]
        rss = [r / 1024 for _, r in got]
        print(f"{name:8} {when:12} wall {_fmt(walls)}  peak RSS {_fmt(rss, 'MB')}")
    lines = said["this"].count(b"\n")
    print("same lines:", len({*said.values()}) == 1, f"({lines} lines)")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("folder", nargs="?", default=str(CORPUS))
    c.add_argument("--runs", type=int, default=3)
    c.add_argument("--without", action="append", default=[])
    c.add_argument("--word", default="invoice")
    c.add_argument("--phrase", default="the following")
    c.add_argument("--dir", default=None)
    s = sub.add_parser("synthetic")
    s.add_argument("--texts", type=int, default=1_000_000)
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--dir", default=None)
    s.add_argument("--keep", default=None, help="make the store here, or reuse the one made here")
    g = sub.add_parser("scan")
    g.add_argument("--keep", required=True, help="make the store here, or reuse the one made here")
    g.add_argument("--records", type=int, default=200_000)
    g.add_argument("--runs", type=int, default=3)
    g.add_argument("--quarry", default=None, help="the quarry command measured (default: this one)")
    g.add_argument("--against", default=None, help="another quarry command to compare with")
    args = p.parse_args(argv)
    {"corpus": corpus, "synthetic": synthetic, "scan": scan}[args.what](args)


if __name__ == "__main__":
    main()
