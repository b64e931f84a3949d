"""EMF, EMF+ and WMF metafiles: the text their drawing records write, without OCR or a tool.

The metafiles here are written record by record (:class:`Emf`, :class:`Wmf`), as Office,
Visio and the Windows printing path write them; one real EMF (``data/metafile/``, see its
SOURCES.md) has every reference point at (0, 0).
"""

from __future__ import annotations

import contextlib
import struct
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, TextSink
from engine.readers.metafile import MetafileReader
from tests.quarrycli import sweep, text_shown
from tests.readkit import read_bytes

DATA = Path(__file__).parent / "data" / "metafile"
ETO_GLYPH_INDEX, ETO_NO_RECT, ETO_SMALL_CHARS = 0x10, 0x100, 0x200


def _pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


class Emf:
    """An EMF written record by record; ``bytes(emf)`` adds the header and the end."""

    def __init__(self) -> None:
        self.records: list[bytes] = []

    def record(self, kind: int, body: bytes) -> Emf:
        body = _pad4(body)
        self.records.append(struct.pack("<II", kind, 8 + len(body)) + body)
        return self

    def text(
        self,
        text: str,
        x: int,
        y: int,
        *,
        width: int = 10,
        bounds: tuple[int, int, int, int] = (0, 0, -1, -1),
        options: int = 0,
        wide: bool = True,
        raw: bytes | None = None,
    ) -> Emf:
        """EMR_EXTTEXTOUTW (``wide``) or A: ``text`` at (x, y), each character ``width``
        apart (the spacing array)."""
        data = raw if raw is not None else text.encode("utf-16-le" if wide else "cp1252")
        count = len(data) // 2 if wide else len(data)
        head = 76 if not options & ETO_NO_RECT else 60
        string = _pad4(data)
        fields = struct.pack("<4iIff", *bounds, 1, 1.0, 1.0)
        fields += struct.pack("<iiIII", x, y, count, head, options)
        if not options & ETO_NO_RECT:
            fields += struct.pack("<4i", 0, 0, 0, 0)
        fields += struct.pack("<I", head + len(string))
        return self.record(
            84 if wide else 83, fields + string + struct.pack(f"<{count}i", *[width] * count)
        )

    def font(self, slot: int, charset: int, face: str = "Arial") -> Emf:
        """EMR_EXTCREATEFONTINDIRECTW of a font in ``charset``, then its selection."""
        logfont = struct.pack("<5i8B", -12, 0, 0, 0, 400, 0, 0, 0, charset, 0, 0, 0, 0)
        logfont += face.encode("utf-16-le").ljust(64, b"\0")
        self.record(82, struct.pack("<I", slot) + logfont)
        return self.select(slot)

    def select(self, slot: int) -> Emf:
        return self.record(37, struct.pack("<I", slot))

    def plus_string(self, text: str, x: float, y: float) -> Emf:
        """An EMR_COMMENT holding one EmfPlusDrawString."""
        data = _pad4(
            struct.pack("<III4f", 0, 0, len(text), x, y, 100.0, 20.0) + text.encode("utf-16-le")
        )
        plus = struct.pack("<HHII", 0x401C, 0, 12 + len(data), len(data)) + data
        return self.record(70, struct.pack("<II", 4 + len(plus), 0x2B464D45) + plus)

    def __bytes__(self) -> bytes:
        body = b"".join(self.records) + struct.pack("<IIIII", 14, 20, 0, 16, 20)
        header = struct.pack("<II4i4i", 1, 88, 0, 0, 100, 100, 0, 0, 2000, 2000)
        header += b" EMF" + struct.pack(
            "<IIIHHIIIII", 0x10000, 88 + len(body), 2, 1, 0, 0, 0, 0, 0, 0
        )
        header += struct.pack("<II", 210, 297)
        assert len(header) == 88
        return header + body


class Wmf:
    """A WMF written record by record (``placeable``: with the 22-byte placeable header)."""

    def __init__(self, placeable: bool = False) -> None:
        self.placeable = placeable
        self.records: list[bytes] = []

    def record(self, function: int, params: bytes) -> Wmf:
        params += b"\0" * (len(params) & 1)
        self.records.append(struct.pack("<IH", 3 + len(params) // 2, function) + params)
        return self

    def font(self, charset: int, face: bytes = b"Arial") -> Wmf:
        font = struct.pack("<5h8B", -12, 0, 0, 0, 400, 0, 0, 0, charset, 0, 0, 0, 0) + face.ljust(
            32, b"\0"
        )
        return self.record(0x02FB, font)

    def pen(self) -> Wmf:
        return self.record(0x02FA, struct.pack("<HhhI", 0, 1, 0, 0))

    def select(self, slot: int) -> Wmf:
        return self.record(0x012D, struct.pack("<H", slot))

    def delete(self, slot: int) -> Wmf:
        return self.record(0x01F0, struct.pack("<H", slot))

    def textout(self, data: bytes, x: int, y: int) -> Wmf:
        padded = data + b"\0" * (len(data) & 1)
        return self.record(0x0521, struct.pack("<H", len(data)) + padded + struct.pack("<hh", y, x))

    def exttextout(
        self, data: bytes, x: int, y: int, width: int = 10, clipped: bool = False
    ) -> Wmf:
        head = struct.pack("<hhhH", y, x, len(data), 0x4 if clipped else 0)
        if clipped:
            head += struct.pack("<4h", 0, 0, 100, 100)
        padded = data + b"\0" * (len(data) & 1)
        return self.record(
            0x0A32, head + padded + struct.pack(f"<{len(data)}h", *[width] * len(data))
        )

    def __bytes__(self) -> bytes:
        body = b"".join(self.records) + struct.pack("<IH", 3, 0)
        header = struct.pack("<HHHIHIH", 1, 9, 0x0300, (18 + len(body)) // 2, 4, 100, 0)
        if not self.placeable:
            return header + body
        return struct.pack("<IH4hHIH", 0x9AC6CDD7, 0, 0, 0, 1000, 1000, 1440, 0, 0) + header + body


def read(data: bytes, mime: str = M.EMF) -> tuple[str, str | None]:
    """The text the metafile reader writes of ``data`` and its note."""
    sink = TextSink(1 << 20)
    info = MetafileReader().read(Path("/nonexistent"), ReadContext(mime, data=data), sink)
    return sink.getvalue(), info.note


def test_runs_on_a_line_join_with_a_space_only_where_there_is_a_gap() -> None:
    emf = Emf().text("Quarterly", 100, 50).text("report", 200, 50).text("s", 260, 50)
    emf.text("Second line", 100, 80)
    assert read(bytes(emf)) == ("Quarterly reports\nSecond line\n", None)


def test_a_line_left_of_the_last_begins_a_new_line_even_at_the_same_height() -> None:
    emf = Emf().text("right column", 500, 50).text("left column", 100, 50)
    assert read(bytes(emf))[0] == "right column\nleft column\n"


def test_a_real_emf_with_every_reference_at_zero_has_its_lines_from_its_bounds() -> None:
    text, note = read((DATA / "testEMF_zero_coords.emf").read_bytes())
    assert note is None
    assert text.splitlines()[:4] == [
        "SUMMARY",
        "Presentation title 13",
        "At Contoso, we believe in giving 110%. By using our next-generation",
        "data architecture, we help organizations virtually manage agile",
    ]
    last = 'As our CEO says, "Efficiencies will come from\nproactively transforming how we'
    assert text.endswith(last + ' do business."\n')


def test_glyph_indices_and_symbol_fonts_are_not_text() -> None:
    emf = Emf().text("kept", 0, 0).text("", 0, 10, raw=b"\x24\x00\x25\x00", options=ETO_GLYPH_INDEX)
    emf.font(1, 2).text("\uf0b7\uf0a7", 0, 20)  # Wingdings bullets
    emf.font(2, 0).text("after the bullets", 0, 30)
    assert read(bytes(emf))[0] == "kept\nafter the bullets\n"


def test_the_symbol_font_s_glyphs_are_its_characters() -> None:
    """A chart's axis in microns: the Symbol font's ``m`` (or ``U+F06D``) is a mu, in a wide
    string, an 8-bit one, a WMF's; Wingdings' codes stay out."""
    emf = Emf().font(1, 2, "Symbol").text("\uf06d", 0, 0).text("m", 20, 0)
    emf.font(2, 2, "Wingdings").text("\uf0fc", 40, 0)
    emf.font(3, 2, "Symbol").text("", 0, 10, wide=False, raw=b"a \xa3 b")
    emf.font(4, 0).text("m", 200, 10)
    assert read(bytes(emf))[0] == "μ μ\nα ≤ β m\n"
    wmf = Wmf().font(2, b"Symbol").select(0).textout(b"D = 5", 10, 10)
    assert read(bytes(wmf), M.WMF)[0] == "Δ = 5\n"


def test_an_8_bit_string_is_read_in_the_character_set_of_the_font_selected() -> None:
    emf = Emf().text("", 0, 0, wide=False, raw="Grüße".encode("cp1252"))
    emf.font(1, 204).text("", 0, 10, wide=False, raw="Привет".encode("cp1251"))
    emf.font(2, 128).text("", 0, 20, wide=False, raw="日本語".encode("cp932"))
    emf.select(0x8000000D)  # a stock font: the system's code page again
    emf.text("", 0, 30, wide=False, raw="café".encode("cp1252"))
    assert read(bytes(emf))[0] == "Grüße\nПривет\n日本語\ncafé\n"


def test_an_emf_plus_only_file_is_read_from_its_plus_records() -> None:
    emf = Emf().plus_string("Drawn by GDI+", 10.0, 10.0).plus_string("second string", 10.0, 40.0)
    assert read(bytes(emf))[0] == "Drawn by GDI+\nsecond string\n"


def test_a_dual_file_is_read_once() -> None:
    emf = Emf().plus_string("Both ways", 10.0, 10.0).text("Both ways", 10, 10)
    assert read(bytes(emf))[0] == "Both ways\n"


def test_poly_and_small_text_records() -> None:
    strings = ["first", "second"]
    body = struct.pack("<4iIffI", 0, 0, -1, -1, 1, 1.0, 1.0, len(strings))
    start = 8 + len(body) + 40 * len(strings)
    data = b""
    for i, s in enumerate(strings):
        raw = _pad4(s.encode("utf-16-le"))
        body += struct.pack("<iiIII4iI", 0, 20 * i, len(s), start + len(data), 0, 0, 0, 0, 0, 0)
        data += raw
    emf = Emf().record(97, body + data)
    small = (
        struct.pack("<iiIIIff", 0, 100, 5, ETO_NO_RECT | ETO_SMALL_CHARS, 1, 1.0, 1.0) + b"small"
    )
    emf.record(108, small)
    assert read(bytes(emf))[0] == "first\nsecond\nsmall\n"


@pytest.mark.parametrize("placeable", [False, True])
def test_wmf_text_in_the_character_set_of_its_font(placeable: bool) -> None:
    wmf = Wmf(placeable).textout(b"Plain ANSI", 10, 10)
    wmf.pen().font(204).select(1).exttextout("Отчёт".encode("cp1251"), 10, 30, clipped=True)
    wmf.delete(0).font(0).select(0)  # the pen's freed slot is the new font's
    wmf.exttextout(b"Caf\xe9", 10, 50).exttextout(b"au lait", 100, 50)
    assert read(bytes(wmf), M.WMF) == ("Plain ANSI\nОтчёт\nCafé au lait\n", None)


def test_wmf_objects_take_the_lowest_free_slot() -> None:
    wmf = Wmf().pen().pen().font(0).delete(1).delete(0).delete(0)  # (freed twice: once)
    wmf.font(204).font(128).pen()  # slots 0, 1, then 3
    wmf.select(1).textout("日本".encode("cp932"), 0, 0).select(0).textout(
        "Да".encode("cp1251"), 0, 9
    )
    wmf.select(2).textout(b"Caf\xe9", 0, 18).select(3).textout(b"pen kept it", 0, 27)
    assert read(bytes(wmf), M.WMF)[0] == "日本\nДа\nCafé\npen kept it\n"


def test_a_metafile_cut_short_keeps_its_text_up_to_the_cut_and_says_so() -> None:
    data = bytes(Emf().text("before the cut", 0, 0).text("lost", 0, 10))
    text, note = read(data[:-40])
    assert text == "before the cut\n"
    assert note is not None and "cut short" in note
    with pytest.raises(CorruptFile):
        read(data[:100])  # (the first text record cut)


@pytest.mark.parametrize(
    ("data", "mime"),
    [(b"\x01\x00\x00\x00" + b"\0" * 100, M.EMF), (b"not a metafile at all", M.WMF), (b"", M.EMF)],
)
def test_what_is_no_metafile_is_corrupt(data: bytes, mime: str) -> None:
    with pytest.raises(CorruptFile):
        read(data, mime)


def test_metafiles_are_told_apart_by_their_heads_whatever_their_names(tmp_path: Path) -> None:
    for name, data, mime in [
        ("picture.bin", bytes(Emf()), M.EMF),
        ("clip.dat", bytes(Wmf(placeable=True)), M.WMF),
        ("old", bytes(Wmf()), M.WMF),
        ("drawing.emf", b"\x00\x07\xff not text", M.EMF),
    ]:
        (tmp_path / name).write_bytes(data)
        assert detect(tmp_path / name) == mime, name


@given(st.binary(max_size=400))
@settings(max_examples=200, deadline=None)
@example(struct.pack("<II", 84, 8) + b"\0" * 40)
def test_any_records_after_a_header_give_text_or_corrupt_never_a_crash(records: bytes) -> None:
    for data, mime in [(bytes(Emf())[:88] + records, M.EMF), (bytes(Wmf())[:18] + records, M.WMF)]:
        with contextlib.suppress(CorruptFile):
            text, _note = read(data, mime)
            assert isinstance(text, str)


LINE = (
    st.text(
        st.characters(
            blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co"), blacklist_characters="\ufeff"
        ),
        min_size=1,
        max_size=30,
    )
    .map(str.strip)
    .filter(bool)
)


@given(st.lists(LINE, min_size=1, max_size=8))
@settings(max_examples=100, deadline=None)
def test_any_lines_drawn_come_back_as_drawn(lines: list[str]) -> None:
    emf = Emf()
    for i, line in enumerate(lines):
        emf.text(line, 100, 40 * (i + 1))
    assert read(bytes(emf))[0] == "".join(f"{line}\n" for line in lines)


def test_the_real_quarry_reads_a_folder_of_metafiles(tmp_path: Path) -> None:
    root = tmp_path / "pictures"
    root.mkdir()
    (root / "org chart.emf").write_bytes(bytes(Emf().text("Head of Sales", 10, 10)))
    (root / "legacy.wmf").write_bytes(bytes(Wmf(placeable=True).textout(b"Old clip art", 0, 0)))
    (root / "slide.emf").write_bytes((DATA / "testEMF_zero_coords.emf").read_bytes())
    (root / "broken.emf").write_bytes(b"\x01\x00\x00\x00 not really")
    store = tmp_path / "store"
    proc = sweep(root, store)
    assert proc.returncode in (0, 2), proc.stderr
    assert "Head of Sales" in text_shown(root / "org chart.emf", store)
    assert "Old clip art" in text_shown(root / "legacy.wmf", store)
    assert "next-generation" in text_shown(root / "slide.emf", store)
    broken = text_shown(root / "broken.emf", store)
    assert "error" in broken and "corrupt" in broken


def test_read_as_a_worker_reads_it(tmp_path: Path) -> None:
    outcome, text = read_bytes(tmp_path, "label.emf", bytes(Emf().text("Label", 0, 0)))
    assert (outcome.status, outcome.mime, text) == ("ok", M.EMF, "Label\n")
