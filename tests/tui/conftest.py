"""Shared fixtures for the dashboard tests: a sample store and a deterministic clock."""

from __future__ import annotations

import asyncio
import difflib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from engine.records import Record
from engine.store import Store
from tui.app import QuarryApp
from tui.model import R_PATH
from tui.sample import build_sample_store, sample_summary

T = TypeVar("T")

SIZE = (160, 40)
"""Terminal size of every pilot test."""


@pytest.fixture(autouse=True)
def utc() -> Iterator[None]:
    """Show times in UTC so screens do not depend on the machine's zone."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture(autouse=True)
def notes_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every notification an app shows (``app.notes_seen``): a notification expires
    after a few seconds, and a loaded machine may take longer than that to check it."""
    from textual.app import App

    shown = App.notify

    def notify(self: App[object], message: str, **kwargs: object) -> None:
        self.__dict__.setdefault("notes_seen", []).append(f"{kwargs.get('title', '')}: {message}")
        shown(self, message, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(App, "notify", notify)


@pytest.fixture(autouse=True)
def debian(monkeypatch: pytest.MonkeyPatch) -> None:
    """Install hints as on Debian, whatever this machine is: screens do not depend on it."""
    monkeypatch.setattr("tui.screens.unsupported.this_platform", lambda: "debian")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """The sample store (every status, paged texts) in a temporary folder."""
    return build_sample_store(tmp_path / "store")


async def settle(pilot: Pilot[None]) -> None:
    """Wait for workers and for the messages they posted."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


STEADY_ROUNDS = 50
"""Settles at most before :func:`steady` gives up waiting for two looks that agree."""


async def steady(pilot: Pilot[None], look: Callable[[], T]) -> T:
    """What ``look`` sees once the app has settled: no worker running and two looks in a row,
    a settle apart, the same (bounded). One settle may end, on a loaded machine, before a
    chain of messages has run its course: a count's answer, the table it refills, the row
    it highlights, the files that row lists."""
    await settle(pilot)
    seen = look()
    for _ in range(STEADY_ROUNDS):
        await settle(pilot)
        now = look()
        if now == seen and not any(w.is_running for w in pilot.app.workers):
            return now
        seen = now
    return seen


def first_difference(steps: list[str], want: list[list[str]], got: list[list[str]]) -> str:
    """Where two runs' screens first differ: the step (the key pressed) and a diff of what
    each drew (a whole-list assertion of 20 screens is cut short before its difference)."""
    for step, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            diff = difflib.unified_diff(a, b, "held", "paged", lineterm="", n=1)
            return f"step {step} ({steps[step]!r}):\n" + "\n".join(diff)
    return f"as many screens: {len(want)} against {len(got)}" if len(want) != len(got) else ""


async def quit_with_q(pilot: Pilot[None]) -> None:
    """Press q the user's way (driver, bindings) and wait, bounded, for the app to end.

    The press is not awaited: a pilot's press waits for the animator, which stops with the app
    it quits (awaiting it hung a test now and then under load)."""
    app = pilot.app
    press = asyncio.create_task(pilot.press("q"))
    for _ in range(600):
        if not app.is_running:
            break
        await asyncio.sleep(0.05)
    press.cancel()
    assert not app.is_running, "q must exit the app"


def screen_lines(widget: Widget) -> list[str]:
    """The text a widget shows, line by line (what the user reads)."""
    return [strip.text for strip in widget.render_lines(widget.size.region)]


def static_text(widget: Static) -> str:
    """The plain text of a Static."""
    return str(widget.visual) if hasattr(widget, "visual") else str(widget.renderable)


def visible_paths(app: QuarryApp) -> list[str]:
    """Paths of the rows in the view, in the order shown."""
    m = app.model
    return [m.rows[m.rid_at(i)][R_PATH] for i in range(len(m.view))]  # type: ignore[index]


def text_store(out: Path, texts: dict[str, str], root: str = "/texts") -> Store:
    """A store of ``ok`` records, one per ``path -> text`` (any text: long, wide, odd)."""
    import hashlib

    store = Store(out)
    records = []
    for path, text in sorted(texts.items()):
        sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        records.append(
            Record(root, path, len(text), 0, "ok", sha, "text/plain", None, "text:utf-8",
                   "text", 1, chars=len(text))
        )  # fmt: skip
    with store.writer():
        for record in records:
            store.put_text(record.sha256 or "", texts[record.path])
        store.write_records(records)
    return store


def records_store(out: Path, records: list[Record]) -> Store:
    """A store of ``records`` (no texts) and a summary that agrees with them."""
    store = Store(out)
    with store.writer():
        store.write_records(records)
        store.write_summary(sample_summary(records))
    return store


async def wait_for(pilot: Pilot[None], condition: object, timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds; fail after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {condition}")
        await pilot.pause(0.02)
