"""A store another process writes that cannot be read (``extract.jsonl`` a folder): the
dashboard says so once, not at every poll that finds it still unreadable, and says when it can
be read again (the records back, the header's problem gone)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tests.tui.conftest import SIZE, settle, static_text, wait_for
from tests.tui.triage_helpers import notes
from tui.app import QuarryApp
from tui.link import Link
from tui.sample import build_sample_store
from tui.widgets.panels import SummaryBar


async def test_a_store_that_stays_unreadable_is_said_once_and_its_return_too(
    tmp_path: Path,
) -> None:
    store = build_sample_store(tmp_path / "s")
    data = store.jsonl_path.read_bytes()
    store.jsonl_path.unlink()
    store.jsonl_path.mkdir()
    app = QuarryApp(store.out)
    polls = 0
    lock = threading.Lock()
    catch_up = app.link.catch_up

    def counted(self: Link, s: object) -> object:  # (the poll worker's thread)
        nonlocal polls
        with lock:
            polls += 1
        return catch_up(s)  # type: ignore[arg-type]

    app.link.catch_up = counted.__get__(app.link)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.state == "failed")
        await wait_for(pilot, lambda: polls >= 4)  # three polls, at least, found it still so
        await settle(pilot)
        said = [n for n in notes(app) if "cannot read" in n]
        assert len(said) == 1, said
        assert app.state == "failed" and "a folder, not a file" in app.load_error
        store.jsonl_path.rmdir()
        aside = tmp_path / "extract.jsonl.new"
        aside.write_bytes(data)
        os.replace(aside, store.jsonl_path)
        await wait_for(pilot, lambda: len(app.model) == 16 and app.state == "following")
        await settle(pilot)
        assert any("can be read again" in n for n in notes(app)), notes(app)
        assert not app.load_error
        assert "cannot read" not in static_text(app.records_screen.query_one(SummaryBar))
        assert len([n for n in notes(app) if "cannot read" in n]) == 1
