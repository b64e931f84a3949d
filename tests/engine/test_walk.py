"""The walk: links, special files, size cap, ignore rules, the store folder."""

from __future__ import annotations

import fnmatch
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from engine.records import Reason, Status
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from engine.walk import (
    _LONE_SURROGATES,
    DEFAULT_IGNORED_DIRS,
    DEFAULT_IGNORED_FILES,
    IGNORE_FILE,
    RULES_ONLY,
    STORE_ENTRIES,
    STORE_MARKER,
    WITH_DEFAULTS,
    FileRules,
    Ignorer,
    WalkRules,
    _literal_ends,
    default_rule,
    is_default_ignored,
    rules_spec,
    walk,
)


def _paths(root: Path, rules: WalkRules | None = None) -> dict[str, str]:
    return {e.path: e.kind for e in walk(root, rules or WalkRules())}


def test_links_and_special_files_are_recorded_never_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "dirlink").symlink_to(tmp_path / "outside")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    os.mkfifo(tmp_path / "pipe")
    kinds = _paths(tmp_path)
    assert kinds["link.txt"] == "link" and kinds["dirlink"] == "link" and kinds["loop"] == "link"
    assert kinds["pipe"] == "special"
    assert "dirlink/secret.txt" not in kinds


def test_sweep_records_skips_with_reasons(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "big.txt").write_text("y" * 2000)
    (root / "ok.txt").write_text("fine")
    (root / "l").symlink_to(root / "ok.txt")
    os.mkfifo(root / "fifo")
    sweep([root], SweepOptions(max_bytes=1000, tools=ToolSet.empty()))
    recs = {r.path: r for r in Store(root / ".quarry").load_records()}
    assert (recs["big.txt"].status, recs["big.txt"].reason) == (Status.SKIPPED, Reason.TOO_LARGE)
    assert (recs["l"].status, recs["l"].reason) == (Status.SKIPPED, Reason.LINK)
    assert (recs["fifo"].status, recs["fifo"].reason) == (Status.SKIPPED, Reason.SPECIAL)
    assert recs["ok.txt"].status == Status.OK
    assert "max-bytes" in (recs["big.txt"].error or "")


def _ignored_tree(root: Path, rules: str, sub_rules: str) -> None:
    """keep.txt, drop.log, build/out.txt, sub/a.md and sub/b.md, with these ``.quarryignore``
    files at the top and in ``sub``."""
    for name in ("keep.txt", "drop.log", "build/out.txt", "sub/a.md", "sub/b.md"):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(name[0])
    (root / ".quarryignore").write_text(rules)
    (root / "sub" / ".quarryignore").write_text(sub_rules)


def test_excludes_and_quarryignore_files(tmp_path: Path) -> None:
    _ignored_tree(tmp_path, "build/\n# comment\n", "b.md\n")
    kinds = _paths(tmp_path, WalkRules(excludes=("*.log",)))
    assert sorted(kinds) == ["keep.txt", "sub/a.md"]


def test_a_received_quarryignore_cannot_make_the_walk_take_for_ever(tmp_path: Path) -> None:
    """A ``.quarryignore`` line of many ``*`` and a name that nearly matches it: under
    Python's ``re`` (pathspec's "simple" backend) the match backtracks through every way of
    placing each star, hours for one name, with Ctrl-C unheard; on RE2 (pathspec's ``re2``
    extra, a dependency) it is linear in the name. Its rules are applied all the same."""
    (tmp_path / ".quarryignore").write_text("a*a*a*a*a*a*a*a*a*a*a*a*a*a*b\nskip.txt\n")
    (tmp_path / ("a" * 200)).write_text("kept: no b at its end")
    (tmp_path / ("a" * 20 + "b")).write_text("left out")
    (tmp_path / "skip.txt").write_text("left out")
    ignorer = Ignorer(tmp_path, WalkRules())
    assert all(spec._backend_name in ("best", "re2") for _cut, spec in ignorer.specs_for(""))
    assert all(type(spec._backend).__module__.startswith("pathspec._backends.re2")
               for _cut, spec in ignorer.specs_for(""))  # fmt: skip
    assert sorted(_paths(tmp_path)) == ["a" * 200]


def test_a_received_quarryignore_line_that_is_no_rule_is_left_out_as_git_leaves_it(
    tmp_path: Path,
) -> None:
    """A lone ``!`` or a trailing backslash in a ``.quarryignore`` took every sweep, watch and
    dashboard of the folder down with pathspec's traceback; the other lines still apply."""
    _ignored_tree(tmp_path, "*.log\n\\\n!\nbuild/\n", "a\\\nb.md\n")
    assert sorted(_paths(tmp_path)) == ["keep.txt", "sub/a.md"]
    _spec, bad = rules_spec(["*.log", "\\", "!", "a\\", "\\\\"])
    assert bad == ("\\", "!", "a\\")  # (two backslashes: one, escaped)


_RULE_CHARS = st.sampled_from(list("ab*?[]!\\/^$.{}()|+-# \t\u00e9")) | st.characters()


@given(st.lists(st.text(_RULE_CHARS, max_size=10).filter(lambda t: "\n" not in t), max_size=6))
@example(["[[- ]$]"])  # (pathspec made of it a regular expression Python's re refuses)
@example(["*.log", "\\", "!"])
def test_any_ignore_file_line_is_a_rule_or_left_out_never_a_traceback(lines: list[str]) -> None:
    spec, bad = rules_spec(lines)
    assert set(bad) <= set(lines)
    assert rules_spec([line for line in lines if line not in bad])[1] == ()  # the rest hold
    spec.match_file("a/b.txt")  # (and the spec answers)


def test_rules_take_a_name_that_is_not_utf8_as_the_other_backend_did(tmp_path: Path) -> None:
    """RE2 takes only text that encodes as UTF-8: a name's undecodable byte (a lone
    surrogate) crashed the walk with a traceback until it was mapped to a character of its
    own. A wildcard takes it as one character, as Python's ``re`` did."""
    odd = os.fsdecode(b"caf\xe9")
    for name in (f"{odd}.log", f"{odd}.txt", f"{odd}s.txt", "cafe.md", f"{odd}.md"):
        (tmp_path / name).write_text("x")
    (tmp_path / ".quarryignore").write_text("caf?.txt\n")
    rules = WalkRules(excludes=("*.log", "c*.md", "!cafe.md"))
    kept = sorted(_paths(tmp_path, rules))
    assert kept == sorted([f"{odd}s.txt", "cafe.md"])
    lines = ["*.log", "caf?.txt", "c*.md", "!cafe.md"]
    simple = GitIgnoreSpec.from_lines(lines, backend="simple")
    re2 = GitIgnoreSpec.from_lines(lines, backend="re2")
    for name in os.listdir(tmp_path):  # the same answers from both
        assert re2.match_file(name.translate(_LONE_SURROGATES)) == simple.match_file(name)


def test_editor_temp_files_are_ignored(tmp_path: Path) -> None:
    for name in ("doc.txt", "doc.txt~", ".#doc.txt", ".doc.txt.swp", "~$report.docx", "4913"):
        (tmp_path / name).write_text("t")
    assert sorted(_paths(tmp_path)) == ["doc.txt"]


def test_a_file_named_only_a_tilde_is_a_document_not_a_backup(tmp_path: Path) -> None:
    # ../shared/corpus holds one: 817 records for 818 files before
    for name in ("~", "~~", "notes~"):
        (tmp_path / name).write_text("t")
    assert sorted(_paths(tmp_path)) == ["~"]
    assert not is_default_ignored("~") and is_default_ignored("~~")


def test_the_default_exclusions_are_counted_and_can_be_turned_off(tmp_path: Path) -> None:
    names = ["a.txt", "b.tmp", "c.tmp", ".DS_Store", "Thumbs.db", "x.part", "._a.txt", "4913"]
    for name in names:
        (tmp_path / name).write_text("t")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / IGNORE_FILE).write_text("nothing-here\n")
    found = walk(tmp_path, WalkRules())
    assert found.paths == ["a.txt"]
    assert found.left_out == {
        "*.tmp": 2, ".DS_Store": 1, "Thumbs.db": 1, "*.part": 1, "._*": 1, "4913": 1, ".git/": 1,
    }  # fmt: skip
    everything = walk(tmp_path, WalkRules(defaults=False))
    assert sorted(everything.paths) == sorted([*names, ".git/HEAD"])  # not the rules file
    assert everything.left_out == {}


def test_walk_never_enters_the_store(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    paths = [r.path for r in Store(tmp_path / ".quarry").load_records()]
    assert paths == ["a.txt"]


def test_store_elsewhere_is_not_entered_either(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    out = tmp_path / "custom-store"
    sweep([tmp_path], SweepOptions(out=out, tools=ToolSet.empty()))
    sweep([tmp_path], SweepOptions(out=out, tools=ToolSet.empty()))
    assert [r.path for r in Store(out).load_records()] == ["a.txt"]


def test_output_is_sorted_by_root_and_path(tmp_path: Path) -> None:
    for name in ("b.txt", "a/z.txt", "a/b.txt", "C.txt"):
        p = tmp_path / name
        p.parent.mkdir(exist_ok=True)
        p.write_text(name)
    sweep([tmp_path], SweepOptions(tools=ToolSet.empty()))
    lines = (tmp_path / ".quarry" / "extract.jsonl").read_text().splitlines()
    paths = [line.split('"path":"')[1].split('"')[0] for line in lines]
    assert paths == sorted(paths)


# --- The walk against a plain reference walk, for random trees -------------------------------

# Names that exercise the rules: droppings, ignored folder names, a store's marker, names an
# ignore file or --exclude names, and names whose order differs from a case-blind sort.
_NAMES = ["a.txt", "B.md", "c.log", "é.txt", "doc.txt~", ".DS_Store", "._x", "4913", "sub",
          ".git", "build", "Z", "z9", STORE_MARKER, "extract.jsonl", "keep.bin", "~", "x.tmp",
          "~~"]  # fmt: skip
_PATTERNS = ["*.log", "build/", "!c.log", "z*", "sub/a.txt", "/B.md", "*.md"]

_files = st.tuples(st.just("file"), st.sampled_from([0, 1, 7, 8, 9, 12]))  # max_bytes is 8
_leaves = st.one_of(_files, st.just(("link", 0)), st.just(("fifo", 0)), st.just(("dirlink", 0)))
_trees = st.recursive(
    st.dictionaries(st.sampled_from(_NAMES), _leaves, max_size=5),
    lambda kids: st.dictionaries(
        st.sampled_from(_NAMES), st.one_of(_leaves, kids.map(lambda d: ("dir", d))), max_size=5
    ),
    max_leaves=20,
)
_ignores = st.lists(st.sampled_from(_PATTERNS), max_size=3)


def _make(folder: Path, tree: dict[str, Any], ignores: list[list[str]], depth: int = 0) -> None:
    folder.mkdir(exist_ok=True)
    if ignores and ignores[depth % len(ignores)]:
        (folder / IGNORE_FILE).write_text("\n".join(ignores[depth % len(ignores)]) + "\n")
    for name, (kind, arg) in tree.items():
        path = folder / name
        if kind == "file":
            path.write_bytes(b"x" * arg)
            os.utime(path, ns=(arg * 1_000_000_007, arg * 1_000_000_007))
        elif kind == "dir":
            _make(path, arg, ignores, depth + 1)
        elif kind == "link":
            path.symlink_to("a.txt")
        elif kind == "dirlink":
            path.symlink_to(folder)
        else:
            os.mkfifo(path)


def _reference(
    root: Path, rules: WalkRules, left_out: dict[str, int] | None = None
) -> list[tuple[str, str, int, int, str]]:
    """The walk's rules written plainly: a recursive listdir, lstat on everything. What the
    default exclusions leave out is counted in ``left_out`` (per glob; a folder's name + /)."""
    base = GitIgnoreSpec.from_lines(rules.excludes) if rules.excludes else None
    out: list[tuple[str, str, int, int, str]] = []
    left = left_out if left_out is not None else {}

    def dropped(name: str, is_dir: bool) -> bool:
        if name == IGNORE_FILE and not is_dir:
            return True  # the rules themselves, whatever --no-default-excludes says
        if not rules.defaults:
            return False
        rule = name + "/" if is_dir and name in DEFAULT_IGNORED_DIRS else None
        if not is_dir:
            rule = next((g for g in DEFAULT_IGNORED_FILES if fnmatch.fnmatchcase(name, g)), None)
        if rule is not None:
            left[rule] = left.get(rule, 0) + 1
        return rule is not None

    def visit(folder: Path, rel_dir: str, specs: list[tuple[int, GitIgnoreSpec]]) -> None:
        names = sorted(os.listdir(folder))
        store = STORE_MARKER in names or (
            "extract.jsonl" in names and ("extract.summary.json" in names or "lock" in names)
        )
        if store:
            if rel_dir:
                return
            names = [n for n in names if n not in STORE_ENTRIES]
        if os.path.isfile(folder / IGNORE_FILE) and not os.path.islink(folder / IGNORE_FILE):
            lines = (folder / IGNORE_FILE).read_text().splitlines()
            specs = [*specs, (len(rel_dir) + 1 if rel_dir else 0, GitIgnoreSpec.from_lines(lines))]
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            st_ = os.lstat(folder / name)
            is_dir = stat.S_ISDIR(st_.st_mode)
            probe = rel + "/" if is_dir else rel
            if dropped(name, is_dir) or (base is not None and base.match_file(probe)):
                continue
            if any(spec.match_file(probe[cut:]) for cut, spec in specs):
                continue
            if is_dir:
                visit(folder / name, rel, specs)
            elif stat.S_ISLNK(st_.st_mode):
                out.append((rel, "link", 0, st_.st_mtime_ns, "symbolic link (not followed)"))
            elif stat.S_ISFIFO(st_.st_mode):
                out.append((rel, "special", 0, st_.st_mtime_ns, "named pipe (not opened)"))
            elif st_.st_size > rules.max_bytes:
                why = f"{st_.st_size} bytes is over --max-bytes {rules.max_bytes}"
                out.append((rel, "too_large", st_.st_size, st_.st_mtime_ns, why))
            else:
                out.append((rel, "file", st_.st_size, st_.st_mtime_ns, ""))

    visit(root, "", [])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _trees,
    st.lists(_ignores, max_size=3),
    st.lists(st.sampled_from(_PATTERNS), max_size=2),
    st.booleans(),
)
def test_walk_matches_a_plain_reference_walk(
    tree: dict[str, Any], ignores: list[list[str]], excludes: list[str], defaults: bool
) -> None:
    with tempfile.TemporaryDirectory(prefix="walk-") as tmp:
        root = Path(tmp, "root")
        _make(root, tree, ignores)
        rules = WalkRules(excludes=tuple(excludes), max_bytes=8, defaults=defaults)
        found = walk(root, rules)
        got = [(e.path, e.kind, e.size, e.mtime_ns, e.detail) for e in found]
        left: dict[str, int] = {}
        assert got == _reference(root, rules, left)
        assert found.left_out == left
        assert all(e.root == str(root) and e.abspath == root / e.path for e in walk(root, rules))


def test_a_listing_gives_the_entries_the_walk_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "big.txt").write_text("x" * 100)
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "sub" / "b.txt").write_text("bravo")
    os.symlink("a.txt", tmp_path / "link")
    found = walk(tmp_path, WalkRules(max_bytes=50))
    entries = found.entries()
    assert [(e.path, e.kind) for e in entries] == [
        ("a.txt", "file"),
        ("big.txt", "too_large"),
        ("empty.txt", "file"),
        ("link", "link"),
        ("sub/b.txt", "file"),
    ]
    assert list(found) == entries and len(found) == 5
    assert [e.size for e in entries] == list(found.sizes) == [5, 100, 0, 0, 5]
    assert found.nonempty_files() == 2  # not the empty file, the link, nor the file over the cap
    assert found.pick({"sub/b.txt", "link", "gone.txt"}) == [entries[3], entries[4]]
    assert found.pick(set()) == []


# --- Droppings: the walk asks the regex only about names that can match ------------------------

_PIECES = ["~", "#", ".", "swp", ".tmp", ".part", "$", "lock", "_", "jb", "tmp", "old", "a"]
_PIECES += ["4913", ".DS_Store", "Thumbs.db", "desktop.ini", IGNORE_FILE, ".goutputstream-"]


@settings(max_examples=500)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5).map("".join))
def test_a_dropping_is_known_as_one_by_its_ends(name: str) -> None:
    want = any(fnmatch.fnmatchcase(name, g) for g in DEFAULT_IGNORED_FILES) or name == IGNORE_FILE
    assert is_default_ignored(name) == want
    assert WITH_DEFAULTS.match(name) == want
    assert RULES_ONLY.match(name) == (name == IGNORE_FILE)
    assert (default_rule(name) is not None) == (want and name != IGNORE_FILE)


@settings(max_examples=300)
@example(["a[b]"], "ab")
@example(["*.[ab]"], "b.a")
@example(["[!a]*"], "b.")
@given(
    st.lists(st.text("ab*?[]\\.", min_size=1, max_size=6), min_size=1, max_size=4),
    st.text("ab.[]\\", min_size=1, max_size=8),
)
def test_the_ends_of_any_globs_admit_every_name_they_match(globs: list[str], name: str) -> None:
    ends, starts, names = _literal_ends(globs)
    if any(fnmatch.fnmatchcase(name, g) for g in globs):
        assert name.endswith(ends) or name.startswith(starts) or name in names


@settings(max_examples=300)
@example(["?*~"], "~")
@example(["?*~"], "a~")
@given(
    st.lists(st.text("ab~*?.", min_size=1, max_size=6), min_size=1, max_size=4),
    st.text("ab~.", min_size=1, max_size=8),
)
def test_file_rules_match_exactly_what_fnmatch_matches(globs: list[str], name: str) -> None:
    # the walk's prefilter and regex together, against fnmatch glob by glob
    want = any(fnmatch.fnmatchcase(name, g) for g in globs)
    assert FileRules.of(tuple(globs)).match(name) == want


_YEAR_2400_NS = 13_569_465_600_000_000_000
"""Past what 64 bits hold: ext4 keeps times up to 2446, XFS and btrfs later still."""


def _dated(path: Path, ns: int) -> bool:
    """Give ``path`` (a link itself, not what it points to) the time ``ns``; False when this
    file system cannot hold it."""
    try:
        os.utime(path, ns=(ns, ns), follow_symlinks=False)
    except (OSError, OverflowError, NotImplementedError):
        return False
    return path.lstat().st_mtime_ns == ns


@pytest.mark.parametrize("ns", [_YEAR_2400_NS, -_YEAR_2400_NS])
def test_a_file_dated_past_64_bits_is_swept_and_swept_again(tmp_path: Path, ns: int) -> None:
    """A received folder may hold a file dated in 2400 (``touch -d 2400-01-01``): its time
    does not fit the index's 64 bits, and the sweep once died on it, every time, with a
    traceback. It is held at the nearest time that fits; such a time is never trusted, so
    the file is hashed again by every sweep and an edit is still seen."""
    from engine.records import INT64_MAX
    from engine.store import Store
    from engine.sweep import SweepOptions, sweep
    from engine.tools import ToolSet

    root = tmp_path / "root"
    root.mkdir()
    (root / "calm.txt").write_text("calm\n")
    odd = root / "odd.txt"
    odd.write_text("from the future\n")
    if not _dated(odd, ns):
        pytest.skip("this file system cannot hold the time")
    link = root / "link.txt"  # a link's record holds its own time, from the walk alone
    link.symlink_to("calm.txt")
    if not _dated(link, ns):
        pytest.skip("this file system cannot hold the time on a link")
    held = INT64_MAX if ns > 0 else -INT64_MAX - 1
    found = walk(root, WalkRules())  # (the walk's own columns: what a quick sweep compares)
    assert found.mtimes[found.paths.index("odd.txt")] == held
    out = tmp_path / "store"
    opts = SweepOptions(out=out, tools=ToolSet.empty(), workers=1)
    # The same size: only a hash sees the edit. A time past 2262 is never trusted, so the file
    # keeps its time; one before 1677 is trusted as any old time is (an edit that keeps a
    # file's size and time is not seen, whatever its time), so the edit gives it today's.
    for text in ("from the future\n", "from the FUTURE\n"):
        odd.write_text(text)
        dated = ns if ns > 0 or text == "from the future\n" else time.time_ns()
        assert _dated(odd, dated)
        result = sweep([root], opts)
        records = {r.path: r for r in Store(out).load_records()}
        assert records["odd.txt"].mtime_ns == (held if dated == ns else dated)
        assert Store(out).read_text(records["odd.txt"].sha256 or "") == text
        assert records["link.txt"].mtime_ns == held
        assert records["calm.txt"].status == "ok" and result.summary.files == 3


def test_a_folders_rules_are_its_parents_and_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each folder's ignore file is looked for once, however deep it lies: its rules are its
    parent's and its own (each rebuilt from the root, a tree 1,500 folders deep took 16 s to
    walk), and the rules still reach every folder below them."""
    depth = 60
    deepest = tmp_path.joinpath(*(["d"] * depth))
    deepest.mkdir(parents=True)
    (tmp_path / IGNORE_FILE).write_text("*.log\n")
    (tmp_path / "d" / "d" / IGNORE_FILE).write_text("skip.txt\n")
    for name in ("keep.txt", "skip.txt", "x.log"):
        (deepest / name).write_text(name)
    (tmp_path / "d" / "skip.txt").write_text("above the rule: kept")
    asked: list[str] = []
    spec = Ignorer._spec
    monkeypatch.setattr(Ignorer, "_spec", lambda self, rel: asked.append(rel) or spec(self, rel))
    found = walk(tmp_path, WalkRules())
    assert found.paths == ["/".join(["d"] * depth) + "/keep.txt", "d/skip.txt"]
    assert len(asked) == depth + 1 and len(set(asked)) == depth + 1
    ignorer = Ignorer(tmp_path, WalkRules())  # asked from below, nothing known yet
    assert ignorer.ignored("/".join(["d"] * depth) + "/skip.txt", False)
    assert not ignorer.ignored("d/skip.txt", False)
    assert [cut for cut, _ in ignorer.specs_for("d/d/d")] == [0, 4]
