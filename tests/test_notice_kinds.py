"""Notice kinds are an enum every producer names, and their words on screen are unchanged."""

from __future__ import annotations

import ast
from pathlib import Path

from engine.events import Notice, NoticeKind
from tui.eventlog import describe

ROOT = Path(__file__).resolve().parents[2]


def _kind_arguments(tree: ast.AST) -> list[ast.expr]:
    """The kind given to each ``Notice(...)`` and ``self._notice(...)`` call."""
    kinds: list[ast.expr] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name == "Notice" and len(node.args) >= 2:
            kinds.append(node.args[1])
        elif name == "_notice" and node.args:
            kinds.append(node.args[0])
    return kinds


def test_every_engine_notice_names_its_kind_from_the_enum() -> None:
    loose = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        for arg in _kind_arguments(ast.parse(path.read_text(), str(path))):
            named = isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name)
            if not (named and arg.value.id == "NoticeKind") and not isinstance(arg, ast.Name):
                loose.append(f"{path.relative_to(ROOT)}:{arg.lineno}")
    assert not loose, f"notice kinds given as strings: {loose}"


def test_a_kind_reads_as_its_old_word() -> None:
    for kind in NoticeKind:
        assert str(kind) == f"{kind}" == kind.value
    assert [NoticeKind(k.value) for k in NoticeKind] == list(NoticeKind)


def test_the_activity_log_line_of_a_notice_is_unchanged() -> None:
    lines = describe(Notice(0.0, NoticeKind.STORE_LOST, "disk gone", "error"))
    assert [line.text for line in lines] == ["store-lost: disk gone"]
