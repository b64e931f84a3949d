"""Issue 28's history: the record a file had before a sweep changed it is kept in the index
(bounded by versions a file and by age), its text survives the store's garbage collection
while it is kept, and ``quarry diff STORE --since TIME`` compares the store with itself then."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import history
from engine.db import DB, RecordDB
from engine.records import Record
from engine.sweep import SweepOptions, sweep
from tests.engine.watchkit import watched

TEXTS = {
    "a.txt": "alpha bravo charlie delta echo\n",
    "b.txt": "one two three four\n",
    "c.txt": "kilo lima mike\n",
}


def folder(tmp: Path) -> Path:
    root = tmp / "d"
    root.mkdir()
    for name, text in TEXTS.items():
        (root / name).write_text(text)
    return root


def swept(root: Path) -> Path:
    sweep([root], SweepOptions(no_external=True), lambda _e: None)
    return root / ".quarry"


def quarry(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args], capture_output=True, text=True, timeout=120
    )


def text_path(store: Path, text: str) -> Path:
    """Where the store keeps the text of a plain file whose bytes are ``text``."""
    sha = hashlib.sha256(text.encode()).hexdigest()
    return store / "extract" / sha[:2] / f"{sha}.txt"


def rows(store: Path) -> list[tuple[str, bool]]:
    """(path, has a line) of every kept row, oldest first."""
    con = sqlite3.connect(store / DB)
    try:
        got = con.execute("SELECT path, line IS NOT NULL FROM history ORDER BY id").fetchall()
    finally:
        con.close()
    return [(bytes(p).decode(), bool(line)) for p, line in got]


def since(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().isoformat()


def test_since_names_exactly_the_file_edited_with_its_similarity(tmp_path: Path) -> None:
    root = folder(tmp_path)
    store = swept(root)
    assert rows(store) == []  # a first sweep's files are no news
    between = time.time()
    (root / "a.txt").write_text("alpha bravo charlie delta foxtrot golf\n")
    swept(root)
    assert rows(store) == [("a.txt", True)]
    proc = quarry("diff", str(root), "--since", since(between), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [f["path"] for f in out["files"]] == ["a.txt"]
    (change,) = out["files"]
    # Dice over words: 4 shared of 5 before and 6 after: 2 * 4 / 11
    assert (change["kind"], change["similarity"]) == ("text", round(8 / 11, 4))
    assert change["only_before"] == [["echo", 1]]
    assert change["only_after"] == [["foxtrot", 1], ["golf", 1]]
    assert out["summary"]["unchanged"] == 2
    assert out["before"].endswith(f"at {history.iso(between)}")
    # for people: the same, and run twice the same
    text = quarry("diff", str(root), "--since", since(between))
    assert text.returncode == 0 and "a.txt: similarity 0.73, +8 characters" in text.stdout
    assert quarry("diff", str(root), "--since", since(between)).stdout == text.stdout


def test_a_file_removed_and_one_added_since_are_gone_and_new(tmp_path: Path) -> None:
    root = folder(tmp_path)
    swept(root)
    between = time.time()
    (root / "b.txt").unlink()
    (root / "n.txt").write_text("november oscar\n")
    swept(root)
    out = json.loads(quarry("diff", str(root), "--since", since(between), "--json").stdout)
    assert [(f["path"], f["kind"]) for f in out["files"]] == [("b.txt", "gone"), ("n.txt", "new")]


def test_a_kept_old_text_survives_gc_until_its_record_is_no_longer_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(history.VERSIONS_ENV, "1")
    root = folder(tmp_path)
    store = swept(root)
    first = text_path(store, TEXTS["a.txt"])
    assert first.is_file()
    (root / "a.txt").write_text("second version of a\n")
    swept(root)  # a full sweep: its garbage collection ran (b's and c's texts stay too)
    assert first.is_file()  # the kept record names it
    (root / "a.txt").write_text("third version of a\n")
    swept(root)  # one version a file: the first record is no longer kept, its text goes
    assert not first.is_file()
    assert text_path(store, "second version of a\n").is_file()
    assert rows(store) == [("a.txt", True)]


def test_the_bound_on_versions_moves_the_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(history.VERSIONS_ENV, "2")
    root = folder(tmp_path)
    store = swept(root)
    times = []
    for n in range(4):
        times.append(time.time())
        (root / "a.txt").write_text(f"version {n} of a\n")
        swept(root)
    assert rows(store) == [("a.txt", True)] * 2
    refused = quarry("diff", str(root), "--since", since(times[1]))  # its row was pruned
    assert refused.returncode == 1 and "keeps starts at" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    ok = json.loads(quarry("diff", str(root), "--since", since(times[2]), "--json").stdout)
    assert [f["path"] for f in ok["files"]] == ["a.txt"]
    assert ok["files"][0]["before"]["chars"] == len("version 1 of a\n")


def test_the_bound_on_age_prunes(tmp_path: Path) -> None:
    root = folder(tmp_path)
    store = swept(root)
    (root / "a.txt").write_text("a changed\n")
    swept(root)
    con = sqlite3.connect(store / DB)
    with con:
        con.execute(f"UPDATE history SET at = at - {(history.DAYS + 1) * 86400}")
    con.close()
    (root / "b.txt").write_text("b changed\n")
    swept(root)  # its commit prunes what is older than the bound
    assert rows(store) == [("b.txt", True)]


def test_a_rebuild_of_the_index_keeps_nothing_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / DB
    a = Record("/r", "a.txt", 1, 1, "ok", sha256="a" * 64, chars=3)
    with RecordDB.open_writer(path) as db:
        db.replace_all([a], None)
        db.in_step(None, finished=True)
        db.put([Record("/r", "a.txt", 1, 1, "error", sha256="a" * 64, reason="corrupt")])
        db.commit()
        assert [bytes(r[0]) for r in db.con.execute("SELECT path FROM history")] == [b"a.txt"]
        db.replace_all([a], None)  # a rebuild: no record changed for the history
        assert db.con.execute("SELECT count(*) FROM history").fetchone() == (1,)
        db.put([Record("/r", "a.txt", 1, 1, "ok", sha256="a" * 64, chars=3, ms=99)])
        db.commit()  # only the read's ms changed: nothing to keep
        assert db.con.execute("SELECT count(*) FROM history").fetchone() == (1,)


def test_wrong_since_input_is_one_line(tmp_path: Path) -> None:
    root = folder(tmp_path)
    swept(root)
    for args, said in (
        (["--since", "yesterday"], "is no time"),
        (["--since", "1h"], "keeps starts at"),
        (["--since", "2999-01-01"], "is after now"),  # (a mistyped year)
        ([str(root), "--since", "1h"], "name one store"),
        ([], "name two stores"),
    ):
        proc = quarry("diff", str(root), *args)
        assert proc.returncode == 1 and said in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


@given(st.integers(0, 10**6), st.sampled_from("smhdw"))
def test_since_as_a_duration_ago(n: int, unit: str) -> None:
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
    assert history.parse_since(f"{n}{unit}", now=1e9) == 1e9 - n * seconds


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)))
def test_since_as_an_iso_time(when: datetime) -> None:
    aware = when.astimezone()
    assert history.parse_since(aware.isoformat()) == aware.timestamp()


def test_a_watch_batch_keeps_the_record_it_replaced_and_its_text(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    with watched(root, poll=True) as w:
        old = w.wait("a.txt", lambda r: "a.txt" in r)["a.txt"].sha256
        assert old is not None
        between = time.time()
        (root / "a.txt").write_text("two, longer\n")
        w.wait("new content", lambda r: r["a.txt"].sha256 != old)
        w.until("extract.jsonl written", lambda: w.jsonl()["a.txt"].sha256 != old)
        assert w.session.store.has_text(old)  # the kept record names it
        assert rows(root / ".quarry") == [("a.txt", True)]
    out = json.loads(quarry("diff", str(root), "--since", since(between), "--json").stdout)
    assert [(f["path"], f["before"]["chars"], f["after"]["chars"]) for f in out["files"]] == [
        ("a.txt", 4, 12)
    ]


def test_no_versions_keeps_no_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(history.VERSIONS_ENV, "0")
    root = folder(tmp_path)
    store = swept(root)
    (root / "a.txt").write_text("changed\n")
    swept(root)
    assert rows(store) == []
    assert not text_path(store, TEXTS["a.txt"]).is_file()


def test_a_text_replaced_by_a_new_read_of_the_same_bytes_is_compared_as_it_was(
    tmp_path: Path,
) -> None:
    """A reader's upgrade reads the same bytes again to another text, filed under the same
    content hash: the old text is kept aside, so --since compares the old text with the new
    one (it said "unchanged": the new text on both sides), and the bounds free it."""
    from tests import faultreader, upgradereader

    root = tmp_path / "d"
    root.mkdir()
    (root / "blob.bin").write_bytes(b"\x00\x01alpha\x00bravo charlie\xffdelta echo foxtrot\x00")
    env = faultreader.env()

    def sweep_with(spec: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "engine", "sweep", "-q", str(root), "--reader", spec],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr

    sweep_with(upgradereader.V1_SPEC)
    store = root / ".quarry"
    between = time.time()
    sweep_with(upgradereader.V2_SPEC)
    proc = quarry("diff", str(root), "--since", since(between), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    (change,) = out["files"]
    # Dice over words: the 3 words before are among the 6 after: 2 * 3 / 9
    assert (change["path"], change["kind"], change["similarity"]) == (
        "blob.bin", "text", round(6 / 9, 4),
    )  # fmt: skip
    assert change["only_before"] == []
    assert [w for w, _n in change["only_after"]] == ["delta", "echo", "foxtrot"]
    kept = list((store / "history").glob("*/*.txt"))
    assert [p.read_text() for p in kept] == ["alpha bravo charlie\n"]
    # a third read: the first old text is still what the first time reads; the bounds free it
    sweep_with(upgradereader.V1_SPEC)
    again = json.loads(quarry("diff", str(root), "--since", since(between), "--json").stdout)
    assert again["files"] == []  # then and now: the first version's text both
    both = sorted(p.read_text() for p in (store / "history").glob("*/*.txt"))
    assert both == ["alpha bravo charlie\n", "alpha bravo charlie delta echo foxtrot\n"]
    env[history.VERSIONS_ENV] = "1"
    # one version a file: only the third sweep's record is kept (its text the first's), the
    # second's goes and so does its text
    sweep_with(upgradereader.V2_SPEC)
    left = sorted(p.read_text() for p in (store / "history").glob("*/*.txt"))
    assert left == ["alpha bravo charlie\n"]


def test_since_names_a_sweep_as_it_left_the_store(tmp_path: Path) -> None:
    """--since SWEEP through the real command: ``#N``, ``-N`` and ``last`` name the whole
    sweeps the history lists, as each left the store; a sweep not listed, or a word that is
    neither a sweep nor a time, is one line (exit 1) listing the sweeps, never a traceback."""
    root = folder(tmp_path)
    swept(root)  # sweep 1
    (root / "a.txt").write_text("alpha bravo\n")
    swept(root)  # sweep 2: a.txt
    (root / "b.txt").write_text("one two\n")
    swept(root)  # sweep 3: b.txt

    def changed(since_: str) -> list[str]:
        proc = quarry("diff", str(root), "--since", since_, "--json")
        assert proc.returncode == 0, proc.stderr
        return [f["path"] for f in json.loads(proc.stdout)["files"]]

    assert changed("#1") == changed("1") == changed("-3") == ["a.txt", "b.txt"]
    assert changed("#2") == changed("-2") == ["b.txt"]
    assert changed("last") == changed("-1") == changed("#3") == []
    for wrong, said in (
        ("-4", "names no sweep"),
        ("#9", "names no sweep"),
        ("lastt", "is no time"),
    ):
        proc = quarry("diff", str(root), "--since", wrong)
        assert proc.returncode == 1, (wrong, proc.stdout, proc.stderr)
        assert said in proc.stderr and "#1 (-3)" in proc.stderr and "#3 (-1)" in proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    ui = subprocess.run(
        [sys.executable, "-m", "tui", "ui", "--store", str(root / ".quarry"), "--since", "-7"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert ui.returncode == 1 and "names no sweep" in ui.stderr and "#2 (-2)" in ui.stderr
    assert len(ui.stderr.splitlines()) == 1 and "Traceback" not in ui.stderr


@given(
    st.lists(st.floats(1e9, 2e9), max_size=8).map(sorted),
    st.integers(0, 12),
    st.sampled_from(["-{}", "#{}", "{}"]),
)
def test_a_sweep_named_is_the_one_listed_or_a_verdict(
    times: list[float], n: int, form: str
) -> None:
    known = [(i + 1, at) for i, at in enumerate(times)]
    text = form.format(n)
    try:
        got = history.sweep_time(text, known)
    except ValueError as exc:
        assert "names no sweep" in str(exc)
        assert (n == 0 or n > len(known)) and len(str(exc).splitlines()) == 1
        return
    assert got == (known[-n][1] if form == "-{}" else known[n - 1][1])
