"""No long parameter lists in the engine or the dashboard: a function takes at most
:data:`MOST` positional parameters (``self`` aside). More inputs than that are named at every
call (keyword-only) or travel in an object that says what they are (``statindex.Swept``,
``sweep.RunEnd``), as issue 30 asked of ``_conclude`` and its nine."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOST = 7
"""(engine.summary.build_summary takes five, and what is optional by name.)"""


def positional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """A function's positional parameters, ``self`` and ``cls`` aside."""
    params = [*node.args.posonlyargs, *node.args.args]
    return [p.arg for p in params if p.arg not in ("self", "cls")]


def long_lists(source: str, name: str) -> list[str]:
    """``name:line function(n)`` for every function of ``source`` over :data:`MOST`."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            n = len(positional(node))
            if n > MOST:
                found.append(f"{name}:{node.lineno} {node.name}({n})")
    return found


def test_the_check_sees_a_long_list_and_not_a_named_one() -> None:
    eight = "def f(a, b, c, d, e, f, g, h=1): ...\n"
    named = "class C:\n    def f(self, a, b, c, *, d, e, f, g, h): ...\n"
    assert long_lists(eight, "x.py") == ["x.py:1 f(8)"]
    assert long_lists(named, "y.py") == []


def test_no_function_takes_a_long_list_of_positional_parameters() -> None:
    found = []
    for path in sorted(p for d in ("engine", "tui") for p in (ROOT / d).rglob("*.py")):
        found += long_lists(path.read_text(), str(path.relative_to(ROOT)))
    assert found == []
