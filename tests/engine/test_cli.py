"""The quarry command line as a user runs it: exit codes, messages, output."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import orjson
import pytest

from engine import cli
from engine.cli import build_parser, main

QUARRY = [sys.executable, "-m", "engine"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*QUARRY, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_missing_folder_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = run("sweep", str(tmp_path / "nope"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"quarry: no such folder: {tmp_path / 'nope'}"


def test_bad_flag_is_a_usage_message_and_exit_1(tmp_path: Path) -> None:
    proc = run("sweep", "--frobnicate", str(tmp_path))
    assert proc.returncode == 1
    assert "usage: quarry" in proc.stderr and "--frobnicate" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_size_is_a_usage_message(tmp_path: Path) -> None:
    proc = run("sweep", "--max-bytes", "lots", str(tmp_path))
    assert proc.returncode == 1 and "not a size" in proc.stderr


def test_a_memory_limit_no_read_fits_in_is_refused(tmp_path: Path) -> None:
    """``--memory 2`` is two bytes (a size without a unit), where every read fails."""
    proc = run("sweep", "--memory", "2", str(tmp_path))
    assert proc.returncode == 1 and proc.stderr.startswith("quarry: --memory 2 bytes: ")
    assert "give a size with its unit" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / ".quarry").exists()


def test_clean_sweep_exits_0_and_json_summary(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    proc = run("sweep", "--json", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    summary = orjson.loads(proc.stdout)
    assert summary["files"] == 1 and summary["counts"]["ok"] == 1 and summary["chars"] == 5


def test_error_records_exit_2_with_a_plain_log(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("fine")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    proc = run("sweep", "--no-external", str(tmp_path))
    assert proc.returncode == 2
    assert "error/corrupt" in proc.stderr and "broken.pdf" in proc.stderr
    assert "ok " in proc.stderr and "good.txt" in proc.stderr
    assert "error" in proc.stdout  # the summary table


def test_show_prints_record_and_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\r\nworld")
    assert run("sweep", "-q", str(tmp_path)).returncode == 0
    proc = run("show", str(tmp_path / "a.txt"))
    assert proc.returncode == 0
    assert "extractor: text:utf-8" in proc.stdout
    assert proc.stdout.endswith("hello\nworld")


def test_show_outside_any_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    proc = run("show", str(tmp_path / "a.txt"))
    assert proc.returncode == 1 and "no store found" in proc.stderr


def test_retry_reads_the_file_again(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    run("sweep", "-q", str(tmp_path))
    proc = run("retry", str(tmp_path / "a.txt"))
    assert proc.returncode == 0, proc.stderr
    # its verdict once, on stdout (not logged again on stderr: `2>&1` showed it twice)
    assert proc.stdout.count("a.txt") == 1 and "a.txt" not in proc.stderr, proc.stderr
    shown = run("show", "--no-text", str(tmp_path / "a.txt")).stdout
    assert "why: forced" in shown


def test_tools_lists_every_known_tool_as_json() -> None:
    proc = run("tools", "--json")
    rows = orjson.loads(proc.stdout)
    names = {r["tool"] for r in rows}
    assert {"pdftotext", "pdftoppm", "tesseract", "antiword"} <= names
    assert all("debian" in r["install"] for r in rows)


def test_several_roots_need_out(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    proc = run("sweep", str(tmp_path / "a"), str(tmp_path / "b"))
    assert proc.returncode == 1 and "--out" in proc.stderr


def test_engine_alone_says_where_the_dashboard_is(tmp_path: Path) -> None:
    proc = run("ui", "--store", str(tmp_path))
    assert proc.returncode == 1 and "'quarry' command" in proc.stderr


def test_quarry_ui_on_a_missing_store_is_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tui", "ui", "--store", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "no store at" in proc.stderr
    assert "Traceback" not in proc.stderr


def _one_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 1, exactly one line on stderr naming the problem, no traceback."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("quarry: "), proc.stderr
    for word in words:
        assert word in proc.stderr


def _swept(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.txt").write_text("beta")
    assert run("sweep", "-q", str(root), "--workers", "1").returncode == 0
    return root


def test_the_dashboard_takes_its_store_as_dir_as_store_or_from_above_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``quarry ui DOCS`` was an argparse error ("--store is required"), where every other
    verb that reads a store takes the folder as it comes (``export``, ``grep``, ``tools``)."""
    from engine.errors import UsageError
    from engine.verbkit import named_store

    root = _swept(tmp_path)
    args = build_parser().parse_args(["ui", str(root)])
    assert named_store(args.dir, args.store).out == root / ".quarry"
    assert named_store(None, root / ".quarry").out == root / ".quarry"
    monkeypatch.chdir(root / "sub")
    assert named_store(None, None).out == root / ".quarry"  # the store above here
    with pytest.raises(UsageError, match="name the store once"):
        named_store(root, root)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="no store found above"):
        named_store(None, None)
    with pytest.raises(UsageError, match="no such folder"):
        named_store(tmp_path / "nowhere", None)


def test_a_store_another_quarry_writes_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``quarry sweep`` (retry, watch) beside a ``quarry watch`` of the same folder said only
    that the store was in use: it names the command that shows it, and when to try again."""
    from engine.store import Store

    root = _swept(tmp_path)
    with Store(root / ".quarry").writer():  # (another process's lock, as flock sees it)
        for argv in (["sweep", str(root)], ["retry", str(root / "a.txt")], ["watch", str(root)]):
            assert main(argv) == 1
            err = capsys.readouterr().err
            assert "is in use by another quarry process" in err, err
            assert f"'quarry ui {root / '.quarry'}' shows it" in err, err
            assert f"{argv[0]} once it stops" in err and err.count("\n") == 1, err


def test_an_exclude_that_is_no_rule_is_one_line_naming_it(tmp_path: Path) -> None:
    """``--exclude '\\'`` ended in pathspec's traceback, after the store was made."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha")
    for verb in ("sweep", "watch"):
        for rule in ("\\", "!", "notes\\"):
            proc = run(verb, str(root), "--exclude", rule)
            assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
            assert proc.stderr == (
                f"quarry: --exclude '{rule}' is no rule (gitignore syntax: a lone ! negates"
                " nothing, a trailing backslash escapes nothing; '\\\\' is a backslash)\n"
            )
    assert not (root / ".quarry").exists()


def test_wrong_input_to_every_verb_is_one_line_and_exit_1(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    store = root / ".quarry"
    nowhere = tmp_path / "nowhere"
    a_file = run("sweep", str(root / "a.txt"))  # what to do instead, said
    _one_line(a_file, "not a folder")
    assert "sweep the one it is in, then 'quarry show FILE'" in a_file.stderr
    _one_line(run("watch", str(nowhere)), "no such folder")
    # a folder and one inside it: each file was read twice at once, and the sweep crashed
    _one_line(run("sweep", str(root), str(root / "sub")), "is inside", "name only")
    _one_line(run("watch", str(root / "sub"), str(root)), "is inside", "name only")
    for bad in ("0", "-5", "nan"):  # 0 or less rescanned without pause: 1,000 times in 4 s
        _one_line(run("watch", str(root), "--rescan", bad), "--rescan must be a positive")
    for bad in ("0", "nan", "inf"):
        _one_line(run("sweep", str(root), "--timeout", bad), "--timeout must be a positive")
    _one_line(run("sweep", str(root), "--out", str(root / "a.txt")), "in the way of the store")
    _one_line(run("show", str(root / "nope.txt")), "no such file, and no record")
    _one_line(run("show", str(root / "sub")), "is a folder (1 record under it)")
    _one_line(run("show", str(nowhere / "x.txt")), "no store found")
    _one_line(run("show", str(root / "a.txt"), "--store", str(nowhere)), "no store at")
    _one_line(run("show", str(root / "a.txt"), "--store", str(root / "a.txt")), "is a file")
    _one_line(run("show", str(root / "a.txt"), "--store", str(tmp_path)), "run 'quarry sweep")
    _one_line(run("retry", str(root / "nope.txt")), "no such file, and no record")
    _one_line(run("retry", str(tmp_path / "x.txt"), "--store", str(store)), "not under any")
    _one_line(run("tools", str(nowhere)), "no such folder")
    _one_line(run("tools", "--store", str(tmp_path)), "no store at", "quarry sweep")
    _one_line(run("tools", "--store", str(nowhere)), "no store at")
    (store / "quarry-store.json").write_text('{"format": 7}')
    for verb in (["show", str(root / "a.txt")], ["sweep", str(root)], ["tools", str(root)]):
        _one_line(run(*verb), "format 7", "newer quarry")


def test_quarry_tools_dir_and_store_count_the_files_waiting(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    assert run("sweep", "-q", str(root), "--without", "tesseract").returncode in (0, 2)
    for args in (
        ["tools", str(root), "--json"],
        ["tools", "--store", str(root / ".quarry"), "--json"],
    ):
        proc = run(*args)
        assert proc.returncode == 0, proc.stderr
        rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
        tesseract = rows["tesseract"]
        # swept --without it: the png waits for tesseract whether or not it is installed
        assert tesseract["files_waiting"] == 1
    proc = run("tools", str(root))
    assert proc.returncode == 0 and "tesseract" in proc.stdout, proc.stderr
    if tesseract["found"]:
        said = " ".join(proc.stdout.split())
        assert "files waiting on a tool that is found (tesseract 1)" in said, proc.stdout
        assert "the next sweep reads them" in said


def test_retry_dir_reads_every_record_under_it_again(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    (root / "sub" / "c.txt").write_text("gamma")
    proc = run("retry", str(root / "sub"), "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[1] for line in proc.stdout.splitlines()] == ["sub/b.txt", "sub/c.txt"]
    shown = {p: run("show", "--no-text", str(root / p)).stdout for p in ("a.txt", "sub/b.txt")}
    assert "why: forced" in shown["sub/b.txt"] and "why: new" in shown["a.txt"]
    proc = run("retry", str(root), "--out", str(root / ".quarry"), "--workers", "1")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 3, proc.stderr


def test_retry_of_a_deleted_file_drops_its_record(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    (root / "a.txt").unlink()
    proc = run("retry", str(root / "a.txt"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gone") and "a.txt" in proc.stdout
    _one_line(run("show", str(root / "a.txt")), "no such file, and no record")


def test_show_of_a_missing_text_and_a_bad_store_line_say_so(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    store = root / ".quarry"
    with open(store / "extract.jsonl", "ab") as f:
        f.write(b"null\n")
    proc = run("show", str(root / "a.txt"))
    assert proc.returncode == 0 and proc.stdout.endswith("alpha")
    assert proc.stderr.count("\n") == 1 and "line 3: not a JSON object (null)" in proc.stderr
    run("sweep", "-q", str(root))  # repairs the store: no warning from here on
    for text in (store / "extract").glob("*/*.txt"):
        text.unlink()
    proc = run("show", str(root / "a.txt"))
    _one_line(proc, "is not in the store")
    assert "a.txt" in proc.stdout and "ok" in proc.stdout  # the record, still shown
    proc = run("show", "--json", str(root / "a.txt"))
    _one_line(proc, "is not in the store")
    assert orjson.loads(proc.stdout)["text"] is None and orjson.loads(proc.stdout)["status"] == "ok"


def test_the_dashboard_verbs_refuse_wrong_input_in_one_line(tmp_path: Path) -> None:
    """``quarry DIR`` and ``quarry ui`` check their input before the dashboard starts."""

    def tui(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "tui", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    root = _swept(tmp_path)
    store = root / ".quarry"
    _one_line(tui(str(tmp_path / "nowhere")), "no such folder")
    _one_line(tui(str(root / "a.txt")), "not a folder")
    _one_line(tui(str(root), "--rescan", "0"), "--rescan must be a positive number")
    _one_line(tui(str(tmp_path), "--read-only"), "no store at")
    _one_line(tui("ui", "--store", str(root / "a.txt")), "is a file")
    (store / "quarry-store.json").write_text('{"format": 9}')
    _one_line(tui("ui", "--store", str(store)), "newer quarry")
    _one_line(tui(str(root)), "newer quarry")
    (store / "quarry-store.json").unlink()
    (store / "extract.jsonl").unlink()
    (store / "extract.jsonl").mkdir()
    _one_line(tui("ui", "--store", str(store)), "extract.jsonl is a folder")
    _one_line(tui(str(root), "--read-only"), "extract.jsonl is a folder")
    other = tmp_path / "other"
    other.mkdir()
    (other / ".quarry").write_text("not a store")
    _one_line(tui(str(other)), "in the way of the store")


def _verbs(whole: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in whole._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no verbs")


_BEFORE = {"ui": ["--store", "s"], "show": ["x"], "grep": ["w"], "diff": ["a", "b"]}
"""What a verb needs before a flag (its positionals, ui's --store), so that only the flag
under test can be wrong."""


def test_no_flag_is_taken_by_a_prefix_of_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    """``quarry export --out S`` was ``--output S`` and ``--for`` was ``--forget-missing``:
    every proper prefix of every verb's flags is refused, naming it, exit 1 (grep's 2)."""
    tried = 0
    whole = build_parser()  # (one for all: building it is most of a parse's time)
    for verb, parser in _verbs(whole).items():
        flags = set(parser._option_string_actions)
        for flag in sorted(f for f in flags if f.startswith("--")):
            for cut in range(3, len(flag)):
                if flag[:cut] in flags:
                    continue
                before = _BEFORE.get(verb, ["d"] if verb in ("sweep", "watch", "retry") else [])
                with pytest.raises(SystemExit) as exc:
                    cli._parse(whole, [verb, *before, flag[:cut]])
                err = capsys.readouterr().err
                assert exc.value.code == 1, (verb, flag[:cut], err)
                assert f"usage: quarry {verb}" in err, err
                assert f"unrecognized arguments: {flag[:cut]}" in err, (verb, flag[:cut], err)
                tried += 1
    assert tried > 500  # every verb's flags, not none
    with pytest.raises(SystemExit) as exc:  # grep's trouble is 2, as grep's own
        main(["grep", "w", "--ign"])
    assert exc.value.code == 2 and "unrecognized arguments: --ign" in capsys.readouterr().err


def test_the_store_flag_of_another_verb_is_named_for_the_verb_at_hand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--out`` is the store of the verbs that sweep; the others call it ``--store``."""
    for verb in ("ui", "show", "tools", "export", "grep"):
        with pytest.raises(SystemExit):
            main([verb, *_BEFORE.get(verb, []), "--out", "s"])
        err = capsys.readouterr().err
        assert "(the store is --store here" in err, (verb, err)
    for verb in ("sweep", "watch", "open"):
        with pytest.raises(SystemExit):
            main([verb, "d", "--store", "s"])
        err = capsys.readouterr().err
        assert "(the store is --out here)" in err, (verb, err)
    with pytest.raises(SystemExit):
        main(["sweep", "d", "--bogus"])
    assert capsys.readouterr().err.endswith("unrecognized arguments: --bogus\n")


@pytest.mark.parametrize("index", [True, False], ids=["indexed", "no-index"])
def test_show_takes_a_record_s_path_in_a_store_whose_folders_are_elsewhere(
    tmp_path: Path, index: bool
) -> None:
    """A store from another machine: its records' folders are not here. ``quarry show
    --store S sub/b.txt`` (the path as the dashboard and the export show it) said
    "/cwd/sub/b.txt is not under any folder swept into the store"."""
    first, second = tmp_path / "one", tmp_path / "two"
    for root in (first, second):
        (root / "sub").mkdir(parents=True)
        (root / "both.txt").write_text(f"in {root.name}\n")
    (first / "sub" / "b.txt").write_text("beta\n")
    store = tmp_path / "store"
    swept = run("sweep", "-q", str(first), str(second), "--out", str(store), "--workers", "1")
    assert swept.returncode == 0, swept.stderr
    if not index:
        for db in store.glob("extract.db*"):
            db.unlink()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    shown_ = run("show", "--store", str(store), "sub/b.txt", cwd=elsewhere)
    assert shown_.returncode == 0, shown_.stderr
    assert "path: sub/b.txt" in shown_.stdout and shown_.stdout.endswith("beta\n")
    _one_line(run("show", "--store", str(store), "both.txt", cwd=elsewhere), "in 2 folders")
    _one_line(run("show", "--store", str(store), "nope.txt", cwd=elsewhere), "no record nope.txt")
    _one_line(run("show", "--store", str(store), "../b.txt", cwd=elsewhere), "not under any")
    # no index in the store, and none can be built in the user's cache: the file is read
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cwd" / "not-a-folder")}
    (tmp_path / "cwd" / "not-a-folder").write_text("")
    for db in store.glob("extract.db*"):
        db.unlink()
    read = partial(
        subprocess.run, capture_output=True, text=True, timeout=120, cwd=elsewhere, env=env
    )
    found = read([*QUARRY, "show", "--store", str(store), "sub/b.txt"])
    assert found.returncode == 0 and found.stdout.endswith("beta\n"), found.stderr
    _one_line(read([*QUARRY, "show", "--store", str(store), "nope.txt"]), "no record nope.txt")


@pytest.mark.parametrize("width", [40, 60, 80, 160])
def test_the_tools_table_keeps_each_tool_s_name_and_package_whole_at_any_width(width: int) -> None:
    """At 60 columns the table said "pdftot…" for the one word it is about; at 40 each
    "gives" came three letters a line, and at 80 the install hint broke "poppler-util" /
    "s". Below 72 columns the tools are a list; every line fits the width but the one
    command that installs every missing tool, printed whole for the terminal to wrap."""
    from rich.console import Console

    from engine.tools import KNOWN_TOOLS, Tool, ToolSet
    from engine.toolsview import print_tools, tool_rows

    every = ToolSet(tuple(Tool(n, f"/usr/bin/{n}", "1.2.3") for n in sorted(KNOWN_TOOLS)))
    some = ToolSet(tuple(t for t in every.found if t.name != "tesseract"))
    for tools in (ToolSet.empty(), some, every):
        rows = tool_rows({"tesseract": 3}, tools)
        console = Console(width=width, record=True, file=io.StringIO())
        print_tools(console, rows, counted=True, guessed=False)
        lines = console.export_text().splitlines()
        words = {w.strip("│┃ ") for line in lines for w in line.split()}
        assert set(KNOWN_TOOLS) <= words, lines
        install = [line for line in lines if "sudo apt install" in line]
        hints = [r["install"] for r in rows if not r["found"]]
        packages = sorted({h["debian"].split()[-1] for h in hints if isinstance(h, dict)})
        if hints:
            assert (
                len(install) == 1
                and sorted(install[0].partition("sudo apt install ")[2].split()) == packages
            ), lines
            assert set(packages) <= words  # each in its row too, whole
        else:
            assert install == []
        assert all(len(line.rstrip()) <= width for line in lines if line not in install), lines
        assert any("3" in line for line in lines if "tesseract" in line), lines
