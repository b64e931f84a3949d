"""A store copied or moved with its folder: its records become the folder's where it is now
(``cp -r docs docs2`` left docs2's store holding docs's records beside its own, "40 files"
for 20, for good)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from engine.cli import main
from engine.console import how_decided, others_line
from engine.events import Event, Notice, NoticeKind
from engine.jsonl import line_of
from engine.moved import _rekeyed
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, SweepResult, sweep
from engine.tools import ToolSet

NO_TOOLS = SweepOptions(tools=ToolSet(()))


def _folder(root: Path, n: int = 6) -> Path:
    for i in range(n):
        sub = root / f"d{i % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note{i}.txt").write_text(f"note number {i} of a folder that travels\n")
    return root


def _records(store: Path) -> list[Record]:
    return Store(store).load_records()


def _swept(roots: list[Path], options: SweepOptions = NO_TOOLS) -> tuple[SweepResult, list[str]]:
    said: list[str] = []

    def hear(event: Event) -> None:
        if isinstance(event, Notice) and event.kind is NoticeKind.STORE_MOVED:
            said.append(event.message)

    return sweep(roots, options, hear), said


def test_a_copied_folder_holds_its_own_records_only(tmp_path: Path) -> None:
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    shutil.copytree(docs, tmp_path / "copy")  # (sizes and mtimes kept, as cp -a keeps them)

    result, said = _swept([tmp_path / "copy"])

    records = _records(tmp_path / "copy" / ".quarry")
    assert {r.root for r in records} == {str(tmp_path / "copy")}
    assert result.summary.files == 6
    assert (result.extracted, result.reused) == (0, 6)
    assert len(said) == 1
    assert str(docs) in said[0] and "6 records" in said[0]
    assert {r.root for r in _records(docs / ".quarry")} == {str(docs)}  # (the original's own)
    for r in records:
        assert Store(tmp_path / "copy" / ".quarry").has_text(r.sha256)
    _is_sorted_and_canonical(tmp_path / "copy" / ".quarry")


def test_a_moved_folder_keeps_no_records_of_where_it_was(tmp_path: Path) -> None:
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    os.rename(docs, tmp_path / "archive")
    (tmp_path / "archive" / "d0" / "note0.txt").write_text("changed after the move\n")

    result, said = _swept([tmp_path / "archive"])

    assert {r.root for r in _records(tmp_path / "archive" / ".quarry")} == {
        str(tmp_path / "archive")
    }
    assert (result.summary.files, result.extracted, result.reused) == (6, 1, 5)
    assert not result.held_roots
    _again, said_again = _swept([tmp_path / "archive"])
    assert len(said) == 1 and not said_again


@pytest.mark.parametrize("to", ["moved", "zmoved"])  # (after "share": the file sorted anew)
def test_a_store_beside_its_roots_moves_with_the_folder_above_them(tmp_path: Path, to: str) -> None:
    """``--out`` a store beside two roots, and the folder holding all three moved: both roots'
    records follow it; a root outside that folder stays as it was."""
    top = tmp_path / "project"
    a, b = _folder(top / "a", 2), _folder(top / "b", 2)
    share = _folder(tmp_path / "share", 2)
    out = SweepOptions(tools=ToolSet(()), out=top / "out")
    sweep([a, b, share], out)
    moved = tmp_path / to
    os.rename(top, moved)

    _result, said = _swept(
        [moved / "a", moved / "b", share], SweepOptions(tools=ToolSet(()), out=moved / "out")
    )

    roots = {r.root for r in _records(moved / "out")}
    assert roots == {str(moved / "a"), str(moved / "b"), str(share)}
    assert len(said) == 1
    _is_sorted_and_canonical(moved / "out")


def _is_sorted_and_canonical(store: Path) -> None:
    """``extract.jsonl`` sorted by key, each line as this quarry writes its record."""
    lines = (store / "extract.jsonl").read_bytes().splitlines(keepends=True)
    records = [Record.from_json(line) for line in lines]
    assert [r.key for r in records] == sorted(r.key for r in records)
    assert lines == [line_of(r) for r in records]


def test_a_store_copied_away_on_its_own_is_left_as_it_is(tmp_path: Path) -> None:
    """A backup of ``.quarry`` in a folder of other files: nothing there is one of its
    records' files, so none is re-keyed (the folder's sweep finds the others as new)."""
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    other = tmp_path / "other"
    other.mkdir()
    (other / "unrelated.txt").write_text("not one of docs's files\n")
    shutil.copytree(docs / ".quarry", other / ".quarry")

    _result, said = _swept([other])

    assert not said
    roots = sorted({r.root for r in _records(other / ".quarry")})
    assert roots == [str(docs), str(other)]


def test_a_record_the_new_folder_has_already_is_kept(tmp_path: Path) -> None:
    """The store holds both roots' records of one path (a copy over a folder swept before):
    the folder's own stays, the moved one goes."""
    docs = _folder(tmp_path / "docs", 2)
    sweep([docs], NO_TOOLS)
    loaded = _records(docs / ".quarry")
    own = replace(loaded[0], root="/here", sha256="0" * 64)

    records, moved = _rekeyed([*loaded, own], {str(docs): "/here"})

    assert moved == len(loaded) - 1
    assert sorted((r.root, r.path, r.sha256) for r in records) == sorted(
        [("/here", own.path, own.sha256)]
        + [("/here", r.path, r.sha256) for r in loaded if r.path != own.path]
    )


def test_a_sweep_says_what_the_store_holds_of_folders_it_did_not_sweep(tmp_path: Path) -> None:
    """Two folders swept into one ``--out`` store, then one of them: its table counted the
    other's records as "3 not read (empty, skipped)"; they are named as what they are."""
    a, b = _folder(tmp_path / "a", 3), _folder(tmp_path / "b", 4)
    out = tmp_path / "out"
    sweep([a], SweepOptions(tools=ToolSet(()), out=out))
    command = [sys.executable, "-m", "engine", "sweep", str(b), "--out", str(out), "--no-external"]

    for _ in range(2):  # (the first reads b, the second finds it unchanged: the quick way)
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "not read" not in proc.stdout
        # As wrapped to the terminal's width: between words, and inside a path longer than a
        # line (a deep temporary folder's).
        said = "".join(proc.stdout.split())
        assert "".join(f"the store also holds 3 records of {a}, not swept now".split()) in said
        summary = Store(out).load_summary()
        assert summary is not None and summary.others == {str(a): 3}
        assert summary.files == 7

    both = SweepOptions(tools=ToolSet(()), out=out)
    assert sweep([a, b], both).summary.others == {}


def test_the_folders_not_swept_are_named_the_first_three(tmp_path: Path) -> None:
    others = {f"/srv/f{i}": i + 1 for i in range(5)}
    assert how_decided(20, 2, 3, others) == "read 2, reused 3"
    line = others_line(others)
    assert line.startswith("the store also holds 15 records of folders not swept now: ")
    assert "/srv/f2 (3)" in line and "/srv/f3" not in line and line.endswith(" and 2 more")
    assert others_line({}) == ""


@pytest.mark.parametrize("claimed", ["/", "/tmp", "relative/.quarry", ""])
def test_a_summary_that_claims_any_place_moves_no_record_into_the_store(
    tmp_path: Path, claimed: str
) -> None:
    """A received folder's summary is anyone's: whatever place it names, records move only to
    a folder the store is inside, never into the store itself nor elsewhere."""
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    summary = docs / ".quarry" / "extract.summary.json"
    data = orjson.loads(summary.read_bytes())
    data["store"] = claimed
    summary.write_bytes(orjson.dumps(data))
    shutil.copytree(docs, tmp_path / "copy")
    store = tmp_path / "copy" / ".quarry"
    planted = store / str(docs).lstrip("/") / "d0" / "note0.txt"  # (a file there, as if moved)
    planted.parent.mkdir(parents=True)
    planted.write_text("planted by the sender\n")

    _swept([tmp_path / "copy"])

    roots = {r.root for r in _records(store)}
    assert all(not root.startswith(str(store)) for root in roots), roots
    assert roots <= {str(docs), str(tmp_path / "copy")}


def test_show_finds_a_file_of_a_copied_folder_before_its_first_sweep(tmp_path: Path) -> None:
    """``quarry show copy/FILE`` said "no record" though the copied store holds the file's
    record (under the folder it was copied from): it is found there, index or none."""
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    copy = tmp_path / "copy"
    shutil.copytree(docs, copy)
    show = [sys.executable, "-m", "engine", "show", "--json", "--no-text"]

    no_cache = tmp_path / "not-a-folder"
    no_cache.write_text("")  # (no index can be built for a reader: the file is read)
    for cache in (tmp_path / "cache", no_cache):
        if cache == no_cache:
            for name in ("extract.db", "extract.db-wal", "extract.db-shm"):
                (copy / ".quarry" / name).unlink(missing_ok=True)
        proc = subprocess.run(
            [*show, str(copy / "d1" / "note3.txt")],
            capture_output=True,
            timeout=120,
            env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        )
        assert proc.returncode == 0, proc.stderr
        shown = orjson.loads(proc.stdout)
        assert (shown["root"], shown["path"]) == (str(docs), "d1/note3.txt")


@pytest.mark.parametrize(
    "name",
    ['quote " and \\ backslash', 'a,"path":"x"', os.fsdecode(b"caf\xe9 not utf-8")],
)
def test_a_folder_of_any_name_is_rekeyed_line_for_line(tmp_path: Path, name: str) -> None:
    """The lines are rewritten from their start where this quarry wrote them: a root whose
    name holds what a line's start is made of, or no UTF-8, is re-keyed all the same."""
    docs = _folder(tmp_path / "from" / name, 3)
    sweep([docs], NO_TOOLS)
    copy = tmp_path / "to" / name
    shutil.copytree(docs, copy)

    result, said = _swept([copy])

    assert {r.root for r in _records(copy / ".quarry")} == {str(copy)}
    assert (result.summary.files, result.reused, len(said)) == (3, 3, 1)
    _is_sorted_and_canonical(copy / ".quarry")


@pytest.mark.parametrize("how", ["copied", "replaced"])
def test_an_index_that_does_not_agree_is_rebuilt_without_loading_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A store copied (its ``extract.jsonl`` another inode) or whose file was replaced: the
    sweep rebuilt the index from every record loaded at once (a gigabyte at 200,000); it
    reads the file a block at a time and is then served by the index."""
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    root = docs
    if how == "copied":
        root = tmp_path / "copy"
        shutil.copytree(docs, root)
    else:
        jsonl = docs / ".quarry" / "extract.jsonl"
        shutil.copy2(jsonl, jsonl.with_suffix(".tmp"))
        os.replace(jsonl.with_suffix(".tmp"), jsonl)

    def refuse(self: Store) -> object:
        raise AssertionError("the sweep loaded every record")

    monkeypatch.setattr(Store, "load", refuse)
    said: list[str] = []
    result = sweep([root], NO_TOOLS, lambda e: said.append(getattr(e, "message", "")))

    assert (result.summary.files, result.extracted, result.reused) == (6, 0, 6)
    assert "the index did not match extract.jsonl: rebuilt from it" in said
    monkeypatch.undo()
    assert {r.root for r in _records(root / ".quarry")} == {str(root)}


def test_grep_in_a_copied_store_rebuilds_its_index_without_loading_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    copy = tmp_path / "copy"
    shutil.copytree(docs, copy)

    def refuse(self: Store) -> object:
        raise AssertionError("grep loaded every record")

    monkeypatch.setattr(Store, "load", refuse)
    assert main(["grep", "number 3 of", str(copy)]) == 0
    out = capsys.readouterr()
    assert "note3.txt" in out.out
    assert "the index did not match extract.jsonl: rebuilt from it" in out.err


@pytest.mark.parametrize("moved", ["copied", "moved"])
def test_grep_in_a_copied_or_moved_folder_names_its_files_where_they_are_now(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    moved: str,
) -> None:
    """Before its first sweep there, ``quarry grep`` in a copied folder named the files of
    the folder it was copied from, and ``quarry grep PATTERN SUBFOLDER`` found nothing (the
    records are keyed by the old folder until a sweep re-keys them): both as they are now."""
    docs = _folder(tmp_path / "docs")
    sweep([docs], NO_TOOLS)
    copy = tmp_path / "elsewhere" / "docs"
    copy.parent.mkdir()
    (shutil.copytree if moved == "copied" else shutil.move)(docs, copy)
    monkeypatch.chdir(tmp_path)

    def grep(*args: str) -> tuple[int, list[str]]:
        code = main(["grep", "of a folder", *args])
        return code, capsys.readouterr().out.splitlines()

    code, lines = grep(str(copy))
    assert code == 0 and len(lines) == 6
    assert all(line.startswith("elsewhere/docs/d") for line in lines), lines
    monkeypatch.chdir(copy)
    for under in ("d1", str(copy / "d1"), "d1/note3.txt"):
        code, lines = grep(under)
        want = {"d1/note3.txt"} if under.endswith("txt") else {f"d1/note{i}.txt" for i in (1, 3, 5)}
        assert code == 0 and {line.split(":")[0] for line in lines} == want, (under, lines)
    code, lines = grep("d1", "--json")
    assert {orjson.loads(line)["root"] for line in lines} == {str(copy)}
    assert {r.root for r in _records(copy / ".quarry")} == {str(docs)}  # (grep moves none)
