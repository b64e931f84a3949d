"""A store without an index in step with its file (the seed's, an older quarry's, one on
read-only media) is looked up through an index built in the user's cache, never beside it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import readindex
from engine.db import DB, RecordDB, read_index
from engine.readindex import (
    BuildLine,
    LeftOut,
    bad_lines_of,
    cached_index_path,
    reading_index,
    records_in,
)
from engine.store import Store, read_jsonl
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet

QUARRY = [sys.executable, "-m", "engine"]


def _seed_store(out: Path, root: Path, texts: dict[str, str]) -> None:
    """A store as the seed's extract stage writes it: records (no size, no mtime), texts; no
    index."""
    import hashlib

    lines = []
    for path, text in sorted(texts.items()):
        sha = hashlib.sha256(text.encode()).hexdigest()
        folder = out / "extract" / sha[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sha}.txt").write_text(text)
        lines.append(
            orjson.dumps(
                {
                    "root": str(root),
                    "path": path,
                    "sha256": sha,
                    "mime": "text/plain",
                    "status": "ok",
                    "extractor": "text",
                    "chars": len(text),
                    "error": None,
                    "v": 1,
                }
            )
        )
    (out / "extract.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def _show(store: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUARRY, "show", str(path), "--store", str(store)],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )  # fmt: skip


def test_show_on_a_store_without_an_index_builds_one_in_the_cache_never_beside(
    tmp_path: Path,
) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    out.mkdir()
    _seed_store(out, root, {"a.txt": "alpha text\n", "b/c.txt": "charlie text\n"})
    before = sorted(p.name for p in out.iterdir())
    shown = _show(out, root / "b" / "c.txt")
    assert shown.returncode == 0, shown.stderr
    assert "charlie text" in shown.stdout and "c.txt" in shown.stdout
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written in the store
    cached = cached_index_path(Store(out))
    assert cached is not None and cached.is_file()
    assert cached.is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))  # the user's cache
    # another version of the file: the cached index is built again, never trusted as it was
    _seed_store(out, root, {"a.txt": "alpha, rewritten\n", "b/c.txt": "charlie again\n"})
    again = _show(out, root / "b" / "c.txt")
    assert again.returncode == 0 and "charlie again" in again.stdout


def test_a_lookup_in_the_cached_index_reads_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    out.mkdir()
    _seed_store(out, root, {f"f{i:03d}.txt": f"text {i}\n" for i in range(50)})
    store = Store(out)
    built = reading_index(store)
    assert built is not None and built == cached_index_path(store)

    def no_load(self: Store) -> object:
        raise AssertionError("the file was read again")

    monkeypatch.setattr(Store, "load", no_load)
    assert reading_index(store) == built  # in step with the file: used as it is
    from engine.commands import _indexed

    rec = _indexed(store, root / "f007.txt")
    assert rec is not None and rec.path == "f007.txt" and rec.chars == len("text 7\n")


def test_a_store_with_its_own_index_in_step_is_read_through_it(tmp_path: Path) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    sweep([root], SweepOptions(out=out, tools=ToolSet.empty(), workers=1))
    store = Store(out)
    assert reading_index(store) == out / DB
    assert not cached_index_path(store).exists()  # type: ignore[union-attr]


def test_without_a_cache_folder_the_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    out.mkdir()
    _seed_store(out, root, {"a.txt": "alpha text\n"})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a folder")
    assert reading_index(Store(out)) is None  # the build failed: said by returning None
    shown = _show(out, root / "a.txt")
    assert shown.returncode == 0 and "alpha text" in shown.stdout


# -- built a block at a time ---------------------------------------------------------------

_LINE = st.one_of(
    st.tuples(st.just("record"), st.sampled_from(["a.txt", "b/c.txt", "é.txt", "d e.txt"]),
              st.integers(0, 10**6)),
    st.tuples(st.just("bad"), st.sampled_from(["{", "not json", '{"root": 1}', ""]),
              st.just(0)),
)  # fmt: skip


def _line(kind: str, value: str, chars: int) -> bytes:
    if kind == "bad":
        return value.encode()
    sha = f"{chars:064x}"
    return orjson.dumps(
        {"root": "/r", "path": value, "sha256": sha, "mime": "text/plain", "status": "ok",
         "extractor": "text", "chars": chars, "error": None, "v": 1}
    )  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_LINE, max_size=40), block=st.integers(1, 300), end=st.booleans())
def test_records_read_a_block_at_a_time_are_the_files_records(
    lines: list[tuple[str, str, int]], block: int, end: bool
) -> None:
    data = b"\n".join(_line(*x) for x in lines) + (b"\n" if end and lines else b"")
    whole = read_jsonl(data)
    left = LeftOut()
    got = list(records_in((data[i : i + block] for i in range(0, len(data), block)), left))
    assert got == whole.records
    assert left.count == len(whole.bad)
    assert left.first == list(whole.bad[:5])


def test_the_cached_index_is_built_without_loading_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "docs", tmp_path / "store"
    root.mkdir()
    _seed_store(out, root, {f"f{n:03d}.txt": f"text number {n}\n" for n in range(60)})
    with (out / "extract.jsonl").open("ab") as fh:
        fh.write(b"a line that is not a record\n")
    expected = Store(out).load()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 500)  # many blocks; lines span two
    monkeypatch.setattr(Store, "load", _no_whole_load)
    built = reading_index(Store(out))
    assert built is not None and built == cached_index_path(Store(out))
    with RecordDB.open_reader(built) as db:
        assert read_index(built) == expected.records
        assert bad_lines_of(db) == (tuple(expected.bad), 1)
    assert readindex.left_out(built) == expected.left_out(str(out / "extract.jsonl"))


def _no_whole_load(self: Store) -> object:
    raise AssertionError("the whole file was loaded to build its index")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_verb_waiting_for_a_build_says_how_far_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build of a big store's index takes minutes: a verb that waits for it (``show``,
    ``export``, ``grep``, ``diff``) keeps one line of a terminal saying how far, cleared once
    built; on a log or a pipe it says nothing."""
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 512)  # many blocks
    out = tmp_path / "store"
    _seed_store(out, tmp_path / "docs", {f"f{i:03d}.txt": f"text {i}" for i in range(60)})
    terminal = _Terminal()
    line = BuildLine(terminal, Store(out))
    assert reading_index(Store(out), progress=line) is not None
    line.done()
    said = terminal.getvalue()
    steps = said.split("\r\x1b[K")
    assert steps[0] == "" and steps[-1] == ""  # each drawn over the last; cleared at the end
    shown_steps = [s.rsplit(": ", 1)[1] for s in steps[1:-1]]
    assert len(shown_steps) > 3 and shown_steps[-1] == "sorting it by each column"
    assert shown_steps[:-1] == sorted(set(shown_steps[:-1]), key=lambda s: int(s[:-1]))
    assert "quarry: indexing " in said and "extract.jsonl in the user's cache" in said
    pipe = io.StringIO()
    quiet = BuildLine(pipe, Store(out))
    for n in (10, 50, 100):
        quiet(n, 100)
    quiet.done()
    assert pipe.getvalue() == ""
    unused = _Terminal()
    BuildLine(unused, Store(out)).done()  # (an index already there: nothing to clear)
    assert unused.getvalue() == ""


def test_a_build_interrupted_or_killed_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a verb waits for the build: the half-built index goes with the process
    (it was left in the cache: gigabytes at ten million records). What a killed builder left
    (its file, WAL and shared memory) the next build removes; a running builder's stays."""
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 512)
    out = tmp_path / "store"
    _seed_store(out, tmp_path / "docs", {f"f{i:03d}.txt": f"text {i}" for i in range(60)})
    store = Store(out)
    real = readindex._blocks

    def interrupted(fd: int, stop: object) -> object:
        for n, block in enumerate(real(fd, None)):
            if n == 3:
                raise KeyboardInterrupt
            yield block

    monkeypatch.setattr(readindex, "_blocks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reading_index(store)
    cache = cached_index_path(store)
    assert cache is not None and cache.parent.is_dir()
    assert list(cache.parent.iterdir()) == []
    monkeypatch.setattr(readindex, "_blocks", real)
    dead = [cache.with_name(f"{DB}.999999999.tmp{end}") for end in ("", "-wal", "-shm")]
    running = cache.with_name(f"{DB}.{os.getppid()}.tmp")
    for path in (*dead, running):
        path.write_bytes(b"half")
    assert reading_index(store) == cache
    assert sorted(p.name for p in cache.parent.iterdir()) == sorted([DB, running.name])
