"""The walk ahead: a ``quarry sweep``'s walk made by a forked child while the engine is imported.

A sweep of a folder where nothing changed costs the walk it cannot avoid plus fixed costs, the
biggest of them the engine's own imports (msgspec, dataclasses, the records: ~40 ms, most of a
20,000-file walk's time again). The ``quarry`` script calls :func:`start` before it imports
the engine: for the plain forms of ``sweep`` (folders, ``--out``, ``--exclude``,
``--no-default-excludes`` and flags that leave the walk alone) it forks a child that walks
each folder with :func:`engine.walk.walk` while the parent imports, on the machine's other
core. The child writes its listings into a
memory file and ends; the sweeper :func:`take` s them for its first walk. For a new store
(every file will be read) the read pool's forkserver is started at the same moment, so that
its imports too overlap the engine's.

What the child guessed is never trusted: the sweeper takes the listings only when its own roots
and walk rules, as the real parser and store made them, are the very ones the child walked, and
only when the child ended well. Anything else (another form of the command, a root the child
could not walk, a system without ``fork`` or ``memfd_create``, ``QUARRY_NO_WALK_AHEAD`` set)
leaves the sweeper to walk as it always did. The walk starts before the sweep's own start time:
:func:`take` gives its start too, so that the sweep's start (the next sweep's racy reference)
is never later than the stats it trusted.

Only the standard library is imported here: this module runs before the engine is imported.
"""

from __future__ import annotations

import os
import sys
import time

from engine.flags import SWEEP_VERB, SWEEPING, Walk, by_name

TYPE_CHECKING = False  # (typing's own is 3 ms to import, before the fork)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from engine.walk import Listing, WalkRules

OFF_ENV = "QUARRY_NO_WALK_AHEAD"
"""Set (to anything) to walk in the sweep as before: for comparisons and for debugging."""

# The sweep command's flags (engine.flags, the parser's own table) and what each does to the
# walk. A flag that changes it otherwise (``--max-bytes``), an unknown one (an abbreviation
# argparse would accept, ``--``) means no walk ahead: the guess is kept simple, since only an
# exact match is ever used. Only ``sweep``: ``watch`` and ``open`` start their observers
# before their first walk, so that a file changed during the walk is caught; a walk made
# before the observers would miss one changed between the two.
_FLAGS = by_name(SWEEP_VERB + SWEEPING)


class Plan:
    """What the child walks: absolute roots, the store folder it must leave out, the excludes;
    ``pool``: whether the sweep will read every file with this machine's pool (a new store,
    no other executor); ``defaults``: whether the default exclusions apply. (Not a dataclass:
    ``dataclasses`` is 7 ms to import, and this runs before the fork.)"""

    __slots__ = ("defaults", "excludes", "out", "pool", "roots")

    def __init__(
        self,
        roots: tuple[str, ...],
        out: str,
        excludes: tuple[str, ...],
        pool: bool = False,
        defaults: bool = True,
    ) -> None:
        self.roots = roots
        self.out = out
        self.excludes = excludes
        self.pool = pool
        self.defaults = defaults


class Ahead:
    """A child walking ``plan``: its pid, the memory file it writes, when it was started."""

    __slots__ = ("fd", "pid", "plan", "started")

    def __init__(self, plan: Plan, pid: int, fd: int, started: float) -> None:
        self.plan = plan
        self.pid = pid
        self.fd = fd
        self.started = started


_pending: Ahead | None = None


def plan(argv: list[str]) -> Plan | None:
    """What ``quarry`` with ``argv`` would walk, for the plain forms of ``sweep``; None when
    it is not one (the sweep then walks for itself)."""
    if not argv or argv[0] != "sweep":
        return None
    dirs: list[str] = []
    out: str | None = None
    excludes: list[str] = []
    local = True
    defaults = True
    it = iter(argv[1:])
    for arg in it:
        name, eq, value = arg.partition("=")
        flag = _FLAGS.get(arg) or _FLAGS.get(name)
        if flag is None or flag.walk is Walk.OTHER:
            if arg.startswith("-"):
                return None
            dirs.append(arg)
            continue
        if not flag.valued:
            if eq:
                return None  # a switch given a value: argparse says so
            if flag.walk is Walk.NO_DEFAULTS:
                defaults = False
            continue
        if not eq:
            value = next(it, "")
            if not value or value.startswith("-"):
                return None  # a missing value: argparse says so
        if flag.walk is Walk.OUT:
            out = value
        elif flag.walk is Walk.EXCLUDE:
            excludes.append(value)
        elif flag.walk is Walk.EXECUTOR:
            local = value == "local"
    if not dirs:
        return None
    try:
        roots = tuple(dict.fromkeys(_resolved(d) for d in dirs))  # each once, as the sweeper's
        if out is None and len(roots) > 1:
            return None
        store = _resolved(out) if out is not None else os.path.join(roots[0], ".quarry")
    except (OSError, ValueError, RuntimeError):
        return None
    try:  # as the sweeper judges a store it must read everything into (Store.exists)
        new = os.stat(os.path.join(store, "extract.jsonl")).st_size == 0
    except OSError:
        new = True
    return Plan(roots, store, tuple(excludes), new and local, defaults)


def _resolved(path: str) -> str:
    # As the sweep resolves a folder (``Path(p).expanduser().resolve()``), without pathlib's
    # import: realpath of the user-expanded path.
    return os.path.realpath(os.path.expanduser(path))


def start(argv: list[str]) -> None:
    """Fork the child that walks what ``argv`` would (see :func:`plan`), if it is a plain
    sweep; at most once per process."""
    global _pending
    if _pending is not None or os.environ.get(OFF_ENV) or not hasattr(os, "memfd_create"):
        return
    wanted = plan(argv)
    if wanted is None:
        return
    started = time.time()
    try:
        fd = os.memfd_create("quarry-walk", os.MFD_CLOEXEC)
    except OSError:
        return
    sys.stdout.flush()  # nothing buffered is written twice (the child never flushes: _exit)
    sys.stderr.flush()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)
        return
    if pid == 0:
        _child(wanted, fd, parent)
    _pending = Ahead(wanted, pid, fd, started)
    if wanted.pool:
        _start_pool()


def _start_pool() -> None:
    """Start the read pool's forkserver now, for a sweep that will read every file: its
    imports (every reader, ~0.2 s) overlap the engine's instead of following them (the
    sweeper would start it after its own imports; it finds this one running)."""
    try:
        from engine import procs

        procs.start_forkserver(procs.worker_context())
    except Exception:  # the sweeper starts it as before
        pass


def columns(listing: Listing) -> tuple[object, ...]:
    """A listing's fields in order, as marshal carries them (:func:`listing_of` again): its
    arrays as their bytes, which marshal takes and arrays do not."""
    return (
        listing.root,
        listing.paths,
        listing.sizes.tobytes(),
        listing.mtimes.tobytes(),
        listing.odd,
        listing.left_out,
    )


def listing_of(found: Sequence[Any]) -> Listing:
    """The listing :func:`columns` gave ``found`` of."""
    from array import array

    from engine.walk import Listing

    root, paths, sizes, mtimes, odd, left_out = found
    return Listing(root, paths, array("q", sizes), array("q", mtimes), odd, left_out)


def _child(wanted: Plan, fd: int, parent: int) -> None:
    """Walk, write the listings as one marshal blob, and end at once (no exit handlers: they
    are the parent's)."""
    code = 1
    try:
        _die_with(parent)
        import marshal
        from pathlib import Path

        from engine.walk import walk

        rules = rules_of(wanted)
        data = marshal.dumps([columns(walk(Path(root), rules)) for root in wanted.roots])
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        code = 0
    finally:  # never back into the parent's code, whatever ended the walk: a failed child
        os._exit(code)  # only means that the sweep walks for itself (its exit code says so)


def _die_with(parent: int) -> None:
    """Be killed when the parent dies (Linux's parent-death signal): a sweep killed while it
    imports leaves no walk of a big tree going on without it."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the request took hold
        os._exit(1)


def rules_of(wanted: Plan) -> WalkRules:
    """The walk rules the child of ``wanted`` walks with."""
    from engine.limits import DEFAULT_MAX_BYTES
    from engine.walk import WalkRules

    return WalkRules(wanted.excludes, (wanted.out,), DEFAULT_MAX_BYTES, wanted.defaults)


def take(roots: list[str], rules: WalkRules) -> tuple[list[Listing], float] | None:
    """The child's listings of ``roots`` and when its walk started, if it walked exactly these
    roots with exactly these rules and ended well; else None (and the child is ended). Once:
    the listings go to the first walk that asks."""
    global _pending
    ahead, _pending = _pending, None
    if ahead is None:
        return None
    if tuple(roots) != ahead.plan.roots or rules != rules_of(ahead.plan):
        _drop(ahead)
        return None
    try:
        return _collect(ahead)
    finally:
        os.close(ahead.fd)


def _collect(ahead: Ahead) -> tuple[list[Listing], float] | None:
    """The child's listings once it has ended well; None when it did not or cannot be known
    (a parent that ignores SIGCHLD has its children reaped for it: no status to read)."""
    import marshal

    try:
        _, status = os.waitpid(ahead.pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        with open(ahead.fd, "rb", closefd=False) as f:
            f.seek(0)
            found = marshal.loads(f.read())
        listings = [listing_of(columns) for columns in found]
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return listings, ahead.started


def _drop(ahead: Ahead) -> None:
    """End the child and let its memory file go."""
    import signal

    try:
        os.kill(ahead.pid, signal.SIGKILL)
        os.waitpid(ahead.pid, 0)
    except OSError:
        pass  # ended already, and reaped
    os.close(ahead.fd)


def discard() -> None:
    """End a child nobody took (a command that failed before its sweep walked)."""
    global _pending
    ahead, _pending = _pending, None
    if ahead is not None:
        _drop(ahead)
