"""How a store's load starts: its first rows read before the records screen mounts (the
first frame has rows), a store whose index cannot be had on disk still opened (the engine
builds one in memory), and a store torn mid-line read in chunks of any size as the engine's
reader of the file reads it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Tab

from engine import dbread, readindex
from engine.db import DB, RecordDB, identity_of
from engine.dbread import FIRST_ROWS
from engine.readindex import cached_index_path
from engine.records import Record
from engine.store import Store, read_jsonl
from tests.tui.conftest import SIZE, screen_lines, settle, visible_paths, wait_for
from tui import feed
from tui.app import QuarryApp
from tui.columns import Batch
from tui.link import Applied, Link
from tui.loader import load_rows, rows_of
from tui.paged import PagedModel
from tui.screens.records import RecordsScreen
from tui.widgets.panels import SummaryBar
from tui.widgets.record_table import RecordTable


def _record(i: int, status: str = "ok") -> bytes:
    return orjson.dumps(
        {"root": "/r", "path": f"d{i // 100:03d}/f{i:06d}.txt", "status": status,
         "mime": "text/plain", "chars": i, "size": 10 * i, "error": None, "why": "new",
         "reason": None if status == "ok" else "corrupt"}
    )  # fmt: skip


def _write(out: Path, lines: list[bytes], end_newline: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "extract.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if end_newline else b""))
    return path


async def test_the_first_frame_has_the_first_rows_before_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [_record(i) for i in range(4_000)]  # more than the first chunk
    _write(tmp_path / "s", lines)
    seen: list[tuple[str, int]] = []
    mounted = RecordsScreen.on_mount

    def on_mount(screen: RecordsScreen) -> None:
        seen.append(("screen", len(screen.model)))
        mounted(screen)

    monkeypatch.setattr(RecordsScreen, "on_mount", on_mount)
    monkeypatch.setattr(QuarryApp, "_load", lambda self: seen.append(("rest", len(self.model))))
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        n = len(app.model)
        assert n == FIRST_ROWS < 4_000
        assert seen == [("screen", n), ("rest", n)]  # the screen mounts with the rows there
        assert visible_paths(app)[:2] == ["d000/f000000.txt", "d000/f000001.txt"]
        table = app.screen.query_one(RecordTable)
        assert "d000/f000000.txt" in "\n".join(screen_lines(table))


async def test_a_store_whose_index_cannot_be_had_on_disk_still_opens_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No cache folder to build an index in (here: one under a file) and none in step beside
    the records: the engine reads the file into an index in memory, every row shows, the
    torn line is named with its number in the file."""
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("QUARRY_CACHE_DIR", str(tmp_path / "not-a-folder" / "cache"))
    lines = [_record(i, "error" if i % 9 == 0 else "ok") for i in range(3_000)]
    lines[2_000] = lines[2_000][:25]  # torn: named, numbered from the file's start
    _write(tmp_path / "s", lines)
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(app.model) == 2_999 and app.state == "following"
        assert app.model.counts["error"] == sum(1 for i in range(3_000) if i % 9 == 0)
        assert [str(b) for b in app.model.bad_first] == ["line 2,001: cut short"]
        assert visible_paths(app)[-1] == "d029/f002999.txt"
        rid = app.model.ids[("/r", "d029/f002999.txt")]
        record = app.model.record(rid)  # the detail pane's, by key from that index
        assert record is not None and record.chars == 2_999
    assert not list((tmp_path / "s").glob("extract.db*"))  # nothing written beside the store


def _collect(chunks: object) -> tuple[list[str], bytes, list[str]]:
    paths: list[str] = []
    status = bytearray()
    bad: list[str] = []
    for chunk in chunks:  # type: ignore[attr-defined]
        paths += chunk.rows.paths
        status += chunk.rows.status
        bad += [str(b) for b in chunk.bad]
    return paths, bytes(status), bad


LINE = st.one_of(
    st.integers(0, 10**6).map(_record),
    st.tuples(st.integers(0, 10**6), st.integers(1, 60)).map(lambda t: _record(t[0])[: t[1]]),
    st.sampled_from([b"", b"{", b"  ", b"null", b'{"path":"x"}']),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(LINE, min_size=1, max_size=300),
    st.integers(1, 2_000),
    st.integers(1, 40),
    st.integers(1, 40),
    st.booleans(),
)
def test_a_store_torn_anywhere_loads_as_the_engine_reads_it(
    monkeypatch: pytest.MonkeyPatch,
    lines: list[bytes],
    block: int,
    first: int,
    size: int,
    end_newline: bool,
) -> None:
    """The engine's blocks of the file and the chunks of rows end wherever ``block``,
    ``first`` and ``size`` put them, torn lines included; the rows (in key order, a key
    written twice as its later line) and the lines named, with their numbers in the file, are
    those of the engine's reader of the whole file."""
    monkeypatch.setattr(dbread, "FILE_BLOCK", block)
    data = b"\n".join(lines) + (b"\n" if end_newline else b"")
    got = _collect(load_rows(rows_of(data), first, size))
    whole = read_jsonl(data)
    latest = {r.key: r for r in whole.records}
    records = [latest[k] for k in sorted(latest)]
    want = Batch.of(records)
    assert got == (want.paths, bytes(want.status), [str(b) for b in whole.bad[:5]])


FEW = {
    "root": ["/a", "/b", "/"],
    "status": ["ok", "error", "empty", "quarantined"],
    "reason": [None, "corrupt", "needs_tool", "new-reason"],
    "mime": ["text/plain", "application/pdf", "", "x/new"],
    "extractor": [None, "pypdf", "text:utf-8"],
    "why": [None, "new", "changed", "other"],
    "verdict": ["good", "suspect", "garbled", "weird"],
    "signal": ["common", "noise", "zzz"],
}


def _few_record(i: int, pick: list[int]) -> bytes:
    def one(name: str, k: int) -> object:
        values = FEW[name]
        return values[pick[k] % len(values)]

    quality = {"verdict": one("verdict", 6), "signals": [one("signal", 7)] * (pick[7] % 2)}
    return orjson.dumps(
        {"root": one("root", 0), "path": f"p{i:06d}", "status": one("status", 1),
         "reason": one("reason", 2), "mime": one("mime", 3), "extractor": one("extractor", 4),
         "why": one("why", 5), "quality": quality if pick[6] % 5 else None, "chars": i}
    )  # fmt: skip


def _columns(batch: Batch) -> tuple[object, ...]:
    return (
        batch.roots, batch.paths, bytes(batch.status), batch.reasons, batch.mimes,
        batch.extractors, batch.whys, bytes(batch.quality), batch.signals, list(batch.chars),
    )  # fmt: skip


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 11), min_size=8, max_size=8), min_size=1, max_size=400),
    st.integers(1, 300),
)
def test_values_met_late_come_as_the_engine_reads_each_record(
    picks: list[list[int]], size: int
) -> None:
    """The engine's columns code the values that repeat against tables that grow chunk by
    chunk (:class:`engine.dbread._Coder`): whatever values later chunks bring, the model's
    columns are those of each record read alone."""
    lines = [_few_record(i, pick) for i, pick in enumerate(picks)]
    data = b"\n".join(lines) + b"\n"
    got = Batch()
    for chunk in load_rows(rows_of(data), size, size):
        assert not chunk.bad
        got.extend(chunk.rows)
    records = sorted(map(Record.from_json, lines), key=lambda r: r.key)
    assert _columns(got) == _columns(Batch.of(records))


async def test_the_garbage_collector_pauses_for_the_load_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    _write(tmp_path / "s", [_record(i) for i in range(4_000)])
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(100):  # bounded: it resumes after the frame that shows the load
            if gc.isenabled():
                break
            await pilot.pause(0.01)
        assert gc.isenabled() and len(app.model) == 4_000
    # a dashboard left during its load (the rest never read) leaves it running too
    monkeypatch.setattr(QuarryApp, "_load", lambda self: None)
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not gc.isenabled() and app.link.progress is not None
    assert gc.isenabled()


async def test_while_a_store_loads_its_tabs_count_what_its_index_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big store's first frame has a few hundred rows; its tabs already say how many records
    of each status the store holds, from the counts its index keeps (no count creeping up
    for seconds). Without an index (or one not in step with the file), the rows loaded."""
    statuses = ["ok", "ok", "error", "empty"]
    lines = [_record(i, statuses[i % 4]) for i in range(4_000)]
    jsonl = _write(tmp_path / "s", lines)
    with RecordDB.open_writer(tmp_path / "s" / DB) as db:
        db.replace_all(Store(tmp_path / "s").load_records(), identity_of(jsonl))
    monkeypatch.setattr(QuarryApp, "_load", lambda self: None)  # the rest never comes
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert 0 < len(app.model) < 4_000 and app.state == "loading"
        tabs = {t.id: t.label.plain for t in app.screen.query(Tab)}
        assert tabs["tab-all"] == "all 4,000"
        assert tabs["tab-ok"] == "ok 2,000" and tabs["tab-error"] == "error 1,000"
        assert tabs["tab-empty"] == "empty 1,000" and tabs["tab-skipped"] == "skipped 0"
        bar = str(app.screen.query_one(SummaryBar).render())
        assert "files 4,000 · reused … · chars …" in bar  # what only the records say, later
    jsonl.write_bytes(jsonl.read_bytes() + _record(9_999) + b"\n")  # not by the index's writer
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        tabs = {t.id: t.label.plain for t in app.screen.query(Tab)}
        assert tabs["tab-all"] == f"all {len(app.model):,}"


async def test_a_store_without_an_index_shows_its_first_lines_while_one_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first frame has the file's first lines (the engine reads them at once); the index
    is built in the user's cache after it, and the rows then loaded from it replace them:
    every record once, the torn line named by its number in the whole file."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    lines = [_record(i) for i in range(3_000)]
    lines[2_500] = lines[2_500][:25]
    _write(tmp_path / "s", lines)
    seen: list[int] = []
    real = QuarryApp._load

    def load(self: QuarryApp) -> None:
        seen.append(len(self.model))  # what the first frame had
        real(self)

    monkeypatch.setattr(QuarryApp, "_load", load)
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert 0 < seen[0] < 200  # the file's first lines only: no index yet
        assert len(app.model) == 2_999 and app.state == "following"
        assert [str(b) for b in app.model.bad_first] == ["line 2,501: cut short"]
        assert visible_paths(app)[:2] == ["d000/f000000.txt", "d000/f000001.txt"]


async def test_a_big_store_without_an_index_is_browsed_never_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store big enough to be browsed (its first lines say how many records it holds) with
    no index: the first frame pages an index of its first lines, the header says how far
    the build of its index in the user's cache is, then the store is browsed from that
    index, every record once, none held (ten million records loaded took 2.9 GB); the
    index of the first lines is removed."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    monkeypatch.setattr(dbread, "BROWSE_FROM", 2_000)
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 16_384)  # many blocks: progress to say
    monkeypatch.setattr(feed, "PROGRESS_SECONDS", 0)
    lines = [_record(i) for i in range(3_000)]
    lines[2_500] = lines[2_500][:25]
    _write(tmp_path / "s", lines)
    seen: list[int] = []
    said: list[str] = []
    real_load, real_indexed = QuarryApp._load, Link.indexed

    def load(self: QuarryApp) -> None:
        seen.append(len(self.model))  # what the first frame had
        real_load(self)

    def indexed(self: Link, done: int, total: int) -> Applied:
        applied = real_indexed(self, done, total)
        said.append(self.state_text(writable=True, paused=False, pending=0))
        return applied

    monkeypatch.setattr(QuarryApp, "_load", load)
    monkeypatch.setattr(Link, "indexed", indexed)
    app = QuarryApp(tmp_path / "s")
    model = app.model
    assert isinstance(model, PagedModel) and model.head is not None
    head = model.head
    assert head.exists() and head.parent == cached_index_path(Store(tmp_path / "s")).parent
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert 0 < seen[0] < 200  # the file's first lines only: no index yet
        assert said[0].startswith("indexing ") and said[-1] == "indexing: sorting"
        assert len({*said}) > 2  # (the bytes read, as they are read)
        assert app.model is model and model.head is None and not head.exists()
        assert len(model) == 2_999 and app.state == "following"
        assert model.row_of.keys() <= set(range(len(model.keys)))  # (a page, not every row)
        assert len(model.row_of) < 2_999
        assert [str(b) for b in model.bad_first] == ["line 2,501: cut short"]
        assert visible_paths(app)[:2] == ["d000/f000000.txt", "d000/f000001.txt"]
        state = str(app.screen.query_one("#state").render())
        assert "following" in state
        await pilot.press("end")
        await pilot.pause()
        assert visible_paths(app)[-1] == "d029/f002999.txt"
    assert not list(head.parent.glob("head.*"))


async def test_a_big_store_whose_index_cannot_be_built_keeps_its_first_lines_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build in the user's cache fails (a full disk): the first lines stay on screen,
    and the header says the index could not be built, not that the store is empty."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    monkeypatch.setattr(dbread, "BROWSE_FROM", 2_000)
    monkeypatch.setattr(readindex, "_build", lambda *_args: None)
    _write(tmp_path / "s", [_record(i) for i in range(3_000)])
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = len(app.model)
        assert 0 < shown < 200
        assert "could not build an index of" in app.load_error
        assert "only its first lines are shown" in app.load_error
        assert visible_paths(app)[:1] == ["d000/f000000.txt"]
        bar = str(app.screen.query_one(SummaryBar).render())
        assert "could not build an index" in bar


async def test_a_head_index_left_by_a_killed_dashboard_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index of a big store's first lines written by a dashboard killed before it could
    remove it is removed by the next one; one of a dashboard still running is kept."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    monkeypatch.setattr(dbread, "BROWSE_FROM", 2_000)
    _write(tmp_path / "s", [_record(i) for i in range(3_000)])
    cache = cached_index_path(Store(tmp_path / "s"))
    assert cache is not None
    cache.parent.mkdir(parents=True)
    gone = cache.with_name("head.999999999.db")  # (past any pid this kernel gives)
    alive = cache.with_name(f"head.{os.getppid()}.db")
    for path in (gone, alive):
        path.write_bytes(b"")
    head = dbread.head_index(Store(tmp_path / "s"))
    assert head is not None and head.exists() and not gone.exists() and alive.exists()
    readindex.drop_index_file(head)
    assert not head.exists()


async def test_a_store_with_few_records_or_an_index_gets_no_head_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer records than a dashboard browses (reckoned from the first lines' length): held,
    as before; a store with an index in step: browsed from it."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    monkeypatch.setattr(dbread, "BROWSE_FROM", 5_000)
    _write(tmp_path / "s", [_record(i) for i in range(3_000)])
    assert dbread.head_index(Store(tmp_path / "s")) is None
    monkeypatch.setattr(dbread, "BROWSE_FROM", 2_000)
    assert readindex.reading_index(Store(tmp_path / "s")) is not None  # (now built)
    assert dbread.head_index(Store(tmp_path / "s")) is None


@pytest.mark.parametrize("browsed", [False, True])
async def test_q_while_the_index_is_built_stops_the_build_and_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, browsed: bool
) -> None:
    """q while a big store's index is built in the user's cache: the build stops at its next
    block and the dashboard leaves (it waited for the whole build before: minutes at ten
    million records), leaving nothing half built in the cache (``browsed``: a store big
    enough to be browsed, whose first lines' index goes too)."""
    monkeypatch.setattr(dbread, "HEAD_BYTES", 20_000)
    if browsed:
        monkeypatch.setattr(dbread, "BROWSE_FROM", 2_000)
    monkeypatch.setattr(readindex, "BUILD_BLOCK", 4096)  # many blocks
    _write(tmp_path / "s", [_record(i) for i in range(3_000)])
    building = threading.Event()
    seen_stop: list[bool] = []
    real = readindex._blocks

    def held(fd: int, stop: Callable[[], bool] | None) -> Iterator[bytes]:
        # The first block waits for the stop (bounded: past that the build goes on, and the
        # test fails on the index it leaves).
        for block in real(fd, stop):
            building.set()
            end = time.monotonic() + 60
            while stop is not None and not stop() and time.monotonic() < end:
                time.sleep(0.01)
            seen_stop.append(stop is not None and stop())
            yield block

    monkeypatch.setattr(readindex, "_blocks", held)
    app = QuarryApp(tmp_path / "s")
    assert isinstance(app.model, PagedModel) is browsed
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, building.is_set)
        await pilot.press("q")
    end = time.monotonic() + 60
    while not seen_stop and time.monotonic() < end:  # (the load's thread ends on its own)
        time.sleep(0.01)
    assert seen_stop == [True]
    cache = cached_index_path(Store(tmp_path / "s"))
    assert cache is not None and not cache.exists()
    left = [p.name for p in cache.parent.iterdir()] if cache.parent.exists() else []
    assert left == []
