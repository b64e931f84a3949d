"""Verdicts say what happened (issue 10): cap-line-only texts, the read's own timeout in a
tool, and records this engine cannot keep."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest

from engine.errors import ReadTimeout, ToolFailed
from engine.limits import Limits
from engine.readers.base import ReadContext
from engine.records import Reason, Record, Status, Why
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions
from engine.tools import Tool, ToolSet
from tests.faultreader import fixture

pytestmark = pytest.mark.timeout(90)


def _sweep(root: Path, **kw: object) -> dict[str, Record]:
    opts = SweepOptions(out=root.parent / "store", tools=ToolSet.empty(), workers=1, **kw)  # type: ignore[arg-type]
    with Sweeper([root], opts) as s:
        s.run()
        return {k[1]: r for k, r in s.records.items()}


def test_a_text_that_would_be_only_the_cap_line_is_not_ok(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "blank.txt").write_text(" \n\t\n" * 50_000)  # nothing but white space, past the cap
    (root / "words.txt").write_text("word " * 50_000)
    recs = _sweep(root, limits=Limits(max_chars=1000))
    blank, words = recs["blank.txt"], recs["words.txt"]
    assert (blank.status, blank.reason, blank.chars) == (Status.EMPTY, Reason.NO_TEXT, 0)
    assert blank.error == "the reader found no text before it stopped at a cap"
    assert words.status == Status.OK and words.chars > 1000


def _tool(tmp_path: Path) -> ToolSet:
    exe = tmp_path / "bin" / "quarry-fault-tool"
    exe.parent.mkdir()
    # sleep by its full name: the pool's forkserver keeps the PATH of the moment it started,
    # which another test of this process may have narrowed ("exec: sleep: not found", seen)
    exe.write_text(f'#!/bin/sh\necho $$ > "$1"\nexec {shutil.which("sleep")} 300\n')
    exe.chmod(0o755)
    return ToolSet((Tool("quarry-fault-tool", str(exe), "1"),))


def test_a_tool_stopped_by_the_reads_budget_is_a_timeout(
    tmp_path: Path, fault_reader: None
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "slow.bin").write_bytes(fixture("runtool", str(tmp_path / "pid")))
    opts = SweepOptions(
        out=tmp_path / "store",
        tools=_tool(tmp_path),
        workers=1,
        limits=Limits(timeout_s=1.0, tool_timeout_s=300.0),
    )
    with Sweeper([root], opts) as s:
        s.run()
        rec = s.records[(str(root), "slow.bin")]
    assert (rec.status, rec.reason) == (Status.ERROR, Reason.TIMEOUT), rec.error


def test_the_reads_budget_and_the_tools_own_bound_are_told_apart(tmp_path: Path) -> None:
    tools = _tool(tmp_path)
    pid = str(tmp_path / "pid")
    spent = ReadContext("x", Limits(timeout_s=5.0), tools, deadline=time.monotonic() - 1)
    with pytest.raises(ReadTimeout, match="were spent before quarry-fault-tool could run"):
        spent.run_tool("quarry-fault-tool", [pid])
    short = ReadContext("x", Limits(timeout_s=0.5), tools, deadline=time.monotonic() + 0.5)
    with pytest.raises(ReadTimeout, match=r"the read's 0\.5 s ran out"):
        short.run_tool("quarry-fault-tool", [pid])
    own = ReadContext("x", Limits(tool_timeout_s=0.5), tools, deadline=time.monotonic() + 60)
    with pytest.raises(ToolFailed, match="timed out after"):
        own.run_tool("quarry-fault-tool", [pid])


def test_a_record_with_a_status_this_engine_does_not_know_is_read_again(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    recs = _sweep(root)
    out = tmp_path / "store"
    line = orjson.loads((out / "extract.jsonl").read_bytes())
    line["status"] = "archived"  # a newer writer's status
    (out / "extract.jsonl").write_bytes(orjson.dumps(line) + b"\n")
    assert Store(out).load_records()[0].status == "archived"
    recs = _sweep(root)
    a = recs["a.txt"]
    assert (a.status, a.why) == (Status.OK, Why.CHANGED)
