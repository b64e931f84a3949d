"""What ``quarry tools`` prints: one row per known external tool, as a table or, on a narrow
terminal, as a list.

A table of six columns cannot be read at 40 columns (each tool's "gives" came out three
letters a line) and, at 80 with a tool missing, it cut the command that installs it in the
middle of the package's name (``poppler-util`` / ``s``). So the install column names the
package alone, never wrapped, and one line under the table gives the command that installs
every missing tool at once (printed for the terminal to wrap, so that it copies whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.tools import KNOWN_TOOLS, ToolSet

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

Row = dict[str, object]
"""A tool's row, as ``quarry tools --json`` prints it."""
LIST_BELOW = 72
"""Terminal width under which the tools are a list, not a table."""
APT = "sudo apt install "
"""How each Debian install hint starts (:mod:`engine.tools`)."""


def tool_rows(
    store_missing: dict[str, int] | None, tools: ToolSet, *, guessed: bool = False
) -> list[Row]:
    """One row per known tool of ``tools`` (those found): found or missing, version, path,
    unlocks, install hints, the files waiting on it and whether that count is ``guessed``
    from detection (no store)."""
    found = {t.name: t for t in tools.found}
    rows: list[Row] = []
    for name, spec in KNOWN_TOOLS.items():
        tool = found.get(name)
        rows.append(
            {
                "tool": name,
                "found": tool is not None,
                "version": tool.version if tool else None,
                "path": tool.path if tool else None,
                "gives": spec.unlocks,
                "install": spec.install,
                # Found or not: records swept before it came (or --without it) still wait
                # for it until a sweep reads them again.
                "files_waiting": (store_missing or {}).get(name, 0),
                "guessed": guessed,
            }
        )
    return rows


def print_tools(console: Console, rows: Sequence[Row], *, counted: bool, guessed: bool) -> None:
    """Print ``rows`` on ``console``: a table, or a list below :data:`LIST_BELOW` columns;
    then the caption, and the one command that installs every missing tool."""
    if console.width < LIST_BELOW:
        console.print(tools_list(rows, counted=counted))
    else:
        console.print(tools_table(rows, counted=counted))
    caption = _caption(rows, counted=counted, guessed=guessed)
    if caption:
        console.print(caption, style="dim")
    packages = missing_packages(rows)
    if packages:
        console.print(
            f"to install the missing tools (Debian): {APT}{' '.join(packages)}", soft_wrap=True
        )


def tools_table(rows: Sequence[Row], *, counted: bool) -> RenderableType:
    """The tools as a table: name and state whole at any width, what each gives wrapped."""
    from rich.table import Table

    table = Table(title="external tools")
    table.add_column("tool", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("version", no_wrap=True, max_width=12)
    table.add_column("gives", ratio=1)
    table.add_column("waiting", justify="right", no_wrap=True)
    missing = any(not r["found"] for r in rows)
    if missing:  # (the column only when a tool is missing)
        table.add_column("Debian package", no_wrap=True)
    for r in rows:
        cells = [str(r["tool"]), _status(r), str(r["version"] or "-"), str(r["gives"])]
        cells.append(str(r["files_waiting"]) if counted else "-")
        table.add_row(*cells, *([_package(r) if not r["found"] else ""] if missing else []))
    return table


def tools_list(rows: Sequence[Row], *, counted: bool) -> RenderableType:
    """The tools as a list, one block each: for a terminal too narrow for the table."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    blocks: list[RenderableType] = [Text("external tools", style="bold")]
    for r in rows:
        head = Text(str(r["tool"]), style="bold")
        head.append(" ").append_text(Text.from_markup(_status(r)))
        if r["version"]:
            head.append(f" {r['version']}")
        if counted:
            head.append(f", {r['files_waiting']} waiting")
        more = [str(r["gives"])]
        if not r["found"] and _package(r):
            more.append(f"Debian package: {_package(r)}")
        blocks += [head, Padding(Text("\n".join(more)), (0, 0, 0, 2), expand=False)]
    return Group(*blocks)


def missing_packages(rows: Sequence[Row]) -> list[str]:
    """The Debian packages of the missing tools, each once, in the rows' order."""
    packages: list[str] = []
    for r in rows:
        package = "" if r["found"] else _package(r)
        if package and package not in packages:
            packages.append(package)
    return packages


def _status(row: Row) -> str:
    return "[green]found[/]" if row["found"] else "[red]missing[/]"


def _package(row: Row) -> str:
    hints = row["install"]
    hint = hints.get("debian", "") if isinstance(hints, dict) else ""
    return hint.removeprefix(APT) if isinstance(hint, str) and hint.startswith(APT) else ""


def _caption(rows: Sequence[Row], *, counted: bool, guessed: bool) -> str:
    if guessed:
        return (
            "waiting: guessed from detection alone (this folder was never swept): the files "
            "of a kind each tool reads, none of them read; a PDF may need no tool, or OCR, and "
            "archives are not looked into. A sweep counts the files that really wait"
        )
    ready = [f"{r['tool']} {r['files_waiting']}" for r in rows if r["found"] and r["files_waiting"]]
    if counted and ready:
        return (
            f"files waiting on a tool that is found ({', '.join(ready)}): swept before it came "
            "or --without it; the next sweep reads them"
        )
    return ""


__all__ = [
    "LIST_BELOW",
    "Row",
    "missing_packages",
    "print_tools",
    "tool_rows",
    "tools_list",
    "tools_table",
]
