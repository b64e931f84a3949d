"""Export (``E``): every field, CSV or JSONL by the extension, atomic, names of any bytes;
the modal that asks where, refuses to overwrite without a yes, and is not offered read-only."""

from __future__ import annotations

import base64
import csv
import os
from pathlib import Path

import orjson
import pytest
from textual.widgets import Input, Static

import tui.actions as actions
from engine.quality import Quality
from engine.records import Record
from engine.store import Store
from engine.visible import csv_text_back
from tests.tui.conftest import SIZE, settle, static_text, visible_paths
from tests.tui.triage_helpers import TriageApp, notes, screen_text
from tui.screens.confirm import ConfirmScreen
from tui.screens.export import ExportScreen
from tui.screens.records import RecordsScreen

RAW_NAME = os.fsdecode(b"caf\xe9/na\xefve.txt")
"""A Latin-1 file name that is not UTF-8: its undecodable bytes are surrogates in Python."""


def _records() -> list[Record]:
    quality = Quality("suspect", 1, "fr", "Latin", common=0.1, signals=("common",))
    return [
        Record("/r", RAW_NAME, 10, 5, "ok", "a" * 64, "text/plain", None, "text:latin-1",
               "text", 1, chars=9, why="new", quality=quality),
        Record("/r", "scan.png", 20, 6, "unsupported", "b" * 64, "image/png", "needs_tool",
               error="needs tesseract for OCR", needs=("tesseract",), why="new"),
        Record("/r", "bad.pdf", 30, 7, "error", "c" * 64, "application/pdf", "corrupt",
               error='startxref not found, "quoted", comma', why="retry-error"),
    ]  # fmt: skip


def test_csv_has_every_field_and_the_bytes_of_names_that_are_not_utf8(tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    assert actions.write_export(out, _records()) == 3
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert tuple(rows[0]) == actions.EXPORT_COLUMNS
    raw, png, pdf = rows
    # escaped as the store writes it, then its backslashes doubled (engine.visible.csv_text)
    assert raw["path"] == "caf\\\\xe9/na\\\\xefve.txt"
    assert csv_text_back(raw["path"]) == "caf\\xe9/na\\xefve.txt"
    assert base64.b64decode(raw["path_b64"]) == b"caf\xe9/na\xefve.txt"
    assert raw["quality"] == "suspect" and orjson.loads(raw["quality_detail"])["signals"]
    assert (raw["sha256"], raw["why"], raw["reused"]) == ("a" * 64, "new", "false")
    assert (png["reason"], png["needs"], png["error"]) == (
        "needs_tool", "tesseract", "needs tesseract for OCR",
    )  # fmt: skip
    assert pdf["error"] == 'startxref not found, "quoted", comma' and pdf["path_b64"] == ""


def test_jsonl_is_the_store_format_and_the_extension_chooses(tmp_path: Path) -> None:
    out = tmp_path / "all.JSONL"
    assert actions.write_export(out, [*_records(), None]) == 3
    lines = out.read_bytes().splitlines()
    assert [Record.from_json(line) for line in lines] == _records()
    with pytest.raises(ValueError, match=r"\.csv or \.jsonl"):
        actions.write_export(tmp_path / "all.txt", _records())
    assert not (tmp_path / "all.txt").exists()


def test_a_failed_export_leaves_the_earlier_file_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "view.csv"
    out.write_text("earlier\n")

    def failing() -> list[Record]:
        raise OSError("disk full")

    def records():  # type: ignore[no-untyped-def]
        yield _records()[0]
        failing()

    with pytest.raises(OSError, match="disk full"):
        actions.write_export(out, records())
    assert out.read_text() == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["view.csv"]


async def _export_box(pilot, app: TriageApp) -> ExportScreen:  # type: ignore[no-untyped-def]
    await pilot.press("E")
    await settle(pilot)
    assert isinstance(app.screen, ExportScreen)
    return app.screen


async def test_asks_where_and_refuses_to_overwrite_without_a_yes(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = tmp_path / "here"  # the current folder (the store is beside it)
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")  # the unsupported tab
        await settle(pilot)
        box = await _export_box(pilot, app)
        value = box.query_one(Input).value
        assert value.startswith(str(tmp_path / "quarry-unsupported-")) and value.endswith(".csv")
        assert "Export 3 records" in screen_text(app)

        box.query_one(Input).value = "view.txt"  # not a format: said in the box, which stays
        await pilot.press("enter")
        await settle(pilot)
        problem = static_text(box.query_one("#export-problem", Static))
        assert app.screen is box and ".csv or .jsonl" in problem
        box.query_one(Input).value = "  "
        await pilot.press("enter")
        assert "type a file name" in static_text(box.query_one("#export-problem", Static))
        box.query_one(Input).value = "no/such/folder/view.csv"
        await pilot.press("enter")
        assert "no such folder" in static_text(box.query_one("#export-problem", Static))

        box.query_one(Input).value = "view.jsonl"  # relative: the current folder
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen)
        written = tmp_path / "view.jsonl"
        assert f"exported 3 records: {written}" in notes(app)
        paths = [orjson.loads(line)["path"] for line in written.read_bytes().splitlines()]
        assert paths == visible_paths(app)
        before = written.read_bytes()

        box = await _export_box(pilot, app)  # the same name again: asks, "no" keeps the file
        box.query_one(Input).value = str(written)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen) and "exists. Replace it?" in screen_text(app)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is box and "not replaced" in screen_text(app)
        await pilot.press("escape")  # cancel: nothing written
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen) and written.read_bytes() == before

        await pilot.press("1")  # every record, over the same file after a yes
        box = await _export_box(pilot, app)
        box.query_one(Input).value = str(written)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen)
        assert len(written.read_bytes().splitlines()) == len(visible_paths(app)) > 3
        assert sorted(p.name for p in tmp_path.iterdir()) == ["view.jsonl"]  # no temporary


async def test_read_only_offers_no_export(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = tmp_path / "here"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    app = TriageApp(store.out, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await settle(pilot)
        assert isinstance(app.screen, RecordsScreen) and not list(tmp_path.iterdir())
        assert not [c for c in app.records_screen.commands() if "Export" in c.title]


async def test_another_process_store_exports_from_the_palette_too(store: Store) -> None:
    app = TriageApp(store.out)  # quarry ui --store: nothing retried, but export is offered
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.records_screen.commands()]
        assert "Export view as CSV" in titles and "Export view as JSONL" in titles
        assert "Retry highlighted record" not in titles
