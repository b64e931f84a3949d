"""How much the cyclic garbage collector runs while the engine makes many objects at once.

A sweep makes an object or several per file and few cycles: the collector, left at the
interpreter's defaults, walked them again and again. A run and a store's load pause or slow it
here, and put it back as it was.

What is frozen out of the collector's view is what lives as long as the store is held (the
modules, the records just loaded), frozen once, when a sweeper has loaded its store: never the
objects of a run. A watcher runs a sweep per batch; a freeze at each run's start took every
cycle the batches before it had left (each run was one) out of the collector's view before
any collection could see it, and put it back only where no collection comes (the oldest
generation, uncounted): ``quarry watch`` grew by about 1.4 KB a change.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

GC_YOUNG = 20_000
"""Allocations between the cyclic garbage collector's young collections during a run (the
interpreter's default, 700, made the engine collect thousands of times in a cold sweep of
20,000 files)."""


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the cyclic garbage collector less while a sweep runs.

    Young collections come every :data:`GC_YOUNG` allocations: about a tenth of the engine's
    CPU in a cold sweep of small files went to the collector. Everything goes back as it was
    afterwards; reference counting still frees what is not in a cycle at once, and the
    collector still frees the cycles a run leaves (nothing made here is frozen).
    """
    with _GC_LOCK:
        _GC_RUNS.append(gc.get_threshold())
        if len(_GC_RUNS) == 1:  # runs in other threads at once: the first sets, the last resets
            young, middle, old = _GC_RUNS[0]
            if young:  # 0: collection is off and stays off
                gc.set_threshold(max(young, GC_YOUNG), middle, old)
    try:
        yield
    finally:
        with _GC_LOCK:
            first = _GC_RUNS[0]
            _GC_RUNS.pop()
            if not _GC_RUNS:
                gc.set_threshold(*first)


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """What exists now lives as long as this is held: out of the collector's view till then.

    Entered once a sweeper has loaded its store (modules and records live as long as it
    does), left when the sweeper closes: collections during its runs walk only what the runs
    made, not the store's records again and again. Holders in other threads at once: the
    first freezes, the last unfreezes.
    """
    global _FROZEN_HOLDERS
    with _GC_LOCK:
        _FROZEN_HOLDERS += 1
        if _FROZEN_HOLDERS == 1:
            gc.freeze()
    try:
        yield
    finally:
        with _GC_LOCK:
            _FROZEN_HOLDERS -= 1
            if not _FROZEN_HOLDERS:
                gc.unfreeze()


@contextlib.contextmanager
def no_collections() -> Iterator[None]:
    """No cyclic garbage collection while a store is loaded: decoding makes records, their
    strings and tuples, and no cycles, yet each collection walks what was made so far.
    Decoding and indexing 100,000 records took 0.66-0.69 s with the default collections,
    0.62-0.69 s under :func:`fewer_collections` and 0.50-0.51 s with none."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_GC_LOCK = threading.Lock()
_GC_RUNS: list[tuple[int, int, int]] = []
"""The thresholds found by each run under way (the first one's are put back)."""
_FROZEN_HOLDERS = 0
"""How many holders of :func:`long_lived` there are now (the last one unfreezes)."""


LET_GO_FILES = 20_000
"""Files a sweep must have held before :func:`let_go` collects after it: below that, what it
dropped is a few MB at most, and a full collection walks every object of the process (in a
process that holds much else, the test suite's, ~40-150 ms a sweep: it made the suite's
thousands of small sweeps minutes slower)."""


def let_go(files: int | None = None) -> None:
    """Give the memory of what was just dropped (a million records) back to the system: a
    collection for what the collector holds, then glibc's ``malloc_trim`` for the free pages
    it keeps (elsewhere, or without it, the collection alone). ``files``: how many files the
    dropped objects were about; under :data:`LET_GO_FILES` nothing is done."""
    if files is not None and files < LET_GO_FILES:
        return
    gc.collect()
    import ctypes  # (here: ~2 ms a command that never lets go, a quick sweep's)

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
