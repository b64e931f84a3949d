"""Retries, password unlocks and tools re-checks: what the dashboard decides about them.

They outlive any screen (a retry started on the errors screen answers wherever the operator
is), so the app runs them; what they mean is decided here, without Textual. The app asks,
shows what it is told (a :class:`~tui.link.Say`, a question, a prompt) and runs the two
engine calls in its thread workers::

    retry(keys)   refusal() -> [question()] -> begin() -> run() in a thread -> finished()
    unlock(keys)  refusal(unlock=True) -> prompt() -> passwords kept -> retry(keys)
    check tools   start_check() -> check() in a thread -> checked()

Nothing is written when the dashboard may not write (read-only, no session): the refusal
says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine.records import Key
from tui.link import Link, Say, verdict_of
from tui.state import TriageState
from tui.words import count

if TYPE_CHECKING:  # the sweeper's module loads with the session, not with the dashboard
    from engine.sweep import SweepResult

CONFIRM_ABOVE = 20
"""A retry of more records than this asks first."""


@dataclass(frozen=True, slots=True)
class RetryDone:
    """A retry's answer from the engine (its records arrived before it, as engine events)."""

    keys: list[Key]
    """The records retried."""
    label: str
    """What was retried, in words."""
    result: SweepResult | None
    """What the engine did; None when it failed."""
    error: str = ""
    """Why it failed, or empty."""
    unlock: bool = False
    """The retry followed a new password (the answer counts the files it opened)."""


@dataclass(frozen=True, slots=True)
class ToolsCheck:
    """A tools re-check's answer from the engine."""

    appeared: list[str]
    """Tools found that were not there before, sorted."""
    error: str = ""
    """Why the check failed, or empty."""


class Retries:
    """The retries and tools re-checks of one dashboard, over its triage state and link."""

    def __init__(self, triage: TriageState, link: Link, left_out: Callable[[], set[str]]) -> None:
        self.triage = triage
        self.link = link
        self.left_out = left_out
        """The tools this run was told not to use (what "no new tool" mentions)."""
        self._was: dict[Key, tuple[object, ...] | None] = {}
        """What the records retried said when their retry began (to tell what changed)."""

    def refusal(self, keys: list[Key], *, unlock: bool = False) -> Say | None:
        """Why a retry (``unlock``: a password for ``keys``) cannot start, or None."""
        if not keys:
            if unlock:
                return Say("no encrypted file here to give a password for", severity="warning")
            return Say("nothing to retry", severity="warning")
        return self.may_write("retry")

    def may_write(self, what: str) -> Say | None:
        """None when the dashboard may write; else why not, ``what`` being what was asked."""
        if self.triage.writable:
            return None
        return Say(self.triage.why_not_writable(what), severity="warning")

    @staticmethod
    def question(keys: list[Key], label: str) -> str | None:
        """What to ask before retrying ``keys`` (above :data:`CONFIRM_ABOVE`), or None."""
        if len(keys) <= CONFIRM_ABOVE:
            return None
        return f"Retry {count(len(keys), 'record')} ({label})? Each is read again."

    def prompt(self, keys: list[Key], label: str) -> tuple[str, int]:
        """What the password prompt names, and how many passwords the session holds."""
        return f"{count(len(keys), 'encrypted file')} ({label})", len(self.triage.passwords)

    def begin(self, keys: list[Key], label: str, *, unmark: bool) -> Say:
        """A retry of ``keys`` starts (``unmark``: the marks are cleared): what to say."""
        if unmark:
            self.triage.marks.clear()
        self.triage.retrying.update(keys)
        self._was.update((key, self._verdict(key)) for key in keys)
        return Say(f"retrying {label}" + ("" if label.endswith("…") else "…"), title="retry")

    def run(self, keys: list[Key], label: str, unlock: bool) -> RetryDone:
        """Retry ``keys`` through the engine (blocks: a thread's); every retry tries the
        session's passwords, so encrypted files need no second password."""
        engine = self.triage.engine
        assert engine is not None
        try:
            result = engine.retry(keys, self.triage.passwords)
        except Exception as exc:  # the engine failed: say so, keep the dashboard
            return RetryDone(keys, label, None, f"{type(exc).__name__}: {exc}", unlock)
        return RetryDone(keys, label, result, "", unlock)

    def finished(self, done: RetryDone) -> Say:
        """A retry answered: what to say (the verdicts its records have now)."""
        self.triage.retrying.difference_update(done.keys)
        was = [self._was.pop(key, None) for key in done.keys]
        if done.result is None:
            return Say(done.error, "retry failed", "error")
        say = self.link.retried(done.keys, done.label, done.result.vanished, done.unlock)
        if any(before != self._verdict(key) for key, before in zip(done.keys, was, strict=True)):
            # what each file was and is now: offered, never opened unasked
            say = replace(say, message=f"{say.message} · D: what changed")
        return say

    def _verdict(self, key: Key) -> tuple[object, ...] | None:
        rid = self.link.model.ids.get(key)
        record = self.link.model.record(rid) if rid is not None else None
        return verdict_of(record) if record is not None else None

    def start_check(self) -> Say | None:
        """A tools re-check may start (None: it did) or why not."""
        refused = self.may_write("check the tools again (it retries files)")
        if refused is None:
            self.triage.checking_tools = True
        return refused

    def check(self) -> ToolsCheck:
        """Look the tools up again through the engine (blocks: a thread's)."""
        engine = self.triage.engine
        assert engine is not None
        before = set(engine.tools.names)
        try:
            after = set(engine.recheck_tools().names)
        except Exception as exc:  # the engine failed: say so, keep the dashboard
            return ToolsCheck([], f"{type(exc).__name__}: {exc}")
        return ToolsCheck(sorted(after - before))

    def checked(self, check: ToolsCheck) -> Say | None:
        """A tools re-check answered: what to say, if anything (a new tool says nothing
        here: the records it unlocks come as engine events)."""
        self.triage.checking_tools = False
        if check.error:
            return Say(check.error, "tools check failed", "error")
        if check.appeared:
            return None
        out = sorted(self.left_out())
        left = f"; left out on purpose: {', '.join(out)}" if out else ""
        return Say(f"no new tool on PATH{left}", "tools")
