"""The engine stands alone: importing all of it never loads Textual or the dashboard."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from importlib.util import find_spec

import engine


def test_engine_never_imports_textual_or_tui() -> None:
    modules = [f"engine.{m.name}" for m in pkgutil.walk_packages(engine.__path__, "")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    if name.endswith('__main__'): continue\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


# Libraries only a read (or a pool of workers) needs: a sweep with nothing to read, which
# still imports every reader module to learn the readers, pays for none of them.
_ONLY_WHEN_READING = ("multiprocessing", "email", "html.parser", "tarfile", "pathspec")


def test_a_sweeps_start_imports_no_library_only_a_read_needs() -> None:
    code = (
        "import sys\n"
        "import engine.cli, engine.commands, engine.sweep\n"
        "from engine.readers.registry import all_readers\n"
        "assert all_readers()\n"
        f"heavy = {_ONLY_WHEN_READING!r}\n"
        "found = [m for m in sys.modules if m in heavy or m.split('.')[0] in heavy]\n"
        "print(','.join(sorted(found)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_the_forkserver_preloads_what_readers_import_late() -> None:
    # A name that no longer resolves would be skipped silently, and every worker would pay
    # for the import on its first file.
    from engine.procs import LAZY_READER_DEPS

    missing = [n for n in LAZY_READER_DEPS if find_spec(n) is None]
    assert missing == []
