"""The headless ``quarry`` verbs, one function each, and the table :mod:`engine.cli` dispatches by.

Every wrong input (a missing path, a folder where a file is meant, no store, a store that
cannot be used) raises a :class:`QuarryError` with one line naming it; the CLI prints that
line and exits 1. A name reaches the terminal only through :func:`engine.names.shown`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import MachineFailure, QuarryError, UsageError
from engine.moved import aliases
from engine.names import shown
from engine.store import STORE_DIRNAME, Loaded, Store, read_jsonl
from engine.toolsview import print_tools, tool_rows
from engine.verbkit import (
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_MACHINE,
    EXIT_OK,
    EXIT_USAGE,
    find_store,
    reading_store,
    store_dir,
    user_path,
)
from engine.words import count

# Each verb imports what only it needs (the sweep, the console, passwords, executors) in its
# own body: ``quarry ui`` imports this module on its way to the dashboard's first frame.
if TYPE_CHECKING:
    from engine.passwords import Passwords
    from engine.records import Key, Record
    from engine.sweep import Sweeper, SweepOptions, SweepResult
    from engine.watch import WatchOptions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
Command = Callable[[argparse.Namespace], int]
MIN_MEMORY = 128 * 2**20
"""The least ``--memory`` taken: a worker process's address space once it has Python and the
readers mapped (64M failed every read on Linux x86-64, 128M read PDFs and Office files)."""


def watch_options_from(args: argparse.Namespace) -> WatchOptions:
    """WatchOptions from parsed flags (``--rescan 0`` or less rescanned without pause, a
    thousand times in four seconds)."""
    from engine.watch import WatchOptions

    if not args.rescan > 0:  # (nan is not > 0; inf: never)
        raise UsageError("--rescan must be a positive number of seconds")
    return WatchOptions(poll=args.poll, rescan_s=args.rescan)


def options_from(args: argparse.Namespace) -> SweepOptions:
    """SweepOptions from parsed flags."""
    from engine.limits import DEFAULT_LIMITS, Limits
    from engine.sweep import SweepOptions

    if not args.timeout > 0 or math.isinf(args.timeout):  # (nan is not > 0)
        raise UsageError("--timeout must be a positive number of seconds")
    if args.workers < 0:
        raise UsageError("--workers must be 0 (one per core) or more")
    if args.memory < MIN_MEMORY:  # (a bare number is bytes: "--memory 2" meant 2G)
        raise UsageError(
            f"--memory {args.memory:,} bytes: a worker reads nothing under "
            f"{MIN_MEMORY // 2**20}M (every file would be error/memory); give a size "
            "with its unit (512M, 2G; default 1G)"
        )
    limits = Limits(
        timeout_s=args.timeout,
        memory_bytes=args.memory,
        tool_timeout_s=min(DEFAULT_LIMITS.tool_timeout_s, args.timeout),
    )
    where = getattr(args, "executor", "local")
    executor = None
    if where != "local":  # (the executors' package is 2 ms of every sweep's start)
        from engine.executors import dask_factory, parse_executor

        spec = parse_executor(where)
        if spec.is_dask:
            executor = dask_factory(spec, no_external=args.no_external, without=tuple(args.without))
    if args.exclude:
        _check_excludes(args.exclude)
    return SweepOptions(
        out=args.out,
        excludes=tuple(args.exclude),
        max_bytes=args.max_bytes,
        default_excludes=not args.no_default_excludes,
        rehash=args.rehash,
        verify=getattr(args, "verify", False),
        forget_missing=getattr(args, "forget_missing", False),
        no_external=args.no_external,
        without=tuple(args.without),
        limits=limits,
        workers=args.workers,
        executor=executor,
        readers=_extra_readers(getattr(args, "reader", ())),
        text_index=not getattr(args, "no_text_index", False),
    )


def _extra_readers(specs: Sequence[str]) -> tuple[str, ...]:
    """``--reader`` values, each checked now: one that does not give readers is a usage
    error (said in one line), not a traceback at the first file."""
    import importlib

    for spec in specs:
        module, _, attr = spec.partition(":")
        try:
            readers = getattr(importlib.import_module(module), attr or "READERS")
            ok = isinstance(readers, tuple)
        except (ImportError, AttributeError, ValueError) as exc:
            raise UsageError(f"--reader {spec}: {type(exc).__name__}: {exc}") from exc
        if not ok:
            raise UsageError(f"--reader {spec}: not a tuple of readers")
    return tuple(specs)


def dump_json(obj: object) -> str:
    """Pretty JSON for --json output."""
    import orjson

    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def _check_excludes(excludes: list[str]) -> None:
    """Raise UsageError naming an ``--exclude`` that is no gitignore rule (a traceback)."""
    from engine.walk import rules_spec

    _spec, bad = rules_spec(excludes)
    if bad:
        raise UsageError(
            f"--exclude '{shown(bad[0])}' is no rule (gitignore syntax: a lone ! negates"
            " nothing, a trailing backslash escapes nothing; '\\\\' is a backslash)"
        )


def default_dirs(dirs: list[Path]) -> list[Path]:
    """The folders to open: those given, or the bundled fixtures."""
    return dirs or [FIXTURES]


# -- the verbs ------------------------------------------------------------------------------


def cmd_sweep(args: argparse.Namespace) -> int:
    """Sweep once; print a summary table (or JSON); exit 2 when errors remain."""
    from engine.console import SweepReporter, summary_table
    from engine.sweep import Sweeper, stop_on_signals

    options = options_from(args)
    reporter = SweepReporter(quiet=args.quiet or args.json)
    # served: a folder that changed since the last sweep is merged with the store's index
    # (only what differs is read, no record is loaded), as a watcher's first sweep is
    sweeper = Sweeper(args.dirs, options, reporter, quick=True, served=True, once=True)
    with sweeper, stop_on_signals(sweeper):
        result = run_writing(sweeper)
    summary = result.summary
    if args.json:
        sys.stdout.write(summary.to_json().decode() + "\n")
    elif not args.quiet:
        _print(summary_table(summary, result.extracted))
    return sweep_exit(result)


def run_writing(sweeper: Sweeper, **run: Any) -> SweepResult:
    """``sweeper.run(**run)``; a store that cannot be written is the machine's failure."""
    try:
        return sweeper.run(**run)
    except OSError as exc:
        raise MachineFailure(
            f"cannot write the store {shown(str(sweeper.store.out))}: {exc.strerror or exc}; "
            "its earlier records are kept"
        ) from exc


def sweep_exit(result: SweepResult) -> int:
    """The exit code of a sweep, with its one line on stderr when it is not a clean one."""
    if result.failed:
        sys.stderr.write(f"quarry: {result.failed}\n")
        return EXIT_MACHINE
    if result.interrupted:
        sys.stderr.write("quarry: interrupted; the store keeps what was read so far\n")
        return EXIT_INTERRUPTED
    if result.machine_failures:
        sys.stderr.write(
            f"quarry: {count(result.machine_failures, 'file')} not read: the machine failed "
            "(see above); their earlier records are kept\n"
        )
        return EXIT_MACHINE
    if result.held_roots:
        sys.stderr.write(
            f"quarry: {shown(', '.join(result.held_roots))}: gone or empty, records kept "
            "(--forget-missing drops them)\n"
        )
        return EXIT_USAGE
    return EXIT_ERRORS if result.errors else EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    """Sweep, then follow the folders until Ctrl-C / SIGTERM."""
    from engine.console import SweepReporter
    from engine.session import watch_forever

    options = options_from(args)
    watch_options = watch_options_from(args)
    reporter = SweepReporter(quiet=args.quiet, summarize=True)
    return int(watch_forever(args.dirs, options, watch_options, reporter))


def cmd_retry(args: argparse.Namespace) -> int:
    """Read the named files again (a folder: every file under it), whatever their verdict;
    exit 2 when one of them is an error record after it (never for the store's others)."""
    from engine.console import SweepReporter, record_line
    from engine.records import Status
    from engine.sweep import Sweeper, stop_on_signals

    paths = [user_path(p) for p in args.paths]
    passwords = passwords_from(args)  # asked before any work, wrong input before any read
    options = options_from(args)
    if args.store is not None:
        store = reading_store(args.store)
    elif options.out is not None:
        store = reading_store(options.out)
    else:
        store = find_store(paths[0])
    targets, force = _retry_targets(paths, store)
    roots = sorted({Path(root) for root, _rel, _dir in targets})
    options = replace(options, out=store.out)
    only: dict[str, list[str]] = {}
    for root, rel, _is_dir in targets:
        only.setdefault(root, []).append(rel)
    errors = 0
    with (
        # (quick: nothing loaded as it opens; the first run loads the records if it must)
        Sweeper(roots, options, SweepReporter(quiet=True), quick=True, once=True) as sweeper,
        stop_on_signals(sweeper),
    ):
        sweeper.serve_targeted()  # (no record loaded but those retried, when it can)
        result = run_writing(sweeper, only=only, force=force, full=False, passwords=passwords)
        after = sweeper.records
        for root, rel, is_dir in targets:
            keys = sweeper.keys_under(root, rel)
            for key in keys:
                print(record_line(after[key]))
            errors += sum(1 for key in keys if after[key].status == Status.ERROR)
            if not keys:
                print(_unrecorded(root, rel, is_dir, options.default_excludes))
    # The exit code says what this command did: the other records of the store, errors or
    # not, are another sweep's business (a retry of fixed files exits 0 in a store of errors).
    return sweep_exit(replace(result, errors=errors))


def _unrecorded(root: str, rel: str, is_dir: bool, defaults: bool) -> str:
    """The line for a path a retry left without a record: gone, or left out by a rule."""
    from engine.walk import default_rule

    name = shown(rel or root)
    store = _store_holding(root, rel, is_dir)
    if store is not None and os.path.lexists(os.path.join(root, rel)):
        return f"left out {name}: {shown(store)} is a store, and the walk never enters one"
    if not is_dir and os.path.lexists(os.path.join(root, rel)):
        rule = default_rule(rel.rpartition("/")[2]) if defaults else None
        if rule is not None:
            return f"left out {name}: a default exclusion ({rule}); --no-default-excludes reads it"
        return f"left out {name}: an --exclude or .quarryignore rule"
    what = "folder holds no files" if is_dir else "file no longer exists"
    return f"gone     {name}: the {what}"


def _store_holding(root: str, rel: str, is_dir: bool) -> str | None:
    """The folder below ``root`` that is a store and holds ``rel`` (a folder itself too),
    if any: the walk leaves such a folder out whole (the root, a store, is walked)."""
    from engine.walk import is_store_folder

    parts = rel.split("/") if rel else []
    for depth in range(1, len(parts) + (1 if is_dir else 0)):
        folder = os.path.join(root, *parts[:depth])
        if is_store_folder(folder):
            return folder
    return None


def passwords_from(args: argparse.Namespace) -> Passwords:
    """``--password`` (asked on the terminal, not echoed) then ``--password-file``'s lines.

    Raises UsageError for a password file that cannot be used, for ``--password`` without a
    terminal to ask on, and for an empty answer.
    """
    from engine.passwords import NO_PASSWORDS, Passwords, read_password_file

    passwords = NO_PASSWORDS
    if args.password:
        if not sys.stdin.isatty():
            raise UsageError("--password asks on a terminal; without one, use --password-file")
        import getpass

        try:
            passwords = Passwords.of([getpass.getpass("password for encrypted files: ")])
        except EOFError:
            passwords = NO_PASSWORDS
        if not passwords:
            raise UsageError("no password given")
    if args.password_file is not None:
        passwords = passwords + read_password_file(user_path(args.password_file))
    return passwords


def cmd_show(args: argparse.Namespace) -> int:
    """Print one file's record as a person reads it (or as a JSON line) and its text.

    On a terminal the text is shown with its control characters made visible (a text may
    hold escape sequences that retitle the window or write the clipboard); piped, it is
    written exactly as stored.
    """
    from engine.showing import record_json, record_lines
    from engine.visible import for_terminal

    path = user_path(args.path)
    store = reading_store(args.store) if args.store else find_store(path)
    # A relative path with --store may be a record's own path (a store from another machine,
    # its folders not here: the path as the dashboard and the export show it).
    named = _record_path(args.path) if args.store else None
    rec = _indexed(store, path, named)
    if isinstance(rec, str):  # the index in step with the file has no record there
        raise UsageError(rec)
    if rec is None:  # no index to trust, or a line there that is no record: the file says why
        records = _load(store).records
        roots = _roots(store, records)
        if named is not None and not any(_keys_of(path, roots)):
            rec = _one_named(named, [r for r in records if r.path == named])
            if rec is None:
                raise UsageError(_named_nowhere(named, path, store))
        else:
            root, rel = key_for(path, records, store)
            keys = set(_keys_of(path, roots, aliases(store, roots)))
            rec = next((r for r in records if r.key in keys), None)
            if rec is None:
                under = partial(_count_under, records, root, rel)
                raise UsageError(_no_record(path, root, rel, store, under))
    wanted = rec.has_text and not args.no_text
    text, missing = (
        _stored_text(store, rec.path, rec.sha256) if wanted and rec.sha256 else (None, "")
    )
    if args.json:
        write_whole(record_json(rec, text, with_text=not args.no_text))
    else:
        print("\n".join(record_lines(rec)))
        if text is not None:
            print("-" * 40)
            write_whole(for_terminal(text) if sys.stdout.isatty() else text)
    if missing:  # the record still shown: what the store says of the file
        raise UsageError(missing)
    return EXIT_OK


def _record_path(given: Path) -> str | None:
    """``given`` as a record's path (relative, in the store's form), or None when it cannot
    be one (absolute, or reaching up)."""
    text = given.as_posix()
    if given.is_absolute() or not text or text == "." or ".." in given.parts:
        return None
    return text  # (a Path given is normalised already: "./a//b" is "a/b")


def _named_nowhere(named: str, path: Path, store: Store) -> str:
    """Why ``quarry show --store S named`` found nothing: neither a record's path in the store
    nor a path under one of its folders."""
    return (
        f"no record {shown(named)} in the store {shown(str(store.out))}, and "
        f"{shown(str(path))} is not under any folder swept into it"
    )


def _one_named(named: str, records: Sequence[Record]) -> Record | None:
    """The one record of ``records`` (those whose path is ``named``); a UsageError when
    several folders swept into the store hold such a path."""
    if len(records) > 1:
        roots = ", ".join(shown(f"{r.root}/{named}") for r in records[:3])
        raise UsageError(
            f"{shown(named)} is in {len(records)} folders of the store: name one ({roots})"
        )
    return records[0] if records else None


def _indexed(store: Store, path: Path, named: str | None = None) -> Record | str | None:
    """The record of ``path`` looked up in the store's index (a million records: milliseconds,
    where reading ``extract.jsonl`` takes seconds), or in the one built for a reader in the
    user's cache (:mod:`engine.readindex`) when the store has none in step with its file;
    why there is none, in words, when that index (in step with the file) holds no record of
    ``path`` (a mistyped path in a store of ten million records loaded the whole file to say
    so: minutes and gigabytes); None when there is no index to use, or its line there is no
    record (the file's read says why)."""
    from engine.db import IndexUnusable, RecordDB, identity_of
    from engine.readindex import BuildLine, left_out, reading_index

    said = BuildLine(sys.stderr, store)
    try:  # the store's own, or one built in the user's cache
        where = reading_index(store, progress=said)
    finally:
        said.done()
    if where is None:
        return None
    try:
        db = RecordDB.open_reader(where)
    except IndexUnusable:
        return None
    try:
        if db.source() != identity_of(store.jsonl_path):
            return None
        roots = _roots(store, ()) | db.roots()
        for root, rel in _keys_of(path, roots, aliases(store, roots)):
            line = db.line(root, rel)
            if line is not None:
                parsed = read_jsonl(line)
                dropped = left_out(where)
                if dropped and parsed.records:  # said as a read of the file says it
                    sys.stderr.write(shown(f"quarry: warning: {dropped}") + "\n")
                return parsed.records[0] if parsed.records else None
        if named is not None and not any(_keys_of(path, roots)):
            held = [line for root in sorted(roots) if (line := db.line(root, named)) is not None]
            found = [r for line in held for r in read_jsonl(line).records]
            if found or len(held) > 1:
                return _one_named(named, found)
            if not held:
                return _named_nowhere(named, path, store)
        if dropped := left_out(where):  # (its record may be a line left out: said first)
            sys.stderr.write(shown(f"quarry: warning: {dropped}") + "\n")
        root, rel = _deepest(path, roots, store)
        return _no_record(path, root, rel, store, partial(db.count_under, root, rel))
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _stored_text(store: Store, rel: str, sha256: str) -> tuple[str | None, str]:
    """The text of content ``sha256`` (the file ``rel``) and "", or None and why it is not
    there, in one line."""
    try:
        return store.read_text(sha256), ""
    except OSError as exc:
        why = (
            f"the text of {shown(rel)} is not in the store ({exc.strerror or exc}); "
            "the next sweep reads the file again"
        )
        return None, why


def write_whole(text: str) -> None:
    """Write ``text`` to standard output whole, or raise (BrokenPipeError for a reader that
    went). Python's unbuffered stdout (``-u``, ``PYTHONUNBUFFERED``) hands a big text to one
    ``write`` of its raw file, which a pipe may take only part of when its reader closes it
    during the write: ``TextIOWrapper`` ignores the count and drops the rest in silence, so
    ``quarry show BIG | head`` ended 0 as if all was read. Each part is written until none
    is left; the write after a closed pipe raises."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None:  # a stream that is text only (a test's StringIO)
        out.write(text)
        return
    out.flush()
    view = memoryview(text.encode(out.encoding or "utf-8", out.errors or "strict"))
    while view:
        written = buffer.write(view)
        if written is None:  # a non-blocking stdout that is full: wait until it is not
            import select

            select.select([], [buffer], [])
            continue
        view = view[written:]
    buffer.flush()


def cmd_tools(args: argparse.Namespace) -> int:
    """List the external tools, found and missing, with what each would unlock.

    With a swept folder (or ``--store``), the files that wait on each tool are counted from
    the records; with a folder that has no store, they are guessed from detection alone (the
    walk and each file's kind, nothing read): the same table, saying it is a guess.
    """
    from engine.tools import discover

    tools = discover()  # once: the table's rows and what the summary's counts say
    waiting: dict[str, int] | None = None
    guessed = False
    cluster: list[str] = []
    if args.store is not None:
        swept = reading_store(args.store)
        waiting = _waiting(swept)
        cluster = _cluster_lines(swept, tools.names)
    elif args.dir is not None:
        folder = user_path(args.dir)
        if not folder.is_dir():
            what = "no such folder" if not folder.exists() else "not a folder"
            raise UsageError(f"{what}: {shown(str(args.dir))}")
        store = Store(store_dir(folder))
        store.check()
        if store.exists():
            waiting = _waiting(store)
            cluster = _cluster_lines(store, tools.names)
        else:
            waiting, guessed = detected_needs(folder), True
    rows = tool_rows(waiting, tools, guessed=guessed)
    if args.json:
        print(dump_json(rows))
        return EXIT_OK
    from rich.console import Console
    from rich.text import Text

    console = Console()
    print_tools(console, rows, counted=waiting is not None, guessed=guessed)
    for line in cluster:
        console.print(Text(line))
    _print_unloaded()
    return EXIT_OK


def _waiting(store: Store) -> dict[str, int]:
    """Records per tool they wait on: from the store's index when it agrees with
    ``extract.jsonl`` (its rows that wait on any), else from the records loaded."""
    from engine.db import DB, open_agreeing
    from engine.index import Tally

    db = open_agreeing(store.out / DB, store.jsonl_path)
    if db is not None:
        try:
            return db.waiting()
        except sqlite3.Error:
            pass  # (the file says it as well)
        finally:
            db.close()
    return dict(Tally.of(_load(store).records).waiting)


def _cluster_lines(store: Store, found: Collection[str]) -> list[str]:
    """What the store's summary says of the records read without a tool of ``found`` and of
    the last sweep's Dask workers whose tools differ."""
    from engine.errors import StoreCorrupt
    from engine.summary import cluster_lines

    try:
        summary = store.load_summary()
    except StoreCorrupt:  # a summary only informs: the table stands without it
        return []
    return cluster_lines(summary, found) if summary is not None else []


def _print_unloaded() -> None:
    """The readers that could not load, and why: their files are unsupported/no_reader."""
    from engine.readers.registry import unloaded

    failed = unloaded()
    if failed:
        from rich.table import Table
        from rich.text import Text

        table = Table(title="readers not loaded (their files are unsupported/no_reader)")
        table.add_column("reader")
        table.add_column("why")
        for u in failed:
            table.add_row(u.module.rpartition(".")[2], Text(u.why))
        _print(table)


def detected_needs(folder: Path) -> dict[str, int]:
    """Tool -> files under ``folder`` of a kind that tool reads, from detection alone.

    The walk a sweep makes (its exclusions, ``.quarryignore``, the size cap), then each
    file's kind from its first bytes and name; nothing is read. A guess: a PDF may read
    without any tool, or need OCR; a container's members are not looked into.
    """
    from engine.detect import detect
    from engine.limits import DEFAULT_MAX_BYTES
    from engine.readers.registry import reader_for
    from engine.walk import WalkRules, walk

    counts: dict[str, int] = {}
    for entry in walk(folder, WalkRules(max_bytes=DEFAULT_MAX_BYTES)):
        if entry.kind != "file" or not entry.size:
            continue
        reader = reader_for(detect(entry.abspath))
        for tool in reader.tools if reader is not None else ():
            counts[tool] = counts.get(tool, 0) + 1
    return counts


def _print(renderable: object) -> None:
    """Print a rich renderable on stdout (rich imported only when there is one to print)."""
    from rich.console import Console

    Console().print(renderable)


def cmd_export(args: argparse.Namespace) -> int:
    """The store's records as JSONL, CSV or Parquet (:mod:`engine.export`)."""
    from engine.export import cmd_export as export

    return export(args)


def cmd_grep(args: argparse.Namespace) -> int:
    """Where a pattern occurs in the store's texts (:mod:`engine.grep`)."""
    from engine.grep import cmd_grep as grep

    return grep(args)


def cmd_diff(args: argparse.Namespace) -> int:
    """Two stores compared file by file (:mod:`engine.diffview`); exit 4 when anything got
    worse."""
    from engine.diffview import cmd_diff as diff

    return diff(args)


COMMANDS: dict[str, Command] = {
    "grep": cmd_grep,
    "sweep": cmd_sweep,
    "watch": cmd_watch,
    "retry": cmd_retry,
    "show": cmd_show,
    "tools": cmd_tools,
    "export": cmd_export,
    "diff": cmd_diff,
}
"""The headless verbs by name; the dashboard's two (``open``, ``ui``) are added by ``tui.cli``."""


def _load(store: Store) -> Loaded:
    """The store's records; unreadable lines are said on stderr in one line, never fatal."""
    loaded = store.load()
    if loaded.bad:
        sys.stderr.write(shown(f"quarry: warning: {loaded.left_out(str(store.jsonl_path))}") + "\n")
    return loaded


def key_for(path: Path, records: Iterable[Record], store: Store) -> Key:
    """(root, path) of ``path`` under the deepest root of the store that holds it."""
    return _deepest(path, _roots(store, records), store)


def _deepest(path: Path, roots: Iterable[str], store: Store) -> Key:
    """(root, path) of ``path`` under the deepest of ``roots`` that holds it; a UsageError
    when none does."""
    for key in _keys_of(path, roots):
        return key
    raise UsageError(
        f"{shown(str(path))} is not under any folder swept into the store {shown(str(store.out))}"
    )


def _keys_of(
    path: Path, roots: Iterable[str], aliases: Mapping[str, str] | None = None
) -> Iterator[Key]:
    """(root, path) of ``path`` under each of ``roots`` that holds it, the deepest first;
    ``aliases``: folders that stand for a root (:func:`engine.moved.aliases`), under which
    ``path`` is keyed by that root too (after its own key: a store whose records were moved
    already, and whose summary was not written since)."""
    aliases = aliases or {}
    for root in sorted({*roots, *aliases}, key=len, reverse=True):
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        rel = "" if rel == "." else rel
        if root in roots:
            yield (root, rel)
        if root in aliases:
            yield (aliases[root], rel)


def _roots(store: Store, records: Iterable[Record]) -> set[str]:
    """The folders swept into ``store``: its records' roots, its summary's, the folder of a
    default ``.quarry``."""
    roots = {r.root for r in records}
    with contextlib.suppress(QuarryError):
        summary = store.load_summary()
        roots.update(r for r in (summary.roots if summary else ()) if r.startswith("/"))
    if store.out.name == STORE_DIRNAME:
        roots.add(str(store.out.parent))
    return roots


def _count_under(records: Iterable[Record], root: str, rel: str) -> int:
    """Records at ``rel`` or under it (``rel`` "" is the whole root)."""
    return sum(1 for _ in _under(records, root, rel))


def _under(records: Iterable[Record], root: str, rel: str) -> Iterable[Key]:
    """Keys of the records at ``rel`` or under it (``rel`` "" is the whole root)."""
    prefix = f"{rel}/" if rel else ""
    return (
        r.key for r in records if r.root == root and (r.path == rel or r.path.startswith(prefix))
    )


def _retry_targets(
    paths: Sequence[Path], store: Store
) -> tuple[list[tuple[str, str, bool]], list[Key]]:
    """(root, rel, is a folder) of each path to retry, and the keys of the records at or
    under them: from the store's index when it agrees with ``extract.jsonl`` (a range of
    keys each), else from the records loaded. A path that is nowhere is an error."""
    from engine.db import DB, open_agreeing

    db = open_agreeing(store.out / DB, store.jsonl_path)
    if db is None:
        records = _load(store).records
        return _targets(paths, store, _roots(store, records), partial(_under, records))
    try:
        return _targets(paths, store, _roots(store, ()) | db.roots(), db.keys_under)
    except sqlite3.Error as exc:
        raise QuarryError(f"the store's index could not be read: {exc}") from exc
    finally:
        db.close()


def _targets(
    paths: Sequence[Path],
    store: Store,
    roots: set[str],
    under: Callable[[str, str], Iterable[Key]],
) -> tuple[list[tuple[str, str, bool]], list[Key]]:
    targets: list[tuple[str, str, bool]] = []
    keys: list[Key] = []
    for path in paths:
        root, rel = _deepest(path, roots, store)
        found = list(under(root, rel))
        if not os.path.lexists(path) and not found:
            raise UsageError(f"no such file, and no record of it: {shown(str(path))}")
        targets.append((root, rel, path.is_dir() and not path.is_symlink()))
        keys.extend(found)
    return targets, keys


def _no_record(path: Path, root: str, rel: str, store: Store, under: Callable[[], int]) -> str:
    """Why ``store`` has no record of ``path`` (``root``, ``rel``), in one line; ``under()``
    counts the records under it, when it is a folder."""
    where = shown(str(store.out))
    if path.is_dir() and not path.is_symlink():
        n = under()
        return (
            f"{shown(str(path))} is a folder ({count(n, 'record')} under it); show takes one file"
        )
    if not os.path.lexists(path):
        return f"no such file, and no record of it in the store {where}: {shown(str(path))}"
    return (
        f"no record of {shown(str(path))} in the store {where} "
        "(not swept yet, or left out: run 'quarry retry' on it)"
    )


__all__ = [
    "COMMANDS",
    "EXIT_ERRORS",
    "EXIT_INTERRUPTED",
    "EXIT_MACHINE",
    "EXIT_OK",
    "EXIT_USAGE",
    "cmd_export",
    "cmd_retry",
    "cmd_show",
    "cmd_sweep",
    "cmd_tools",
    "cmd_watch",
    "find_store",
    "reading_store",
    "store_dir",
    "user_path",
]
