"""tui.retries, without Textual: what a retry, a password unlock and a tools re-check decide.

The app only shows what these return and runs the two engine calls in its threads; the
pilot tests (test_triage*, test_password*, test_tools*) drive the same through the keys."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.passwords import NO_PASSWORDS, Passwords
from engine.records import Key, Summary
from engine.sweep import SweepResult
from engine.tools import Tool, ToolSet
from tui.link import Link, Say
from tui.model import RecordModel
from tui.retries import CONFIRM_ABOVE, Retries, RetryDone, ToolsCheck
from tui.state import TriageState

ROOT = "/r"


class FakeEngine:
    """An EnginePort that answers at once (or fails, when told to)."""

    def __init__(self, *, fail: bool = False, appears: tuple[str, ...] = ()) -> None:
        self.fail = fail
        self.appears = appears
        self.retried: list[tuple[list[Key], Passwords]] = []
        self._tools = ToolSet((Tool("pdftotext", "/usr/bin/pdftotext", "1"),))

    @property
    def roots(self) -> Sequence[Path]:
        return (Path(ROOT),)

    @property
    def tools(self) -> ToolSet:
        return self._tools

    def retry(self, keys: Iterable[Key], passwords: Passwords = NO_PASSWORDS) -> SweepResult:
        if self.fail:
            raise RuntimeError("disk on fire")
        self.retried.append((list(keys), passwords))
        return SweepResult(Summary((ROOT,), 0, {}))

    def recheck_tools(self) -> ToolSet:
        if self.fail:
            raise RuntimeError("PATH on fire")
        found = (*self._tools.found, *(Tool(n, f"/usr/bin/{n}", "1") for n in self.appears))
        return ToolSet(tuple(sorted(found, key=lambda t: t.name)))


def _retries(
    engine: FakeEngine | None, *, read_only: bool = False, left: set[str] | None = None
) -> Retries:
    triage = TriageState(engine=engine, read_only=read_only)
    model = RecordModel()
    return Retries(triage, Link(model, triage, sweeping=True), lambda: left or set())


def _keys(n: int) -> list[Key]:
    return [(ROOT, f"f{i}.pdf") for i in range(n)]


def test_nothing_to_retry_and_nowhere_to_write_are_said_not_done() -> None:
    ok = _retries(FakeEngine())
    assert ok.refusal([]) == Say("nothing to retry", severity="warning")
    nothing = ok.refusal([], unlock=True)
    assert nothing is not None and "no encrypted file" in nothing.message
    assert ok.refusal(_keys(1)) is None
    for refused in (_retries(None), _retries(FakeEngine(), read_only=True)):
        say = refused.refusal(_keys(1))
        assert say is not None and say.severity == "warning" and "cannot retry" in say.message
        assert refused.start_check() is not None and not refused.triage.checking_tools


@given(st.integers(0, 3 * CONFIRM_ABOVE))
def test_only_a_retry_above_the_threshold_asks_first(n: int) -> None:
    question = Retries.question(_keys(n), "errors")
    assert (question is None) == (n <= CONFIRM_ABOVE)
    if question is not None:
        assert question.startswith(f"Retry {n:,} records (errors)?")


def test_a_retry_is_in_flight_from_its_start_to_its_answer() -> None:
    engine = FakeEngine()
    r = _retries(engine)
    r.triage.marks.update(_keys(3))
    keys = _keys(2)
    assert r.begin(keys, "2 marked", unmark=True) == Say("retrying 2 marked…", "retry")
    assert r.triage.retrying == set(keys) and not r.triage.marks
    done = r.run(keys, "2 marked", unlock=False)
    assert done.result is not None and engine.retried == [(keys, r.triage.passwords)]
    said = r.finished(done)
    assert said.title == "retried 2 marked" and not r.triage.retrying


def test_a_failed_retry_says_why_and_is_no_longer_in_flight() -> None:
    r = _retries(FakeEngine(fail=True))
    keys = _keys(1)
    r.begin(keys, "one…", unmark=False)
    done = r.run(keys, "one…", unlock=True)
    assert done == RetryDone(keys, "one…", None, "RuntimeError: disk on fire", True)
    assert r.finished(done) == Say("RuntimeError: disk on fire", "retry failed", "error")
    assert not r.triage.retrying


@pytest.mark.parametrize(
    ("engine", "left", "said"),
    [
        (FakeEngine(appears=("tesseract",)), set(), None),
        (FakeEngine(), set(), Say("no new tool on PATH", "tools")),
        (FakeEngine(), {"wpd2text", "antiword"}, "left out on purpose: antiword, wpd2text"),
        (
            FakeEngine(fail=True),
            set(),
            Say("RuntimeError: PATH on fire", "tools check failed", "error"),
        ),
    ],
)
def test_a_tools_recheck_says_what_appeared_or_why_not(
    engine: FakeEngine, left: set[str], said: Say | str | None
) -> None:
    r = _retries(engine, left=left)
    assert r.start_check() is None and r.triage.checking_tools
    check = r.check()
    assert check.appeared == list(engine.appears)
    answer = r.checked(check)
    assert not r.triage.checking_tools
    if isinstance(said, str):
        assert answer is not None and answer.message.endswith(said)
    else:
        assert answer == said
    assert r.checked(ToolsCheck(["x"])) is None
