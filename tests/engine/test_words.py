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


def test_one_byte_and_one_character_are_said_singular() -> None:
    """``quarry show`` of the fixtures' one-byte file said "size: 1 bytes", a compare of a
    text one character longer "+1 characters"."""
    from engine.diff import Direction, FileChange, Kind, Side
    from engine.diffview import what_changed
    from engine.records import Record
    from engine.showing import record_lines

    lines = record_lines(Record("/r", "one_byte.txt", 1, 0, "ok", chars=1, sha256="a" * 64))
    assert any(line.split() == ["size:", "1", "byte"] for line in lines), lines

    def side(chars: int) -> Side:
        return Side("ok", None, "text/plain", None, None, chars, None, None)

    def change(before: int, after: int) -> str:
        c = FileChange("/r", "a.txt", Kind.TEXT, Direction.NEITHER, side(before), side(after), 0.5)
        return what_changed(c)

    assert change(10, 11) == "similarity 0.50, +1 character"
    assert change(11, 10) == "similarity 0.50, -1 character"
    assert change(10, 12) == "similarity 0.50, +2 characters"
