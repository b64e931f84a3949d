"""``quarry grep`` as a user runs it: the real command on a store swept from a folder made here."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.db import DB
from engine.store import Store
from engine.sweep import SweepOptions
from engine.textsearch import MATCH_S
from engine.tools import ToolSet
from fixtures.gen._pdfwriter import text_pdf
from tests.engine.watchkit import watched

_SCRIPT = Path(sys.executable).parent / "quarry"
QUARRY = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tui"]

FILES: dict[str, str | bytes] = {
    "accents.txt": "Le café est prêt.\nNaïve façade\n",
    "plain.txt": "Le cafe est pret.\n",
    "cjk.txt": "東京都の天気は晴れです。\n大阪は雨\n",
    "report.pdf": text_pdf(
        ["Quarterly report", "the amount of the invoice"], ["total due 42 EUR", "thanks"]
    ),
    "shared1.txt": "a shared needle here\n",
    "sub/shared2.txt": "a shared needle here\n",
    "ctrl.txt": "escape \x1b]0;pwned\x07 inside the haystack\n",
    "odd\nname.txt": "another haystack\n",
    "ticks.txt": "tick tock tick tock tick\n" + "tick " + "x" * 150 + " tick\n",
}

TEXTS = len(set(FILES.values()))
"""The store's texts: the two shared files' are one."""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUARRY, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )


def _make(root: Path) -> None:
    for name, body in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder swept once by the real command (its store in ``.quarry``)."""
    root = tmp_path_factory.mktemp("grep") / "docs"
    root.mkdir()
    _make(root)
    proc = run("sweep", str(root), "--quiet", cwd=root)
    assert proc.returncode == 0, proc.stderr
    yield root


def lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return proc.stdout.splitlines()


def test_accents_are_matched_exactly(swept: Path) -> None:
    got = run("grep", "café", cwd=swept)
    assert (got.returncode, lines(got)) == (0, ["accents.txt:1:1: Le café est prêt."])
    got = run("grep", "cafe", cwd=swept)
    assert lines(got) == ["plain.txt:1:1: Le cafe est pret."]
    got = run("grep", "-i", "FAÇADE", cwd=swept)
    assert lines(got) == ["accents.txt:1:2: Naïve façade"]
    got = run("grep", "FAÇADE", cwd=swept)  # case counts unless -i
    assert (got.returncode, got.stdout, got.stderr) == (1, "", "")
    # a decomposed é (e + combining acute) finds the stored (NFC) text
    assert lines(run("grep", "cafe\u0301", cwd=swept)) == ["accents.txt:1:1: Le café est prêt."]


def test_cjk_substrings_long_and_short(swept: Path) -> None:
    assert lines(run("grep", "東京都", cwd=swept)) == ["cjk.txt:1:1: 東京都の天気は晴れです。"]
    # two characters: below the trigram index's reach, every text is read instead
    assert lines(run("grep", "天気", cwd=swept)) == ["cjk.txt:1:1: 東京都の天気は晴れです。"]
    assert lines(run("grep", "大阪は雨", cwd=swept)) == ["cjk.txt:1:2: 大阪は雨"]
    got = run("grep", "京都府", cwd=swept)
    assert (got.returncode, got.stdout) == (1, "")


def test_a_phrase_across_a_page_break_and_pages_counted(swept: Path) -> None:
    got = run("grep", "invoice total", cwd=swept)
    assert lines(got) == ["report.pdf:1:2: the amount of the invoice total due 42 EUR"]
    assert lines(run("grep", "due 42", cwd=swept)) == ["report.pdf:2:1: total due 42 EUR"]
    assert lines(run("grep", "thanks", cwd=swept)) == ["report.pdf:2:2: thanks"]
    assert lines(run("grep", "-E", r"due \d+ EUR", cwd=swept)) == [
        "report.pdf:2:1: total due 42 EUR"
    ]


def test_a_text_two_files_share_is_reported_for_both(swept: Path) -> None:
    got = run("grep", "shared needle", cwd=swept)
    assert lines(got) == [
        "shared1.txt:1:1: a shared needle here",
        "sub/shared2.txt:1:1: a shared needle here",
    ]
    con = sqlite3.connect(swept / ".quarry" / DB)
    try:
        rows = con.execute(
            "SELECT count(*) FROM text_fts WHERE text_fts MATCH '\"shared needle\"'"
        ).fetchone()
    finally:
        con.close()
    assert rows == (1,)  # indexed once
    # a folder inside the swept one keeps to it
    assert lines(run("grep", "needle", str(swept / "sub"), cwd=swept)) == [
        "sub/shared2.txt:1:1: a shared needle here"
    ]


def test_names_and_texts_reach_the_terminal_inert(swept: Path) -> None:
    got = run("grep", "haystack", cwd=swept)
    assert lines(got) == [
        "ctrl.txt:1:1: escape ␛]0;pwned␇ inside the haystack",
        "odd\\nname.txt:1:1: another haystack",
    ]


def test_json_one_object_per_match(swept: Path, tmp_path: Path) -> None:
    got = run("grep", "--json", "needle", "--store", str(swept / ".quarry"), cwd=swept.parent)
    objs = [json.loads(line) for line in lines(got)]
    assert [(o["path"], o["page"], o["line"], o["column"], o["match"]) for o in objs] == [
        ("shared1.txt", 1, 1, 10, "needle"),
        ("sub/shared2.txt", 1, 1, 10, "needle"),
    ]
    assert {o["root"] for o in objs} == {str(swept)}
    assert objs[0]["sha256"] == objs[1]["sha256"]
    # outside the swept folder the names are whole
    elsewhere = run("grep", "due 42", "--store", str(swept / ".quarry"), cwd=tmp_path)
    assert lines(elsewhere) == [f"{swept}/report.pdf:2:1: total due 42 EUR"]


def test_a_short_line_is_printed_once_whatever_it_matches(swept: Path) -> None:
    # as grep prints it; a long line's matches far apart are shown each in its own snippet
    got = lines(run("grep", "tick", cwd=swept))
    assert got[0] == "ticks.txt:1:1: tick tock tick tock tick"
    assert len(got) == 3 and all(line.startswith("ticks.txt:1:2: ") for line in got[1:])
    assert got[1] != got[2]
    objs = lines(run("grep", "--json", "tick", cwd=swept))
    assert len(objs) == 5  # one object per match


def test_without_the_index_each_text_is_read_once_while_remembered(
    swept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the records stream in key order; a text two files share is read once while its
    # matches are remembered, and again (the same answers) once forgotten
    from engine import grep
    from engine.textsearch import parse

    store = Store(swept / ".quarry")
    reads: list[str] = []
    read_text = Store.read_text

    def counted(self: Store, sha: str) -> str:
        reads.append(sha)
        return read_text(self, sha)

    monkeypatch.setattr(Store, "read_text", counted)
    answers = []
    for remembered in (grep.RECENT, 0):
        monkeypatch.setattr(grep, "RECENT", remembered)
        reads.clear()
        found = list(grep.search(store, parse("needle"), index=False))
        answers.append([(key[1], m.line, m.column) for key, _sha, m in found])
        assert len(reads) == len(FILES) - (remembered > 0)  # the shared text once, or twice
    assert answers[0] == answers[1] == [("shared1.txt", 1, 10), ("sub/shared2.txt", 1, 10)]


def test_without_the_index_the_same_answers(swept: Path, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", cwd=root).returncode == 0
    # (a damaged index that --no-text-index must not even open: no note about it)
    _damage(root / ".quarry", "DELETE FROM text_fts_data")
    unindexed = run("grep", "--no-text-index", "café", cwd=root)
    assert (lines(unindexed), unindexed.stderr) == (["accents.txt:1:1: Le café est prêt."], "")
    for args in (["café"], ["-i", "INVOICE TOTAL"], ["-E", "sha[a-z]+d"], ["天気"]):
        indexed = run("grep", *args, cwd=swept)
        scanned = run("grep", "--no-text-index", *args, cwd=swept)
        assert indexed.returncode == scanned.returncode == 0
        assert indexed.stdout == scanned.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["grep", "-E", "(unclosed"], "quarry: not a regular expression: missing )"),
        (["grep", "   "], "quarry: an empty pattern"),
        (["grep", "x", ".", "--store", "."], "quarry: name the store once"),
        (["grep", "x", "--frobnicate"], "usage: quarry"),
    ],
)
def test_trouble_is_exit_2_in_few_lines(swept: Path, args: list[str], said: str) -> None:
    got = run(*args, cwd=swept)
    assert got.returncode == 2
    assert got.stderr.startswith(said) and "Traceback" not in got.stderr
    assert got.stdout == ""


def test_a_pattern_that_backtracks_for_ever_is_exit_2_not_a_hang(tmp_path: Path) -> None:
    """``(a+)+$`` over a text with a long run of ``a`` (as one of the fixtures has): the
    command ran until killed; it gives the pattern up after MATCH_S on that text."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "runs.txt").write_text("a" * 4096 + "!\n")
    (root / "other.txt").write_text("aaa\n")
    assert run("sweep", str(root), "--quiet", cwd=root).returncode == 0
    got = run("grep", "-E", "(a+)+$", cwd=root)
    assert got.returncode == 2, got.stderr
    assert got.stderr.startswith(f"quarry: the pattern took over {MATCH_S:g} s on one text")
    assert "Traceback" not in got.stderr


def test_no_store_is_exit_2(tmp_path: Path) -> None:
    got = run("grep", "word", cwd=tmp_path)
    assert got.returncode == 2
    assert got.stderr == f"quarry: no store found above {tmp_path} (use --store)\n"


def test_the_index_is_built_on_first_use(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", "--no-text-index", cwd=root).returncode == 0
    con = sqlite3.connect(root / ".quarry" / DB)
    try:
        assert (
            con.execute("SELECT 1 FROM sqlite_master WHERE name = 'text_rows'").fetchone() is None
        )
    finally:
        con.close()
    unbuilt = run("grep", "--no-text-index", "shared needle", cwd=root)
    assert (len(lines(unbuilt)), unbuilt.stderr) == (2, "")
    con = sqlite3.connect(root / ".quarry" / DB)
    try:  # --no-text-index reads the texts and builds nothing
        assert (
            con.execute("SELECT 1 FROM sqlite_master WHERE name = 'text_rows'").fetchone() is None
        )
    finally:
        con.close()
    got = run("grep", "shared needle", cwd=root)
    assert got.stdout == unbuilt.stdout
    assert f"quarry: indexing {TEXTS} texts for search" in got.stderr
    again = run("grep", "shared needle", cwd=root)
    assert (again.stdout, again.stderr) == (got.stdout, "")


def test_a_store_held_by_a_writer_without_the_index_is_read_text_by_text(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", "--no-text-index", cwd=root).returncode == 0
    fd = os.open(root / ".quarry" / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a watcher with --no-text-index holds it
        got = run("grep", "café", cwd=root)
    finally:
        os.close(fd)
    assert lines(got) == ["accents.txt:1:1: Le café est prêt."]
    assert "every text is read" in got.stderr


def test_a_store_whose_text_index_is_catching_up_says_so_and_reads_the_texts(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", cwd=root).returncode == 0
    con = sqlite3.connect(root / ".quarry" / DB, isolation_level=None)
    try:  # as a sweep leaves it between its commits: the texts behind the records
        con.execute("UPDATE meta SET value = value - 1 WHERE key = 'text_seq'")
    finally:
        con.close()
    fd = os.open(root / ".quarry" / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the sweep holds the store
        got = run("grep", "café", cwd=root)
    finally:
        os.close(fd)
    assert lines(got) == ["accents.txt:1:1: Le café est prêt."]
    assert "the text index is catching up" in got.stderr


def test_a_text_replaced_while_watching(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "doc.txt").write_text("the original wording\n")
    opts = SweepOptions(tools=ToolSet.empty(), workers=1)
    with watched(root, False, opts, records_quiet_s=3600.0, records_max_s=3600.0) as w:
        assert lines(run("grep", "original", cwd=root)) == ["doc.txt:1:1: the original wording"]
        (root / "doc.txt").write_text("a line\nthe replacement wording\n")
        w.until("the new text found", lambda: run("grep", "replacement", cwd=root).returncode == 0)
        assert lines(run("grep", "replacement", cwd=root)) == [
            "doc.txt:1:2: the replacement wording"
        ]
        got = run("grep", "original", cwd=root)
        assert (got.returncode, got.stdout, got.stderr) == (1, "", "")
        (root / "doc.txt").unlink()
        w.until("the text gone", lambda: run("grep", "replacement", cwd=root).returncode == 1)
        assert Store(w.session.store.out).exists()


def test_a_reader_that_goes_early_ends_it_quietly(swept: Path) -> None:
    if shutil.which("head") is None:
        pytest.skip("no head on PATH")
    cmd = " ".join(QUARRY) + " grep -E '[a-z]' | head -1"
    got = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=swept, timeout=120)
    assert got.stdout.count("\n") == 1 and "Traceback" not in got.stderr


def _damage(out: Path, sql: str) -> None:
    con = sqlite3.connect(out / DB)
    try:
        con.execute(sql)
        con.commit()
    finally:
        con.close()


def test_a_damaged_or_cut_text_index_still_answers(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", cwd=root).returncode == 0
    want = ["accents.txt:1:1: Le café est prêt."]
    _damage(root / ".quarry", "DELETE FROM text_fts_data WHERE id > 10")  # its pages lost
    got = run("grep", "café", cwd=root)
    assert (got.returncode, lines(got)) == (0, want)
    assert "the text index could not be read" in got.stderr and "Traceback" not in got.stderr
    _damage(root / ".quarry", "DROP TABLE text_fts")  # a part of it gone: built again
    got = run("grep", "café", cwd=root)
    assert (got.returncode, lines(got)) == (0, want)
    assert f"indexing {TEXTS} texts" in got.stderr
    again = run("grep", "café", cwd=root)
    assert (again.returncode, lines(again), again.stderr) == (0, want, "")


def test_texts_missing_from_the_store_are_said_never_taken_for_no_match(tmp_path: Path) -> None:
    """A store whose texts are gone (copied without its ``extract/``): reading the texts, and
    building the text index, each say how many were not there; no match is not all grep says."""
    root = tmp_path / "docs"
    root.mkdir()
    _make(root)
    assert run("sweep", str(root), "--quiet", "--no-text-index", cwd=root).returncode == 0
    store = root / ".quarry"
    gone = sorted((store / "extract").glob("*/*.txt"))
    assert len(gone) == TEXTS
    for text in gone[:2]:
        text.unlink()
    read = run("grep", "--no-text-index", "shared needle", cwd=root)
    said = [line for line in read.stderr.splitlines() if "not in the store" in line]
    shas = {text.stem for text in gone[:2]}
    named = sum(1 for r in Store(store).load_records() if r.sha256 in shas and r.has_text)
    assert len(said) == 1 and f"the texts of {named} records are not in the store" in said[0]
    built = run("grep", "shared needle", cwd=root)
    assert "2 texts the records name are not in the store: not indexed" in built.stderr
    for text in gone[2:]:
        text.unlink()
    whole = run("grep", "--no-text-index", "shared needle", cwd=root)
    assert whole.returncode == 1 and whole.stdout == ""
    assert "were not searched" in whole.stderr
