"""Shared pieces of the triage tests: a folder with every kind of trouble, sessions over it.

The folder is the bundled ``fixtures/`` (generated into the test's copy when only the
generator is there), plus OCR images (``unsupported/needs_tool`` without tesseract) and DOCX
files with a damaged member (one error group, "Bad CRC-32 for file 'word/document.xml'").
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from pathlib import Path

from engine.session import Session
from engine.sweep import SweepOptions
from engine.tools import ToolSet
from fixtures.gen import _raster
from fixtures.gen.office import docx_members
from fixtures.generate import build_all
from tui.app import QuarryApp

TriageApp = QuarryApp
"""The dashboard, triage keys included (the name the triage tests use)."""


FAKE_TESSERACT = """#!/bin/sh
case "$1" in
  --version) echo "tesseract 5.9.9"; exit 0 ;;
  --list-langs) echo "eng"; exit 0 ;;
esac
echo "HELLO FROM A FAKE TESSERACT"
"""


def docx_bytes(*, damaged: bool) -> bytes:
    """A stored (uncompressed) DOCX; ``damaged`` flips one byte of word/document.xml."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in docx_members().items():
            z.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    data = bytearray(buf.getvalue())
    if damaged:
        i = data.find(b"<w:body>")
        data[i + 1 : i + 2] = b"W"
    return bytes(data)


def add_trouble(folder: Path, damaged: int = 3) -> Path:
    """Make ``folder`` the fixtures plus images and ``damaged`` damaged DOCX files."""
    if not (folder / "office").exists():
        build_all(folder)
    images = folder / "images"
    images.mkdir(exist_ok=True)
    for name, text in (("hello.png", "HELLO QUARRY"), ("sign.png", "NO ENTRY")):
        (images / name).write_bytes(_raster.png(_raster.render([text])))
    bad = folder / "damaged"
    bad.mkdir(exist_ok=True)
    for i in range(damaged):
        (bad / f"report{i:02d}.docx").write_bytes(docx_bytes(damaged=True))
    return folder


def fake_tool(bin_dir: Path, name: str = "tesseract", script: str = FAKE_TESSERACT) -> Path:
    """An executable script called ``name`` in ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(script)
    path.chmod(0o755)
    return path


@contextmanager
def session_over(folder: Path, tools: ToolSet | None = None) -> Iterator[Session]:
    """A session (one worker) over ``folder``; ``tools=None`` discovers them on PATH."""
    # The pool's forkserver starts a resource tracker that passes on sys.stderr's descriptor;
    # inside a running Textual app stderr is captured (no descriptor), so start it now.
    resource_tracker.ensure_running()
    session = Session([folder], SweepOptions(tools=tools, workers=1))
    try:
        yield session
    finally:
        session.close()


NO_TOOLS = ToolSet.empty()
"""What a machine without any external tool has."""


def screen_text(app: object) -> str:
    """Everything the active screen shows, as plain text (what the user reads)."""
    screen = app.screen  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in screen._compositor.render_strips())


async def wait_until(pilot: object, condition: object, timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds (engine work is real, so it takes time)."""
    import time

    end = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {condition}")
        await pilot.pause(0.05)  # type: ignore[attr-defined]


def swept(app: object) -> bool:
    """Whether the app has seen the end of its first full sweep."""
    return any(
        "full sweep finished" in line.text
        for line in app.triage.activity.lines  # type: ignore[attr-defined]
    )


def notes(app: object) -> list[str]:
    """Every notification shown so far (expired ones too), as ``title: message``."""
    return list(getattr(app, "notes_seen", []))


async def swept_home(pilot: object, app: object) -> None:
    """Wait for the first sweep, then close the tools screen it may have opened."""
    from tests.tui.conftest import settle
    from tui.screens.records import RecordsScreen

    await wait_until(pilot, lambda: swept(app))
    await settle(pilot)  # type: ignore[arg-type]
    if not isinstance(app.screen, RecordsScreen):  # type: ignore[attr-defined]
        await pilot.press("escape")  # type: ignore[attr-defined]
        await settle(pilot)  # type: ignore[arg-type]
