"""FITS files (astronomy's images and tables): the header of each of their units, no tool.

A FITS file is a run of header-and-data units (HDUs). Each header is ASCII cards of 80
characters (``KEYWORD = value / comment``, ``HISTORY`` and ``COMMENT`` lines) in blocks of
2,880 bytes, ended by an ``END`` card; its data follows, as long as the header's ``BITPIX``,
``NAXISn``, ``PCOUNT`` and ``GCOUNT`` say, padded to a block. The headers are what a person
reads (the object, the telescope, the date, the instrument, the processing history); the data
is numbers. Read as text before, the pixels made every record ``garbled``.

Each header is written after a ``# header N`` line, one card a line (trailing spaces and blank
cards left out); the data is skipped by seeking past it, never read. At most
:data:`MAX_UNITS` units and :data:`MAX_CARDS` cards a header; a header cut short keeps the
cards before the cut, and so does one with a card that is no text (its bytes past printable
ASCII); a file that is no FITS past its first bytes is ``error/corrupt``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import BinaryIO

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink

BLOCK = 2880
CARD = 80
MAX_UNITS = 1000
"""Units read of one file (a file of more names the bound in its record's note)."""
MAX_CARDS = 100_000
"""Cards read of one header."""
_VALUE = re.compile(rb"^([A-Z0-9_-]{1,8}) *= *([-+]?\d+)")
_PRINTABLE = re.compile(rb"[\x20-\x7e]*")


class _Header:
    """One unit's cards and the numbers that size its data."""

    def __init__(self) -> None:
        self.cards: list[str] = []
        self.numbers: dict[str, int] = {}
        self.ended = False
        self.damaged = False
        """A card held bytes no card may (FITS cards are printable ASCII): read no further."""

    def add(self, card: bytes) -> None:
        if card[:8].rstrip() == b"END":
            self.ended = True
            return
        if not _PRINTABLE.fullmatch(card):
            self.damaged = True
            return
        text = card.decode("ascii").rstrip()
        if text:
            self.cards.append(text)
        m = _VALUE.match(card)
        if m is not None:
            self.numbers[m.group(1).decode("ascii")] = int(m.group(2))

    def data_bytes(self, primary: bool) -> int:
        """The size of the data after this header, padded to a block."""
        n = self.numbers
        axes = n.get("NAXIS", 0)
        if axes <= 0:
            return 0
        sizes = [n.get(f"NAXIS{i}", 0) for i in range(1, min(axes, 999) + 1)]
        if primary and sizes[0] == 0 and len(sizes) > 1:  # random groups: NAXIS1 is 0
            sizes = sizes[1:]
        count = math.prod(max(0, s) for s in sizes)
        if not primary or n.get("GCOUNT") is not None:
            count = max(1, n.get("GCOUNT", 1)) * (max(0, n.get("PCOUNT", 0)) + count)
        bits = abs(n.get("BITPIX", 8)) * count
        size = (bits + 7) // 8
        return -(-size // BLOCK) * BLOCK


def _header(fh: BinaryIO) -> _Header | None:
    """The next unit's header (None at the end of the file)."""
    header = _Header()
    while not (header.ended or header.damaged) and len(header.cards) < MAX_CARDS:
        block = fh.read(BLOCK)
        if not block.strip(b"\x00 "):
            return None if not header.cards else header  # the end, or padding
        for at in range(0, len(block) - CARD + 1, CARD):
            header.add(block[at : at + CARD])
            if header.ended or header.damaged:
                break
        if len(block) < BLOCK:
            break  # cut short: the cards before the cut
    return header


class FitsReader:
    """FITS files, their headers' cards."""

    name = "fits"
    version = 1
    mimes = frozenset({M.FITS})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write each unit's header of the FITS file at ``path``."""
        note = None
        try:
            with open(path, "rb") as fh:
                size = path.stat().st_size
                units = 0
                while True:
                    if units == MAX_UNITS:
                        note = f"more than {MAX_UNITS} header-and-data units: the rest not read"
                        break
                    header = _header(fh)
                    if header is None:
                        break
                    if units == 0 and not _opens(header, "SIMPLE="):
                        raise CorruptFile("does not start with a FITS header (SIMPLE = T)")
                    if units > 0 and not _opens(header, "XTENSION="):
                        break  # bytes after the last unit that are none (a writer's padding)
                    units += 1
                    sink.line(f"# header {units}")
                    for card in header.cards:
                        sink.line(card)
                    if header.damaged:
                        note = (
                            f"header {units} is damaged (a card that is no text): read no further"
                        )
                        break
                    if not header.ended:
                        note = f"header {units} is cut short (no END card)"
                        break
                    skip = header.data_bytes(primary=units == 1)
                    if fh.tell() + skip >= size:
                        break
                    fh.seek(skip, 1)
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc
        return ReadInfo("fits", note=note)


def _opens(header: _Header, card: str) -> bool:
    """Whether ``header``'s first card is ``card`` (spaces aside): ``SIMPLE=`` the file's
    first unit, ``XTENSION=`` each unit after it."""
    return bool(header.cards) and header.cards[0].replace(" ", "").startswith(card)


READERS = (FitsReader(),)
