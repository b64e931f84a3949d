#!/bin/bash
# The dashboard over a big store, this checkout against another, run for run, each on the
# store as it leaves it: the other's runs without the triage B-tree (sort__triage: it did
# not build one), this checkout's with it (built again before each of its runs, and timed).
#
#   tests/bench/triage_against.sh STORE PREV_CHECKOUT [ROUNDS]    (from this checkout, its venv on)
#
# STORE: a store made by `python tests/bench/bench_tui.py 10000000 --keep STORE --index`.
set -eu
store=$1; prev=$2; rounds=${3:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
for i in $(seq "$rounds"); do
  python -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('DROP INDEX IF EXISTS sort__triage'); c.commit()" "$store/extract.db"
  echo "== the other checkout, round $i, $(date -u +%T) UTC, load $(cut -d' ' -f1 /proc/loadavg)"
  python tests/bench/bench_tui.py --store "$store" --tree "$prev" --runs 1 | grep -E "_ms|_s |rss"
  python -c "
import sys, time
from pathlib import Path
from engine.db import RecordDB
t = time.perf_counter()
with RecordDB.open_writer(Path(sys.argv[1])) as db:
    built = db.make_sorted()
    db.commit()
print('built', built, 'in', round(time.perf_counter() - t, 1), 's')
" "$store/extract.db"
  echo "== this checkout, round $i, $(date -u +%T) UTC, load $(cut -d' ' -f1 /proc/loadavg)"
  python tests/bench/bench_tui.py --store "$store" --runs 1 | grep -E "_ms|_s |rss"
done
