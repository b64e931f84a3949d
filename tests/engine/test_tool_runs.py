"""How a reader runs an external tool: in a worker whose guard kills its process group when it
dies (the tool then needs nothing of its own, and subprocess may spawn it), else with the
parent-death hook in the child; either way the tool dies with its worker, and a tool that
cannot start is said the same way."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import engine.readers.base as base
from engine.errors import ToolFailed
from engine.limits import Limits
from engine.readers.base import ReadContext, die_with_parent, tool_argv
from engine.tools import Tool, ToolSet
from tests.waiting import alive, until

WAYS = ["guard", "hook"]


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test both ways: with a guard (as a worker has; a stand-in here, never started in
    the test's own process) and without one (the preexec hook)."""
    guarded = [(None, -1)] if request.param == "guard" else []
    monkeypatch.setattr(base, "_guard", guarded)
    return str(request.param)


def _ctx(name: str, exe: str) -> ReadContext:
    return ReadContext("x", Limits(timeout_s=30), ToolSet((Tool(name, exe, "1"),)))


def test_the_command_line_each_way(way: str) -> None:
    argv, preexec = tool_argv("/usr/bin/pdftotext", ["-layout", "a.pdf", "-"])
    assert argv == ["/usr/bin/pdftotext", "-layout", "a.pdf", "-"]
    if way == "guard":
        assert preexec is None  # nothing runs between fork and exec: subprocess may spawn
    else:
        assert preexec is die_with_parent


def test_output_exit_codes_and_a_tool_that_cannot_start(way: str, tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text(
        '#!/bin/sh\nprintf "%s|" "$@"\n'
        '[ "$1" = fail ] && { echo "bad input" >&2; exit 3; }\nexit 0\n'
    )
    tool.chmod(0o755)
    assert _ctx("t", str(tool)).run_tool("t", ["a b", "--", "-x"]) == b"a b|--|-x|"
    with pytest.raises(ToolFailed, match=r"^t exited 3: bad input$"):
        _ctx("t", str(tool)).run_tool("t", ["fail"])
    tool.unlink()  # gone since the tools were looked up
    with pytest.raises(ToolFailed, match=r"^t could not start: No such file or directory"):
        _ctx("t", str(tool)).run_tool("t", [])
    tool.write_text("#!/bin/sh\nexit 0\n")  # there, but not executable
    with pytest.raises(ToolFailed, match=r"^t could not start: Permission denied"):
        _ctx("t", str(tool)).run_tool("t", [])


STAND_IN = """
import os, sys
import engine.readers.base as base
from engine.limits import Limits
from engine.tools import Tool, ToolSet
os.setpgid(0, 0)  # a worker leads its own group
if sys.argv[1] == "guard":
    assert base.guard_group()
else:
    assert not base._guard
print(os.getpid(), flush=True)
tools = ToolSet((Tool("t", sys.argv[2], "1"),))
ctx = base.ReadContext("x", Limits(timeout_s=600, tool_timeout_s=600), tools)
ctx.run_tool("t", [sys.argv[3]])
"""
"""A stand-in worker: leads its group, starts its guard (or not) and runs a tool."""


def _children(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return [int(p) for p in text.split()]
    return []


def test_a_tool_dies_with_the_process_that_ran_it(way: str, tmp_path: Path) -> None:
    """A stand-in worker runs a tool that would sleep five minutes, then is SIGKILLed: no code
    of its own can run, and the tool still goes (with its guard, too)."""
    pidfile = tmp_path / "tool.pid"
    tool = tmp_path / "tool"
    tool.write_text('#!/bin/sh\necho $$ > "$1"\nexec sleep 300\n')
    tool.chmod(0o755)
    worker = subprocess.Popen(
        [sys.executable, "-c", STAND_IN, way, str(tool), str(pidfile)], stdout=subprocess.PIPE
    )
    group = worker.pid
    try:
        until(lambda: pidfile.exists() and pidfile.read_text().strip() != "", "the tool")
        tool_pid = int(pidfile.read_text())
        started = [p for p in _children(worker.pid) if p != tool_pid]
        assert len(started) == (1 if way == "guard" else 0)  # the guard, beside the tool
        assert alive(tool_pid)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(30)
        until(lambda: not alive(tool_pid), "the tool to die with its worker")
        until(lambda: not any(alive(p) for p in started), "the guard to go with them")
    finally:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
        if worker.stdout is not None:
            worker.stdout.close()


def test_a_guard_goes_with_its_worker_when_no_tool_runs(tmp_path: Path) -> None:
    """A worker that ends with no tool running (recycled, or told to stop) leaves no guard."""
    script = (
        "import os\nimport engine.readers.base as base\nos.setpgid(0, 0)\n"
        "assert base.guard_group()\nassert base.guard_group()  # one guard a process\n"
        "print(base._guard[0][0].pid, flush=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    guard = int(out.stdout)
    until(lambda: not alive(guard), "the guard to go once its worker has exited")


def test_without_a_shell_for_the_guard_tools_get_the_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No ``/bin/sh`` to run the guard: it is said, and tools set their own signal instead."""
    monkeypatch.setattr(base, "_guard", [])
    monkeypatch.setattr(base, "GUARD_SHELL", "/nonexistent/sh")
    assert base.guard_group() is False
    assert tool_argv("/bin/echo", ["x"]) == (["/bin/echo", "x"], die_with_parent)


def test_the_exit_is_awaited_within_the_bound(tmp_path: Path) -> None:
    """Output closed before the exit: the exit code is still awaited, and a tool that never
    exits after closing its output is killed at the bound, not waited on forever."""
    late = tmp_path / "late"
    late.write_text("#!/bin/sh\necho out\nexec >&- 2>&-\nsleep 0.3\nexit 4\n")
    late.chmod(0o755)
    done = base.run_bounded([str(late)], None, 30.0, None)
    assert (done.returncode, done.stdout) == (4, b"out\n")
    stuck = tmp_path / "stuck"
    pidfile = tmp_path / "stuck.pid"
    stuck.write_text(f'#!/bin/sh\necho $$ > "{pidfile}"\nexec >&- 2>&-\nexec sleep 300\n')
    stuck.chmod(0o755)
    with pytest.raises(subprocess.TimeoutExpired):
        base.run_bounded([str(stuck)], b"ignored input", 1.0, None)
    until(lambda: not alive(int(pidfile.read_text())), "the stuck tool to be killed")


@pytest.mark.parametrize("holds_output", [True, False], ids=["holds-output", "detached"])
def test_a_tool_out_of_time_goes_with_what_it_started(
    way: str, tmp_path: Path, holds_output: bool
) -> None:
    """A tool that is a script (a wrapper, a shell) and runs out of time: what it started goes
    with it. A child holding the tool's output kept the read waiting for it (for as long as
    it ran, past the tool's bound: here five minutes, past the suite's own timeout); one that
    let go of it was left running."""
    pidfile = tmp_path / "child.pid"
    tool = tmp_path / "wrapper"
    redirect = "" if holds_output else " >/dev/null 2>&1"
    tool.write_text(f'#!/bin/sh\nsleep 300{redirect} &\necho $! > "{pidfile}"\nwait\n')
    tool.chmod(0o755)
    ctx = ReadContext(
        "x", Limits(timeout_s=600, tool_timeout_s=1), ToolSet((Tool("w", str(tool), "1"),))
    )
    with pytest.raises(ToolFailed, match="timed out"):
        ctx.run_tool("w", [])
    child = int(pidfile.read_text())
    until(lambda: not alive(child), "the tool's child to be killed with it")


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd on this platform")
def test_the_exit_is_awaited_on_a_pidfd_not_in_sleeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool that closes its output before it exits: its exit is awaited without the
    1, 2, 4... ms sleeps of subprocess's own timed wait (the worker would idle in them)."""
    late = tmp_path / "late"
    late.write_text("#!/bin/sh\necho out\nexec >&- 2>&-\nsleep 0.2\nexit 3\n")
    late.chmod(0o755)
    slept: list[float] = []
    monkeypatch.setattr(subprocess.time, "sleep", slept.append)  # type: ignore[attr-defined]
    done = base.run_bounded([str(late)], None, 30.0, None)
    assert (done.returncode, done.stdout, slept) == (3, b"out\n", [])
