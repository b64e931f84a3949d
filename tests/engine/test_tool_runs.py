"""How a reader runs an external tool: through setpriv where it is (the worker is not forked
whole), else with the parent-death hook in the child; either way the tool dies with its
worker, and a tool that cannot start is said the same way."""

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

WAYS = ["setpriv", "hook"]


@pytest.fixture(params=WAYS)
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test both ways: setpriv (skipped where it is missing) and the preexec hook."""
    found = base.setpriv()
    if request.param == "setpriv" and found is None:
        pytest.skip("setpriv (util-linux 2.33 or later) is not installed here")
    wrapper = found if request.param == "setpriv" else None
    monkeypatch.setattr(base, "setpriv", lambda: wrapper)
    return str(request.param)


def _ctx(name: str, exe: str) -> ReadContext:
    return ReadContext("x", Limits(timeout_s=30), ToolSet((Tool(name, exe, "1"),)))


def test_the_command_line_each_way(way: str) -> None:
    argv, preexec = tool_argv("/usr/bin/pdftotext", ["-layout", "a.pdf", "-"])
    if way == "setpriv":
        assert argv[1:] == [
            "--pdeathsig",
            "KILL",
            "--",
            "/usr/bin/pdftotext",
            "-layout",
            "a.pdf",
            "-",
        ]
        assert preexec is None  # nothing runs between fork and exec: subprocess may spawn
    else:
        assert (
            argv == ["/usr/bin/pdftotext", "-layout", "a.pdf", "-"] and preexec is die_with_parent
        )


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


def test_a_tool_dies_with_the_process_that_ran_it(way: str, tmp_path: Path) -> None:
    """A stand-in worker runs a tool that would sleep five minutes, then is SIGKILLed."""
    pidfile = tmp_path / "tool.pid"
    tool = tmp_path / "tool"
    tool.write_text('#!/bin/sh\necho $$ > "$1"\nexec sleep 300\n')
    tool.chmod(0o755)
    script = (
        "import sys\n"
        "import engine.readers.base as base\n"
        "from engine.limits import Limits\n"
        "from engine.tools import Tool, ToolSet\n"
        f"base.setpriv = lambda: {base.setpriv()!r}\n"
        f"tools = ToolSet((Tool('t', {str(tool)!r}, '1'),))\n"
        "ctx = base.ReadContext('x', Limits(timeout_s=600, tool_timeout_s=600), tools)\n"
        f"ctx.run_tool('t', [{str(pidfile)!r}])\n"
    )
    worker = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        until(lambda: pidfile.exists() and pidfile.read_text().strip() != "", "the tool")
        tool_pid = int(pidfile.read_text())
        assert alive(tool_pid)
        os.kill(worker.pid, signal.SIGKILL)  # no cleanup code of the worker can run
        worker.wait(30)
        until(lambda: not alive(tool_pid), "the tool to die with its worker")
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        if pidfile.exists() and pidfile.read_text().strip():
            with contextlib.suppress(OSError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_a_setpriv_too_old_for_pdeathsig_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """util-linux before 2.33 has setpriv without --pdeathsig: the hook is used instead of
    failing every tool run."""
    old = tmp_path / "bin" / "setpriv"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\necho \"setpriv: unrecognized option '$1'\" >&2\nexit 1\n")
    old.chmod(0o755)
    monkeypatch.setenv("PATH", f"{old.parent}{os.pathsep}{os.environ['PATH']}")
    base.setpriv.cache_clear()
    try:
        assert base.setpriv() is None
        assert tool_argv("/bin/echo", ["x"]) == (["/bin/echo", "x"], die_with_parent)
    finally:
        base.setpriv.cache_clear()


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
