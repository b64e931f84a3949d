"""Pilot tests of the tools screen: rows, detail, check again (with a fake tool on PATH)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from textual.pilot import Pilot
from textual.widgets import Button, DataTable

from engine.names import shown
from engine.store import Store
from engine.tools import KNOWN_TOOLS
from tests.tui.conftest import SIZE, records_store, settle
from tests.tui.triage_helpers import (
    TriageApp,
    add_trouble,
    fake_tool,
    notes,
    screen_text,
    session_over,
    swept,
    wait_until,
)
from tui.screens.records import RecordsScreen
from tui.screens.tools import ToolsScreen


async def _open_tools(app: TriageApp, pilot: Pilot[None]) -> ToolsScreen:
    """The tools screen, as ``t`` opens it once the store has loaded."""
    await settle(pilot)
    await pilot.press("t")
    screen = app.screen
    assert isinstance(screen, ToolsScreen)
    return screen


async def test_every_tool_with_state_files_and_install_hints(store: Store) -> None:
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_tools(app, pilot)
        assert {r.name for r in screen.rows} == set(KNOWN_TOOLS)
        text = screen_text(app)
        assert (
            f"1 found · {len(KNOWN_TOOLS) - 1} missing · 2 files waiting on a missing tool" in text
        )
        # the tool waited on most comes first, its files and install hints beside it
        assert screen.rows[0].name == "antiword"
        assert "legacy/memo.doc" in text and "sudo apt install antiword" in text
        assert "brew install antiword" in text and "Fedora" in text
        await pilot.press("down", "down")
        text = screen_text(app)
        assert re.search(r"tesseract +missing", text) and "images/photo.png" in text
        assert "choco install tesseract" in text
        # home and end: the first and last tool (not a sideways scroll of the table)
        table = screen.query_one("#tool-table", DataTable)
        await pilot.press("end")
        assert table.cursor_row == len(screen.rows) - 1 and table.scroll_x == 0
        # the last tool (the one found) in view, its columns as wide as their names
        assert re.search(r"pdftotext +found +0 +24\.02\.0", screen_text(app))
        await pilot.press("home")
        assert table.cursor_row == 0 and screen.rows[0].name in screen_text(app)


async def test_check_again_without_an_engine_says_why(store: Store) -> None:
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await pilot.press("g")
        await pilot.pause()
        assert "`quarry tools` looks again" in screen_text(app)
        assert "Check again" not in screen_text(app) and not app.triage.checking_tools
        await pilot.press("escape")
        assert isinstance(app.screen, RecordsScreen)


async def test_shown_after_first_sweep_then_check_again_unlocks_images(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = add_trouble(sample)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))  # no external tool at all
    with session_over(folder) as session:
        app = TriageApp(session.store.out, session)
        async with app.run_test(size=SIZE) as pilot:
            # files wait on missing tools: the screen shows by itself after the sweep
            await wait_until(pilot, lambda: isinstance(app.screen, ToolsScreen))
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ToolsScreen)
            tess = {r.name: r for r in screen.rows}["tesseract"]
            waiting = {path for _root, path in tess.files}
            assert {"images/hello.png", "images/sign.png"} <= waiting
            assert not tess.found
            key = (str(folder), "images/hello.png")
            assert app.model.record(app.model.ids[key]).reason == "needs_tool"  # type: ignore[union-attr]

            fake_tool(bin_dir)
            await pilot.click("#check")
            await wait_until(pilot, lambda: not app.triage.checking_tools)
            await settle(pilot)
            record = app.model.record(app.model.ids[key])
            assert record is not None and record.status == "ok"
            assert record.extractor == "tesseract"
            assert "FAKE TESSERACT" in session.store.read_text(record.sha256 or "")
            tess = {r.name: r for r in screen.rows}["tesseract"]
            assert tess.found and tess.version == "5.9.9"
            assert tess.path == str(bin_dir / "tesseract")
            assert not {"images/hello.png", "images/sign.png"} & {p for _r, p in tess.files}
            text = screen_text(app)
            row = next(line for line in text.splitlines() if re.match(r" tesseract +found", line))
            assert "5.9.9" in row and "checked at" in text
            await wait_until(pilot, lambda: any("tesseract" in n for n in notes(app)))
            assert not screen.query_one("#check", Button).disabled

            await pilot.press("escape")
            assert isinstance(app.screen, RecordsScreen)
            assert app.triage.waiting_tools is not None and swept(app)


async def test_every_triage_screen_by_mouse(store: Store) -> None:
    from textual.widgets import DataTable
    from textual.widgets._footer import FooterKey

    from tui.screens.activity import ActivityScreen
    from tui.screens.errors import ErrorsScreen

    async def click_footer(key: str) -> None:
        (widget,) = [w for w in app.screen.query(FooterKey) if w.key == key]
        await pilot.click(widget)
        await settle(pilot)

    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await click_footer("t")
        assert isinstance(app.screen, ToolsScreen)
        await pilot.click("#tool-table", offset=(3, 3))  # the third tool's row
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ToolsScreen) and screen.selected is not None
        assert screen.selected.name == "tesseract" and "images/photo.png" in screen_text(app)
        await click_footer("x")
        assert isinstance(app.screen, ErrorsScreen)
        await pilot.click("#groups", offset=(3, 2))  # the second group
        await pilot.pause()
        assert app.screen.query_one("#groups", DataTable).cursor_row == 1
        await click_footer("at")
        assert isinstance(app.screen, ActivityScreen)
        for back in (ErrorsScreen, ToolsScreen, RecordsScreen):  # the way it came
            await click_footer("escape")
            assert isinstance(app.screen, back)
        assert len(app.screen_stack) == 1


def _with_waiting_containers(out: Path) -> Store:
    """The sample store plus two ok containers whose members wait on a tool (issue 16): a
    zip with a .doc member (antiword or catdoc) and a mail with an image (tesseract)."""
    from engine.records import Member, Record
    from tui.sample import ROOT, sample_records

    def container(path: str, mime: str, member: str, reason: str, needs: tuple[str, ...]) -> Record:
        return Record(
            ROOT, path, 9_000, 1, "ok", "c" * 64, mime, None, "zip", "zip", 1, chars=40,
            error="1 of 2 members not read", needs=needs, tools="t-3f2a", why="new",
            members=(Member("a.txt", "ok", None, None, 40), Member(member, "unsupported",
                     reason, "needs a tool", 0)),
        )  # fmt: skip

    records = sorted(
        [
            *sample_records(),
            container("mail/scan.eml", "message/rfc822", "scan.png", "needs_tool", ("tesseract",)),
            container("zips/memos.zip", "application/zip", "memo.doc", "needs_tool",
                      ("antiword", "catdoc")),
        ],
        key=lambda r: r.key,
    )  # fmt: skip
    return records_store(out, records)


async def test_ok_containers_waiting_on_a_tool_are_listed_under_it(tmp_path: Path) -> None:
    store = _with_waiting_containers(tmp_path / "store")
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_tools(app, pilot)
        by_name = {r.name: r for r in screen.rows}
        assert [k[1] for k in by_name["antiword"].files] == ["legacy/memo.doc", "zips/memos.zip"]
        assert [k[1] for k in by_name["catdoc"].files] == ["legacy/memo.doc", "zips/memos.zip"]
        assert [k[1] for k in by_name["tesseract"].files] == ["images/photo.png", "mail/scan.eml"]
        # counted as `quarry tools DIR` counts them: 4 files wait on a missing tool, not 2
        text = screen_text(app)
        assert "4 files waiting on a missing tool" in text
        assert screen.rows[0].name == "antiword" and "zips/memos.zip" in text
        await pilot.press("down", "down")
        assert re.search(r"tesseract +missing", screen_text(app))
        assert "mail/scan.eml" in screen_text(app)


async def test_a_reader_that_cannot_load_is_said_with_why(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from engine.readers import registry

    real = importlib.import_module

    def broken_epub(name: str, package: str | None = None) -> object:
        if name == "engine.readers.epub":
            raise ModuleNotFoundError("No module named 'some_epub_dependency'")
        return real(name, package)

    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_tools(app, pilot)
        assert not screen.query_one("#tools-readers").display  # all load: nothing said
        monkeypatch.setattr(registry.importlib, "import_module", broken_epub)
        registry.reset()
        try:
            screen.refresh_data()
            await pilot.pause()
            assert screen.query_one("#tools-readers").display
            text = screen_text(app)
            assert "readers not loaded" in text
            assert "epub: ModuleNotFoundError: No module named 'some_epub_dependency'" in text
        finally:
            monkeypatch.undo()
            registry.reset()


async def test_records_read_without_a_tool_found_now_are_said_on_its_row_and_detail(
    store: Store,
) -> None:
    """Issue 27: a store read with mixed tool sets says so on the tools screen (from its
    summary: what a sweep on another machine, or with --without, left), per tool."""
    from dataclasses import replace

    summary = store.load_summary()
    assert summary is not None
    store.write_summary(replace(summary, read_without={"pdftotext": 12}))
    app = TriageApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_tools(app, pilot)
        by_name = {r.name: r for r in screen.rows}
        assert by_name["pdftotext"].read_without == 12
        assert by_name["tesseract"].read_without == 0
        text = screen_text(app)
        assert "read with fewer tools than found now: 12 without pdftotext" in text
        await pilot.press("end")
        assert screen.selected is not None and screen.selected.name == "pdftotext"
        text = screen_text(app)
        assert "(12 read without)" in text  # on the row
        assert "read without it: 12 files" in text
        assert "read again, with it, by the next sweep of their folder" in text


@given(read_with=st.text(max_size=40))
@example(read_with="\u200b")  # CI, session 23: a zero-width space was shown as nothing
def test_a_record_s_detail_says_the_tools_its_read_had_whatever_the_store_holds(
    read_with: str,
) -> None:
    """The inspector's detail: the tools a read had, and those it lacked; a hand-edited
    ``read_with`` (markup, odd characters) is shown as it is, never taken for markup."""
    from textual.content import Content

    from engine.records import Record, read_with_words
    from tui.widgets.panels import describe

    record = Record("/docs", "a.pdf", 10, 0, "ok", None, "application/pdf", read_with=read_with)
    plain = Content.from_markup(describe(record, set())).plain.replace("\u200b", "")
    assert "read with" in plain
    said = read_with_words(read_with)
    assert shown(said).strip() in plain
    if read_with == "pdftoppm=24.02;pdftotext=;tesseract=5.3.4":
        assert said == "pdftoppm 24.02, tesseract 5.3.4; without pdftotext"


def test_the_detail_of_a_read_without_pdftotext_names_it() -> None:
    from textual.content import Content

    from engine.records import Record
    from tui.widgets.panels import describe

    record = Record("/docs", "a.pdf", 10, 0, "ok", None, "application/pdf",
                    read_with="pdftoppm=24.02;pdftotext=;tesseract=5.3.4")  # fmt: skip
    plain = Content.from_markup(describe(record, set())).plain
    assert "read with pdftoppm 24.02, tesseract 5.3.4; without pdftotext" in plain
    assert (
        "read with" not in Content.from_markup(describe(record.evolve(read_with=None), set())).plain
    )
