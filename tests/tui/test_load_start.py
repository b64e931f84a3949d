"""How a store's load starts: its first block parsed before the records screen mounts (the
first frame has rows), a big store's helper processes started by ``quarry ui`` before the
dashboard is even imported (:func:`tui.loadpart.start_early`), and a store torn mid-line where
the first block, a chunk or a part ends reads as one process reads it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Tab

from engine.db import DB, RecordDB, identity_of
from engine.store import Store
from tests.tui.conftest import SIZE, screen_lines, settle, visible_paths
from tui import loadpart
from tui.app import QuarryApp
from tui.columns import Batch
from tui.loader import FIRST_BYTES, JsonlSource, load_rows
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


async def test_the_first_frame_has_the_first_block_before_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [_record(i) for i in range(4_000)]  # more than the first block
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
        assert 0 < n < 4_000
        assert seen == [("screen", n), ("rest", n)]  # the screen mounts with the rows there
        assert FIRST_BYTES - 400 < sum(len(x) + 1 for x in lines[:n]) <= FIRST_BYTES
        assert visible_paths(app)[:2] == ["d000/f000000.txt", "d000/f000001.txt"]
        table = app.screen.query_one(RecordTable)
        assert "d000/f000000.txt" in "\n".join(screen_lines(table))


async def test_an_early_load_is_taken_by_the_app_and_gives_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loadpart, "PARALLEL_BYTES", 1)
    monkeypatch.setenv("QUARRY_LOAD_PROCS", "2")
    lines = [_record(i, "error" if i % 9 == 0 else "ok") for i in range(6_000)]
    lines[3_000] = lines[3_000][:25]  # torn: named, numbered from the file's start
    path = _write(tmp_path / "s", lines)
    loadpart.start_early(Store(path.parent))
    early = loadpart._early[str(path)]
    assert len(early.parts) == 2
    app = QuarryApp(tmp_path / "s")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not loadpart._early  # taken
        assert len(app.model) == 5_999 and app.state == "following"
        assert app.model.counts["error"] == sum(1 for i in range(6_000) if i % 9 == 0)
        assert [str(b) for b in app.model.bad_first] == ["line 3,001: cut short"]
        assert app.link.stamp == early.src.stamp
        assert visible_paths(app)[-1] == "d059/f005999.txt"


def test_a_small_or_missing_store_is_left_for_the_app(tmp_path: Path) -> None:
    path = _write(tmp_path / "s", [_record(i) for i in range(10)])
    loadpart.start_early(Store(path.parent))
    loadpart.start_early(Store(tmp_path / "nowhere"))
    assert loadpart.take_early(path) is None
    assert not loadpart._early


def _collect(chunks: object) -> tuple[list[str], bytes, list[str]]:
    paths: list[str] = []
    status = bytearray()
    bad: list[str] = []
    for chunk in chunks:  # type: ignore[attr-defined]
        if isinstance(chunk.rows, Batch):
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
    st.integers(1, 3),
    st.integers(1, 40),
    st.booleans(),
)
def test_a_store_torn_anywhere_loads_as_one_process_reads_it(
    tmp_path: Path,
    lines: list[bytes],
    first: int,
    processes: int,
    chunk_rows: int,
    end_newline: bool,
) -> None:
    """The first block, the parts and the chunks end wherever ``first``, ``processes`` and
    ``chunk_rows`` put them, torn lines included; the rows, their order and the lines named
    (and their numbers) are those of one process reading the file from the start."""
    src = JsonlSource(_write(tmp_path / "s", lines, end_newline))
    try:
        one = _collect(load_rows(src, chunk_rows))
        load = loadpart.Load(src, chunk_rows, first, processes)
        got = _collect([*load.first(), *load.rest()])
        assert got == one
    finally:
        src.close()


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


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(st.integers(0, 11), min_size=8, max_size=8), min_size=1, max_size=400),
    st.integers(200, 3_000),
    st.integers(1, 5),
)
def test_values_met_late_decode_as_the_plain_decoder_does(
    monkeypatch: pytest.MonkeyPatch, picks: list[list[int]], block: int, misses: int
) -> None:
    """The decoder that names the values met so far (:class:`tui.loader._Vocabulary`) gives
    the columns a record-by-record parse gives, whatever values later blocks bring, before
    and after it gives up on a store that keeps bringing new ones."""
    from engine.records import Record
    from tui import loader

    vocabulary = loader._Vocabulary()
    vocabulary.MISSES = misses
    monkeypatch.setattr(loader, "_vocabulary", vocabulary)
    monkeypatch.setattr(loader, "BLOCK_BYTES", block)  # many blocks
    lines = [_few_record(i, pick) for i, pick in enumerate(picks)]
    data = b"\n".join(lines) + b"\n"
    got = Batch()
    for chunk in load_rows(data, chunk_rows=50_000):
        assert isinstance(chunk.rows, Batch) and not chunk.bad
        got.extend(chunk.rows)
    assert _columns(got) == _columns(Batch.of(map(Record.from_json, lines)))
    assert vocabulary.misses <= misses


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
