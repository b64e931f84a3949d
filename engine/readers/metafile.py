"""Windows metafiles (EMF, EMF+ and WMF): the text their drawing commands write.

A metafile is a recording of drawing calls: the text in it (a diagram's labels, a slide or a
chart exported as a picture, clip art's captions) is in its text-output records as
characters, not pixels, so it is read without OCR and without a tool:

- EMF: ``EMR_EXTTEXTOUTW``/``A``, ``EMR_POLYTEXTOUTW``/``A`` and ``EMR_SMALLTEXTOUT``; the
  EMF+ strings (``EmfPlusDrawString``, ``EmfPlusDrawDriverString`` of characters) carried in
  its comments are read when its own records have no text (an "EMF+ only" file; a "dual"
  one draws the same text both ways).
- WMF: ``META_TEXTOUT`` and ``META_EXTTEXTOUT``, with or without the placeable header.

Runs of text are written in the order they are drawn, as the programs that write metafiles
draw a line's runs in reading order. A run that starts a new line (lower or higher than the
last, or left of where it began) starts a line; one that goes on the same line after a gap
wider than a fraction of a character gets a space. Where a run is on the page is taken from
its bounds (device units) when every run has them, else from its reference point: some
writers leave every reference at (0, 0). Runs that hold glyph indices rather than characters
(``ETO_GLYPH_INDEX``), and those in a symbol font (Wingdings' pictograms), are not text and are
left out, but for the Symbol font's, whose glyphs are Greek letters and mathematical signs (an
axis labelled in microns): those are read as the characters they show
(:mod:`engine.readers.symbolfont`), told by the font's face name. An 8-bit string (``A``
records, WMF) is decoded in the character set of the font selected when it is drawn (cp1252
without one).

A file whose header is not a metafile's is ``error/corrupt``; one cut short keeps the text of
its records before the cut, and says so, unless there was none.
"""

from __future__ import annotations

import heapq
import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.symbolfont import is_symbol, recode

_EMF_SIGNATURE = b" EMF"
_PLACEABLE = b"\xd7\xcd\xc6\x9a"
_EMF_EOF = 14

# EMF record types (MS-EMF 2.1.1)
_EXTTEXTOUTA, _EXTTEXTOUTW = 83, 84
_POLYTEXTOUTA, _POLYTEXTOUTW = 96, 97
_SMALLTEXTOUT = 108
_EXTCREATEFONTINDIRECTW = 82
_SELECTOBJECT, _DELETEOBJECT = 37, 40
_COMMENT = 70
_EMF_PLUS = 0x2B464D45  # "EMF+"
_PLUS_DRAW_STRING = 0x401C
_PLUS_DRAW_DRIVER_STRING = 0x4036
_PLUS_CMAP_LOOKUP = 0x1  # DriverStringOptionsCmapLookup: the glyphs are characters

# ExtTextOut options
_ETO_OPAQUE, _ETO_CLIPPED = 0x2, 0x4
_ETO_GLYPH_INDEX = 0x10
_ETO_NO_RECT = 0x100
_ETO_SMALL_CHARS = 0x200
_ETO_PDY = 0x2000

# WMF record functions (MS-WMF 2.1.1.1)
_META_EOF = 0x0000
_META_TEXTOUT = 0x0521
_META_EXTTEXTOUT = 0x0A32
_META_CREATEFONTINDIRECT = 0x02FB
_META_SELECTOBJECT = 0x012D
_META_DELETEOBJECT = 0x01F0
_META_CREATES_OBJECT = frozenset({0x02FA, 0x02FC, 0x02FB, 0x00F7, 0x01F9, 0x0142, 0x06FF})
"""Pen, brush, font, palette, pattern brush, DIB pattern brush, region: each takes the lowest
free slot of the object table."""

_Data: TypeAlias = bytes | mmap.mmap
"""A metafile's bytes: in memory, or mapped (a record sliced out of it is bytes)."""
_SYMBOL_CHARSET = 2
_ADOBE = -1
"""What :class:`_Fonts` keeps for a font whose face is the Symbol font, for its charset."""
_CHARSETS = {
    0: "cp1252", 1: "cp1252", 77: "mac_roman", 128: "cp932", 129: "cp949", 130: "johab",
    134: "gbk", 136: "big5", 161: "cp1253", 162: "cp1254", 163: "cp1258", 177: "cp1255",
    178: "cp1256", 186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250", 255: "cp437",
}  # fmt: skip
"""A LOGFONT's ``lfCharSet`` -> the code page its 8-bit strings are in."""

_STOCK_FONTS = frozenset(range(0x8000000A, 0x80000012))
"""EMF's stock objects that are fonts (OEM_FIXED_FONT .. DEFAULT_GUI_FONT)."""
_SPACE_GAP = 0.25
"""A gap wider than this many average characters of the run before it is a space."""


@dataclass(frozen=True, slots=True)
class _Run:
    """One string drawn: where (its reference point and its bounds, when it has them) and
    how wide its characters advance (0: not said)."""

    text: str
    x: float
    y: float
    bounds: tuple[int, int, int, int] | None
    advance: float


@dataclass(slots=True)
class _Fonts:
    """The object table's fonts as far as text needs them: slot -> character set."""

    slots: dict[int, int]
    current: int | None = None

    def select(self, slot: int) -> None:
        if slot in self.slots:
            self.current = self.slots[slot]
        elif slot in _STOCK_FONTS:  # in the system's code page
            self.current = None

    def codec(self) -> str | None:
        """The current font's code page; None for a symbol font (its characters are
        pictures); Latin-1 for the Symbol font (its bytes are its codes)."""
        if self.current == _SYMBOL_CHARSET:
            return None
        if self.current == _ADOBE:
            return "latin-1"
        return _CHARSETS.get(self.current if self.current is not None else 0, "cp1252")

    def create(self, slot: int, charset: int, face: str) -> None:
        """A font created into ``slot``: its character set, or the Symbol font's mark."""
        self.slots[slot] = _ADOBE if is_symbol(face) else charset


class MetafileReader:
    """Reads the text of EMF (with EMF+) and WMF pictures."""

    name = "metafile"
    version = 2
    """2: text in the Symbol font as the characters its glyphs show (it was left out)."""
    mimes = frozenset({M.EMF, M.WMF})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the metafile's text into ``sink``, a line per line it draws."""
        if ctx.data is not None:
            return self._read(ctx.data, ctx, sink)
        try:
            with open(path, "rb") as fh:
                if fh.seek(0, 2) == 0:
                    raise CorruptFile("an empty file is no metafile")
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    return self._read(mm, ctx, sink)
        except OSError as exc:
            raise CorruptFile(f"cannot read: {exc.strerror or type(exc).__name__}") from exc

    def _read(self, data: _Data, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        emf = ctx.mime == M.EMF
        cut = False
        try:
            runs = _emf_runs(data) if emf else _wmf_runs(data)
        except _Cut as exc:
            runs, cut = exc.runs, True
            if not runs:
                raise CorruptFile(f"not a whole metafile: {exc}") from None
        _write_lines(runs, sink)
        note = "the metafile is cut short: its text up to the cut" if cut else None
        return ReadInfo("emf" if emf else "wmf", note=note)


class _Cut(Exception):
    """The records end before the metafile does (``runs``: the text found before)."""

    def __init__(self, why: str, runs: list[_Run]) -> None:
        super().__init__(why)
        self.runs = runs


def _emf_runs(data: _Data) -> list[_Run]:
    """The text runs of an EMF, in drawing order (its EMF+ strings when it has no other)."""
    if len(data) < 88 or data[:4] != b"\x01\x00\x00\x00" or data[40:44] != _EMF_SIGNATURE:
        raise CorruptFile("no EMF header")
    runs: list[_Run] = []
    plus: list[_Run] = []
    fonts = _Fonts({})
    off = 0
    n = len(data)
    while off < n:
        if off + 8 > n:
            raise _Cut("a record's header runs past the end", runs or plus)
        kind, size = struct.unpack_from("<II", data, off)
        if size < 8 or size % 4 or off + size > n:
            raise _Cut(f"a record of {size} bytes at {off}", runs or plus)
        record = data[off : off + size]
        if kind == _EMF_EOF:
            break
        if kind in (_EXTTEXTOUTW, _EXTTEXTOUTA):
            runs.extend(_emf_text(record, 36, kind == _EXTTEXTOUTW, fonts))
        elif kind in (_POLYTEXTOUTW, _POLYTEXTOUTA) and size >= 40:
            (count,) = struct.unpack_from("<I", record, 36)
            for i in range(min(count, (size - 40) // 40)):
                runs.extend(_emf_text(record, 40 + 40 * i, kind == _POLYTEXTOUTW, fonts))
        elif kind == _SMALLTEXTOUT:
            runs.extend(_small_text(record, fonts))
        elif kind == _EXTCREATEFONTINDIRECTW and size >= 40:
            (slot,) = struct.unpack_from("<I", record, 8)
            face = bytes(record[40:104]).decode("utf-16-le", "replace").partition("\0")[0]
            fonts.create(slot, record[35], face)  # LOGFONTW's lfCharSet, lfFaceName
        elif kind == _SELECTOBJECT and size >= 12:
            fonts.select(struct.unpack_from("<I", record, 8)[0])
        elif kind == _DELETEOBJECT and size >= 12:
            fonts.slots.pop(struct.unpack_from("<I", record, 8)[0], None)
        elif kind == _COMMENT and size >= 16:
            plus.extend(_emf_plus(record))
        off += size
    return runs or plus


def _emf_text(record: bytes, at: int, wide: bool, fonts: _Fonts) -> Iterator[_Run]:
    """The run of the EmrText structure at ``at`` of ``record`` (none when it is glyph
    indices, in a symbol font, or out of the record's bounds)."""
    if at + 40 > len(record):
        return
    x, y, count, where, options = struct.unpack_from("<iiIII", record, at)
    if options & _ETO_GLYPH_INDEX:
        return
    dx_at = at + 20 if options & _ETO_NO_RECT else at + 36
    (dx_where,) = struct.unpack_from("<I", record, dx_at) if dx_at + 4 <= len(record) else (0,)
    text = _string(record, where, count, wide, fonts)
    if not text:
        return
    # (a record's bounds are its one string's; a POLYTEXTOUT's cover all of its strings)
    bounds = struct.unpack_from("<iiii", record, 8) if at == 36 else None
    step = 8 if options & _ETO_PDY else 4
    yield _Run(text, x, y, _bounds(bounds), _advance(record, dx_where, count, step, "<i"))


def _small_text(record: bytes, fonts: _Fonts) -> Iterator[_Run]:
    """EMR_SMALLTEXTOUT's run: its characters 8-bit with ETO_SMALL_CHARS, else UTF-16."""
    if len(record) < 36:
        return
    x, y, count, options = struct.unpack_from("<iiII", record, 8)
    if options & _ETO_GLYPH_INDEX:
        return
    where = 36 if options & _ETO_NO_RECT else 52
    text = _string(record, where, count, not options & _ETO_SMALL_CHARS, fonts)
    if text:
        yield _Run(text, x, y, None, 0.0)


def _string(record: bytes, where: int, count: int, wide: bool, fonts: _Fonts) -> str:
    """The ``count`` characters at ``where`` in ``record`` ("" for what is not text)."""
    size = count * 2 if wide else count
    if count == 0 or where < 8 or where + size > len(record):
        return ""
    raw = bytes(record[where : where + size])
    if wide:
        if fonts.current == _SYMBOL_CHARSET:
            return ""
        text = raw.decode("utf-16-le", "replace")
    else:
        codec = fonts.codec()
        if codec is None:
            return ""
        text = raw.decode(codec, "replace")
    return _clean(recode(text) if fonts.current == _ADOBE else text)


def _clean(text: str) -> str:
    """``text`` without the control characters and NULs some writers pad strings with."""
    return "".join(c if c >= " " or c == "\t" else " " for c in text.replace("\x00", ""))


def _bounds(box: tuple[int, ...] | None) -> tuple[int, int, int, int] | None:
    """A record's bounds, or None for the empty ones (right < left: "not computed")."""
    if box is None or box[2] < box[0] or box[3] < box[1] or box == (0, 0, 0, 0):
        return None
    return (box[0], box[1], box[2], box[3])


def _advance(record: bytes, where: int, count: int, step: int, fmt: str) -> float:
    """The width the run's characters advance (the sum of its spacing array, whose entries
    are ``step`` bytes apart), 0 without one."""
    if where < 6 or count == 0 or where + step * count > len(record):
        return 0.0
    return float(sum(struct.unpack_from(fmt, record, where + step * i)[0] for i in range(count)))


def _emf_plus(record: bytes) -> Iterator[_Run]:
    """The strings of the EMF+ records in an EMR_COMMENT (none in any other comment)."""
    (length,) = struct.unpack_from("<I", record, 8)
    if struct.unpack_from("<I", record, 12)[0] != _EMF_PLUS:
        return
    end = min(len(record), 12 + length)
    off = 16
    while off + 12 <= end:
        kind, _flags, size, data_size = struct.unpack_from("<HHII", record, off)
        if size < 12 or off + size > end:
            return
        body = record[off + 12 : off + 12 + min(data_size, size - 12)]
        if kind == _PLUS_DRAW_STRING and len(body) >= 28:
            (count,) = struct.unpack_from("<I", body, 8)
            x, y = struct.unpack_from("<ff", body, 12)
            text = _clean(bytes(body[28 : 28 + 2 * count]).decode("utf-16-le", "replace"))
            if text.strip():
                yield _Run(text, x, y, None, 0.0)
        elif kind == _PLUS_DRAW_DRIVER_STRING and len(body) >= 16:
            _brush, options, _matrix, count = struct.unpack_from("<IIII", body, 0)
            if options & _PLUS_CMAP_LOOKUP and 16 + 2 * count + 8 <= len(body):
                chars = bytes(body[16 : 16 + 2 * count]).decode("utf-16-le", "replace")
                x, y = struct.unpack_from("<ff", body, 16 + 2 * count)
                if (text := _clean(chars)).strip():
                    yield _Run(text, x, y, None, 0.0)
        off += size


def _wmf_runs(data: _Data) -> list[_Run]:
    """The text runs of a WMF (its placeable header, if any, skipped)."""
    start = 22 if data[:4] == _PLACEABLE else 0
    if len(data) < start + 18:
        raise CorruptFile("no WMF header")
    kind, header_words, version = struct.unpack_from("<HHH", data, start)
    if kind not in (1, 2) or header_words != 9 or version not in (0x0100, 0x0300):
        raise CorruptFile("no WMF header")
    runs: list[_Run] = []
    fonts = _Fonts({})
    table = _Slots()
    off = start + 18
    n = len(data)
    while off < n:
        if off + 6 > n:
            raise _Cut("a record's header runs past the end", runs)
        words, function = struct.unpack_from("<IH", data, off)
        size = words * 2
        if size < 6 or off + size > n:
            raise _Cut(f"a record of {size} bytes at {off}", runs)
        if function == _META_EOF:
            break
        record = data[off : off + size]
        if function == _META_TEXTOUT:
            runs.extend(_wmf_textout(record, fonts))
        elif function == _META_EXTTEXTOUT:
            runs.extend(_wmf_exttextout(record, fonts))
        elif function in _META_CREATES_OBJECT:
            slot = table.take()
            if function == _META_CREATEFONTINDIRECT and size >= 6 + 14:
                face = bytes(record[6 + 18 : 6 + 50]).partition(b"\0")[0].decode("latin-1")
                fonts.create(slot, record[6 + 13], face)  # Font's CharSet, FaceName
            else:
                fonts.slots.pop(slot, None)
        elif function == _META_SELECTOBJECT and size >= 8:
            fonts.select(struct.unpack_from("<H", record, 6)[0])
        elif function == _META_DELETEOBJECT and size >= 8:
            (slot,) = struct.unpack_from("<H", record, 6)
            table.free(slot)
            fonts.slots.pop(slot, None)
        off += size
    return runs


class _Slots:
    """A WMF's object table: a new object takes the lowest free slot (freed slots kept in a
    heap: a file of many objects costs a logarithm each, not a scan of the table)."""

    def __init__(self) -> None:
        self.size = 0
        self._free: list[int] = []
        self._freed: set[int] = set()

    def take(self) -> int:
        if self._free:
            slot = heapq.heappop(self._free)
            self._freed.discard(slot)
            return slot
        self.size += 1
        return self.size - 1

    def free(self, slot: int) -> None:
        if slot < self.size and slot not in self._freed:
            self._freed.add(slot)
            heapq.heappush(self._free, slot)


def _wmf_textout(record: bytes, fonts: _Fonts) -> Iterator[_Run]:
    """META_TEXTOUT: length, the string (padded to a word), then y and x."""
    if len(record) < 8:
        return
    (count,) = struct.unpack_from("<H", record, 6)
    padded = count + (count & 1)
    if 8 + padded + 4 > len(record):
        return
    y, x = struct.unpack_from("<hh", record, 8 + padded)
    text = _string(record, 8, count, False, fonts)
    if text:
        yield _Run(text, x, y, None, 0.0)


def _wmf_exttextout(record: bytes, fonts: _Fonts) -> Iterator[_Run]:
    """META_EXTTEXTOUT: y, x, length, options, a rectangle when the options say so, the
    string (padded to a word), then its spacing array."""
    if len(record) < 14:
        return
    y, x, count, options = struct.unpack_from("<hhhH", record, 6)
    if count <= 0 or options & _ETO_GLYPH_INDEX:
        return
    where = 14 + (8 if options & (_ETO_OPAQUE | _ETO_CLIPPED) else 0)
    text = _string(record, where, count, False, fonts)
    if text:
        dx = where + count + (count & 1)
        yield _Run(text, x, y, None, _advance(record, dx, count, 2, "<h"))


def _write_lines(runs: list[_Run], sink: TextSink) -> None:
    """Write ``runs`` as lines: see the module's docstring for where a line breaks."""
    boxed = all(run.bounds is not None for run in runs)
    line: list[str] = []
    last: _Run | None = None
    for run in runs:
        if last is not None:
            verdict = _follows(last, run, boxed)
            if verdict is None:
                _flush(line, sink)
                line = []
            elif verdict and not line[-1].endswith(" ") and not run.text.startswith(" "):
                line.append(" ")
        line.append(run.text)
        last = run
    _flush(line, sink)


def _follows(last: _Run, run: _Run, boxed: bool) -> bool | None:
    """Whether ``run`` goes on ``last``'s line after a gap (True), right after it (False),
    or starts a line (None)."""
    if boxed and last.bounds is not None and run.bounds is not None:
        left, top, right, bottom = last.bounds
        n_left, n_top, _, n_bottom = run.bounds
        middle = (n_top + n_bottom) / 2
        if not top <= middle <= bottom or n_left < left:
            return None
        width = (right - left) / max(1, len(last.text))
        return n_left - right > _SPACE_GAP * width
    if run.y != last.y or run.x < last.x:
        return None
    if run.x == last.x:  # (a writer that leaves every reference at one point)
        return False
    if last.advance <= 0:
        return True
    width = last.advance / max(1, len(last.text))
    return run.x - (last.x + last.advance) > _SPACE_GAP * width


def _flush(line: list[str], sink: TextSink) -> None:
    text = "".join(line).strip()
    if text:
        sink.line(text)


READERS = (MetafileReader(),)
