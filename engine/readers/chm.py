"""Compiled HTML Help (``.chm``): the text of its pages, in the order of its contents.

A CHM file is an archive of HTML pages compressed with LZX, which no Python library reads
without a C library of its own. chmlib's tools (``libchm-bin``) do: ``enum_chmLib`` lists the
archive's objects with their sizes, and ``test_chmLib`` writes one object to a file the reader
names. Each page is fetched that way, one at a time, into the read's own temporary folder:
never ``extract_chmLib``, which writes every object under a path the archive chooses and
without a bound on their bytes.

The pages come in the order of the help's table of contents (its ``.hhc`` sitemap: each
``<param name="Local">``), then every other page in the order of the archive's listing; each
is decoded as an HTML page is (:func:`engine.readers.html.decode_html`, the charset its
``<meta>`` or its bytes say) and written as the HTML reader writes a page. The archive bounds
apply as to an archive's members: pages read (``archive_members``) and their bytes, counted
from the listing before a page is fetched (``archive_bytes``); a page past a bound is not
fetched, and the record's ``error`` says how many were not. Without the tools the file is
``unsupported/needs_tool`` naming them; a file chmlib cannot open is ``error/corrupt``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.html import decode_html, html_to_text
from engine.readers.members import scratch_dir

_LIST, _FETCH = "enum_chmLib", "test_chmLib"
_ENTRY = re.compile(r"^\s*\d+\s+\d+\s+(\d+)\s+(?:normal|special|meta)?\s*file\s+(/.*?)\s*$")
"""A line of ``enum_chmLib``'s listing: space, start, length, kind, name."""
_PAGE_SUFFIXES = (".htm", ".html", ".xhtml", ".shtml")
_LOCAL = re.compile(
    rb"""<param\s+name\s*=\s*["']?local["']?\s+value\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I
)
_SITEMAP_BYTES = 16 * 1024 * 1024
"""A table of contents bigger than this is not read (its pages still are, in listing order)."""


def _listing(out: bytes) -> dict[str, int]:
    """The files ``enum_chmLib`` lists (their names, as chmlib spells them) and their sizes."""
    files: dict[str, int] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        if match := _ENTRY.match(line):
            files[match.group(2)] = int(match.group(1))
    return files


def _is_page(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return name.lower().endswith(_PAGE_SUFFIXES) and not base.startswith(("#", "$"))


def _contents_order(sitemap: bytes, files: dict[str, int]) -> list[str]:
    """The pages the table of contents names, in its order, as the listing spells them."""
    by_lower = {name.lower(): name for name in files}
    order: list[str] = []
    for match in _LOCAL.finditer(sitemap):
        raw = (match.group(1) or match.group(2) or b"").decode("utf-8", "replace")
        local = unquote(raw.rpartition("::")[2] if "::" in raw else raw).partition("#")[0]
        name = by_lower.get("/" + local.lstrip("/").replace("\\", "/").lower())
        if name is not None and _is_page(name) and name not in order:
            order.append(name)
    return order


class ChmReader:
    """Reads Compiled HTML Help files through chmlib's tools."""

    name = "chm"
    version = 1
    mimes = frozenset({M.CHM})
    tools = (_LIST, _FETCH)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the text of every page of ``path``, contents first."""
        ctx.require(*self.tools)
        source = os.fspath(path.absolute())
        files = _listing(ctx.run_tool(_LIST, [source]))
        if not files:
            raise CorruptFile("chmlib cannot open it as a Compiled HTML Help file")
        pages = [name for name in files if _is_page(name)]
        with scratch_dir() as scratch:
            fetch = _Fetcher(ctx, source, Path(scratch))
            order = self._order(fetch, files, pages)
            done, skipped, bound = 0, 0, ""
            for name in order:
                try:
                    data = fetch(name, files[name])
                except LimitExceeded as exc:
                    skipped, bound = skipped + len(order) - done, f" ({exc})"
                    break
                done += 1
                if data is None:
                    skipped += 1
                    continue
                markup, _encoding = decode_html(data)
                html_to_text(markup, sink)
                sink.end_line()
        note = f"{skipped} of {len(order)} pages not read{bound}" if skipped else None
        return ReadInfo("chmlib", pages=len(order), note=note)

    @staticmethod
    def _order(fetch: _Fetcher, files: dict[str, int], pages: list[str]) -> list[str]:
        """Every page: those the table of contents names first, in its order."""
        sitemaps = [n for n in files if n.lower().endswith(".hhc") and files[n] <= _SITEMAP_BYTES]
        first: list[str] = []
        if sitemaps:
            try:
                sitemap = fetch(sitemaps[0], files[sitemaps[0]], counted=False)
            except LimitExceeded:  # (its pages are fetched in the listing's order, as far
                sitemap = None  # as the bounds let them)
            first = _contents_order(sitemap or b"", files)
        named = set(first)
        return first + [name for name in pages if name not in named]


class _Fetcher:
    """Fetches one object at a time into the read's folder, under the archive bounds."""

    def __init__(self, ctx: ReadContext, source: str, folder: Path) -> None:
        self.ctx = ctx
        self.source = source
        self.folder = folder
        self.count = 0

    def __call__(self, name: str, size: int, *, counted: bool = True) -> bytes | None:
        """The bytes of object ``name`` (None when chmlib cannot give them); LimitExceeded,
        before it is fetched, when it would pass a bound."""
        limits = self.ctx.limits
        if counted:
            self.count += 1
            if self.count > limits.archive_members:
                raise LimitExceeded("archive_members", f"more than {limits.archive_members} pages")
        self.ctx.budget.spend(size, limits)
        out = self.folder / "object"
        self.ctx.run_tool(_FETCH, [self.source, name, os.fspath(out)])
        try:  # (test_chmLib says "failed" and exits 0 when it cannot resolve an object)
            with open(out, "rb") as fh:
                return fh.read(size + 1)[:size]
        except OSError:
            return None
        finally:
            out.unlink(missing_ok=True)


READERS = (ChmReader(),)
