"""Notice kinds and levels are enums every producer names, the store's health is an event of
its own, and their words on screen and on the console are unchanged."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from engine.console import SweepReporter
from engine.console import describe as console_line
from engine.events import Level, Notice, NoticeKind, StoreHealth, StoreState
from engine.names import shown
from tui.eventlog import describe

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "tui").rglob("*.py")])


NOTICE = {"kind": 1, "level": 3}
"""Where ``Notice(at, kind, message, level)`` takes each."""


def _calls(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    """Each call of ``Notice``, ``StoreHealth`` or a module's own ``_notice`` helper."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in ("Notice", "StoreHealth", "_notice"):
                calls.append((name, node))
    return calls


def _helper_places(tree: ast.AST) -> dict[str, int]:
    """Where a module's ``_notice(self, ...)`` helper takes ``kind`` and ``level``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_notice":
            names = [a.arg for a in node.args.args if a.arg != "self"]
            return {name: names.index(name) for name in ("kind", "level") if name in names}
    return {}


def _named(arg: ast.expr, enum: str) -> bool:
    """``Enum.MEMBER``, or a name (a parameter or a variable the function was handed)."""
    if isinstance(arg, ast.Name):
        return True
    if not (isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name)):
        return False
    return arg.value.id == enum


def _loose(param: str, enum: str) -> tuple[list[str], int]:
    """Where a notice's ``param`` is given otherwise than from ``enum``; how many were given."""
    loose, seen = [], 0
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        places = {"Notice": NOTICE, "_notice": _helper_places(tree)}
        for name, call in _calls(tree):
            at = places.get(name, {}).get(param)
            args = [k.value for k in call.keywords if k.arg == param]
            if at is not None and len(call.args) > at:
                args.append(call.args[at])
            seen += len(args)
            loose += [f"{path.relative_to(ROOT)}:{arg.lineno}" for arg in args
                      if not _named(arg, enum)]  # fmt: skip
    return loose, seen


def test_every_notice_names_its_kind_from_the_enum() -> None:
    loose, seen = _loose("kind", "NoticeKind")
    assert seen > 20, "the walk found the engine's notices"
    assert not loose, f"notice kinds given as strings: {loose}"


def test_every_notice_names_its_level_from_the_enum() -> None:
    loose, seen = _loose("level", "Level")
    assert seen > 20, "the walk found the notices given a level"
    assert not loose, f"notice levels given as strings: {loose}"


def test_the_store_health_is_said_as_an_event_of_its_own() -> None:
    """No notice of a kind the store's health took over, and the watcher and the session send
    the typed event."""
    words = {state.value for state in StoreState}
    assert not words & {kind.value for kind in NoticeKind}
    senders = {
        path.relative_to(ROOT).as_posix()
        for path in SOURCES
        for name, _ in _calls(ast.parse(path.read_text(), str(path)))
        if name == "StoreHealth"
    }
    assert senders == {"engine/watch.py", "engine/session.py"}


def test_a_kind_a_level_and_a_state_read_as_their_old_words() -> None:
    for word in (*NoticeKind, *Level, *StoreState):
        assert str(word) == f"{word}" == word.value
    assert [level.value for level in Level] == ["info", "warning", "error"]
    assert Level.ERROR == "error" and Notice(0.0, NoticeKind.RESCAN, "m").level is Level.INFO
    assert [NoticeKind(k.value) for k in NoticeKind] == list(NoticeKind)


def test_the_activity_log_line_of_the_store_health_is_the_old_notice_line() -> None:
    lines = describe(StoreHealth(0.0, StoreState.LOST, "disk gone"))
    assert [(line.kind, line.text, line.kept) for line in lines] == [
        ("notice", "store-lost: disk gone", True)
    ]
    (ok,) = describe(StoreHealth(0.0, StoreState.OK, "taken again"))
    assert ok.text == "store-ok: taken again" and not ok.kept


@given(st.sampled_from(list(StoreState)), st.text(max_size=40))
def test_the_console_says_the_store_health_as_it_said_the_notice(
    state: StoreState, message: str
) -> None:
    """The line is the old notice's (``HH:MM:SS error: ...``); trouble and loss are said
    even to a quiet console, the store taking changes again only to a talking one."""
    event = StoreHealth(0.0, state, message)
    level = "info" if state is StoreState.OK else "error"
    line = console_line(event)
    assert re.fullmatch(r"\d\d:\d\d:\d\d " + level + r": .*", line, re.S)
    assert line == console_line(Notice(0.0, NoticeKind.RESCAN, message, Level(level)))
    for quiet in (False, True):
        out = io.StringIO()
        SweepReporter(out, quiet=quiet)(event)
        assert out.getvalue() == ("" if quiet and state is StoreState.OK else shown(line) + "\n")
