"""The dashboard on stores it did not write, and on its own failures.

A store cut in half, garbage lines, a summary that is not one, ``extract.jsonl`` being a
folder, a ``sha256`` that tries to name a path, a worker of a screen that fails, and an error
nobody expected: the app says what happened, in one line, and keeps running (or, for the last,
exits 1 with the traceback in a file).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import orjson
import pytest

from engine.records import Record
from engine.store import Store
from tests.tui.conftest import SIZE, settle, static_text, wait_for
from tests.tui.triage_helpers import notes
from tui import cli, textdoc
from tui.app import QuarryApp
from tui.messages import LoadFailed
from tui.sample import build_sample_store
from tui.screens.inspector import InspectorScreen
from tui.widgets.panels import LiveHeader, SummaryBar


def summary_bar(app: QuarryApp) -> str:
    return static_text(app.records_screen.query_one(SummaryBar))


def activity(app: QuarryApp) -> str:
    return "\n".join(line.text for line in app.triage.activity.lines)


async def test_a_store_cut_in_half_shows_what_it_has_and_says_what_it_lost(
    tmp_path: Path,
) -> None:
    store = build_sample_store(tmp_path / "s")
    data = store.jsonl_path.read_bytes()
    store.jsonl_path.write_bytes(data[: len(data) // 2])  # the summary still says 16 files
    kept = data[: len(data) // 2].count(b"\n")
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(app.model) == kept and app.state == "following"
        assert "1 unreadable line" in summary_bar(app)
        said = f"1 unreadable line in extract.jsonl left out (line {kept + 1:,}: cut short)"
        assert said in activity(app)
        assert f"{kept:,} records read (its summary says 16 files" in activity(app)
        assert any(said in n for n in notes(app))


async def test_extract_jsonl_a_folder_is_a_clear_message_not_loading_forever(
    tmp_path: Path,
) -> None:
    store = build_sample_store(tmp_path / "s")
    store.jsonl_path.unlink()
    store.jsonl_path.mkdir()
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state == "failed")
        await settle(pilot)
        assert "a folder, not a file" in summary_bar(app)
        assert any("cannot read" in n and "a folder, not a file" in n for n in notes(app))
        assert len(app.model) == 0


async def test_a_store_that_still_fails_as_the_app_leaves_takes_nothing_down(
    tmp_path: Path,
) -> None:
    # Each poll of a store that cannot be read says so again; one may come while the app
    # leaves and the records screen's header is gone (it crashed the app on a loaded machine).
    store = build_sample_store(tmp_path / "s")
    store.jsonl_path.unlink()
    store.jsonl_path.mkdir()
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state == "failed")
        await settle(pilot)
        await app.records_screen.query_one(LiveHeader).remove()
        app.post_message(LoadFailed("cannot read it, still"))
        await pilot.pause()
        assert app.is_running and not app.crash


async def test_a_summary_that_is_not_one_leaves_the_records_readable(tmp_path: Path) -> None:
    store = build_sample_store(tmp_path / "s")
    store.summary_path.write_bytes(b"[1, 2, 3]")
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(app.model) == 16 and app.link.summary is None
        assert "extract.summary.json cannot be read" in activity(app)
    store.summary_path.write_bytes(b'{"roots": ["/x"], "files": "many", "counts": [1]}')
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(app.model) == 16 and app.link.summary is None
        assert "fields of the wrong type" in activity(app)


async def test_a_sha256_that_names_a_path_is_never_used(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    store = Store(tmp_path / "s")
    evil = {"root": "/srv", "path": "evil.txt", "status": "ok", "chars": 9,
            "sha256": f"../../../../../../../..{tmp_path}/victim"}  # fmt: skip
    store.out.mkdir()
    store.jsonl_path.write_bytes(orjson.dumps(evil) + b"\n")
    app = QuarryApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # not a record, as for the engine (quarry show, a sweep): left out, and said why
        assert len(app.model) == 0
        assert [str(b) for b in app.model.bad_first] == [
            "line 1: sha256 is not 64 lowercase hex digits"
        ]
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, InspectorScreen)
        await pilot.press("e")
        await pilot.pause()
        assert victim.read_text() == "not yours"


async def test_a_screen_worker_that_fails_is_said_and_the_app_runs_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(cls: object, text: str) -> object:
        raise RuntimeError("the text could not be split")

    monkeypatch.setattr(textdoc.TextDoc, "parse", classmethod(broken))
    app = QuarryApp(build_sample_store(tmp_path / "s").out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2", "enter")
        await wait_for(pilot, lambda: any("could not be split" in n for n in notes(app)))
        assert isinstance(app.screen, InspectorScreen) and app.return_code is None
        await pilot.press("escape", "down")
        assert app.is_running


async def test_an_unexpected_error_is_exit_1_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.screens.records import RecordsScreen

    def broken(self: object) -> None:
        raise ZeroDivisionError("the sort fell over\nwith a second line")

    monkeypatch.setattr(RecordsScreen, "action_cycle_sort", broken)
    app = QuarryApp(build_sample_store(tmp_path / "s").out)
    with pytest.raises(ZeroDivisionError):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("s")
            await pilot.pause()
    assert app.return_code == 1
    assert app.crash == "ZeroDivisionError: the sort fell over\\nwith a second line"
    assert app.crash_log is not None and "Traceback" in app.crash_log.read_text()
    os.unlink(app.crash_log)


def test_run_app_prints_one_line_and_returns_1(monkeypatch: pytest.MonkeyPatch) -> None:
    class Crashed:
        crash = "ZeroDivisionError: boom"
        crash_log = Path("/tmp/quarry-crash-x.txt")
        return_code = 1

        def run(self) -> None:
            pass

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    assert cli.run_app(Crashed()) == 1  # type: ignore[arg-type]
    assert err.getvalue() == (
        "quarry: the dashboard stopped on an error: ZeroDivisionError: boom "
        "(traceback in /tmp/quarry-crash-x.txt)\n"
    )


def test_record_helper_is_what_the_store_holds(tmp_path: Path) -> None:
    """The store the tests write goes through the engine, as the loader expects."""
    store = build_sample_store(tmp_path / "s")
    first = store.jsonl_path.read_bytes().split(b"\n")[0]
    assert Record.from_json(first).path == "big/huge.iso"
