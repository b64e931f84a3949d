"""Maps MIME types to readers.

Every module in :mod:`engine.readers` that defines ``READERS`` (a tuple of reader objects) is
picked up, so a new format family is one new file. A reader whose Python dependency is missing
is dropped from the map (its module fails to import) and its types fall back to
``unsupported/no_reader``. Tests can add readers with :func:`extra_readers`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the stat index imports this module for EXTRA_ENV alone
    from engine.readers.base import Reader

_SKIP = {"base", "registry", "__init__"}
EXTRA_ENV = "QUARRY_EXTRA_READERS"
"""Comma-separated ``module:attribute`` names of extra reader tuples (tests' fault reader)."""


@cache
def all_readers() -> tuple[Reader, ...]:
    """Every reader that imported, in a stable order."""
    import pkgutil

    import engine.readers as pkg

    readers: list[Reader] = []
    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if mod.name in _SKIP or mod.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"engine.readers.{mod.name}")
        except ImportError:
            continue
        readers.extend(getattr(module, "READERS", ()))
    readers.extend(_extra_from_env())
    return tuple(readers)


def _extra_from_env() -> Iterable[Reader]:
    spec = os.environ.get(EXTRA_ENV, "")
    for item in filter(None, spec.split(",")):
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
    """Forget the discovered readers, so the next lookup imports them again (and reads
    ``QUARRY_EXTRA_READERS`` anew): for workers and tests that change it."""
    all_readers.cache_clear()
    _by_mime.cache_clear()
