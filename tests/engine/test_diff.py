"""``quarry diff``: two stores of one folder, swept before and after an edit, a corruption and a
repair, compared file by file; the engine's groups and numbers checked exactly, the command
as a user runs it, a store written by the seed's extract stage as the first store, and the
similarity's laws under Hypothesis."""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from engine import comparison as comparisonmod
from engine import diff as diffmod
from engine.commands import reading_store
from engine.comparison import Comparison
from engine.diff import Direction, FileChange, Group, Kind, dice, only_in, words
from engine.diffview import EXIT_WORSE, write_text
from engine.jsonl import line_of
from engine.records import Record

QUARRY = [sys.executable, "-m", "engine"]
DOCX = Path(__file__).resolve().parents[2] / "fixtures" / "office" / "sample.docx"
BROKEN = b"PK\x03\x04 not a zip any more"
CAT = "the cat sat on the mat " * 10  # 60 words: judged, and judged good


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*QUARRY, *args], capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )


def sweep(folder: Path, out: Path) -> Path:
    proc = run("sweep", "-q", "--no-external", "--workers", "1", "--out", str(out), str(folder))
    assert proc.returncode in (0, 2), proc.stderr  # 2: error records (the broken docx)
    return out


def write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        if isinstance(data, str):
            path.write_text(data)
        else:
            path.write_bytes(data)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(folder, store before, store after): one file edited, one made corrupt, one repaired,
    one that lost most of its text, one gone, one new, one unchanged."""
    tmp = tmp_path_factory.mktemp("diff")
    d = tmp / "d"
    d.mkdir()
    write(d, {
        "same.txt": "nothing changes here", "edited.txt": "one two three four",
        "lost.txt": CAT, "gone.txt": "this one goes away",
        "corrupt.docx": DOCX.read_bytes(), "repaired.docx": BROKEN,
    })  # fmt: skip
    before = sweep(d, tmp / "A")
    (d / "gone.txt").unlink()
    write(d, {
        "edited.txt": "one two three five six", "lost.txt": "a dog ran",
        "new.txt": "a new file", "corrupt.docx": BROKEN, "repaired.docx": DOCX.read_bytes(),
    })  # fmt: skip
    after = sweep(d, tmp / "B")
    return d, before, after


def compare(a: Path, b: Path) -> tuple[list[FileChange], diffmod.DiffSummary, list[str]]:
    warned: list[str] = []
    c = Comparison(reading_store(a), reading_store(b), warned.append)
    changes = list(c.changes())
    return changes, c.summary(), warned


def test_the_groups_flips_and_similarities_are_exactly_what_changed(
    stores: tuple[Path, Path, Path],
) -> None:
    _d, a, b = stores
    changes, summary, warned = compare(a, b)
    assert not warned
    docx_chars = next(c for c in changes if c.path == "corrupt.docx").before
    assert docx_chars is not None and docx_chars.chars > 0
    got = [(c.path, c.kind, c.direction, c.group, c.similarity, c.chars_delta) for c in changes]
    assert got == [
        ("corrupt.docx", Kind.FLIPPED, Direction.WORSE, Group.WORSE, None, -docx_chars.chars),
        # {one two three four} and {one two three five six}: 2 * 3 / (4 + 5)
        ("edited.txt", Kind.TEXT, Direction.NEITHER, Group.TEXT, 0.6667, 4),
        ("gone.txt", Kind.GONE, Direction.NEITHER, Group.GONE, None, -18),
        # 60 words, none of them among the 3 after: lost 221 of its 230 characters at similarity 0
        ("lost.txt", Kind.TEXT, Direction.WORSE, Group.WORSE, 0.0, 9 - len(CAT)),
        ("new.txt", Kind.NEW, Direction.NEITHER, Group.NEW, None, 10),
        ("repaired.docx", Kind.FLIPPED, Direction.BETTER, Group.BETTER, None, docx_chars.chars),
    ]
    edited = changes[1]
    assert edited.only_before == (("four", 1),)
    assert edited.only_after == (("five", 1), ("six", 1))
    lost = changes[3]
    assert lost.before is not None and lost.after is not None
    assert (lost.before.verdict, lost.after.verdict) == ("good", "good")
    assert lost.only_before == (("the", 20), ("cat", 10), ("mat", 10), ("on", 10), ("sat", 10))
    assert [(c.before.status, c.after.status) for c in (changes[0], changes[5])] == [  # type: ignore[union-attr]
        ("ok", "error"),
        ("error", "ok"),
    ]
    assert changes[0].after.reason == "corrupt"  # type: ignore[union-attr]
    assert (summary.files_before, summary.files_after, summary.unchanged) == (6, 6, 1)
    assert summary.groups == {
        Group.WORSE: 2, Group.BETTER: 1, Group.TEXT: 1, Group.VERDICT: 0,
        Group.NEW: 1, Group.GONE: 1,
    }  # fmt: skip
    assert summary.worse and summary.paired == 5
    text = {b.name: b for b in summary.by_mime}["text/plain"]
    assert (text.changed, text.worse, text.better, text.flips) == (4, 1, 0, 0)
    assert text.median_similarity == pytest.approx((0.6667 + 0.0) / 2)
    assert text.lowest == ((0.0, "lost.txt"), (0.6667, "edited.txt"))
    docx = {b.name: b for b in summary.by_reader}["docx"]
    assert (docx.changed, docx.worse, docx.better, docx.flips) == (2, 1, 1, 2)
    assert docx.median_similarity is None
    assert [(sim, path) for sim, _root, path in summary.lowest] == [
        (0.0, "lost.txt"),
        (0.6667, "edited.txt"),
    ]


def test_similarity_is_computed_only_where_the_records_say_the_text_may_differ(
    stores: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _d, a, b = stores
    calls: list[int] = []
    real = diffmod.dice

    def counted(x: Counter[str], y: Counter[str]) -> float:
        calls.append(1)
        return real(x, y)

    monkeypatch.setattr(diffmod, "dice", counted)
    compare(a, b)
    assert len(calls) == 2  # edited.txt and lost.txt: not same.txt, not the flips


def test_the_file_and_the_index_give_the_same_diff(
    stores: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _d, a, b = stores
    plain = tmp_path / "A"
    shutil.copytree(a, plain)
    for name in ("extract.db", "extract.db-wal", "extract.db-shm"):
        (plain / name).unlink(missing_ok=True)
    from_index, s1, _ = compare(a, b)
    from_file, s2, _ = compare(plain, b)
    assert from_file == from_index
    assert (s2.groups, s2.by_mime, s2.by_reader, s2.unchanged) == (
        s1.groups,
        s1.by_mime,
        s1.by_reader,
        s1.unchanged,
    )


def test_a_store_written_by_the_seeds_extract_stage_is_the_first_store(
    stores: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    d, _a, b = stores
    seed = tmp_path / "seed"

    def text_of(sha: str, text: str) -> None:
        folder = seed / "extract" / sha[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sha}.txt").write_text(text)

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    same = (d / "same.txt").read_bytes()
    old = b"one two three four"
    lines = [
        # the seed's own fields: no size or mtime, its own extractor names, tools as a list
        {"root": str(d), "path": "edited.txt", "sha256": sha(old), "mime": "text/plain",
         "status": "ok", "extractor": "text", "chars": 18, "error": None, "v": 1,
         "reused": False},
        {"root": str(d), "path": "repaired.docx", "sha256": sha(DOCX.read_bytes()),
         "mime": DOCX_MIME, "status": "unsupported", "extractor": None, "chars": 0,
         "error": "needs a tool", "v": 1, "tools": ["pandoc"]},
        {"root": str(d), "path": "same.txt", "sha256": sha(same), "mime": "text/plain",
         "status": "ok", "extractor": "text", "chars": len(same), "error": None, "v": 1},
    ]  # fmt: skip
    seed.mkdir()
    (seed / "extract.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    text_of(sha(old), old.decode())
    text_of(sha(same), same.decode())
    changes, summary, warned = compare(seed, b)
    assert not warned
    got = [(c.path, c.kind, c.group, c.similarity) for c in changes]
    assert got == [
        ("corrupt.docx", Kind.NEW, Group.NEW, None),
        ("edited.txt", Kind.TEXT, Group.TEXT, 0.6667),
        ("lost.txt", Kind.NEW, Group.NEW, None),
        ("new.txt", Kind.NEW, Group.NEW, None),
        ("repaired.docx", Kind.FLIPPED, Group.BETTER, None),
    ]
    # same.txt: another extractor's name, the very same text, scored alike: no change
    assert summary.unchanged == 1 and not summary.worse
    edited = changes[1]
    assert edited.before is not None and edited.before.verdict == "good"  # scored here


DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


# -- the command ----------------------------------------------------------------------------


def test_quarry_diff_says_what_got_worse_and_exits_4(stores: tuple[Path, Path, Path]) -> None:
    _d, a, b = stores
    proc = run("diff", str(a), str(b))
    assert proc.returncode == EXIT_WORSE == 4, proc.stderr
    assert not proc.stderr
    out = proc.stdout.decode()
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), [x for x in lines if len(x) > 80]
    assert "  got worse              2  e.g. corrupt.docx: ok -> error/corrupt, -" in out
    assert "  got better             1  e.g. repaired.docx: error/corrupt -> ok, +" in out
    assert "  text changed           1  e.g. edited.txt: similarity 0.67, +4 characters" in out
    assert "    only before: four\n    only after:  five six\n" in out
    assert "1 unchanged; something got worse" in out
    again = run("diff", str(a), str(b))
    assert again.stdout == proc.stdout and again.returncode == proc.returncode


def test_quarry_diff_json_is_one_object_with_every_change(stores: tuple[Path, Path, Path]) -> None:
    _d, a, b = stores
    proc = run("diff", "--json", str(a), str(b))
    assert proc.returncode == 4, proc.stderr
    doc = orjson.loads(proc.stdout)
    assert [(f["path"], f["group"], f["similarity"]) for f in doc["files"]] == [
        ("corrupt.docx", "worse", None),
        ("edited.txt", "text", 0.6667),
        ("gone.txt", "gone", None),
        ("lost.txt", "worse", 0.0),
        ("new.txt", "new", None),
        ("repaired.docx", "better", None),
    ]
    assert doc["files"][1]["only_after"] == [["five", 1], ["six", 1]]
    assert doc["summary"]["groups"] == {
        "worse": 2, "better": 1, "text": 1, "verdict": 0, "new": 1, "gone": 1
    }  # fmt: skip
    assert doc["summary"]["worse"] is True and doc["summary"]["unchanged"] == 1
    assert run("diff", "--json", str(a), str(b)).stdout == proc.stdout


def test_nothing_worse_exits_0(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    d, a, b = stores
    again = sweep(d, tmp_path / "B2")  # a fresh store of the unchanged folder: other ms, why
    proc = run("diff", str(b), str(again))
    assert proc.returncode == 0, proc.stderr
    assert "6 unchanged; nothing got worse" in proc.stdout.decode()
    back = run("diff", str(b), str(a))  # the way back: repaired.docx got worse
    assert back.returncode == 4


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("missing", ("no store at", "no such folder")),
        ("not a store", ("no store at",)),
        ("a file", ("it is a file",)),
        ("same", ("are the same store",)),
        ("same through its folder", ("are the same store",)),
    ],
)
def test_wrong_input_is_one_line_and_exit_1(
    stores: tuple[Path, Path, Path], tmp_path: Path, case: str, said: tuple[str, ...]
) -> None:
    d, _a, b = stores
    (tmp_path / "plain").mkdir()
    (tmp_path / "f.txt").write_text("x")
    first = {
        "missing": tmp_path / "nowhere",
        "not a store": tmp_path / "plain",
        "a file": tmp_path / "f.txt",
        "same": b,
        "same through its folder": b,
    }[case]
    second = b
    if case == "same through its folder":
        sweep(d, d / ".quarry")
        first, second = d, d / ".quarry"
    proc = run("diff", str(first), str(second))
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.stdout, err)
    assert err.count("\n") == 1 and err.startswith("quarry: "), err
    assert not proc.stdout
    for word in said:
        assert word in err, err
    if case == "same through its folder":
        shutil.rmtree(d / ".quarry")


def test_readable_output_names_every_change_with_escapes(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    odd = "new\nline\x1b[31m.txt"
    write(d, {"a.txt": "x"})
    a = sweep(d, tmp_path / "A")
    write(d, {odd: "y", "a" + "文" * 60 + ".txt": "z"})
    b = sweep(d, tmp_path / "B")
    out = io.StringIO()
    c = Comparison(reading_store(a), reading_store(b), print)
    summary = write_text(c, out, limit=10)
    text = out.getvalue()
    assert summary.groups[Group.NEW] == 2
    assert "new\\nline\\x1b[31m.txt" in text and "\x1b" not in text
    (example,) = [line for line in text.splitlines() if line.startswith("  new ")]
    assert cell_len(example) <= 80 and example.endswith("...")  # a CJK name: two cells each


# -- the similarity -------------------------------------------------------------------------

bags = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "Été", "ß"]), max_size=30).map(
    lambda ws: Counter(w.casefold() for w in ws)
)


@given(bags, bags)
def test_dice_is_symmetric_and_between_0_and_1(a: Counter[str], b: Counter[str]) -> None:
    assert dice(a, b) == dice(b, a)
    assert 0.0 <= dice(a, b) <= 1.0
    if not (a & b) and (a or b):
        assert dice(a, b) == 0.0


@given(bags)
def test_dice_of_equal_bags_is_1(a: Counter[str]) -> None:
    assert dice(a, Counter(a)) == 1.0


@given(bags, bags)
def test_the_words_only_one_side_has_are_in_neither_other(a: Counter[str], b: Counter[str]) -> None:
    only = only_in(a, b)
    assert all(w in a and w not in b for w, _n in only)
    assert [n for _w, n in only] == sorted((n for _w, n in only), reverse=True)


def test_words_are_case_folded_letters() -> None:
    assert words("The THE the; it's 42 l'été") == Counter({"the": 3, "it's": 1, "l'été": 1})


# -- the shortcut past parsing --------------------------------------------------------------

names = st.lists(
    st.sampled_from(["a", '"', ",", ":", "\\", "é", ',"reused":true,"why":null,"ms":1,']),
    min_size=1,
    max_size=6,
).map(lambda parts: "d/" + "".join(parts))


@st.composite
def record_pairs(draw: st.DrawFn) -> tuple[Record, Record]:
    a = Record(
        "/r", draw(names), draw(st.integers(0, 9)), 7, draw(st.sampled_from(["ok", "error"])),
        sha256=draw(st.sampled_from([None, "ab" * 32])), error=draw(st.none() | names),
        reused=draw(st.booleans()), why=draw(st.sampled_from([None, "new", "retry-error"])),
        ms=draw(st.integers(0, 10**6)),
    )  # fmt: skip
    changes = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "ms": st.integers(0, 10**6),
                "why": st.sampled_from([None, "new", "forced"]),
                "reused": st.booleans(),
                "path": names,
                "error": st.none() | names,
                "size": st.integers(0, 9),
                "status": st.sampled_from(["ok", "error"]),
            },
        )
    )
    return a, a.evolve(**changes)


@given(record_pairs())
def test_lines_are_the_same_record_exactly_when_all_but_the_reads_fields_are(
    pair: tuple[Record, Record],
) -> None:
    a, b = pair
    steady = {"ms": 0, "why": None, "reused": False}
    same = a.evolve(**steady) == b.evolve(**steady)
    assert comparisonmod._same_lines(line_of(a), line_of(b)) is same


def test_a_store_with_a_torn_line_is_compared_and_the_line_said_once(
    stores: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _d, a, b = stores
    torn = tmp_path / "torn"
    shutil.copytree(a, torn)
    for name in ("extract.db", "extract.db-wal", "extract.db-shm"):
        (torn / name).unlink(missing_ok=True)  # no index: the file, through the loader
    lines = (torn / "extract.jsonl").read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"root": "/x", "path": "cut sh\n')
    (torn / "extract.jsonl").write_bytes(b"".join(lines))
    proc = run("diff", "--json", str(torn), str(b))
    assert proc.returncode == 4
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "1 unreadable line" in err and "line 3" in err, err
    doc = orjson.loads(proc.stdout)
    assert doc["summary"]["files_before"] == 6 and doc["summary"]["unchanged"] == 1


def test_one_folder_each_at_two_places_pairs_by_path(tmp_path: Path) -> None:
    """The same folder swept at two places (two machines, a copy): files paired by folder and
    path were all gone and new ("no file is in both"); each store holds one folder, so they
    pair by path, and the output says so."""
    here, there = tmp_path / "alice" / "docs", tmp_path / "srv" / "docs"
    here.mkdir(parents=True)
    write(here, {"same.txt": "nothing changes here", "edited.txt": "one two three four"})
    shutil.copytree(here, there)
    write(there, {"edited.txt": "one two three five six"})
    a, b = sweep(here, tmp_path / "A"), sweep(there, tmp_path / "B")

    changes, summary, _warned = compare(a, b)
    assert [(c.path, c.kind) for c in changes] == [("edited.txt", Kind.TEXT)]
    assert (summary.unchanged, summary.paired) == (1, 2)

    said = run("diff", str(a), str(b)).stdout.decode()
    assert "files pair by path: each store holds one folder (" in said  # (cut at 80 columns)
    assert "no file is in both" not in said
    head = orjson.loads(run("diff", "--json", str(a), str(b)).stdout)
    assert head["paired_by_path"] == {"before": str(here), "after": str(there)}


def test_a_store_of_two_folders_pairs_by_folder_and_path(tmp_path: Path) -> None:
    here, there, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (here, there, third):
        folder.mkdir()
        write(folder, {"same.txt": "nothing changes here"})
    a = sweep(here, tmp_path / "A")
    b = sweep(there, tmp_path / "B")
    sweep(third, tmp_path / "B")

    changes, summary, _warned = compare(a, b)
    assert Counter(c.group for c in changes) == {Group.NEW: 2, Group.GONE: 1}
    assert summary.paired == 0
    said = run("diff", str(a), str(b)).stdout.decode()
    assert "no file is in both: files pair by root and path" in said
    assert "pair by path" not in said
