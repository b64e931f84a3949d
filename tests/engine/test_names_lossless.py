"""Any name the OS can hold: one record, lossless through the store, ``show``, ``retry`` and
log lines, and shown on one line (issue 10: a Latin-1 name killed the whole sweep).

Property tests run in-process on empty files (an empty file needs no worker, so a hundred
examples cost seconds); one real ``quarry`` run per verb checks the same end to end.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.console import SweepReporter, record_line
from engine.jsonl import line_of
from engine.names import escaped, shown
from engine.records import Record
from engine.store import Store, read_jsonl
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from engine.walk import STORE_ENTRIES, WalkRules, is_default_ignored, walk

QUARRY = [sys.executable, "-m", "engine"]

# A file name: 1..255 bytes, anything but "/" and NUL; not "." or "..".
names = (
    st.binary(min_size=1, max_size=255)
    .map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))
    .filter(lambda b: b not in (b".", b".."))
)


def _kept(name: str) -> bool:
    """A name the walk records (not an editor dropping, not a store's own file name)."""
    return not is_default_ignored(name) and name not in STORE_ENTRIES and name != ".quarry"


def _run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(names, min_size=1, max_size=6, unique=True))
def test_any_byte_names_get_one_lossless_record_each(raw_names: list[bytes]) -> None:
    with tempfile.TemporaryDirectory(prefix="names-") as tmp:
        root = Path(tmp, "root")
        out = Path(tmp, "store")
        root.mkdir()
        for raw in raw_names:
            with open(os.path.join(os.fsencode(root), raw), "wb"):
                pass  # empty: no worker needed
        expected = sorted(os.fsdecode(r) for r in raw_names if _kept(os.fsdecode(r)))

        walked = sorted(e.path for e in walk(root, WalkRules()))
        assert walked == expected

        sweep([root], SweepOptions(out=out, tools=ToolSet.empty()))
        data = (out / "extract.jsonl").read_bytes()
        data.decode("utf-8")  # always valid UTF-8
        lines = data.splitlines()
        assert len(lines) == len(expected)
        for line in lines:
            obj = orjson.loads(line)
            if "path_b64" in obj:  # the exact bytes travel beside the readable path
                exact = base64.b64decode(obj["path_b64"])
                assert obj["path"] == escaped(os.fsdecode(exact))
        records = Store(out).load_records()
        assert sorted(r.path for r in records) == expected  # lossless: the same str back
        for r in records:
            assert os.fsencode(r.path) in raw_names
            line = record_line(r)
            assert "\n" not in line and "\r" not in line and "\x1b" not in line
            line.encode("utf-8")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names.filter(lambda b: _kept(os.fsdecode(b))))
def test_show_prints_any_name_on_one_line(raw: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="names-") as tmp:
        root = Path(tmp)
        target = os.path.join(os.fsencode(root), raw)
        with open(target, "wb"):
            pass
        sweep([root], SweepOptions(tools=ToolSet.empty()))
        code, out, err = _run_main("show", os.fsdecode(target))
        assert code == 0, err
        path_lines = [line for line in out.splitlines() if line.strip().startswith("path:")]
        assert path_lines == [f"     path: {escaped(shown(os.fsdecode(raw)))}"] or path_lines == [
            f"     path: {shown(escaped(os.fsdecode(raw)))}"
        ]
        assert "\x1b" not in out and "\r" not in out


@given(st.text(min_size=1, max_size=40), names)
def test_log_lines_and_progress_are_one_line(message: str, raw: bytes) -> None:
    from engine.events import Notice, Progress, RecordsChanged

    stream = io.StringIO()
    reporter = SweepReporter(stream)
    name = os.fsdecode(raw)
    rec = Record("/r", name, 1, 1, "error", reason="corrupt", error=message + name)
    reporter(RecordsChanged(0.0, (rec,), (("/r", name),)))
    reporter(Notice(0.0, "x", message + name, "warning"))
    reporter(Progress(0.0, 1, 2, 1, 2, name))
    lines = stream.getvalue().split("\n")
    assert lines[-1] == "" and len(lines) == 4  # three events, three lines
    for line in lines:
        assert "\r" not in line and "\x1b" not in line and "\x85" not in line
        line.encode("utf-8")


def test_records_with_non_utf8_names_round_trip_through_jsonl() -> None:
    name = os.fsdecode(b"caf\xe9/\xff\xfe-bytes.txt")
    root = os.fsdecode(b"/srv/archiv\xe9")
    rec = Record(root, name, 3, 4, "ok", sha256="a" * 64, error=f"about {name}")
    line = line_of(rec)
    obj = orjson.loads(line)
    assert obj["path"] == "caf\\xe9/\\xff\\xfe-bytes.txt"
    assert obj["root"] == "/srv/archiv\\xe9"
    assert base64.b64decode(obj["path_b64"]) == b"caf\xe9/\xff\xfe-bytes.txt"
    assert base64.b64decode(obj["root_b64"]) == b"/srv/archiv\xe9"
    assert line == rec.to_json() + b"\n"
    back = read_jsonl(line).records
    assert [(r.root, r.path) for r in back] == [(root, name)]


def test_a_reader_without_b64_still_gets_a_readable_path() -> None:
    rec = Record("/r", os.fsdecode(b"caf\xe9.txt"), 1, 1, "ok")
    obj = orjson.loads(rec.to_json())
    assert obj["path"] == "caf\\xe9.txt" and "root_b64" not in obj


def test_a_tree_deeper_than_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    depth = max(1500, sys.getrecursionlimit() + 100)
    folders = [os.path.join(tmp_path, *(["d"] * i)) for i in range(1, depth + 1)]
    for folder in folders:  # os.makedirs and shutil.rmtree recurse: one level at a time
        os.mkdir(folder)
    try:
        Path(folders[-1], "bottom.txt").write_text("at the bottom")
        Path(tmp_path, "top.txt").write_text("at the top")
        entries = list(walk(tmp_path, WalkRules()))
        assert [e.path for e in entries] == ["/".join(["d"] * depth) + "/bottom.txt", "top.txt"]
        result = sweep([tmp_path], SweepOptions(tools=ToolSet.empty(), workers=1))
        assert result.summary.files == 2 and result.summary.counts["ok"] == 2
    finally:
        Path(folders[-1], "bottom.txt").unlink(missing_ok=True)
        for folder in reversed(folders):
            os.rmdir(folder)


def test_walk_order_is_depth_first_and_sorted(tmp_path: Path) -> None:
    for rel in ("b.txt", "a/z.txt", "a/b/c.txt", "a/a.txt", "c/d/e.txt", "C.txt"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(rel)
    paths = [e.path for e in walk(tmp_path, WalkRules())]
    assert paths == ["C.txt", "a/a.txt", "a/b/c.txt", "a/z.txt", "b.txt", "c/d/e.txt"]


def _quarry(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*QUARRY, *args], capture_output=True, timeout=120)


def test_quarry_sweeps_show_and_retries_awkward_names(tmp_path: Path) -> None:
    root = tmp_path / "names"
    root.mkdir()
    awkward = [b"caf\xe9-latin1.txt", b"new\nline.txt", b"\xff\xfe-bytes.txt", b"esc\x1b[2Jx.txt"]
    for raw in [*awkward, b"plain.txt", b"a" * 251 + b".txt"]:
        with open(os.path.join(os.fsencode(root), raw), "wb") as f:
            f.write(b"plain text in a file with an awkward name\n")
    out = tmp_path / "store"
    proc = _quarry("sweep", os.fsdecode(root), "--out", os.fsdecode(out))
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr and b"\x1b[2J" not in proc.stderr
    lines = (out / "extract.jsonl").read_bytes().splitlines()
    assert len(lines) == 6
    for raw in awkward:
        path = os.path.join(os.fsencode(root), raw)
        shown_proc = _quarry("show", os.fsdecode(path), "--store", os.fsdecode(out))
        assert shown_proc.returncode == 0, shown_proc.stderr
        assert shown_proc.stdout.endswith(b"awkward name\n")
        assert b"\x1b[2J" not in shown_proc.stdout
        retried = _quarry("retry", os.fsdecode(path), "--out", os.fsdecode(out))
        assert retried.returncode == 0, retried.stderr
        out_lines = retried.stdout.decode("utf-8").splitlines()
        assert len(out_lines) == 1 and out_lines[0].startswith("ok ")
    why = {r.path: r.why for r in Store(out).load_records()}
    assert why[os.fsdecode(b"new\nline.txt")] == "forced"
    assert why["plain.txt"] == "new"


def test_walk_paths_never_yield_a_store_file(tmp_path: Path) -> None:
    """A watch batch or a retry naming a store's files gets nothing from them."""
    from engine.walk import walk_paths

    (tmp_path / "a.txt").write_text("a")
    other = tmp_path / "old"
    other.mkdir()
    (other / "quarry-store.json").write_text('{"format": 1}')
    (other / "extract.jsonl").write_text("")
    (other / "extract" / "ab").mkdir(parents=True)
    (other / "extract" / "ab" / ("ab" * 32 + ".txt")).write_text("a text")
    (tmp_path / "quarry-store.json").write_text('{"format": 1}')  # the root is a store too
    (tmp_path / "extract.jsonl").write_text("")
    rels = ["a.txt", "old/extract.jsonl", "old/extract/ab", "old", "extract.jsonl"]
    assert [e.path for e in walk_paths(tmp_path, rels, WalkRules())] == ["a.txt"]
    assert [e.path for e in walk(tmp_path, WalkRules())] == ["a.txt"]
