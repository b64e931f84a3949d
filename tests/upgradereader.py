"""A reader in two versions that read the same bytes to different texts, as an upgraded
reader does (issue 28: a store swept with ``V1``, then with ``V2``, has each file's content
read again to another text under the same content hash).

``V1`` gives the first :data:`FIRST` words of a file's printable runs, ``V2`` all of them.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink

V1_SPEC = "tests.upgradereader:V1"
V2_SPEC = "tests.upgradereader:V2"
FIRST = 3
"""Words the first version reads of a file."""
_WORD = re.compile(rb"[A-Za-z]+")


class WordsReader:
    """The words of a binary file, one line: the first :data:`FIRST` (version 1) or all."""

    name = "toy-upgrade"
    mimes = frozenset({"application/octet-stream"})
    tools: tuple[str, ...] = ()

    def __init__(self, version: int) -> None:
        self.version = version

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the words of ``path`` this version reads."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror}") from exc
        found = [w.decode("ascii") for w in _WORD.findall(data)]
        sink.write(" ".join(found[:FIRST] if self.version == 1 else found) + "\n")
        return ReadInfo(extractor=f"toy-upgrade {self.version}")


V1 = (WordsReader(1),)
V2 = (WordsReader(2),)
