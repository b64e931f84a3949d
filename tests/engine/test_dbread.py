"""The engine's table of a store's records (engine/dbread.py): every field of every record as
the index gives it, whatever its text holds, from whichever index the store can have."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import dbread
from engine.db import DB, RecordDB, identity_of
from engine.dbread import CHUNK_ROWS, Columns, Table, lines_index, open_table
from engine.errors import StoreUnusable
from engine.quality import VERDICTS, Quality
from engine.readindex import cached_index_path
from engine.records import Record
from engine.store import Store

TEXT = st.text(max_size=6)  # NULs, "=" and empty strings included: the chunk's separators
NAME = st.text(min_size=1, max_size=8).filter(
    lambda s: "\0" not in s and "/" not in s and s not in (".", "..")
)  # a name a record can have
QUALITY = st.none() | st.builds(
    lambda verdict, signals: Quality(verdict=verdict, signals=tuple(signals)),
    st.sampled_from([*VERDICTS, "weird"]),
    st.lists(TEXT, max_size=2),
)
RECORD = st.builds(
    lambda path, status, reason, mime, extractor, error, why, needs, n, pages, reused, q: Record(
        root="/r",
        path=path,
        size=n,
        mtime_ns=1,
        status=status,
        reason=reason,
        mime=mime,
        extractor=extractor,
        error=error,
        why=why,
        needs=tuple(needs),
        chars=n * 3,
        pages=pages,
        ms=n % 7,
        reused=reused,
        quality=q,
    ),
    NAME,
    st.sampled_from(["ok", "error", "empty", "unsupported", "frobbed"]),
    st.none() | TEXT,
    TEXT,
    st.none() | TEXT,
    st.none() | TEXT,
    st.none() | TEXT,
    st.lists(TEXT, max_size=3),
    st.integers(0, 2**61),  # (chars = 3n: within SQLite's 64-bit integers)
    st.none() | st.integers(0, 10**6),
    st.booleans(),
    QUALITY,
)


def _value(cols: Columns, name: str, i: int) -> Any:
    values, codes = cols.coded[name]
    return values[codes[i]]


def _row(cols: Columns, i: int) -> tuple[Any, ...]:
    """Row ``i`` of ``cols`` in the record's own terms."""
    pages = cols.numbers["pages"][i]
    return (
        cols.roots[i], cols.paths[i], *(_value(cols, n, i) for n in ("status", "reason", "mime",
        "extractor", "error", "why", "needs", "quality", "signal")), cols.numbers["chars"][i],
        None if pages < 0 else pages, cols.numbers["size"][i], cols.numbers["ms"][i],
        bool(cols.reused[i]),
    )  # fmt: skip


def _expected(r: Record) -> tuple[Any, ...]:
    q = r.quality
    verdict = q.verdict if q is not None else None
    signal = q.signals[0] if q is not None and q.signals and q.verdict in VERDICTS else None
    return (
        r.root, r.path, r.status, r.reason, r.mime, r.extractor, r.error, r.why, r.needs,
        verdict, signal, r.chars, r.pages, r.size, r.ms, r.reused,
    )  # fmt: skip


def _rows(table: Table, first: int, size: int) -> list[tuple[Any, ...]]:
    out = []
    for chunk in table.chunks(first, size):
        out.extend(_row(chunk.rows, i) for i in range(len(chunk.rows)))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(RECORD, max_size=30), st.integers(1, 9), st.integers(1, 9))
def test_every_field_of_every_record_comes_back_as_it_was_written(
    records: list[Record], first: int, size: int
) -> None:
    """Values holding the chunk's separator (a NUL), the mark of a value that is there ("="),
    empty strings beside none, any tool names: each chunk read in one statement or row by
    row, the columns are the records' fields, in key order, the later line of a key kept."""
    data = b"".join(r.to_json() + b"\n" for r in records)
    latest = {r.key: r for r in records}
    table = Table(lines_index(data), own=False)
    assert _rows(table, first, size) == [_expected(latest[k]) for k in sorted(latest)]
    for key, record in latest.items():
        assert table.record(key) == record  # the detail pane's: by key, the whole record
    assert table.record(("/r", "not there")) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["/r", "/s", "/t\udcff"]), NAME), max_size=20),
    st.lists(st.tuples(st.sampled_from(["/r", "/s", "/t\udcff", "/u"]), NAME), max_size=20),
    st.integers(1, 4),
)
def test_records_asked_together_are_those_asked_one_by_one(
    written: list[tuple[str, str]], asked: list[tuple[str, str]], per: int
) -> None:
    """The triage screens ask for many records at once (:meth:`Table.records`): a few paths
    of a root a statement, the lines decoded together; each comes back as a lookup by its
    key gives it, in the order asked, None for one not there, repeats and odd names too."""
    records = [
        Record(root=root, path=path, size=i, mtime_ns=1, status="ok", chars=i)
        for i, (root, path) in enumerate(written)
    ]
    table = Table(lines_index(b"".join(r.to_json() + b"\n" for r in records)), own=False)
    keys = [*asked, *[r.key for r in records[::2]]]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dbread, "LOOKUP_KEYS", per)
        assert table.records(keys) == [table.record(key) for key in keys]


def test_a_store_with_its_index_in_step_is_read_from_it_with_its_point(tmp_path: Path) -> None:
    store = _store(tmp_path, 3)
    with RecordDB.open_writer(store.out / DB) as db:
        db.replace_all(store.load_records(), identity_of(store.jsonl_path))
        point = db.point()
    table = open_table(store)
    assert table.point == point  # a follower asks the index what changed after it
    assert [r[1] for r in _rows(table, 2, 2)] == ["f0.txt", "f1.txt", "f2.txt"]
    assert cached_index_path(store) is not None and not cached_index_path(store).exists()  # type: ignore[union-attr]


def test_a_store_without_an_index_gets_one_in_the_cache_never_beside_it(tmp_path: Path) -> None:
    store = _store(tmp_path, 3)
    table = open_table(store)
    assert table.point is None  # not the store's own: nothing to follow
    assert [r[1] for r in _rows(table, 5, 5)] == ["f0.txt", "f1.txt", "f2.txt"]
    cached = cached_index_path(store)
    assert cached is not None and cached.exists()
    assert not (store.out / DB).exists()


def test_without_a_cache_the_index_is_built_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("QUARRY_CACHE_DIR", str(tmp_path / "file" / "cache"))
    store = _store(tmp_path, CHUNK_ROWS // 10_000 + 2)
    with open(store.jsonl_path, "ab") as fh:
        fh.write(b'{"root": "/r", "path": "torn')
    table = open_table(store)
    assert [r[1] for r in _rows(table, 2, 3)] == [f"f{i}.txt" for i in range(7)]
    assert table.bad_count == 1 and [str(b) for b in table.bad] == ["line 8: cut short"]
    assert sorted(os.listdir(store.out)) == ["extract.jsonl"]


def test_a_store_whose_file_cannot_be_read_says_so(tmp_path: Path) -> None:
    out = tmp_path / "s"
    (out / "extract.jsonl").mkdir(parents=True)  # a folder in the file's place
    with pytest.raises(StoreUnusable, match="a folder, not a file"):
        open_table(Store(out))


def _store(tmp_path: Path, n: int) -> Store:
    out = tmp_path / "s"
    out.mkdir()
    records = [
        Record(root="/r", path=f"f{i}.txt", size=i, mtime_ns=1, status="ok") for i in range(n)
    ]
    (out / "extract.jsonl").write_bytes(b"".join(r.to_json() + b"\n" for r in records))
    return Store(out)


def test_a_big_store_without_an_index_shows_its_first_lines_while_one_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first chunk is the file's first lines (read at once, the first frame has rows);
    once the index is built in the cache, every row from it, its first chunk saying
    ``restart``, with the lines left out of the whole file (numbered in it)."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 300)
    store = _store(tmp_path, 40)
    with open(store.jsonl_path, "ab") as fh:
        fh.write(b"not a record\n")
    table = open_table(store)
    assert table.point is None and not cached_index_path(store).exists()  # type: ignore[union-attr]
    chunks = list(table.chunks(100, 7))
    head = [c for c in chunks if not c.restart and c is chunks[0]]
    assert head and 0 < len(head[0].rows) < 40 and head[0].total == 0
    assert head[0].rows.paths == [f"f{i}.txt" for i in range(len(head[0].rows))]
    again = chunks[1:]
    assert again[0].restart and not any(c.restart for c in again[1:])
    assert [p for c in again for p in c.rows.paths] == sorted(f"f{i}.txt" for i in range(40))
    assert cached_index_path(store).exists()  # type: ignore[union-attr]
    assert table.bad_count == 1 and [b.line for b in table.bad] == [41]
    record = table.record(("/r", "f39.txt"))
    assert record is not None and record.size == 39


def test_a_load_stopped_ends_before_its_next_chunk(tmp_path: Path) -> None:
    """A dashboard that quits stops its load (from its own thread): no chunk after the stop,
    and the rows before it are those of an unstopped load."""
    store = _store(tmp_path, 40)
    table = open_table(store)
    got = []
    for chunk in table.chunks(5, 5):
        got.extend(chunk.rows.paths)
        if len(got) == 10:
            table.stop()
    assert got == sorted(f"f{i}.txt" for i in range(40))[:10]


def test_a_build_for_a_load_that_stops_leaves_no_index_and_reads_no_file_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while its index is built in the cache, a big store's load ends after the
    file's first lines: the build leaves nothing in the cache, and the whole file is not read
    into memory in its place."""
    from engine import readindex

    monkeypatch.setattr(dbread, "HEAD_BYTES", 300)
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 200)  # many blocks: stopped between two
    store = _store(tmp_path, 40)
    table = open_table(store)
    blocks = 0
    real = readindex._blocks

    def counted(fd: int, stop: Any) -> Any:
        nonlocal blocks
        for block in real(fd, stop):
            blocks += 1
            if blocks == 2:
                table.stop()
            yield block

    monkeypatch.setattr(readindex, "_blocks", counted)
    monkeypatch.setattr(dbread, "memory_index", _no_memory_index)
    chunks = list(table.chunks(100, 7))
    assert len(chunks) == 1 and not chunks[0].restart  # the head, nothing after the stop
    assert blocks == 2
    cache = cached_index_path(store)
    assert cache is not None and not cache.exists()
    left = [p.name for p in cache.parent.iterdir()] if cache.parent.exists() else []
    assert left == []  # no index, no half-built one


def _no_memory_index(store: Store) -> Any:
    raise AssertionError("the whole file was read into memory after the load stopped")
