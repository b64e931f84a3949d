"""Maps MIME types to readers, and says which readers could not load and why.

Every module in :mod:`engine.readers` that defines ``READERS`` (a tuple of reader objects) is
picked up, so a new format family is one new file. A module that fails to import (a Python
dependency missing or broken) gives no reader: its types fall back to
``unsupported/no_reader``, and it is listed with the error in :func:`unloaded` (``quarry
tools`` and the dashboard's tools screen show it) rather than dropped in silence.

Readers from elsewhere (the tests' fault reader) come in through the sweep's options
(:attr:`engine.sweep.SweepOptions.readers`, ``--reader MODULE:ATTR``): :func:`use_extra`
sets them for this process, and the worker pools hand :func:`extra` to the processes they
start, which call :func:`use_extra` in turn (:mod:`engine.worker`,
:mod:`engine.executors.dask_worker`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the stat index imports this module for extra() alone
    from engine.readers.base import Reader

_SKIP = {"base", "registry", "__init__"}


@dataclass(frozen=True, slots=True)
class Unloaded:
    """A reader module that could not be imported: it reads nothing."""

    module: str
    """Its module (``engine.readers.pdf``)."""
    why: str
    """The import's error, one line (``ModuleNotFoundError: No module named 'pypdf'``)."""

    @property
    def line(self) -> str:
        """One line for people: the module's short name and why."""
        return f"{self.module.rpartition('.')[2]}: {self.why}"


_extra: tuple[str, ...] = ()
"""``module:attribute`` names of extra reader tuples (see :func:`use_extra`)."""


def use_extra(specs: Sequence[str]) -> None:
    """Read with the reader tuples ``specs`` names (``module:attribute``, the attribute
    ``READERS`` when left out) besides the built-in ones, from now on in this process; an
    empty ``specs`` goes back to the built-in readers alone. A name that does not import
    raises at the first lookup (an extra reader is asked for, never optional)."""
    global _extra
    specs = tuple(specs)
    if specs != _extra:
        _extra = specs
        reset()


def extra() -> tuple[str, ...]:
    """The extra readers in use (:func:`use_extra`), for the processes a pool starts."""
    return _extra


@cache
def _builtin() -> tuple[tuple[Reader, ...], tuple[Unloaded, ...]]:
    import pkgutil

    import engine.readers as pkg

    readers: list[Reader] = []
    failed: list[Unloaded] = []
    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if mod.name in _SKIP or mod.name.startswith("_"):
            continue
        name = f"engine.readers.{mod.name}"
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # its dependency is missing: said, not fatal
            failed.append(Unloaded(name, _one_line(exc)))
            continue
        readers.extend(getattr(module, "READERS", ()))
    return tuple(readers), tuple(failed)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def builtin_readers() -> tuple[Reader, ...]:
    """The readers of :mod:`engine.readers` that imported, in a stable order."""
    return _builtin()[0]


def unloaded() -> tuple[Unloaded, ...]:
    """The reader modules of :mod:`engine.readers` that could not be imported, and why."""
    return _builtin()[1]


@cache
def all_readers() -> tuple[Reader, ...]:
    """Every reader that imported, then the extra ones (:func:`use_extra`)."""
    return (*builtin_readers(), *_extra_readers(_extra))


def _extra_readers(specs: Iterable[str]) -> Iterable[Reader]:
    for item in specs:
        module_name, _, attr = item.partition(":")
        yield from getattr(importlib.import_module(module_name), attr or "READERS")


@cache
def _by_mime() -> dict[str, Reader]:
    table: dict[str, Reader] = {}
    for reader in all_readers():
        for mime in reader.mimes:
            table.setdefault(mime, reader)
    return table


def reader_for(mime: str) -> Reader | None:
    """The reader for ``mime``: an exact match, else the ``major/*`` wildcard."""
    table = _by_mime()
    return table.get(mime) or table.get(mime.split("/", 1)[0] + "/*")


def reader_named(name: str) -> Reader | None:
    """The reader called ``name``."""
    for reader in all_readers():
        if reader.name == name:
            return reader
    return None


def reader_versions() -> dict[str, int]:
    """Reader name -> version, for the summary and the plan."""
    return {r.name: r.version for r in all_readers()}


def reset() -> None:
    """Forget the readers found, so the next lookup imports them again (for tests that
    change what can be imported)."""
    _builtin.cache_clear()
    all_readers.cache_clear()
    _by_mime.cache_clear()
