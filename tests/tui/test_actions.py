"""The records screen's triage keys: r, R, space/shift-arrows, e, o, c, E and --read-only."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
from pathlib import Path

import pytest

import tui.actions as actions
from engine.store import Store
from tests.tui.conftest import SIZE, settle, visible_paths
from tests.tui.triage_helpers import (
    NO_TOOLS,
    TriageApp,
    add_trouble,
    docx_bytes,
    fake_tool,
    notes,
    screen_text,
    session_over,
    swept_home,
    wait_until,
)
from tui.screens.export import ExportScreen


def test_viewer_and_opener_command_lines(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    assert actions.viewer_command(f, {"EDITOR": "code -w", "PAGER": "less"}) == [
        "code",
        "-w",
        str(f),
    ]
    assert actions.viewer_command(f, {"VISUAL": "vim"})[0] == "vim"
    assert actions.viewer_command(f, {"PAGER": "less -R"}) == ["less", "-R", str(f)]
    assert actions.viewer_command(f, {})[-1] == str(f)
    assert actions.opener_command(f, "linux") == ["xdg-open", str(f)]
    assert actions.opener_command(f, "darwin") == ["open", str(f)]
    assert actions.opener_command(f, "win32")[:3] == ["cmd", "/c", "start"]


def test_export_files_never_overwrite(tmp_path: Path) -> None:
    first = actions.export_path(tmp_path, "csv", "error/filtered", now=0)
    first.write_text("x")
    second = actions.export_path(tmp_path, "csv", "error/filtered", now=0)
    assert first.name == "quarry-error-filtered-19700101-000000.csv"
    assert second.name == "quarry-error-filtered-19700101-000000-2.csv"


async def _at(pilot, app: TriageApp, path: str) -> None:  # type: ignore[no-untyped-def]
    """Put the records table's cursor on ``path``."""
    table = app.records_screen.table
    table.cursor = visible_paths(app).index(path)
    await pilot.pause()


async def test_copy_export_and_open_text(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(actions, "run_foreground", lambda cmd: ran.append(cmd) or 0)
    monkeypatch.setenv("EDITOR", "myeditor --wait")
    fake_tool(tmp_path / "bin", "myeditor", "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    app = TriageApp(store.out)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _at(pilot, app, "pdf/report.pdf")
        await pilot.press("c")
        assert app.clipboard == "/fixtures/pdf/report.pdf"
        assert "path copied: /fixtures/pdf/report.pdf" in notes(app)

        await pilot.press("e")
        assert ran[-1][:2] == ["myeditor", "--wait"] and ran[-1][2].endswith("report.pdf.txt")
        assert Path(ran[-1][2]).read_text().startswith("Quarterly report")  # a private copy
        await _at(pilot, app, "big/huge.iso")
        await pilot.press("e")
        assert len(ran) == 1 and "big/huge.iso: no text stored (skipped)" in notes(app)[-1]
        await pilot.press("o")
        assert len(ran) == 1 and "is no longer on disk" in notes(app)[-1]

        await pilot.press("5", "E")  # the error tab: asks where, prefilled in the current folder
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await settle(pilot)
        written = sorted(tmp_path.glob("quarry-error-*.csv"))
        assert len(written) == 1 and f"exported 3 records: {written[0]}" in notes(app)
        rows = list(csv.DictReader(written[0].read_text().splitlines()))
        assert [r["path"] for r in rows] == visible_paths(app)
        assert all(r["error"] and r["status"] == "error" for r in rows)


async def test_open_source_runs_the_system_opener(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[list[str]] = []
    monkeypatch.setattr(actions, "run_foreground", lambda cmd: ran.append(cmd) or 0)
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    folder = add_trouble(sample, damaged=1)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            await _at(pilot, app, "damaged/report00.docx")
            opener = actions.opener_command(folder / "damaged" / "report00.docx")
            if shutil.which(opener[0]) is None:  # not installed: said, nothing suspended
                await pilot.press("o")
                assert not ran and any(f"{opener[0]} is not installed" in n for n in notes(app))
                fake_tool(bin_dir, opener[0], "#!/bin/sh\nexit 0\n")
            await pilot.press("o")
            assert ran == [opener], notes(app)


async def test_retry_highlighted_and_marked_records(sample: Path) -> None:
    folder = add_trouble(sample)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            root = str(folder)

            def status(path: str) -> str:
                record = app.model.record(app.model.ids[(root, path)])
                assert record is not None
                return record.status

            (folder / "damaged" / "report00.docx").write_bytes(docx_bytes(damaged=False))
            await _at(pilot, app, "damaged/report00.docx")
            await pilot.press("r")
            await wait_until(pilot, lambda: not app.triage.retrying and not app.workers._workers)
            await settle(pilot)
            assert status("damaged/report00.docx") == "ok"
            await wait_until(
                pilot, lambda: any("retried damaged/report00.docx: ok 1" in n for n in notes(app))
            )

            # space marks and moves down; shift+down marks a range
            await _at(pilot, app, "damaged/report01.docx")
            await pilot.press("space")
            assert app.triage.marks == {(root, "damaged/report01.docx")}
            assert visible_paths(app)[app.records_screen.table.cursor] == "damaged/report02.docx"
            await pilot.press("space", "space")  # mark report02, then unmark... the next one
            await pilot.press("up")
            await pilot.press("space")  # unmark it again
            assert app.triage.marks == {
                (root, "damaged/report01.docx"),
                (root, "damaged/report02.docx"),
            }
            for name in ("report01", "report02"):
                (folder / "damaged" / f"{name}.docx").write_bytes(docx_bytes(damaged=False))
            await pilot.press("R")
            await wait_until(pilot, lambda: not app.triage.retrying and not app.workers._workers)
            await settle(pilot)
            assert status("damaged/report01.docx") == status("damaged/report02.docx") == "ok"
            assert not app.triage.marks
            await wait_until(pilot, lambda: any("retried 2 marked: ok 2" in n for n in notes(app)))


async def test_shift_arrows_mark_ranges(store: Store) -> None:
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("shift+down", "shift+down")
        assert {k[1] for k in app.triage.marks} == set(visible_paths(app)[:3])
        await pilot.press("shift+up")
        assert len(app.triage.marks) == 3
        app.records_screen.clear_marks()
        assert not app.triage.marks


async def test_read_only_neither_retries_nor_writes(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    folder = add_trouble(sample, damaged=1)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session, read_only=True)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            await _at(pilot, app, "damaged/report00.docx")
            text = screen_text(app)
            assert "READ-ONLY" in text  # a badge in the header
            footer = text.splitlines()[-1]
            assert " r " not in footer and "Retry" not in footer and "Export" not in footer
            for key in ("r", "R", "E"):
                await pilot.press(key)
            await pilot.press("t", "g")
            await settle(pilot)
            assert "read-only: tools as the store's last sweep found them" in screen_text(app)
            assert "Check again" not in screen_text(app)
            assert not app.triage.retrying and not list(tmp_path.glob("quarry-*"))
            assert not [w for w in app.workers if w.group in ("retry", "tools")]


async def test_marked_and_retrying_rows_are_drawn(store: Store) -> None:
    from tests.tui.conftest import screen_lines
    from tui.widgets.marked_table import RETRYING, MarkedTable

    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.records_screen.table
        assert isinstance(table, MarkedTable)
        await pilot.press("space")  # mark the first row, the cursor moves on
        mark = table.get_component_rich_style("record-table--marked")
        assert any(seg.style and seg.style.bgcolor == mark.bgcolor for seg in table._row(0))
        assert not any(seg.style and seg.style.bgcolor == mark.bgcolor for seg in table._row(2))
        assert app.records_screen.sub_title == "1 marked"
        app.triage.retrying.add(("/fixtures", visible_paths(app)[2]))
        table.refresh()
        await pilot.pause()
        row = screen_lines(table)[3]
        assert RETRYING in row and visible_paths(app)[2] in row


async def test_declined_bulk_retry_keeps_the_marks(sample: Path) -> None:
    from tui.screens.confirm import ConfirmScreen

    folder = add_trouble(sample, damaged=1)
    with session_over(folder, NO_TOOLS) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            await swept_home(pilot, app)
            for _ in range(20):
                await pilot.press("shift+down")
            assert len(app.triage.marks) == 21
            await pilot.press("R")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")
            await pilot.pause()
            assert len(app.triage.marks) == 21 and not app.triage.retrying
            await pilot.press("R")  # again, and yes this time
            await pilot.pause()
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.triage.retrying and not app.workers._workers)
            await settle(pilot)
            assert not app.triage.marks
            await wait_until(pilot, lambda: any("retried 21 marked" in n for n in notes(app)))
