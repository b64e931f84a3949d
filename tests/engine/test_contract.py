"""The engine stands alone: importing all of it never loads Textual or the dashboard."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

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
