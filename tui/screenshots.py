"""Regenerate ``screenshots/``: ``python -m tui.screenshots [OUT]``.

Sweeps a copy of ``fixtures/`` into a temporary store when the sweep and the fixtures are
there; otherwise uses the bundled sample store (:mod:`tui.sample`). Each screen is saved
as an SVG at a fixed size, in UTC, with animations off.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from engine.events import Event
from tui.app import QuarryApp
from tui.messages import EngineEvents
from tui.sample import build_sample_store

SIZE = (150, 36)
SHOTS: list[tuple[str, Sequence[str]]] = [
    ("records", ()),
    ("records-detail-unsupported", ("4", "down")),
    ("records-filtered-errors", ("slash", "p", "d", "f", "enter", "5", "end")),
    ("inspector", ("2", "slash", *"sample.pptx", "enter", "enter", "slash", *"slide", "enter")),
    ("help", ("question_mark",)),
    ("tools", ("t", "down", "down")),
    ("errors", ("x", "enter")),
    ("records-quality", ("slash", *"quality:suspect,garbled", "enter", "up", "up")),
    ("errors-suspect-texts", ("x", "ctrl+end")),
    ("unsupported", ("u",)),
    ("activity", ("at",)),
    ("compare", ()),
    ("compare-texts", ("down", "down", "enter", "enter")),
]
COMPARED = ("compare", "compare-texts")
"""Shots of ``quarry ui --compare``: the store swept without OCR and pdftotext, before."""
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


EVENTS: list[Event] = []
"""The events of the screenshots' own sweep, replayed into the app for the activity screen."""


def make_store(tmp: Path) -> Path:
    """A store of ``fixtures/`` when it can be swept, else the sample store."""
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".py"]
    if len(files) > 5:
        try:
            from engine.sweep import SweepOptions, sweep

            root = tmp / "fixtures"
            shutil.copytree(FIXTURES, root)
            out = tmp / "store"
            sweep([root], SweepOptions(out=out), EVENTS.append)
            return out
        except Exception as exc:  # a sweep that fails must not stop the screenshots
            print(f"sweep of fixtures failed ({exc}); using the sample store", file=sys.stderr)
    return build_sample_store(tmp / "sample").out


def make_before(store: Path) -> Path | None:
    """The same folder swept without tesseract and pdftotext, into a store beside ``store``
    (what ``quarry ui --compare`` shows against it); None for the sample store."""
    root = store.parent / "fixtures"
    if not root.is_dir():
        return None
    from engine.sweep import SweepOptions, sweep

    before = store.parent / "before"
    sweep([root], SweepOptions(out=before, without=("tesseract", "pdftotext")), lambda _e: None)
    return before


async def shoot(
    store: Path, out: Path, name: str, keys: Sequence[str], before: Path | None = None
) -> Path:
    """Open the app (on the compare screen when given a store ``before``), press ``keys``,
    save ``out/name.svg``."""
    from engine.store import Store

    app = QuarryApp(store, compare=Store(before) if before is not None else None)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        if name == "activity" and EVENTS:
            # A store opened without a session has no events of its own: show the sweep's.
            app.post_message(EngineEvents(list(EVENTS)))
            await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.pause()
        path = out / f"{name}.svg"
        path.write_text(app.export_screenshot(title=f"textquarry: {name}"), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    """Write every screenshot."""
    os.environ["TZ"] = "UTC"
    time.tzset()
    out = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    # a fixed folder, so the paths shown do not change from one run to the next
    tmp = Path(tempfile.gettempdir()) / "textquarry-screenshots"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        store = make_store(tmp)
        before = make_before(store)
        for name, keys in SHOTS:
            if name in COMPARED:
                if before is not None:
                    print(asyncio.run(shoot(store, out, name, keys, before)))
                continue
            print(asyncio.run(shoot(store, out, name, keys)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
