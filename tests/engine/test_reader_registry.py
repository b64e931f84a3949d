"""The reader registry is honest: a reader that cannot load is listed with why (``quarry
tools``, the dashboard's tools screen), and extra readers come in through the options a
caller builds (``SweepOptions.readers``, ``--reader``), reaching the worker processes too."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.readers import registry
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from tests import faultreader

QUARRY = [sys.executable, "-m", "engine"]


@pytest.fixture
def clean_registry() -> Iterator[None]:
    registry.use_extra(())
    registry.reset()
    yield
    registry.use_extra(())
    registry.reset()


def test_a_reader_that_cannot_import_is_listed_with_why(
    monkeypatch: pytest.MonkeyPatch, clean_registry: None
) -> None:
    real = importlib.import_module

    def broken_epub(name: str, package: str | None = None) -> object:
        if name == "engine.readers.epub":
            raise ModuleNotFoundError("No module named 'some_epub_dependency'")
        return real(name, package)

    monkeypatch.setattr(registry.importlib, "import_module", broken_epub)
    registry.reset()
    assert [u.module for u in registry.unloaded()] == ["engine.readers.epub"]
    assert registry.unloaded()[0].line == (
        "epub: ModuleNotFoundError: No module named 'some_epub_dependency'"
    )
    assert registry.reader_named("epub") is None
    assert registry.reader_for("application/epub+zip") is None  # unsupported/no_reader
    assert registry.reader_named("text") is not None  # the others load
    monkeypatch.undo()
    registry.reset()
    assert registry.unloaded() == () and registry.reader_named("epub") is not None


def _broken_lzma(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python has no working ``lzma`` (a build without liblzma)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "lzma.py").write_text("raise ModuleNotFoundError(\"No module named '_lzma'\")\n")
    env = faultreader.env()
    env["PYTHONPATH"] = f"{shadow}:{env['PYTHONPATH']}"
    return env


def test_quarry_tools_lists_the_readers_that_could_not_load(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*QUARRY, "tools"], capture_output=True, text=True, timeout=120, env=_broken_lzma(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    assert "readers not loaded" in proc.stdout
    assert "compressed" in proc.stdout and "No module named '_lzma'" in proc.stdout
    healthy = subprocess.run([*QUARRY, "tools"], capture_output=True, text=True, timeout=120)
    assert healthy.returncode == 0 and "readers not loaded" not in healthy.stdout


def test_extra_readers_come_through_the_options_into_the_workers(
    tmp_path: Path, clean_registry: None
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "f.bin").write_bytes(faultreader.fixture("ok"))
    opts = SweepOptions(tools=ToolSet.empty(), workers=1, readers=(faultreader.SPEC,))
    sweep([root], opts)
    line = (root / ".quarry" / "extract.jsonl").read_text()
    assert '"reader":"fault"' in line.replace(" ", "")  # read by a worker process, with it
    assert registry.extra() == (faultreader.SPEC,)


def test_a_reader_flag_that_names_no_readers_is_one_line(tmp_path: Path) -> None:
    for spec, said in (("no_such_module_xyz", "ModuleNotFoundError"), ("os:sep", "not a tuple")):
        proc = subprocess.run(
            [*QUARRY, "sweep", str(tmp_path), "--reader", spec],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1
        assert proc.stderr.startswith(f"quarry: --reader {spec}: ") and said in proc.stderr
        assert "Traceback" not in proc.stderr


def test_a_new_reader_from_outside_the_package_as_the_readme_says(tmp_path: Path) -> None:
    """README's "A new reader takes": a READERS tuple in a module, given with --reader, reads
    in the workers of the real command, and quarry show gives its text."""
    from tests import toyreader

    root = tmp_path / "docs"
    root.mkdir()
    (root / "blob.bin").write_bytes(b"\x00\x01\xffhello toy reader\x00\x02ab\x00world!")
    env = faultreader.env()  # (this checkout on PYTHONPATH, as for any plug-in's folder)
    swept = subprocess.run(
        [*QUARRY, "sweep", "-q", str(root), "--reader", toyreader.SPEC],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    shown = subprocess.run(
        [*QUARRY, "show", str(root / "blob.bin")], capture_output=True, text=True, timeout=120
    )
    assert "toy-strings" in shown.stdout and "hello toy reader\nworld!" in shown.stdout
    without = subprocess.run(
        [*QUARRY, "sweep", "-q", str(tmp_path / "docs"), "--out", str(tmp_path / "plain")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert without.returncode == 0  # the built-in readers alone leave it unsupported
    plain = (tmp_path / "plain" / "extract.jsonl").read_text()
    assert '"unsupported"' in plain.replace(" ", "") and "toy-strings" not in plain
