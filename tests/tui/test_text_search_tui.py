"""``text:`` terms in the dashboard: the engine is asked in a worker (the keys keep working
while it looks), a newer query supersedes an older one, and the match shows in context."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from engine.query import TextTerm
from engine.records import Key
from tests.tui.conftest import settle, text_store, visible_paths, wait_for
from tui.app import QuarryApp
from tui.screens.inspector import InspectorScreen
from tui.screens.records import SEARCHING

TEXTS = {
    "a.txt": "alpha beta\nthe invoice 2024-117 is due\n",
    "b.txt": "nothing to see\n",
    "c.txt": "gamma\fpage two holds an invoice too\nand another invoice\n",
}


class Gate:
    """A lookup that answers only once the test lets it (as a slow store would)."""

    def __init__(self, app: QuarryApp, *held: str) -> None:
        self.real = app.model.text_lookup
        self.asked: list[str] = []
        self.open = {value: threading.Event() for value in held}
        self.on_ui_thread = False
        app.model.text_lookup = self

    def __call__(self, term: TextTerm) -> frozenset[Key]:
        if threading.current_thread() is threading.main_thread():
            self.on_ui_thread = True
        self.asked.append(term.value)
        if term.value in self.open:  # (a prefix typed on the way answers at once)
            assert self.open[term.value].wait(30), "the test never let the lookup answer"
        assert self.real is not None
        return self.real(term)

    def release(self, value: str) -> None:
        self.open[value].set()


async def test_the_texts_are_searched_off_the_drawing_thread(tmp_path: Path) -> None:
    store = text_store(tmp_path / "store", TEXTS)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        gate = Gate(app, "invoice")
        screen = app.records_screen
        box = screen.query_one("#filter", Input)
        await pilot.press("slash", *'text:"invoice"', "enter")
        await wait_for(pilot, lambda: "invoice" in gate.asked)
        assert box.border_title == SEARCHING
        assert len(visible_paths(app)) == 3  # nothing filtered until the answer comes
        await pilot.press("s")  # the keys still work while the engine looks
        assert app.model.sort_column == "status"
        gate.release("invoice")
        await wait_for(pilot, lambda: box.border_title != SEARCHING)
        assert visible_paths(app) == ["a.txt", "c.txt"]
        assert box.border_title == "2 of 3 records"
        assert not gate.on_ui_thread


async def test_a_newer_query_supersedes_an_older_one(tmp_path: Path) -> None:
    store = text_store(tmp_path / "store", TEXTS)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        gate = Gate(app, "alpha", "gamma", "beta")
        screen = app.records_screen
        box = screen.query_one("#filter", Input)
        screen.set_filter('text:"alpha"')
        await wait_for(pilot, lambda: gate.asked == ["alpha"])
        screen.set_filter('text:"gamma"')
        await wait_for(pilot, lambda: gate.asked == ["alpha", "gamma"])
        gate.release("gamma")
        await wait_for(pilot, lambda: box.border_title != SEARCHING)
        assert visible_paths(app) == ["c.txt"]
        gate.release("alpha")  # the older answer, late: dropped
        await settle(pilot)
        assert visible_paths(app) == ["c.txt"] and app.model.query.text == 'text:"gamma"'
        screen.set_filter('text:"gamma" !path:zzz')  # the same term: answered at once
        assert visible_paths(app) == ["c.txt"] and gate.asked.count("gamma") == 1
        # a query with no text: term supersedes a search still running
        screen.set_filter('text:"beta"')
        await wait_for(pilot, lambda: gate.asked[-1] == "beta")
        screen.set_filter("path:b")
        assert visible_paths(app) == ["b.txt"] and box.border_title == "1 of 3 records"
        gate.release("beta")
        await settle(pilot)
        assert visible_paths(app) == ["b.txt"] and app.model.query.text == "path:b"


async def test_a_store_that_cannot_answer_is_said(tmp_path: Path) -> None:
    store = text_store(tmp_path / "store", TEXTS)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)

        def broken(term: TextTerm) -> frozenset[Key]:
            raise OSError(5, "Input/output error")

        app.model.text_lookup = broken
        app.records_screen.set_filter('text:"invoice"')
        await wait_for(pilot, lambda: app.model.query.text == 'text:"invoice"')
        assert any("cannot search the texts" in str(n.message) for n in app._notifications)
        assert visible_paths(app) == []


def _match_line(app: QuarryApp) -> str:
    return str(app.records_screen.query_one("#match", Static).render())


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_the_row_under_the_cursor_shows_its_match_in_context(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    texts = {**TEXTS, "d.txt": "x" * 300 + " an invoice " + "y" * 300 + "\n"}
    store = text_store(tmp_path / "store", texts)
    app = QuarryApp(store.out)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.records_screen
        line = screen.query_one("#match", Static)
        assert not line.display  # no text: term, no line
        screen.set_filter('text:"invoice"')
        await wait_for(pilot, lambda: "invoice" in _match_line(app))
        assert visible_paths(app) == ["a.txt", "c.txt", "d.txt"]
        assert _match_line(app) == "p.1 l.2 (1) the invoice 2024-117 is due"
        await pilot.press("down")
        await wait_for(pilot, lambda: _match_line(app).startswith("p.2"))
        assert _match_line(app) == "p.2 l.1 (2) page two holds an invoice too"
        await pilot.press("down")  # a long line: the match in the middle, cut to the width
        await wait_for(pilot, lambda: _match_line(app).startswith("p.1 l.1"))
        shown = _match_line(app)
        assert " an invoice " in shown and shown.startswith("p.1 l.1 (1) xxx")
        assert shown.endswith("yyy") and len(shown) <= line.content_size.width
        screen.set_filter('!text:"invoice"')  # nothing matched to show
        await wait_for(pilot, lambda: not line.display)
        screen.set_filter("")
        assert not line.display


async def test_enter_opens_the_text_at_the_first_match_and_n_goes_through_them(
    tmp_path: Path,
) -> None:
    texts = {**TEXTS, "c.txt": "gamma\n" * 60 + "\fpage two: an Invoice\n" + "x\n" * 60 + "invoice"}
    store = text_store(tmp_path / "store", texts)
    app = QuarryApp(store.out)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.records_screen
        screen.set_filter('text:"invoice"')  # lowercase: any case
        await wait_for(pilot, lambda: visible_paths(app) == ["a.txt", "c.txt"])
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        status = inspector.query_one("#status", Static)
        await wait_for(pilot, lambda: "matches (1/2)" in str(status.render()))
        view = inspector.view
        assert view.matches == [(61, 13, 20), (122, 0, 7)] and view.current == 0
        assert "“invoice”: 2 matches (1/2)" in str(status.render())
        await wait_for(pilot, lambda: view.top_line <= 61 < view.top_line + view.size.height)
        await pilot.press("n")
        assert view.current == 1 and "(2/2)" in str(status.render())
        await pilot.press("n")  # round again, as after a search typed with "/"
        assert view.current == 0
        await pilot.press("N")
        assert view.current == 1
        await pilot.press("slash", *"gamma", "enter")  # "/" searches anew
        assert len(view.matches) == 60 and "“gamma”" in str(status.render())
        await pilot.press("escape")
        assert app.screen is screen
        screen.set_filter("path:a")  # no text: term: the text opens at its top, no matches
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen) and app.screen.view.matches == []


async def test_a_store_rewritten_under_a_text_query_is_asked_again_off_the_drawing_thread(
    tmp_path: Path,
) -> None:
    store = text_store(tmp_path / "store", TEXTS)
    app = QuarryApp(store.out)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        app.records_screen.set_filter('text:"invoice"')
        await wait_for(pilot, lambda: visible_paths(app) == ["a.txt", "c.txt"])
        gate = Gate(app)
        # another writer rewrites the store (no index to follow it by): the dashboard reads
        # it again whole, the query kept; b.txt now holds the word, c.txt no longer does
        text_store(tmp_path / "store", {**TEXTS, "b.txt": "an invoice now\n", "c.txt": "gone\n"})
        await wait_for(pilot, lambda: visible_paths(app) == ["a.txt", "b.txt"])
        assert gate.asked and set(gate.asked) == {"invoice"}
        assert not gate.on_ui_thread


async def test_a_text_query_follows_the_texts_while_watching(tmp_path: Path) -> None:
    """Issue 29: a text replaced while watching: its old hits go, the new ones come, asked
    again in the worker as the watcher's batches change the records."""
    from multiprocessing import resource_tracker

    from engine.session import Session
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet
    from engine.watch import WatchOptions

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("the original wording\n")
    (folder / "b.txt").write_text("something else\n")
    resource_tracker.ensure_running()  # (see tests.tui.triage_helpers.session_over)
    options = SweepOptions(tools=ToolSet.empty(), workers=1)
    with contextlib.closing(Session([folder], options, watch_options=WatchOptions())) as session:
        app = QuarryApp(session.store.out, session)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: app.state == "watching", timeout=120)
            await settle(pilot)
            app.records_screen.set_filter('text:"original"')
            await wait_for(pilot, lambda: visible_paths(app) == ["a.txt"])
            gate = Gate(app)
            (folder / "a.txt").write_text("the replacement wording\n")
            (folder / "b.txt").write_text("now the original is here\n")
            await wait_for(pilot, lambda: visible_paths(app) == ["b.txt"], timeout=120)
            assert gate.asked and not gate.on_ui_thread
            app.records_screen.set_filter('text:"replacement"')
            await wait_for(pilot, lambda: visible_paths(app) == ["a.txt"])


async def test_a_pattern_that_backtracks_for_ever_is_said_and_never_freezes_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``text:/(a+)+$/`` over a text with a long run of ``a``: under ``re`` the search held the
    interpreter's lock for ever, and the dashboard froze with it (not even ``q`` was heard).
    It is given up after ``MATCH_S`` on a text, and said: as the query's answer, on the row's
    match line, and as the text opens (the text shown all the same)."""
    from engine import textsearch

    monkeypatch.setattr(textsearch, "MATCH_S", 0.2)
    store = text_store(tmp_path / "store", {**TEXTS, "runs.txt": "a" * 4096 + "!\n"})
    app = QuarryApp(store.out)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        screen = app.records_screen
        screen.set_filter("text:/(a+)+$/")
        said = "the pattern took over 0.2 s on one text"
        await wait_for(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        assert visible_paths(app) == []
        await pilot.press("s")  # the keys work
        assert app.model.sort_column == "status"
        # another such pattern, the index's answer given (as a store whose index said so
        # would): the row's match line says it, and so does its text as it opens
        app.model.text_lookup = lambda term: frozenset({("/texts", "runs.txt")})
        screen.set_filter("text:/(a+)+b/")
        await wait_for(pilot, lambda: visible_paths(app) == ["runs.txt"])
        await wait_for(pilot, lambda: said in _match_line(app))
        app.clear_notifications()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        await wait_for(pilot, lambda: any(said in str(n.message) for n in app._notifications))
        await wait_for(pilot, lambda: inspector.view.doc.lines[0].startswith("a" * 100))
        assert inspector.view.matches == []
