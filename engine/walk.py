"""Walk roots into file entries: size, mtime, and what kind of thing each path is.

Never follows symlinks (a link is recorded as ``skipped/link``), never enters the store folder,
and applies ignore rules: the default exclusions (editor, office and OS droppings, version
control folders: counted per rule in :attr:`Listing.left_out`, off with
``--no-default-excludes``), ``--exclude`` globs and ``.quarryignore`` files (gitignore syntax,
relative to the folder that holds them). Special files (FIFOs, sockets, devices) are recorded,
never opened: opening a FIFO would block forever.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # imported when a walk starts: the store (and the dashboard) need none of it
    import pathspec

IGNORE_FILE = ".quarryignore"
STORE_MARKER = "quarry-store.json"
"""The file every store holds (with its format version): a folder holding it is a store."""
STORE_ENTRIES = frozenset(
    {
        STORE_MARKER,
        "extract.jsonl",
        "extract.summary.json",
        "extract.stat",
        "extract.db",
        "extract.db-wal",
        "extract.db-shm",
        "extract.db-journal",
        "lock",
        "sweep.dirty",
        "tmp",
        "extract",
    }
)
"""Names a store writes in its folder."""


_STORE_SIGNS = (STORE_MARKER, "extract.jsonl", "extract.summary.json", "lock")


def is_store_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a store (:func:`looks_like_store`), by a few stats, not a
    listing (a watch batch asks it of every folder above a path)."""
    return looks_like_store([n for n in _STORE_SIGNS if os.path.lexists(os.path.join(folder, n))])


def looks_like_store(names: Collection[str]) -> bool:
    """Whether a folder with these entries is a quarry store.

    By its marker, or, for stores written before the marker existed (and the extract stage's
    own), by its shape: ``extract.jsonl`` beside a summary or a lock.
    """
    if STORE_MARKER in names:
        return True
    return "extract.jsonl" in names and ("extract.summary.json" in names or "lock" in names)


# Editor, office and OS droppings: left out by default (``--no-default-excludes`` keeps them),
# and counted per rule in the summary. Matched against the file's name (folders: their name)
# with one compiled regex, since the walk asks for every path. ``?*~`` and not ``*~``: an
# editor's backup has the name it backs up before its ``~``; a name that is only ``~`` is a
# document of its own.
DEFAULT_IGNORED_FILES: tuple[str, ...] = (
    "?*~", ".#*", "#*#", "*.swp", "*.swx", "*.swo", "~$*", ".~lock.*#", "*.tmp", "*.part",
    "*.crdownload", ".goutputstream-*", "*___jb_tmp___", "*___jb_old___", "4913",
    ".DS_Store", "._*", "Thumbs.db", "desktop.ini",
)  # fmt: skip
DEFAULT_IGNORED_DIRS: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    "__MACOSX",
    ".Trashes",
    ".Spotlight-V100",
    "@eaDir",
    ".stversions",
)
_DIR_NAMES = frozenset(DEFAULT_IGNORED_DIRS)


def _literal_ends(globs: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """What a name must end with, start with or be to match one of ``globs``: each glob's
    trailing literal run, else its leading one, else the whole name. A glob with a bracket
    (a set of characters) gives the empty suffix: every name a candidate."""
    ends, starts, names = [], [], []
    for g in globs:
        spots = [i for i, c in enumerate(g) if c in "*?"]
        if "[" in g:
            ends.append("")
        elif not spots:
            names.append(g)
        elif spots[-1] < len(g) - 1:
            ends.append(g[spots[-1] + 1 :])
        else:
            starts.append(g[: spots[0]])
    return tuple(ends), tuple(starts), frozenset(names)


@dataclass(frozen=True, slots=True)
class FileRules:
    """The file names a walk leaves out whatever ``--exclude`` says, as the walk's hot loop
    asks: a name can match only if it ends, starts or is one of these (one C call each), and
    only then is the regex (whose ``.*`` branches scan and backtrack: 6 ms of a 20,000-file
    walk) asked."""

    globs: tuple[str, ...]
    """The globs (fnmatch syntax, against the name alone)."""
    regex: re.Pattern[str]
    ends: tuple[str, ...]
    starts: tuple[str, ...]
    names: frozenset[str]

    @classmethod
    def of(cls, globs: tuple[str, ...]) -> FileRules:
        """The rules of ``globs``."""
        regex = re.compile("|".join(fnmatch.translate(g) for g in globs))
        return cls(globs, regex, *_literal_ends(globs))

    def match(self, name: str) -> bool:
        """Whether a file named ``name`` is left out."""
        return (
            name.endswith(self.ends) or name.startswith(self.starts) or name in self.names
        ) and self.regex.match(name) is not None


WITH_DEFAULTS = FileRules.of((*DEFAULT_IGNORED_FILES, IGNORE_FILE))
"""The droppings and the ignore files (the rules, not documents): a usual walk."""
RULES_ONLY = FileRules.of((IGNORE_FILE,))
"""The ignore files alone: a walk with ``--no-default-excludes``."""


def is_default_ignored(name: str, is_dir: bool = False) -> bool:
    """Whether a file or folder name is one a sweep with the default rules leaves out (the
    droppings, and ``.quarryignore`` files)."""
    if is_dir:
        return name in _DIR_NAMES
    return WITH_DEFAULTS.match(name)


def default_rule(name: str, is_dir: bool = False) -> str | None:
    """The default exclusion that leaves out ``name`` (a folder's ends in ``/``), as the
    summary counts it; None when none does (``.quarryignore`` is a rule, not a dropping)."""
    if is_dir:
        return name + "/" if name in _DIR_NAMES else None
    return next((g for g in DEFAULT_IGNORED_FILES if fnmatch.fnmatchcase(name, g)), None)


@dataclass(slots=True)
class Entry:
    """One path found by the walk.

    Not frozen, unlike the records and events: the walk makes one per path, and a frozen
    dataclass's ``__init__`` (an ``object.__setattr__`` per field) cost 13 ms per 20,000
    entries against 3 ms for this one. Nothing assigns to an entry's fields; a changed entry
    is a new one (``dataclasses.replace``).
    """

    root: str
    """Absolute root folder."""
    path: str
    """Relative path with ``/`` separators."""
    size: int
    """Bytes (0 for anything not a regular file)."""
    mtime_ns: int
    """Modification time in nanoseconds."""
    kind: str
    """``file``, ``link``, ``special``, ``unreadable`` or ``too_large``."""
    detail: str = ""
    """Why a non-file kind was given, for the record's ``error`` field."""

    @property
    def abspath(self) -> Path:
        """Absolute path on disk."""
        return Path(self.root, self.path)


@dataclass(frozen=True, slots=True)
class WalkRules:
    """What the walk leaves out and what it refuses to read."""

    excludes: tuple[str, ...] = ()
    """Extra gitignore-style patterns (``--exclude``)."""
    skip_dirs: tuple[str, ...] = ()
    """Absolute folders never entered (the store)."""
    max_bytes: int = 1 << 30
    """Files larger than this are ``skipped/too_large``."""
    defaults: bool = True
    """The default exclusions (:data:`DEFAULT_IGNORED_FILES`, :data:`DEFAULT_IGNORED_DIRS`)
    apply; ``--no-default-excludes`` turns them off."""


_LONE_SURROGATES = {c: 0xF0000 + c - 0xD800 for c in range(0xD800, 0xE000)}
"""A name's undecodable bytes (lone surrogates, ``surrogateescape``) as code points of a
private-use plane, one for one, before the rules see it: RE2 (pathspec's re2 backend) takes
only text that encodes as UTF-8, and a rule (decoded text) holds no lone surrogate, so none
could match one; a wildcard still takes it as one character."""

Specs: TypeAlias = "tuple[tuple[int, pathspec.GitIgnoreSpec], ...]"
"""The ``.quarryignore`` rules that apply in one folder: (length of their folder's prefix, spec)."""


def rules_spec(lines: Sequence[str]) -> tuple[pathspec.GitIgnoreSpec, tuple[str, ...]]:
    """``lines`` (gitignore rules) as one spec, and those of them that are no rule (a lone
    ``!``, a trailing backslash), which are left out as git leaves them out: one such line
    in a ``.quarryignore`` of a folder received took every sweep of it down (a traceback)."""
    try:
        return _compiled(lines), ()
    except _NO_RULE:  # the lines one at a time
        bad = tuple(line for line in lines if _not_a_rule(line))
        return _compiled([line for line in lines if line not in bad]), bad


_NO_RULE = (ValueError, re.error)
"""What pathspec raises for a line that is no rule: its GitIgnorePatternError (a ValueError),
or the error of the regular expression it made of a bracket (``[[- ]$]``)."""


def _compiled(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    import warnings

    import pathspec

    with warnings.catch_warnings():  # ("possible nested set": said on stderr, over a screen)
        warnings.simplefilter("ignore", FutureWarning)
        return pathspec.GitIgnoreSpec.from_lines(lines)


def _not_a_rule(line: str) -> bool:
    try:
        _compiled([line])
    except _NO_RULE:
        return True
    return False


class Ignorer:
    """Decides whether a path under one root is ignored; caches each folder's rules."""

    def __init__(self, root: Path, rules: WalkRules) -> None:
        self.root = os.fspath(root)
        """The root as a string: a path joined to it is not parsed into parts (a pathlib join
        is, each part interned: most of the 1.2 s a watch batch took over one change 1,500
        folders deep, 0.66 s now)."""
        self.defaults = rules.defaults
        self.files = WITH_DEFAULTS if rules.defaults else RULES_ONLY
        """The file names left out whatever the ignore files say."""
        self.base: pathspec.GitIgnoreSpec | None = None
        if rules.excludes:  # pathspec (7 ms to import) only when a rule needs it
            self.base, _bad = rules_spec(rules.excludes)  # (the command line refused those)
        self.skip = {os.path.normpath(d) for d in rules.skip_dirs}
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._in_dir: dict[str, Specs] = {}
        self._stores: dict[str, bool] = {}

    def _spec(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            try:
                with open(
                    os.path.join(self.root, rel_dir, IGNORE_FILE),
                    encoding="utf-8",
                    errors="replace",
                ) as rules:
                    text = rules.read()
            except OSError:
                self._specs[rel_dir] = None
            else:
                self._specs[rel_dir], _bad = rules_spec(text.splitlines())
        return self._specs[rel_dir]

    def specs_for(self, rel_dir: str) -> Specs:
        """The rules of every ``.quarryignore`` from the root down to ``rel_dir``."""
        known = self._in_dir.get(rel_dir)
        if known is not None:
            return known
        # A folder's rules are its parent's and its own: up to the nearest folder known (the
        # walk met the parent just before), then down again. Each folder's rules rebuilt from
        # the root made a tree 1,500 folders deep take 16 s to walk (its depth cubed).
        chain = [rel_dir]
        while chain[-1]:
            parent = chain[-1].rpartition("/")[0]
            if parent in self._in_dir:
                break
            chain.append(parent)
        for folder in reversed(chain):
            above = self._in_dir.get(folder.rpartition("/")[0], ()) if folder else ()
            spec = self._spec(folder)
            cut = len(folder) + 1 if folder else 0
            self._in_dir[folder] = above if spec is None else (*above, (cut, spec))
        return self._in_dir[rel_dir]

    def ignored_in(self, rel: str, name: str, is_dir: bool, specs: Specs) -> bool:
        """Whether ``rel`` (named ``name``, in a folder whose rules are ``specs``) is left out."""
        if not is_dir and not specs and self.base is None:
            # The walk's common case, a file where no rule applies: no probe.
            return self.files.match(name)
        if self.dropped(name, is_dir):
            return True
        if is_dir and self.skip and os.path.normpath(os.path.join(self.root, rel)) in self.skip:
            return True
        probe = rel + "/" if is_dir else rel
        if not probe.isascii():
            probe = probe.translate(_LONE_SURROGATES)
        if self.base is not None and self.base.match_file(probe):
            return True
        return any(spec.match_file(probe[cut:]) for cut, spec in specs)

    def dropped(self, name: str, is_dir: bool) -> bool:
        """Whether ``name`` is left out before any ``--exclude`` or ignore file is asked."""
        if is_dir:
            return self.defaults and name in _DIR_NAMES
        return self.files.match(name)

    def is_store(self, rel_dir: str) -> bool:
        """Whether the folder ``rel_dir`` (relative to the root; "" for the root) is a store."""
        if rel_dir not in self._stores:
            self._stores[rel_dir] = is_store_folder(os.path.join(self.root, rel_dir))
        return self._stores[rel_dir]

    def in_store(self, rel: str) -> bool:
        """Whether ``rel`` lies inside a store: a store's own file at the root, or anything
        in a store folder below it."""
        parts = rel.split("/")
        if parts[0] in STORE_ENTRIES and self.is_store(""):
            return True
        return any(self.is_store("/".join(parts[:i])) for i in range(1, len(parts)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the root) is left out."""
        parent, _, name = rel.rpartition("/")
        return self.ignored_in(rel, name, is_dir, self.specs_for(parent))


@dataclass(slots=True)
class Listing:
    """What a walk of one root found, in the walk's order, as columns: a regular file is an
    item in a list of paths and two arrays of 64-bit numbers, not an object. A sweep of an
    unchanged folder compares the columns with its stat index as they are (20,000 entries
    built and taken apart again cost that sweep a fifth of its time); :meth:`entries` gives
    :class:`Entry` objects to a run. The numbers are 16 bytes a file in arrays where lists
    of ints held 80 (a million files: 16 MB, not 80)."""

    root: str
    """Absolute root folder."""
    paths: list[str] = field(default_factory=list)
    """Relative paths with ``/`` separators."""
    sizes: array[int] = field(default_factory=lambda: array("q"))
    """Each path's size (0 for anything not a regular file)."""
    mtimes: array[int] = field(default_factory=lambda: array("q"))
    """Each path's mtime in nanoseconds (held within 64 bits, :func:`fits_64`)."""
    odd: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Position -> (kind, detail) of each path that is not a regular file under the size cap
    (a link, a special file, an unreadable folder or file, a file over ``--max-bytes``)."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Default exclusion (a folder's ends in ``/``) -> the files, or folders (not entered),
    it left out of this walk."""

    def add(self, e: Entry) -> None:
        """Add ``e`` at the end."""
        if e.kind != "file":
            self.odd[len(self.paths)] = (e.kind, e.detail)
        self.paths.append(e.path)
        self.sizes.append(e.size)
        self.mtimes.append(e.mtime_ns)

    def entries(self) -> list[Entry]:
        """Every path as an :class:`Entry`, in the walk's order."""
        if not self.odd:
            return list(
                map(Entry, repeat(self.root), self.paths, self.sizes, self.mtimes, repeat("file"))
            )
        odd, plain = self.odd, ("file", "")
        return [
            Entry(self.root, p, s, m, *odd.get(i, plain))
            for i, (p, s, m) in enumerate(zip(self.paths, self.sizes, self.mtimes, strict=True))
        ]

    def pick(self, paths: Collection[str]) -> list[Entry]:
        """The entries of ``paths`` (those of them the walk found), in the walk's order."""
        odd, plain = self.odd, ("file", "")
        return [
            Entry(self.root, p, self.sizes[i], self.mtimes[i], *odd.get(i, plain))
            for i, p in enumerate(self.paths)
            if p in paths
        ]

    def nonempty_files(self) -> int:
        """Regular files under the size cap that hold a byte or more."""
        sizes = self.sizes
        return sum(map(bool, sizes)) - sum(1 for i in self.odd if sizes[i])

    def __len__(self) -> int:
        return len(self.paths)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())


def walk(root: Path, rules: WalkRules) -> Listing:
    """Every entry under ``root``, depth first, in sorted order.

    Iterative (a stack of folder listings, not recursion): a tree as deep as the OS allows
    is walked whole. A folder that holds a quarry store is never entered; a root that is a
    store itself (``--out`` equal to the root) is walked without the store's own files.
    """
    ignorer = Ignorer(root, rules)
    out = Listing(str(root))
    _walk_tree(root, "", ignorer, rules, out)
    return out


def walk_paths(root: Path, rels: Iterable[str], rules: WalkRules) -> Listing:
    """Entries for the given relative paths: a folder walked whole, a gone path none."""
    ignorer = Ignorer(root, rules)
    out = Listing(str(root))
    for rel in sorted(set(rels)):
        full = root / rel
        try:
            st = full.lstat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.add(Entry(str(root), rel, 0, 0, "unreadable", exc.strerror or str(exc)))
            continue
        if ignorer.in_store(rel) or any(
            ignorer.ignored("/".join(rel.split("/")[: i + 1]), True) for i in range(rel.count("/"))
        ):
            continue
        if stat.S_ISDIR(st.st_mode):
            if not ignorer.ignored(rel, True):
                _walk_tree(full, rel, ignorer, rules, out)
        elif not ignorer.ignored(rel, False):
            out.add(_entry(str(root), rel, st, rules))
    return out


_Frame = tuple[str, Specs, Iterator[os.DirEntry[str]]]
_by_name = attrgetter("name")
_IFMT, _IFREG = 0o170000, stat.S_IFREG


def _walk_tree(
    folder: Path, rel_dir: str, ignorer: Ignorer, rules: WalkRules, out: Listing
) -> None:
    # The hot loop of every sweep: one pass per path, so the common case (a regular file under
    # the size cap, in a folder no ignore rule reaches) is written inline, without calls.
    root = ignorer.root
    max_bytes = rules.max_bytes
    no_excludes = ignorer.base is None
    files = ignorer.files
    dropping, ends, starts, names = files.regex.match, files.ends, files.starts, files.names
    left_out = out.left_out
    ignored_in = ignorer.ignored_in
    add_path, add_size, add_mtime = out.paths.append, out.sizes.append, out.mtimes.append
    stack: list[_Frame] = []
    first = _open_folder(str(folder), rel_dir, ignorer, out)
    if first is not None:
        stack.append(first)
    while stack:
        rel_dir, specs, items = stack[-1]
        prefix = rel_dir + "/" if rel_dir else ""
        plain = no_excludes and not specs
        for item in items:
            name = item.name
            try:
                is_dir = item.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if ignored_in(prefix + name, name, True, specs):
                    _count_left_out(left_out, ignorer, name, True)
                    continue
                frame = _open_folder(item.path, prefix + name, ignorer, out)
                if frame is None:
                    continue
                stack.append(frame)
                break  # into the folder; this one's listing goes on where it stopped
            if plain:
                if (name.endswith(ends) or name.startswith(starts) or name in names) and dropping(
                    name
                ) is not None:
                    _count_left_out(left_out, ignorer, name, False)
                    continue
            elif ignored_in(prefix + name, name, False, specs):
                _count_left_out(left_out, ignorer, name, False)
                continue
            try:
                st = item.stat(follow_symlinks=False)
            except OSError as exc:
                out.add(Entry(root, prefix + name, 0, 0, "unreadable", exc.strerror or str(exc)))
                continue
            if st.st_mode & _IFMT == _IFREG and st.st_size <= max_bytes:
                add_path(prefix + name)
                add_size(st.st_size)
                try:
                    add_mtime(st.st_mtime_ns)  # (the array refuses a time past 64 bits)
                except OverflowError:
                    add_mtime(fits_64(st.st_mtime_ns))
            else:
                out.add(_entry(root, prefix + name, st, rules))
        else:
            stack.pop()


def _count_left_out(left_out: dict[str, int], ignorer: Ignorer, name: str, is_dir: bool) -> None:
    """Count ``name``, just left out, under its default exclusion if one left it out (the
    user's own rules are asked after the defaults: a name both leave out counts here)."""
    if ignorer.defaults:
        rule = default_rule(name, is_dir)
        if rule is not None:
            left_out[rule] = left_out.get(rule, 0) + 1


def _open_folder(path: str, rel_dir: str, ignorer: Ignorer, out: Listing) -> _Frame | None:
    """The sorted listing of one folder as a stack frame; None for a store or an error
    (an unreadable folder below the root is added to ``out`` as such)."""
    try:
        with os.scandir(path) as it:
            items = sorted(it, key=_by_name)
    except OSError as exc:
        if rel_dir:
            why = f"folder: {exc.strerror or exc}"
            out.add(Entry(ignorer.root, rel_dir, 0, 0, "unreadable", why))
        return None
    names = list(map(_by_name, items))
    if looks_like_store(names):
        if rel_dir:
            return None  # another store (or an earlier one of this folder): never its texts
        items = [e for e in items if e.name not in STORE_ENTRIES]  # the root is a store
    # The folder's ignore rules are looked up once per folder, not once per file.
    return (rel_dir, ignorer.specs_for(rel_dir), iter(items))


NS_LOW, NS_HIGH = -(2**63), 2**63 - 1
"""The times a record holds, in nanoseconds: what a signed 64-bit integer does (the index's)."""


def fits_64(ns: int) -> int:
    """A file's time ``ns`` held at the nearest that fits 64 bits: a file dated past 2262 or
    before 1677, which ext4, XFS and btrfs can hold, once took every sweep down. A time past
    2262 is held at the last that fits, after any sweep's start: never trusted, the file is
    hashed by every sweep, so an edit that keeps the size is still seen. One before 1677 is
    held at the first, as old a time as any other."""
    return ns if NS_LOW <= ns <= NS_HIGH else (NS_HIGH if ns > 0 else NS_LOW)


def _entry(root: str, rel: str, st: os.stat_result, rules: WalkRules) -> Entry:
    mode, mtime_ns = st.st_mode, fits_64(st.st_mtime_ns)
    if stat.S_ISLNK(mode):
        return Entry(root, rel, 0, mtime_ns, "link", "symbolic link (not followed)")
    if not stat.S_ISREG(mode):
        return Entry(root, rel, 0, mtime_ns, "special", _special_name(mode))
    if st.st_size > rules.max_bytes:
        detail = f"{st.st_size} bytes is over --max-bytes {rules.max_bytes}"
        return Entry(root, rel, st.st_size, mtime_ns, "too_large", detail)
    return Entry(root, rel, st.st_size, mtime_ns, "file")


def _special_name(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "named pipe"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return f"{name} (not opened)"
    return "special file (not opened)"
