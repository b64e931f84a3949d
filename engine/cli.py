"""``quarry``: the command line.

::

    quarry [DIR]                  sweep, watch and open the dashboard (DIR: bundled fixtures/)
    quarry sweep DIR... [--json]  sweep once and print a summary
    quarry watch DIR...           sweep, then keep the store current; log lines
    quarry ui --store PATH        open the dashboard on an existing store, following it
    quarry retry PATH...          read files again whatever their verdict
    quarry show PATH              print one file's record and its text
    quarry tools [DIR]            external tools found and missing, and what each unlocks

Exit codes: 0 clean; 2 the store has error records; 1 bad usage, no such folder, or a locked
store (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import orjson

from engine.errors import MachineFailure, QuarryError, UsageError
from engine.executors import dask_factory, parse_executor
from engine.limits import DEFAULT_LIMITS, Limits
from engine.sweep import DEFAULT_MAX_BYTES, SweepOptions
from engine.tools import KNOWN_TOOLS, discover

COMMANDS = ("sweep", "watch", "ui", "retry", "show", "tools", "open")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXIT_OK, EXIT_USAGE, EXIT_ERRORS, EXIT_MACHINE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class _Parser(argparse.ArgumentParser):
    """argparse that exits 1 (not 2: 2 means 'error records') with a one-line usage error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"quarry: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        if t and t[-1] in units:
            return int(float(t[:-1]) * units[t[-1]])
        return int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 512M or 1G)") from None


def _sweep_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, help="store folder (default DIR/.quarry)")
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out paths matching GLOB (gitignore syntax; repeatable)",
    )
    p.add_argument(
        "--max-bytes",
        type=_size,
        default=DEFAULT_MAX_BYTES,
        metavar="SIZE",
        help="skip files larger than SIZE (default 512M)",
    )
    p.add_argument("--rehash", action="store_true", help="hash every file, trust no stat cache")
    p.add_argument(
        "--forget-missing",
        action="store_true",
        help="drop the records of a folder that is gone or empty (else they are kept)",
    )
    p.add_argument("--no-external", action="store_true", help="built-in readers only")
    p.add_argument(
        "--without",
        action="append",
        default=[],
        metavar="TOOL",
        choices=sorted(KNOWN_TOOLS),
        help="act as if TOOL were not installed",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LIMITS.timeout_s,
        metavar="S",
        help="wall time per read in seconds (default 60)",
    )
    p.add_argument(
        "--memory",
        type=_size,
        default=DEFAULT_LIMITS.memory_bytes,
        metavar="SIZE",
        help="address space per worker (default 1G)",
    )
    p.add_argument("--workers", type=int, default=0, help="worker processes (default: cores)")
    p.add_argument(
        "--executor",
        default="local",
        metavar="WHERE",
        help="where reads run: local (default), dask-local[:N] or dask://HOST:PORT",
    )


def _watch_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--poll", action="store_true", help="use the polling observer")
    p.add_argument(
        "--rescan",
        type=float,
        default=300.0,
        metavar="S",
        help="full rescan every S seconds (default 300)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = _Parser(prog="quarry", description="Turn a folder into text, and watch it live.")
    parser.add_argument("--version", action="version", version="quarry 0.1.0")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p = sub.add_parser("open", help="sweep, watch and open the dashboard (the default)")
    p.add_argument("dirs", nargs="*", type=Path)
    p.add_argument("--read-only", action="store_true", help="browse only: no retries")
    _sweep_flags(p)
    _watch_flags(p)
    p = sub.add_parser("sweep", help="sweep folders once")
    p.add_argument("dirs", nargs="+", type=Path)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--verify",
        action="store_true",
        help="hash every file, read every text again and repair texts that do not match",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress or log lines")
    _sweep_flags(p)
    p = sub.add_parser("watch", help="sweep, then keep the store current")
    p.add_argument("dirs", nargs="+", type=Path)
    _sweep_flags(p)
    _watch_flags(p)
    p = sub.add_parser("ui", help="open the dashboard on an existing store")
    p.add_argument("--store", type=Path, required=True, help="the store folder (.quarry)")
    p.add_argument("--read-only", action="store_true", help="browse only")
    p = sub.add_parser("retry", help="read files again")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--store", type=Path, help="store folder (default: found above the files)")
    _sweep_flags(p)
    p = sub.add_parser("show", help="print a file's record and text")
    p.add_argument("path", type=Path)
    p.add_argument("--store", type=Path)
    p.add_argument("--no-text", action="store_true", help="the record only")
    p = sub.add_parser("tools", help="external tools found and missing")
    p.add_argument("dir", nargs="?", type=Path, help="a swept folder, to count files unlocked")
    p.add_argument("--store", type=Path)
    p.add_argument("--json", action="store_true")
    return parser


def options_from(args: argparse.Namespace) -> SweepOptions:
    """SweepOptions from parsed flags."""
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    limits = Limits(
        timeout_s=args.timeout,
        memory_bytes=args.memory,
        tool_timeout_s=min(DEFAULT_LIMITS.tool_timeout_s, args.timeout),
    )
    spec = parse_executor(args.executor)
    executor = (
        dask_factory(spec, no_external=args.no_external, without=tuple(args.without))
        if spec.is_dask
        else None
    )
    return SweepOptions(
        out=args.out,
        excludes=tuple(args.exclude),
        max_bytes=args.max_bytes,
        rehash=args.rehash,
        verify=getattr(args, "verify", False),
        forget_missing=args.forget_missing,
        no_external=args.no_external,
        without=tuple(args.without),
        limits=limits,
        workers=args.workers,
        executor=executor,
    )


Command = Callable[[argparse.Namespace], int]
UI_COMMANDS = ("open", "ui")


def main(argv: Sequence[str] | None = None, ui: Mapping[str, Command] | None = None) -> int:
    """Entry point of ``python -m engine``, and (with ``ui``) of the ``quarry`` script.

    The engine never imports the dashboard: ``tui.cli`` passes its two commands in ``ui``.
    Without them, ``open`` and ``ui`` say that the dashboard comes with ``quarry``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "open")
    args = build_parser().parse_args(argv)
    from engine import commands

    try:
        if args.command in UI_COMMANDS:
            if not ui:
                raise UsageError("the dashboard runs from the 'quarry' command (python -m tui)")
            return int(ui[args.command](args))
        return int(getattr(commands, f"cmd_{args.command}")(args))
    except MachineFailure as exc:  # disk full, workers that cannot start: not the user's
        sys.stderr.write(f"quarry: {exc}\n")
        return EXIT_MACHINE
    except QuarryError as exc:
        sys.stderr.write(f"quarry: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("quarry: interrupted\n")
        return EXIT_INTERRUPTED


def dump_json(obj: object) -> str:
    """Pretty JSON for --json output."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def default_dirs(dirs: list[Path]) -> list[Path]:
    """The folders to open: those given, or the bundled fixtures."""
    return dirs or [FIXTURES]


def tool_rows(store_missing: dict[str, int] | None) -> list[dict[str, object]]:
    """One row per known tool: found or missing, version, path, unlocks, install hints."""
    found = {t.name: t for t in discover().found}
    rows: list[dict[str, object]] = []
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
                "files_waiting": (store_missing or {}).get(name, 0),
            }
        )
    return rows
