"""A file's key, (root, path), has one type, ``engine.records.Key``: no module of the engine
or the dashboard declares an alias of its own (there were nine, then one in the grep verb)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "engine" / "records.py"
"""Where ``Key`` is declared, once."""


def _sources() -> list[Path]:
    return sorted(p for d in ("engine", "tui") for p in (ROOT / d).rglob("*.py"))


def _declares_key(node: ast.stmt) -> bool:
    """``Key = ...``, ``Key: TypeAlias = ...`` or ``type Key = ...`` at a module's top."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "Key" for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == "Key"
    return type(node).__name__ == "TypeAlias" and getattr(node, "name", None) == "Key"


def test_key_is_declared_once() -> None:
    declared = [
        str(path.relative_to(ROOT))
        for path in _sources()
        if any(_declares_key(n) for n in ast.parse(path.read_text(), str(path)).body)
    ]
    assert declared == [str(HOME.relative_to(ROOT))]
