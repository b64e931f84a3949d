"""One read of a file as a read worker makes it, and stand-in tools, for the reader tests.

``read_file`` runs :func:`engine.extract.read_one` on a file (detection, the registry's reader,
the quality verdict, the text written to a folder beside it) and returns the outcome with
the text; ``stand_in`` writes an executable shell script that plays a tool.
"""

from __future__ import annotations

from pathlib import Path

from engine.extract import Outcome, ReadTask, read_one
from engine.limits import DEFAULT_LIMITS, Limits
from engine.tools import Tool, ToolSet


def read_file(
    path: Path, tools: ToolSet | None = None, limits: Limits = DEFAULT_LIMITS
) -> tuple[Outcome, str]:
    """The outcome of reading ``path`` and its text ("" without one); the text file goes to
    an ``out`` folder beside it."""
    out = path.parent / "out"
    out.mkdir(exist_ok=True)
    task = ReadTask(str(path), "0" * 64, limits, tools or ToolSet.empty(), str(out))
    outcome = read_one(task)
    text = Path(outcome.text_file).read_text(encoding="utf-8") if outcome.text_file else ""
    return outcome, text


def read_bytes(
    folder: Path,
    name: str,
    data: bytes,
    tools: ToolSet | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[Outcome, str]:
    """:func:`read_file` of ``data`` written to ``folder / name``."""
    path = folder / name
    path.write_bytes(data)
    return read_file(path, tools, limits)


def stand_in(folder: Path, name: str, script: str, version: str = "1.0") -> Tool:
    """A tool called ``name`` (in ``folder/bin``) that runs ``script`` with sh."""
    exe = folder / "bin" / name
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)
    return Tool(name, str(exe), version)
