"""The ``quarry`` command: the engine's command line plus the two dashboard commands.

``quarry [DIR]`` sweeps, watches and opens the dashboard; ``quarry ui --store PATH`` opens
an existing store. Every other subcommand is the engine's own (``engine.cli``), which never
imports this package.
"""

from __future__ import annotations

import sys

from engine import ahead, stdio
from tui.words import count

# The engine is imported by the functions that use it, not here: the ``quarry`` script's
# :func:`run` starts the walk ahead (:mod:`engine.ahead`) first, so that a sweep's walk and the
# engine's imports (~40 ms) overlap. The session, the sweep and the watcher are imported by
# ``cmd_open``, which needs them; ``quarry ui`` does not, and every import is time before the
# dashboard's first frame.
TYPE_CHECKING = False  # (typing's own: 3 ms before the walk ahead starts)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path

    from engine.errors import StoreLocked
    from engine.store import Store
    from tui.app import QuarryApp


def run_app(app: QuarryApp) -> int:
    """Run the dashboard; a crash is exit 1 and one line on stderr (the traceback in a file),
    its terminal gone is exit 1 (the engine stopped and the store written, as on q)."""
    from engine.commands import EXIT_OK, EXIT_USAGE

    app.run()
    if app.crash:
        where = f" (traceback in {app.crash_log})" if app.crash_log else ""
        print(f"quarry: the dashboard stopped on an error: {app.crash}{where}", file=sys.stderr)
        return EXIT_USAGE
    if app.terminal_gone:  # left without a word to the user: a failure to whoever started it
        return EXIT_USAGE
    return app.return_code or EXIT_OK


SWEEP_INSTEAD = (
    "'quarry watch DIR' keeps the store current without one, 'quarry sweep DIR' sweeps once"
)
"""What ``quarry DIR`` without a terminal says to run instead."""
READ_INSTEAD = "'quarry export', 'quarry show' and 'quarry grep' read the store without one"
"""What ``quarry ui`` without a terminal says to run instead."""


def need_terminal(instead: str) -> None:
    """Raise UsageError unless the dashboard has a terminal to draw on (standard error) and
    keys to read (standard input): run from cron, a script or ``nohup``, it drew its screens
    into a log file and watched on for good, with no key to quit it."""
    from engine.errors import UsageError

    for name, stream in (("standard input", sys.__stdin__), ("standard error", sys.__stderr__)):
        if stream is None or not stream.isatty():
            raise UsageError(f"the dashboard needs a terminal and {name} is not one: {instead}")


def cmd_open(args: argparse.Namespace) -> int:
    """Sweep, watch and show the dashboard (``--read-only``: show the store, write nothing)."""
    from engine.cli import default_dirs, options_from, watch_options_from
    from engine.commands import EXIT_OK, EXIT_USAGE
    from engine.errors import StoreLocked, UsageError
    from engine.names import shown
    from engine.session import Session
    from engine.sweep import resolve_roots, store_for

    options = options_from(args)
    if args.read_only:
        # No session: nothing is swept, watched or written; the store is followed as it is.
        roots = resolve_roots(default_dirs(args.dirs))
        store = store_for(roots, options)
        store.check()
        if not store.exists():
            where = shown(str(store.out))
            raise UsageError(f"no store at {where} to browse (run 'quarry sweep' first)")
        need_terminal(READ_INSTEAD)
        from tui.app import QuarryApp

        return run_app(QuarryApp(store.out, None, read_only=True))
    watch = watch_options_from(args)
    # What is wrong with the folders or the store is said first; then, with no terminal, no
    # store is made (a refused `quarry DIR` left a `.quarry` in the folder).
    store = store_for(resolve_roots(default_dirs(args.dirs)), options)
    store.check(writing=True)
    need_terminal(SWEEP_INSTEAD)
    try:
        session = Session(default_dirs(args.dirs), options, watch_options=watch)
    except StoreLocked as exc:  # (a `quarry watch` in another terminal): shown as it writes
        return _follow_instead(store, exc)
    from tui.app import QuarryApp

    try:
        code = run_app(QuarryApp(session.store.out, session, read_only=args.read_only))
    finally:
        session.close()
    if (problem := session.not_current()) and code == EXIT_OK:  # (as `quarry watch` ends)
        print(f"quarry: stopped; the store is NOT up to date: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if not session.swept_whole and code == EXIT_OK:
        # Quit during the first sweep: say what the store holds, and that nothing is lost.
        print(
            f"quarry: stopped before the first sweep finished: the store keeps "
            f"{count(session.record_count, 'record')}; 'quarry' again reads the rest",
            file=sys.stderr,
        )
    return code


def _follow_instead(store: Store, locked: StoreLocked) -> int:
    """The dashboard over a store another quarry process writes: following it, read-only,
    saying why (it said only that the store was in use, and exited 1)."""
    from tui.app import QuarryApp
    from tui.link import Say

    app = QuarryApp(store.out, None, read_only=True)
    app.desk.greeting = Say(
        f"{locked}: shown as that process writes it, read-only",
        "following another quarry",
        "warning",
    )
    return run_app(app)


def cmd_ui(args: argparse.Namespace) -> int:
    """The dashboard over an existing store, following its changes."""
    from engine.verbkit import named_store

    store = named_store(args.dir, args.store)
    other = None if args.compare is None else compared_store(args.compare, store)
    when = None if args.since is None else since_time(args.since, store, other)
    need_terminal(READ_INSTEAD)
    from tui.app import QuarryApp

    app = QuarryApp(store.out, None, read_only=args.read_only, compare=other, since=when)
    return run_app(app)


def since_time(text: str, store: Store, other: Store | None) -> float:
    """The time ``--since`` names (a sweep the store's history lists, or a time), checked
    before the dashboard starts: one that is neither, one before the history the store's
    index keeps, or ``--since`` beside ``--compare``, is a one-line error (exit 1) listing
    the sweeps, never a screen that cannot compare."""
    from engine.comparison import since_when
    from engine.errors import UsageError

    if other is not None:
        raise UsageError("--since compares the store with itself as it was: not with --compare")
    return since_when(store, text)


def compared_store(path: Path, store: Store) -> Store:
    """The store ``--compare`` names, checked before the dashboard starts: a folder that is
    no store, or ``store`` itself, is a one-line error (exit 1), never an empty comparison."""
    from engine.errors import UsageError
    from engine.names import shown
    from engine.verbkit import reading_store

    other = reading_store(path)
    if other.out.resolve() == store.out.resolve():
        raise UsageError(f"--compare {shown(str(path))} names the store shown: nothing to compare")
    return other


def main(argv: Sequence[str] | None = None) -> int:
    """The ``quarry`` command: its exit status."""
    from engine.cli import main as engine_main

    return engine_main(argv, ui={"open": cmd_open, "ui": cmd_ui})


def run() -> None:
    """Entry point of the ``quarry`` script: :func:`main`, then the process ends. A plain
    ``quarry sweep`` walks ahead (:mod:`engine.ahead`) while the engine is imported."""
    import atexit

    atexit.register(_end_now)  # first: so it runs after every handler registered from here on
    stdio.mend()  # a closed stream's number is not the next file's (see engine.stdio)
    ahead.start(sys.argv[1:])
    try:
        code = main()
    finally:
        ahead.discard()  # a walk nobody took (the command failed first): not left running
    from engine.cli import EXIT_USAGE, drop_stdout

    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the last of it, for a reader that went: as main says it
        drop_stdout()
        code = code or EXIT_USAGE
    _ending.append(code)
    sys.exit(code)


_ending: list[int] = []
"""The code :func:`run` ends with, once it returns normally (empty: an exception ends it)."""


def _end_now() -> None:
    """The last exit handler (:func:`run` registers it first; they run last in, first out):
    once every other one has run (a worker pool, multiprocessing, Textual each register one),
    end the process at once with :func:`run`'s code when no other thread is left. The
    interpreter's teardown, freeing every module and object one by one, cost a sweep of an
    unchanged folder 10-13 ms of its ~150 (the walk it cannot avoid is ~60); mypy ends its
    runs the same way. Only when :func:`run` is the program itself, before which nothing
    registered a handler (this one ends the process before such handlers would run), and not
    under coverage, which registers one at start-up."""
    import os
    import threading

    if not _ending or threading.active_count() != 1 or "coverage" in sys.modules:
        return
    if not _is_the_program():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed or broken stream: the usual exit says so
    os._exit(_ending[-1])


def _is_the_program() -> bool:
    """Whether :func:`run` is the program: the ``quarry`` script or ``python -m tui`` (not a
    caller's code that may have registered exit handlers before it)."""
    import os

    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return bool(spec.name == "tui.__main__")
    return os.path.basename(getattr(main, "__file__", None) or "") == "quarry"
