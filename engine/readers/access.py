"""Microsoft Access databases (``.mdb``, Jet 3 and 4; ``.accdb``, ACE) through mdbtools.

``mdb-tables`` names the user tables (the system ones left out), ``mdb-export`` writes each as
CSV, read as it comes (:mod:`engine.readers.toolpipe`): a ``# table NAME`` line, then the
header and each row as tab-separated cells, as the spreadsheet readers write a sheet. Dates
come out as ISO dates and times, booleans as TRUE/FALSE, binary fields (OLE objects,
attachments) left out. A table that cannot be exported is named in the record's note and the
others are read; a file none of whose tables can be read is ``error/corrupt`` in the tool's
words. No Python library reads Jet databases without a driver of the system's.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded, ReadFailure, ToolFailed
from engine.names import shown
from engine.readers.base import ReadContext, ReadInfo, TextSink, csv_fields
from engine.readers.toolpipe import piped

_FIELD_BREAKS = re.compile(r"[\t\r\n]+")
_EXPORT = ["-D", "%Y-%m-%d", "-T", "%Y-%m-%d %H:%M:%S", "-B", "-b", "strip"]
"""mdb-export's options: ISO dates and times, TRUE/FALSE, binary fields stripped."""


class AccessReader:
    """Access databases: every user table's rows, through mdb-tables and mdb-export."""

    name = "access"
    version = 1
    mimes = frozenset({M.ACCESS, "application/vnd.ms-access"})
    tools: tuple[str, ...] = ("mdb-tables", "mdb-export")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each table's rows under its ``# table`` line."""
        ctx.require(*self.tools)  # both: mdb-tables names the tables, mdb-export reads them
        tables = _tables(path, ctx)
        sink.describe("mdb-export", pages=len(tables))
        failed: list[tuple[str, ReadFailure]] = []
        for table in tables:
            try:
                _export(path, table, ctx, sink)
            except (ToolFailed, CorruptFile) as exc:  # that table's: the others are read
                failed.append((shown(table), exc))
        if not failed:
            return ReadInfo("mdb-export", pages=len(tables))
        name, first = failed[0]
        if len(failed) == len(tables):  # the first table's failure, of its kind, says it
            raise type(first)(f"no table could be read; {name}: {first}"[:300])
        note = f"{len(failed)} of {len(tables)} tables not read; {name}: {first}"[:300]
        return ReadInfo("mdb-export", pages=len(tables), note=note)


def _tables(path: Path, ctx: ReadContext) -> list[str]:
    """The user tables' names, in the database's order (at most ``parts_per_block``)."""
    try:
        out = ctx.run_tool("mdb-tables", ["-1", "--", str(path)])
    except ToolFailed as exc:  # (it opens nothing but Jet and ACE files)
        raise CorruptFile(f"mdb-tables could not open it: {_words(str(exc))}") from exc
    names = [n for n in out.decode("utf-8", "replace").splitlines() if n.strip()]
    if len(names) > ctx.limits.parts_per_block:
        raise LimitExceeded("parts_per_block", f"more than {ctx.limits.parts_per_block} tables")
    return names


def _words(error: str) -> str:
    """A tool's failure without the exit status before its words."""
    return error.split(": ", 1)[-1] if " exited " in error else error


def _export(path: Path, table: str, ctx: ReadContext, sink: TextSink) -> None:
    """One table's block, its CSV read as mdb-export writes it; the tool's failure raised
    once what it wrote is taken (a table cut short keeps its first rows)."""
    with piped(ctx, "mdb-export", [*_EXPORT, "--", str(path), table]) as tool:
        text = io.TextIOWrapper(tool.stdout, encoding="utf-8", errors="replace", newline="")
        try:
            with csv_fields(ctx.limits.csv_field_chars, "mdb-export wrote malformed CSV"):
                rows = (_cells(row) for row in csv.reader(text, strict=False))
                sink.rows(f"# table {shown(table)}", rows)
        finally:
            text.detach()  # the pipe is the tool's to close
        end = tool.end()
        failure = tool.failure(end)
        if failure is not None and end.code is not None and end.code > 0:
            raise CorruptFile(f"mdb-export: {end.error or f'exited {end.code}'}"[:300])
        if failure is not None:  # its time ran out, or it died of a signal
            raise failure


def _cells(row: list[str]) -> list[str]:
    return [_FIELD_BREAKS.sub(" ", cell).strip() for cell in row]


READERS = (AccessReader(),)
