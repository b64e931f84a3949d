"""A toy reader, added as README's "A new reader takes" says, through the public seams only:
a ``READERS`` tuple of objects with a name, a version, MIME types, tools and ``read``.

It reads what no built-in reader claims (``application/octet-stream``): the runs of four or
more printable ASCII characters, one a line, as ``strings`` does.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink

SPEC = "tests.toyreader"
"""Its name for ``--reader`` and ``SweepOptions.readers``."""
_RUN = re.compile(rb"[\x20-\x7e]{4,}")


class StringsReader:
    """The printable runs of a binary file."""

    name = "toy-strings"
    version = 1
    mimes = frozenset({"application/octet-stream"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each printable run of ``path`` on a line of its own."""
        try:
            data = path.read_bytes()  # (the sink caps the text at the limits)
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror}") from exc
        sink.describe("toy-strings")
        for run in _RUN.findall(data):
            sink.write(run.decode("ascii") + "\n")
        return ReadInfo(extractor="toy-strings")


READERS = (StringsReader(),)
