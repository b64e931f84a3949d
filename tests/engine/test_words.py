"""Counts in messages are said as people say them: ``1 file``, ``2 files``, never ``file(s)``."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from engine.words import count

HOME = Path(__file__).resolve().parents[2]


@given(st.integers(0, 10**7))
def test_one_is_singular_every_other_count_plural(n: int) -> None:
    assert count(n, "text") == (f"{n:,} text" if n == 1 else f"{n:,} texts")


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of ``path`` (f-strings' parts included) but its docstrings: a
    string that stands alone as a statement (a module's, a class's, a function's or an
    attribute's) is documentation, not a message."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_no_message_of_the_engine_or_the_dashboard_says_a_count_with_s_in_brackets() -> None:
    found = [
        f"{path.relative_to(HOME)}:{line}: {text!r}"
        for package in ("engine", "tui")
        for path in sorted((HOME / package).rglob("*.py"))
        for line, text in _strings(path)
        if "(s) " in text or text.endswith("(s)")
    ]
    assert found == []
