"""``hostile/pdf_unmapped_font.pdf`` through the real ``quarry sweep`` on both machines.

The file is a well-formed PDF whose font maps its letters to control characters: pdftotext
reads it as pypdf does, so its verdict cannot hang on pdftotext (it went from
``unsupported/needs_tool`` naming pdftotext on a bare machine to ``error/corrupt`` once
pdftotext was there: a tool that read the file did not make it corrupt). On a PATH without
any external tool (built as ``.ci/run`` builds it: links to every program but those) it
needs OCR's tools; on this machine's PATH, with them, OCR reads it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.records import Record
from engine.store import Store
from engine.tools import KNOWN_TOOLS
from tests.e2e.terminal import quarry_command

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hostile" / "pdf_unmapped_font.pdf"


def bare_path(where: Path) -> str:
    """A folder of links to every program on PATH but the external tools (``.ci/run``)."""
    where.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            program = os.path.join(folder, name)
            if name in KNOWN_TOOLS or (where / name).exists() or os.path.isdir(program):
                continue
            if os.access(program, os.X_OK):
                (where / name).symlink_to(program)
    return str(where)


def swept(tmp_path: Path, path_env: str) -> Record:
    """Sweep a folder holding only the fixture with ``PATH=path_env``; its record."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(FIXTURE, folder / FIXTURE.name)
    out = tmp_path / "store"
    env = {**os.environ, "PATH": path_env}
    argv = [*quarry_command(), "sweep", str(folder), "--out", str(out), "-q"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 2, 3), done.stderr  # 2, 3: a file not ok, not a failure
    (record,) = Store(out).load_records()
    return record


def test_on_a_bare_machine_it_needs_ocr(tmp_path: Path) -> None:
    record = swept(tmp_path, bare_path(tmp_path / "bin"))
    assert (record.status, record.reason) == ("unsupported", "needs_tool"), record
    assert record.needs == ("pdftoppm", "tesseract"), record
    assert "pdftotext" not in str(record.error)


@pytest.mark.skipif(
    not (shutil.which("pdftoppm") and shutil.which("tesseract")),
    reason="pdftoppm or tesseract not on PATH: OCR cannot read it here",
)
def test_with_the_tools_ocr_reads_it(tmp_path: Path) -> None:
    record = swept(tmp_path, os.environ["PATH"])
    assert (record.status, record.extractor) == ("ok", "pdftoppm+tesseract"), record
