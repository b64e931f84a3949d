"""CSV and TSV: one tab-separated line per row, through the :mod:`csv` module.

The bytes are decoded as plain text is (see :mod:`engine.readers.text`) and streamed line by
line into :func:`csv.reader`, so a big table never sits in memory whole. Tabs and line
breaks inside a field become spaces, so a row stays one line; blank rows are dropped.
Malformed quoting is read the way the csv module's lenient mode reads it. A field longer
than ``limits.csv_field_chars`` or a line longer than the text cap stops the read with
:class:`~engine.errors.LimitExceeded`. A CSV whose first line has more semicolons (the
spreadsheet export of comma-decimal locales) or pipes than commas is split on those.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink, csv_fields
from engine.readers.text import decode_file

_FIELD_BREAKS = re.compile(r"[\t\r\n]+")


def _lines(pieces: Iterable[str], max_line: int) -> Iterator[str]:
    """Split decoded text into lines ending in ``\\n``; CR and CRLF count as line ends."""
    carry = ""
    for piece in pieces:
        text = carry + piece
        # Hold a trailing CR back: its LF may open the next piece.
        hold = text.endswith("\r")
        if hold:
            text = text[:-1]
        parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        carry = parts.pop() + ("\r" if hold else "")
        if len(carry) > max_line:
            raise LimitExceeded("max_chars", f"a line is longer than {max_line} characters")
        for part in parts:
            yield part + "\n"
    if carry:
        yield carry.rstrip("\r") + "\n"


def _delimiter(mime: str, first_line: str) -> str:
    if mime == M.TSV:
        return "\t"
    counts = {d: first_line.count(d) for d in ",;|"}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > counts[","] else ","


def _peek(lines: Iterator[str]) -> tuple[str, Iterator[str]]:
    first = next(lines, "")

    def chained() -> Iterator[str]:
        if first:
            yield first
        yield from lines

    return first, chained()


def write_rows(rows: Iterable[list[str]], sink: TextSink) -> int:
    """Write each non-blank row as one tab-separated line; return the rows written."""
    count = 0
    for row in rows:
        if not any(row):
            continue
        sink.line("\t".join(_FIELD_BREAKS.sub(" ", field.strip("\r\n")) for field in row))
        count += 1
    return count


class CsvReader:
    """Reads comma- and tab-separated tables."""

    name = "csv"
    version = 2
    mimes = frozenset({M.CSV, M.TSV})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each row of the table at ``path`` as a tab-separated line."""
        with csv_fields(ctx.limits.csv_field_chars):
            try:
                with open(path, "rb") as fh:
                    _encoding, pieces = decode_file(fh, path.stat().st_size)
                    lines = _lines(pieces, max(ctx.limits.max_chars, ctx.limits.csv_field_chars))
                    first, lines = _peek(lines)
                    delimiter = _delimiter(ctx.mime, first)
                    write_rows(csv.reader(lines, delimiter=delimiter, strict=False), sink)
            except OSError as exc:
                raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
        return ReadInfo(extractor="tsv" if ctx.mime == M.TSV else "csv")


READERS = (CsvReader(),)
