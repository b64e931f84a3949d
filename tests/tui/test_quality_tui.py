"""The dashboard's quality view: the column, the ``quality:`` filter term, the sort, the detail
pane's sentences and the suspect groups on the errors screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.quality import Quality
from engine.query import Query
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from fixtures.gen import quality as fx
from tests.tui.conftest import SIZE, screen_lines, settle, static_text, visible_paths
from tui.app import QuarryApp
from tui.columns import Batch
from tui.model import R_QUALITY, RecordModel
from tui.screens.errors import ErrorsScreen
from tui.triage import group_quality
from tui.widgets.panels import DetailPane
from tui.widgets.record_table import RecordTable

GARBLED = sorted(p for p, v in fx.GARBLED.items() if v == "garbled")


@pytest.fixture
def quality_store(tmp_path: Path) -> Store:
    """A real sweep of the quality fixtures (clean prose, garbled texts, a sparse deck)."""
    root = tmp_path / "docs"
    fx.build(root)
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    return Store(root / ".quarry")


def _rec(path: str, verdict: str | None, signal: str = "common") -> Record:
    q = (
        None
        if verdict is None
        else Quality(verdict, v=3, signals=() if verdict == "good" else (signal,))
    )
    status = "ok" if verdict else "error"
    return Record("/r", path, 1, 1, status, "0" * 64, "text/plain", quality=q)


def _model(records: list[Record]) -> RecordModel:
    m = RecordModel()
    m.extend(Batch.of(records))
    return m


def test_the_quality_term_filters_and_combines_with_the_path() -> None:
    m = _model(
        [_rec("a/one.txt", "good"), _rec("a/two.txt", "suspect"), _rec("b/three.txt", "garbled"),
         _rec("b/four.txt", None), _rec("b/five.txt", "suspect", "noise")]
    )  # fmt: skip
    m.set_query("quality:suspect")
    assert [m.cols.paths[r] for r in m.view] == ["a/two.txt", "b/five.txt"]
    m.set_query("b/ quality:suspect,garbled")
    assert [m.cols.paths[r] for r in m.view] == ["b/five.txt", "b/three.txt"]
    m.set_query("quality:Garbled")  # verdict names ignore case
    assert [m.cols.paths[r] for r in m.view] == ["b/three.txt"]
    m.set_query("!quality:good b/")  # inverted, and records with no verdict pass it
    assert [m.cols.paths[r] for r in m.view] == ["b/five.txt", "b/four.txt", "b/three.txt"]
    assert [t.field for t in Query.parse("quality:garbled x").terms] == ["quality", "path"]
    m.set_query("")
    assert len(m.view) == 5
    assert m.rows[m.ids[("/r", "b/three.txt")]][R_QUALITY] == "garbled"


def test_sorting_by_quality_puts_the_worst_last_and_reversed_first() -> None:
    m = _model([_rec("a", "garbled"), _rec("b", "good"), _rec("c", None), _rec("d", "suspect")])
    m.set_sort("quality")
    assert [m.cols.paths[r] for r in m.view] == ["c", "b", "d", "a"]


def test_live_records_pass_the_quality_term_as_loaded_ones_do() -> None:
    m = _model([_rec("a", "good")])
    m.set_query("quality:garbled")
    assert len(m.view) == 0
    m.apply([_rec("b", "garbled")])
    assert [m.cols.paths[r] for r in m.view] == ["b"]


def test_suspect_groups_are_by_verdict_and_worst_signal() -> None:
    groups = group_quality(
        [_rec("a", "garbled"), _rec("b", "suspect", "noise"), _rec("c", "garbled"),
         _rec("d", "good"), _rec("e", "suspect", "sparse")]
    )  # fmt: skip
    got = [(g.reason, g.message, g.count) for g in groups]
    assert got[0] == ("garbled", "few common words of any language", 2)
    assert sorted(got[1:]) == [
        ("suspect", "almost no text per page", 1),
        ("suspect", "words that look like OCR or decoding noise", 1),
    ]


async def test_the_table_shows_quality_and_the_filter_keeps_the_garbled(
    quality_store: Store,
) -> None:
    app = QuarryApp(quality_store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = screen_lines(app.query_one(RecordTable))
        assert lines[0].split()[:4] == ["path", "▲", "status", "quality"]
        row = next(line for line in lines if "bytes_as_text.txt" in line)  # the path is cut
        assert row.split()[1:3] == ["ok", "garbled"]
        await pilot.press("slash", *"quality:garbled", "enter")
        await settle(pilot)
        assert visible_paths(app) == GARBLED


async def test_the_detail_pane_says_why_in_words(quality_store: Store) -> None:
    app = QuarryApp(quality_store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"page_numbers", "enter", "d")
        await settle(pilot)
        text = static_text(app.query_one(DetailPane).query_one("#detail-body"))
        assert "quality suspect" in text
        assert "1 character per page, expected > 8" in text


async def test_the_errors_screen_groups_the_suspect_texts_by_signal(
    quality_store: Store,
) -> None:
    app = QuarryApp(quality_store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ErrorsScreen)
        groups = [(g.reason, g.message, g.count) for g in screen.groups]
        assert ("garbled", "few common words of any language", 3) in groups
        assert ("suspect", "almost no text per page", 1) in groups
        title = static_text(screen.query_one("#errors-title"))
        assert "suspect texts 4" in title
