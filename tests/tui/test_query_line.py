"""The records screen's query line: field:value terms, counts that follow, Esc clears."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Tab

from engine.records import Record
from engine.store import Store
from tests.tui.conftest import SIZE, records_store, settle, visible_paths
from tui.app import QuarryApp


def tab_labels(app: QuarryApp) -> list[str]:
    return [str(tab.label) for tab in app.records_screen.query(Tab)]


async def test_field_terms_filter_count_and_esc_clears(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"reason:corrupt mime:pdf")
        assert visible_paths(app) == ["pdf/truncated.pdf"]
        assert tab_labels(app) == [
            "all 1", "ok 0", "empty 0", "unsupported 0", "error 1", "skipped 0"
        ]  # fmt: skip
        box = app.records_screen.query_one("#filter", Input)
        assert box.border_title == "1 of 16 records"
        await pilot.press("enter")  # back to the table: the query stays
        assert visible_paths(app) == ["pdf/truncated.pdf"]
        await pilot.press("escape")  # Esc clears it
        assert len(visible_paths(app)) == 16 and not app.model.query.active
        assert tab_labels(app)[0] == "all 16" and not box.has_class("-shown")

        await pilot.press("slash", *"status:error !path:pdf/", "enter")
        assert visible_paths(app) == ["hostile/zipbomb.docx"]
        await pilot.press("slash", "escape")  # Esc in the box clears too
        assert len(visible_paths(app)) == 16


async def test_an_error_phrase_and_a_regex(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.records_screen.set_filter('error:"no password"')
        assert visible_paths(app) == ["pdf/encrypted.pdf"]
        app.records_screen.set_filter(r"mime:^image/ why:new")
        assert visible_paths(app) == ["images/photo.png"]
        app.records_screen.set_filter("extractor:text: !reason:.")
        assert visible_paths(app) == ["text/latin1_no_bom.txt", "text/readme.md"]


async def test_an_unknown_field_is_said_with_the_fields_there_are(store: Store) -> None:
    """``size:>10K`` once gave "0 of 16 records", silently: an answer that was not one."""
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"sise:>10K")
        box = app.records_screen.query_one("#filter", Input)
        assert box.has_class("-invalid")
        assert str(box.border_title).startswith("no field sise: did you mean size:?")
        assert "path status reason mime" in str(box.border_title)
        assert len(visible_paths(app)) == 16  # nothing filtered by a word it cannot apply
        assert box.border_subtitle == "16 of 16 records"
        await pilot.press(*" status:error")  # the known term applies; the error stays said
        assert len(visible_paths(app)) == 3 and str(box.border_title).startswith("no field")
        app.records_screen.set_filter("status:error")
        assert box.border_title == "3 of 16 records" and not box.has_class("-invalid")


async def test_a_size_filters_and_a_size_that_is_no_number_is_said(store: Store) -> None:
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sizes = [row[9] for row in app.model.rows if row is not None]  # R_SIZE
        big = sum(size > 1024 for size in sizes)
        assert 0 < big < len(sizes)  # the sample has files on both sides of 1K
        await pilot.press("slash", *"size:>1K")
        box = app.records_screen.query_one("#filter", Input)
        assert len(visible_paths(app)) == big and not box.has_class("-invalid")
        assert box.border_title == f"{big} of {len(sizes)} records"
        await pilot.press("backspace", "backspace", *"lots")
        assert box.has_class("-invalid") and len(visible_paths(app)) == len(sizes)
        assert str(box.border_title).startswith("size: 'lots' is not a size (512, 10K")
        assert box.border_subtitle == f"{len(sizes)} of {len(sizes)} records"


async def test_enter_on_a_query_in_error_keeps_the_keys_in_the_box(store: Store) -> None:
    """Enter left the box whatever the query said: the keys typed next to mend one in error
    went to the table, as commands (a letter marks, sorts or retries; enter opens a record)."""
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.records_screen.query_one("#filter", Input)
        await pilot.press("slash", *"size:>10Q", "enter")
        await settle(pilot)
        assert box.has_class("-invalid") and app.focused is box
        await pilot.press("backspace", "enter")  # mended: 10 bytes and more
        await settle(pilot)
        assert not box.has_class("-invalid") and box.value == "size:>10"
        assert app.focused is app.records_screen.table  # a query that holds leaves the box


async def test_a_field_pattern_that_backtracks_for_ever_is_said_not_a_frozen_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``error:(a+)+$`` over an error of 4,096 ``a``: under ``re`` the drawing thread tried it
    for good. It is given up (FIELD_S), the box says so, and the keys still work."""
    from engine import query as query_mod

    monkeypatch.setattr(query_mod, "FIELD_S", 0.05)
    records = [
        Record("/r", "long.bin", 10, 0, "error", None, "application/octet-stream", "corrupt",
               error="a" * 4096 + "!", why="new"),
        Record("/r", "short.bin", 10, 0, "error", None, "application/octet-stream", "corrupt",
               error="aaa", why="new"),
    ]  # fmt: skip
    app = QuarryApp(records_store(tmp_path / "store", records).out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.records_screen.set_filter("error:(a+)+$")
        box = app.records_screen.query_one("#filter", Input)
        assert box.has_class("-invalid")
        assert str(box.border_title).startswith("error:(a+)+$ took over 0.05 s on one value")
        await pilot.press("s")  # the keys work
        assert app.model.sort_column == "status"
