"""``quarry``: the command line.

::

    quarry [DIR]                  sweep, watch and open the dashboard (DIR: bundled fixtures/)
    quarry sweep DIR... [--json]  sweep once and print a summary
    quarry watch DIR...           sweep, then keep the store current; log lines
    quarry ui --store PATH        open the dashboard on an existing store, following it
                                  (--compare OTHER: on the compare screen, OTHER before)
    quarry retry PATH...          read files again whatever their verdict
    quarry show PATH [--json]     print one file's record and its text
    quarry tools [DIR]            external tools found and missing, and what each unlocks
    quarry export [DIR] [-o FILE] the store's records as JSONL, CSV or Parquet
                                  (--where QUERY: those the dashboard's query line keeps;
                                  --sort COLUMN [--desc] [--limit N]: in its order)
    quarry grep PATTERN [DIR]     where PATTERN occurs in the texts (0 found, 1 none, 2 trouble)
    quarry diff A B [--json]      two stores compared file by file (exit 4: something got worse)
    quarry diff STORE --since T   the store now against itself at T, or as sweep T left it

Exit codes: 0 clean; 2 the store has error records (retry: a file it retried); 1 bad usage,
no such folder, or a locked store (one line on stderr, no traceback); diff: 4 something got
worse.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.commands import (
    COMMANDS,
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_MACHINE,
    EXIT_OK,
    EXIT_USAGE,
    Command,
    default_dirs,
    dump_json,
    options_from,
    watch_options_from,
)  # fmt: skip
from engine.errors import MachineFailure, QuarryError, StoreLocked, UsageError
from engine.flags import SWEEP_VERB, SWEEPING, Flag
from engine.limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES
from engine.names import shown
from engine.tools import KNOWN_TOOLS
from engine.toolsview import tool_rows

VERBS = ("sweep", "watch", "ui", "retry", "show", "tools", "export", "grep", "diff", "open")


class _Parser(argparse.ArgumentParser):
    """argparse that exits 1 (not 2: 2 means 'error records') with a one-line usage error,
    and takes no flag by a prefix of its name: ``quarry export --out S`` was ``--output S``
    (the export written to a file named as the store the user meant), and ``--for`` was
    ``--forget-missing``, which drops records."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"quarry: error: {shown(message)}\n")
        raise SystemExit(EXIT_USAGE)


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        n = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except (ValueError, OverflowError):
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 512M or 1G)")
    return n


_DEFAULT_EXCLUDES_HELP = (
    "give a record to what is left out by default, counted in the summary: editor, "
    "office and OS droppings (*~ but not ~ itself, .#*, #*#, *.swp, *.swx, *.swo, ~$*, "
    ".~lock.*#, *.tmp, *.part, *.crdownload, .goutputstream-*, *___jb_tmp___, "
    "*___jb_old___, 4913, .DS_Store, ._*, Thumbs.db, desktop.ini) and the folders .git, "
    ".hg, .svn, __MACOSX, .Trashes, .Spotlight-V100, @eaDir, .stversions"
)
_ARGPARSE: dict[str, dict[str, Any]] = {
    "--out": dict(type=Path, help="store folder (default DIR/.quarry)"),
    "--exclude": dict(
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out paths matching GLOB (gitignore syntax; repeatable)",
    ),
    "--max-bytes": dict(
        type=_size,
        default=DEFAULT_MAX_BYTES,
        metavar="SIZE",
        help="skip files larger than SIZE (default 512M)",
    ),
    "--no-default-excludes": dict(help=_DEFAULT_EXCLUDES_HELP),
    "--rehash": dict(help="hash every file, trust no stat cache"),
    "--forget-missing": dict(
        help="drop the records of a folder that is gone or empty (else they are kept)"
    ),
    "--no-external": dict(help="built-in readers only"),
    "--without": dict(
        action="append",
        default=[],
        metavar="TOOL",
        choices=sorted(KNOWN_TOOLS),
        help="act as if TOOL were not installed",
    ),
    "--timeout": dict(
        type=float,
        default=DEFAULT_LIMITS.timeout_s,
        metavar="S",
        help="wall time per read in seconds (default 60)",
    ),
    "--memory": dict(
        type=_size,
        default=DEFAULT_LIMITS.memory_bytes,
        metavar="SIZE",
        help="address space per worker (default 1G)",
    ),
    "--workers": dict(type=int, default=0, help="worker processes (default: cores)"),
    "--executor": dict(
        default="local",
        metavar="WHERE",
        help="where reads run: local (default), dask-local[:N] or dask://HOST:PORT",
    ),
    "--reader": dict(
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="also read with the READERS tuple MODULE:ATTR defines (a plug-in; repeatable)",
    ),
    "--no-text-index": dict(
        help="keep no full-text index of the texts (quarry grep then reads every text)"
    ),
    "--json": dict(help="print the summary as JSON"),
    "--verify": dict(
        help="hash every file, read every text again and repair texts that do not match"
    ),
    "--quiet": dict(help="no progress or log lines"),
}
"""argparse's details of each flag of :mod:`engine.flags` (which says which flags there are,
whether each takes a value, and what each does to the walk)."""


def _add_flags(p: argparse.ArgumentParser, flags: tuple[Flag, ...]) -> None:
    for flag in flags:
        details = _ARGPARSE[flag.names[0]]
        if not flag.valued:
            details = {"action": "store_true", **details}
        p.add_argument(*flag.names, **details)


def _sweep_flags(p: argparse.ArgumentParser) -> None:
    _add_flags(p, SWEEPING)


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
    _add_flags(p, SWEEP_VERB)
    _sweep_flags(p)
    p = sub.add_parser("watch", help="sweep, then keep the store current")
    p.add_argument("dirs", nargs="+", type=Path)
    p.add_argument(
        "--quiet", "-q", action="store_true", help="only warnings and errors: no line a file"
    )
    _sweep_flags(p)
    _watch_flags(p)
    p = sub.add_parser("ui", help="open the dashboard on an existing store")
    p.add_argument("dir", nargs="?", type=Path, help="a swept folder or a store folder")
    p.add_argument(
        "--store", type=Path, help="the store folder (.quarry; default: found above here)"
    )
    p.add_argument("--read-only", action="store_true", help="browse only")
    p.add_argument(
        "--compare",
        type=Path,
        metavar="OTHER",
        help="open on the compare screen: store OTHER (before) against --store (after)",
    )
    p.add_argument(
        "--since",
        metavar="TIME|SWEEP",
        help="open on the compare screen: the store against itself as it was at TIME "
        "(30m, 2h, 1d, 1w or an ISO time) or as SWEEP left it (last, -2, #N); from the "
        "history its index keeps",
    )
    p = sub.add_parser("retry", help="read files again")
    p.add_argument("paths", nargs="+", type=Path)
    p.add_argument("--store", type=Path, help="store folder (default: found above the files)")
    # Never a password as an argument's value: it would be in the shell's history and in ps.
    p.add_argument(
        "--password",
        action="store_true",
        help="ask for a password for encrypted files (typed, not shown; a terminal is needed)",
    )
    p.add_argument(
        "--password-file",
        type=Path,
        metavar="FILE",
        help="passwords for encrypted files, one a line, tried in order",
    )
    _sweep_flags(p)
    p = sub.add_parser("show", help="print a file's record and text")
    p.add_argument("path", type=Path)
    p.add_argument("--store", type=Path)
    p.add_argument("--no-text", action="store_true", help="the record only")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON line: the record as extract.jsonl holds it, plus its text",
    )
    p = sub.add_parser("tools", help="external tools found and missing")
    p.add_argument("dir", nargs="?", type=Path, help="a swept folder, to count files unlocked")
    p.add_argument("--store", type=Path)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("export", help="write the store's records as JSONL, CSV or Parquet")
    p.add_argument("dir", nargs="?", type=Path, help="a swept folder or a store folder")
    p.add_argument("--store", type=Path, help="the store folder (default: found above here)")
    p.add_argument(
        "--format",
        metavar="FORMAT",
        help="jsonl, csv or parquet (default: by -o's suffix, else jsonl)",
    )
    p.add_argument(
        "-o", "--output", metavar="FILE", help="the file to write (default or '-': stdout)"
    )
    p.add_argument(
        "--where",
        metavar="QUERY",
        help="only the records the dashboard's query line QUERY keeps"
        " ('status:error', 'size:>10M !mime:pdf', 'text:\"invoice\"')",
    )
    p.add_argument(
        "--sort",
        metavar="COLUMN",
        help="in the order of a column of the records table: path (the default), status,"
        " quality, reason, mime, extractor, chars, pages, size or ms",
    )
    p.add_argument("--desc", action="store_true", help="the sort descending")
    p.add_argument("--limit", metavar="N", type=int, help="at most N records")
    p = sub.add_parser("grep", help="where a pattern occurs in the extracted texts")
    p.add_argument("pattern", help="words (any white space between them), or -E a regex")
    p.add_argument("dir", nargs="?", type=Path, help="a swept folder (or one in it), or a store")
    p.add_argument("--store", type=Path, help="the store folder (default: found above here)")
    p.add_argument("-E", "--regex", action="store_true", help="PATTERN is a regular expression")
    p.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
    p.add_argument("--json", action="store_true", help="one JSON object per match")
    p.add_argument(
        "--no-text-index",
        action="store_true",
        help="read every text; do not build the text index",
    )
    p = sub.add_parser("diff", help="compare two stores file by file (exit 4: something got worse)")
    p.add_argument("before", type=Path, help="the first store (or a swept folder)")
    p.add_argument(
        "after", nargs="?", type=Path, help="the second store (or a swept folder); not with --since"
    )
    p.add_argument(
        "--since",
        metavar="TIME|SWEEP",
        help="compare the store now with itself at TIME (30m, 1h, 2d, 1w ago or an ISO time) "
        "or as SWEEP left it (last or -1, -2 the sweep before, #N)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object, every changed file")
    p.add_argument(
        "--limit", type=int, default=10, metavar="N", help="files listed per group (0: all)"
    )
    return parser


def main(argv: Sequence[str] | None = None, ui: Mapping[str, Command] | None = None) -> int:
    """Entry point of ``python -m engine``, and (with ``ui``) of the ``quarry`` script.

    The engine never imports the dashboard: ``tui.cli`` passes its two commands in ``ui``.
    Without them, ``open`` and ``ui`` say that the dashboard comes with ``quarry``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in VERBS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "open")
    if any(a.startswith("--password=") for a in argv[: argv.index("--") if "--" in argv else None]):
        # argparse would say "ignored explicit argument": say why no value is taken instead.
        return _fail(
            "--password takes no value (a password on the command line shows in ps and in "
            "the shell's history): give --password alone and type it when asked, or use "
            "--password-file FILE"
        )
    try:
        args = _parse(build_parser(), argv)
    except SystemExit as exc:  # grep's trouble is 2, as grep's own
        if argv[0] == "grep" and exc.code == EXIT_USAGE:
            raise SystemExit(2) from None
        raise
    table: dict[str, Command] = {**COMMANDS, **(ui or {})}
    try:
        command = table.get(args.command)
        if command is None:
            raise UsageError("the dashboard runs from the 'quarry' command (python -m tui)")
        return int(command(args))
    except MachineFailure as exc:  # disk full, workers that cannot start: not the user's
        sys.stderr.write(f"quarry: {shown(str(exc))}\n")
        return EXIT_MACHINE
    except StoreLocked as exc:
        return _fail(_locked(exc, args.command))
    except QuarryError as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # the reader went (``| head``): its choice, nothing to say
        drop_stdout()
        return EXIT_USAGE
    except OSError as exc:  # the machine said no (permissions, a full disk): still one line
        where = f": {exc.filename}" if isinstance(exc.filename, str) else ""
        return _fail(f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        sys.stderr.write("quarry: interrupted\n")
        return EXIT_INTERRUPTED


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; what the verb does not know is refused by the verb's own parser, with
    its usage (not the top level's) and, for the store's flag of another verb, the right one."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        verb = _verb_parser(parser, args.command)
        message = f"unrecognized arguments: {' '.join(extra)}"
        flags = {a.split("=", 1)[0] for a in extra}
        known = verb._option_string_actions  # (argparse's table of the verb's flags)
        if "--out" in flags and "--store" in known:
            message += " (the store is --store here; --out is sweep's, watch's and open's)"
        elif "--store" in flags and "--out" in known:
            message += " (the store is --out here)"
        verb.error(message)
    return args


def _verb_parser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser:
    """The subcommand ``verb``'s parser (``parser`` itself if it has none)."""
    for action in parser._actions:  # (argparse keeps its subparsers there)
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(verb)
            if isinstance(found, argparse.ArgumentParser):
                return found
    return parser


def drop_stdout() -> None:
    """Point standard output at ``/dev/null``: what is still buffered for a reader that went
    is dropped instead of failing again when the process ends (Python's own advice on
    SIGPIPE; the exit status stays 1, as Python's own on a broken pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # not a file (a test's capture): nothing is buffered for a pipe


def _locked(exc: StoreLocked, verb: str) -> str:
    """What a verb that writes says of a store another quarry writes: what the user can do
    (it said only that the store was in use)."""
    if exc.store is None or verb not in ("sweep", "watch", "retry"):
        return str(exc)
    follow = f"'quarry ui {shlex.quote(exc.store)}' shows it as that process writes it"
    return f"{exc}: {follow}; {verb} once it stops"


def _fail(message: str) -> int:
    """One line on stderr (whatever a name in it held) and exit 1."""
    sys.stderr.write(f"quarry: {shown(message)}\n")
    return EXIT_USAGE


__all__ = [
    "EXIT_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "default_dirs",
    "drop_stdout",
    "dump_json",
    "main",
    "options_from",
    "tool_rows",
    "watch_options_from",
]
