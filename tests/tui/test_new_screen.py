"""README's "what a new screen takes", followed to the letter: a toy screen added through the
public seams only (a TriageScreen built with the model, the triage state and the dashboard;
its keys; one ModelChanged handler for live data; one action on the app)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

import tui.app
from engine.events import RecordsChanged
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import SIZE, settle, static_text, wait_for
from tui.app import QuarryApp
from tui.messages import EngineEvents, ModelChanged
from tui.sample import ROOT
from tui.screens.records import RecordsScreen
from tui.screens.triage_base import TriageScreen


class ToyScreen(TriageScreen):
    """How many records there are, and what the engine side is doing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *TriageScreen.BINDINGS,
        Binding("c", "count_errors", "Errors only"),
    ]

    errors_only = False
    told = 0
    """Changes told of (by ModelChanged)."""

    def compose(self) -> ComposeResult:
        yield Static("", id="toy")

    def on_mount(self) -> None:
        self.ready = True
        self.refresh_data()

    def refresh_data(self) -> None:
        model = self.model
        n = len(model.rids_with_status("error")) if self.errors_only else len(model)
        what = "errors" if self.errors_only else "records"
        self.query_one("#toy", Static).update(f"{n} {what} · {self.dash.header().state}")

    def on_model_changed(self, message: ModelChanged) -> None:
        """Live data: the base redraws soon; this toy also counts the changes it is told of."""
        super().on_model_changed(message)
        self.told += 1

    def action_count_errors(self) -> None:
        self.errors_only = True
        self.refresh_data()


class ToyApp(QuarryApp):
    """The dashboard with the toy screen on ``y``."""

    BINDINGS = [*QuarryApp.BINDINGS, Binding("y", "show_toy", "Toy")]
    CSS_PATH = Path(tui.app.__file__).with_name("app.tcss")  # (relative: to the subclass's file)

    def action_show_toy(self) -> None:
        self.show_kept(ToyScreen)


async def test_a_toy_screen_takes_what_the_readme_says(store: Store) -> None:
    app = ToyApp(store.out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ToyScreen))
        toy = app.screen
        assert isinstance(toy, ToyScreen)
        label = toy.query_one("#toy", Static)
        n = len(app.model)
        await wait_for(pilot, lambda: static_text(label).startswith(f"{n} records · "))
        new = Record(ROOT, "toy/new.txt", 3, 1, "ok", "cd" * 32, "text/plain", chars=3)
        app.post_message(EngineEvents([RecordsChanged(time.time(), (new,))]))
        await wait_for(pilot, lambda: static_text(label).startswith(f"{n + 1} records"))
        assert toy.told >= 1  # the change came in the one message every screen gets
        await pilot.press("c")
        errors = len(app.model.rids_with_status("error"))
        await wait_for(pilot, lambda: static_text(label).startswith(f"{errors} errors"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RecordsScreen))
        await pilot.press("y")  # the same screen again, started over
        await wait_for(pilot, lambda: app.screen is toy)
