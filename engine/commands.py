"""The ``quarry`` subcommands, one function each, called by :func:`engine.cli.main`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from engine.cli import (
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_MACHINE,
    EXIT_OK,
    EXIT_USAGE,
    dump_json,
    options_from,
    tool_rows,
)  # fmt: skip
from engine.console import SweepReporter, record_line, summary_table
from engine.errors import MachineFailure, UsageError
from engine.quality import summary_line
from engine.records import Record
from engine.store import STORE_DIRNAME, Store
from engine.sweep import Sweeper, SweepResult, stop_on_signals


def cmd_sweep(args: argparse.Namespace) -> int:
    """Sweep once; print a summary table (or JSON); exit 2 when errors remain."""
    options = options_from(args)
    reporter = SweepReporter(quiet=args.quiet or args.json)
    with Sweeper(args.dirs, options, reporter) as sweeper, stop_on_signals(sweeper):
        try:
            result = sweeper.run()
        except OSError as exc:  # the store could not be written: the machine's failure
            raise MachineFailure(
                f"cannot write the store {sweeper.store.out}: {exc.strerror or exc}; "
                "its earlier records are kept"
            ) from exc
    summary = result.summary
    if args.json:
        sys.stdout.write(summary.to_json().decode() + "\n")
    elif not args.quiet:
        Console().print(summary_table(summary, result.extracted))
    return sweep_exit(result)


def sweep_exit(result: SweepResult) -> int:
    """The exit code of a sweep, with its one line on stderr when it is not a clean one."""
    if result.interrupted:
        sys.stderr.write("quarry: interrupted; the store keeps what was read so far\n")
        return EXIT_INTERRUPTED
    if result.machine_failures:
        sys.stderr.write(
            f"quarry: {result.machine_failures} file(s) not read: the machine failed "
            "(see above); their earlier records are kept\n"
        )
        return EXIT_MACHINE
    if result.held_roots:
        sys.stderr.write(
            f"quarry: {', '.join(result.held_roots)}: gone or empty, records kept "
            "(--forget-missing drops them)\n"
        )
        return EXIT_USAGE
    return EXIT_ERRORS if result.errors else EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    """Sweep, then follow the folders until Ctrl-C / SIGTERM."""
    from engine.session import watch_forever
    from engine.watch import WatchOptions

    options = options_from(args)
    watch_options = WatchOptions(poll=args.poll, rescan_s=args.rescan)
    return int(watch_forever(args.dirs, options, watch_options, SweepReporter()))


def cmd_retry(args: argparse.Namespace) -> int:
    """Read the named files again."""
    paths = [p.expanduser().resolve() for p in args.paths]
    store = Store(store_dir(args.store)) if args.store else _find_store(paths[0])
    records = store.load_records()
    keys = [_key_for(p, records) for p in paths]
    roots = sorted({Path(root) for root, _ in keys})
    options = options_from(args)
    if options.out is None:
        from dataclasses import replace

        options = replace(options, out=store.out)
    only: dict[str, list[str]] = {}
    for root, rel in keys:
        only.setdefault(root, []).append(rel)
    with Sweeper(roots, options, SweepReporter()) as sweeper:
        result = sweeper.run(only=only, force=keys, full=False)
        for key in keys:
            rec = sweeper.records.get(key)
            print(record_line(rec) if rec else f"gone {key[1]}: the file no longer exists")
    return EXIT_ERRORS if result.errors else EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """Print one record (and its text)."""
    path = args.path.expanduser().resolve()
    store = Store(store_dir(args.store)) if args.store else _find_store(path)
    records = store.load_records()
    root, rel = _key_for(path, records)
    rec = next(r for r in records if r.key == (root, rel))
    for name, value in rec.to_dict().items():
        print(f"{name:>9}: {value}")
    if rec.quality is not None:  # the verdict in words, as the dashboard's detail pane says it
        print(f"{'':>9}  {summary_line(rec.quality)}")
    if rec.has_text and not args.no_text and rec.sha256:
        print("-" * 40)
        sys.stdout.write(store.read_text(rec.sha256))
    return EXIT_OK


def cmd_tools(args: argparse.Namespace) -> int:
    """List the external tools, found and missing, with what each would unlock."""
    missing: dict[str, int] | None = None
    store_dir = args.store or (args.dir / STORE_DIRNAME if args.dir else None)
    if store_dir is not None:
        summary = Store(store_dir(store_dir)).load_summary()
        missing = summary.tools_missing if summary else None
    rows = tool_rows(missing)
    if args.json:
        print(dump_json(rows))
        return EXIT_OK
    from rich.table import Table

    table = Table(title="external tools")
    for col in ("tool", "status", "version", "gives", "files waiting", "install (Debian)"):
        table.add_column(col)
    for r in rows:
        status = "[green]found[/]" if r["found"] else "[red]missing[/]"
        hint = r["install"]["debian"] if isinstance(r["install"], dict) else ""
        table.add_row(
            str(r["tool"]),
            status,
            str(r["version"] or "-"),
            str(r["gives"]),
            str(r["files_waiting"]) if missing is not None else "-",
            "" if r["found"] else hint,
        )
    Console().print(table)
    return EXIT_OK


def store_dir(path: Path) -> Path:
    """The store folder meant by ``path``: the folder itself or its ``.quarry``."""
    path = path.expanduser().resolve()
    if (path / STORE_DIRNAME).is_dir() and not (path / "extract.jsonl").exists():
        return path / STORE_DIRNAME
    return path


def _find_store(path: Path) -> Store:
    for folder in [path, *path.parents]:
        if (folder / STORE_DIRNAME / "extract.jsonl").exists():
            return Store(folder / STORE_DIRNAME)
    raise UsageError(f"no store found above {path} (use --store)")


def _key_for(path: Path, records: list[Record]) -> tuple[str, str]:
    for root in sorted({r.root for r in records}, key=len, reverse=True):
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        return (root, rel)
    raise UsageError(f"{path} is not under any root of the store")


__all__ = ["cmd_retry", "cmd_show", "cmd_sweep", "cmd_tools", "cmd_watch"]
