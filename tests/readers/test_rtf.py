"""The built-in RTF reader: escapes, code pages, skipped destinations and bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.readers.rtf import MAX_DEPTH, RtfReader, rtf_to_text
from fixtures.gen.misc import RTF_SAMPLE, RTF_TEXT

HEADER = rb"{\rtf1\ansi\deff0{\fonttbl{\f0\fswiss Helvetica;}}{\colortbl;\red255\green0\blue0;}"


def read(tmp_path: Path, data: bytes, max_chars: int = 1_000_000) -> str:
    path = tmp_path / "doc.rtf"
    path.write_bytes(data)
    sink = TextSink(max_chars)
    info = RtfReader().read(path, ReadContext(M.RTF), sink)
    assert info == ReadInfo("rtf")
    return sink.getvalue()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (rb"Hello\par World}", "Hello\nWorld"),
        (rb"caf\'e9 \'80}", "café €"),
        (rb"a\tab b\line c\cell d\row}", "a\tb\nc\td\n"),
        (rb"\u8364?\u-10179?\u-8704?!}", "€😀!"),
        (rb"\uc2\u8364\'80\'80x\uc0\u8364 y}", "€x€y"),
        (rb"\{braces\} and \\backslash}", "{braces} and \\backslash"),
        (rb"\ldblquote q\rdblquote\~\emdash\-}", "“q”\u00a0—"),
        (b"line one\\\\\nline two}", "line one\\line two"),
        (b"a\\\r\nb}", "a\nb"),
        (rb"x{\b bold}y}", "xboldy"),
    ],
)
def test_escapes_and_control_words(tmp_path: Path, body: bytes, expected: str) -> None:
    assert read(tmp_path, HEADER + body) == expected


def test_destinations_without_body_text_are_dropped(tmp_path: Path) -> None:
    data = (
        HEADER
        + rb"{\stylesheet{\s1 Heading 1;}}{\info{\title Secret title}{\author Ann}}"
        + rb"{\header Page header}{\footer Page footer}{\*\generator Writer 1.0;}"
        + rb"{\pict\pngblip 89504e470d0a1a0a}{\object{\*\objdata 0105}}"
        + rb"{\field{\*\fldinst HYPERLINK http://x}{\fldrslt shown link}}"
        + rb"{\*\unknowndest dropped}Body text\par}"
    )
    assert read(tmp_path, data) == "shown linkBody text\n"


def test_ansicpg_and_font_charsets(tmp_path: Path) -> None:
    data = (
        rb"{\rtf1\ansi\ansicpg1251\deff0{\fonttbl{\f0\fcharset204 Arial;}"
        rb"{\f1\fcharset128 MS Mincho;}}\f0 \'cf\'f0\'e8\'e2\'e5\'f2 \f1 \'93\'fa\'96\'7b}"
    )
    assert read(tmp_path, data) == "Привет 日本"


def test_bin_data_is_skipped(tmp_path: Path) -> None:
    data = HEADER + rb"before{\pict\bin5 " + b"{}\\\x00\xff" + rb"}after}"
    assert read(tmp_path, data) == "beforeafter"


def test_bin_length_past_the_end_is_bounded(tmp_path: Path) -> None:
    assert read(tmp_path, HEADER + rb"text\bin99999999 xyz") == "text"


def test_deep_nesting_is_a_limit(tmp_path: Path) -> None:
    data = HEADER + b"{" * (MAX_DEPTH + 10) + b"deep" + b"}" * (MAX_DEPTH + 11)
    with pytest.raises(LimitExceeded) as caught:
        read(tmp_path, data)
    assert caught.value.limit == "rtf_depth"


def test_not_rtf_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile):
        read(tmp_path, b"just some words")


def test_empty_file_is_corrupt(tmp_path: Path) -> None:
    with pytest.raises(CorruptFile):
        read(tmp_path, b"")


def test_truncated_and_unbalanced_input_keeps_what_was_read(tmp_path: Path) -> None:
    assert read(tmp_path, HEADER + rb"half a par\par and\'") == "half a par\nand"
    assert read(tmp_path, HEADER + b"x}}}}y\\") == "xy"


def test_text_cap_is_reached_through_the_sink(tmp_path: Path) -> None:
    with pytest.raises(TextCapReached):
        read(tmp_path, HEADER + b"word " * 50_000 + b"}", max_chars=1000)


def test_surrogate_pair_split_across_flushes(tmp_path: Path) -> None:
    filler = b"a" * (65536 - 1)
    text = read(tmp_path, HEADER + filler + rb"\u-10179?\u-8704?}")
    assert text.endswith("a😀")


def test_generated_sample_exact_text(tmp_path: Path) -> None:
    assert read(tmp_path, RTF_SAMPLE) == RTF_TEXT


def test_list_definitions_outside_their_table_are_dropped(tmp_path: Path) -> None:
    """A ``\\list`` group where no ``\\listtable`` holds it (Tika's test_list_override.rtf):
    its level texts are bytes of numbering, its name no body text."""
    data = (
        HEADER
        + rb"{\list\listtemplateid6{\listlevel\levelnfc0{\leveltext \'02\'00.}{\levelnumbers"
        + rb" \'01}}{\listname List1382206859_1;}\listid1}"
        + rb"{\*\listoverridetable{\listoverride\listid1{\lfolevel{\listlevel{\leveltext"
        + rb" \'01\'b7}}}}}Body\par}"
    )
    assert read(tmp_path, data) == "Body\n"


SYMBOL_FONTS = (
    rb"{\rtf1\ansi\deff0{\fonttbl{\f0\froman\fcharset0 Times New Roman;}"
    rb"{\f1\froman\fcharset2 Symbol;}"
    rb"{\f3\fnil\fprq0\fcharset128 OpenSymbol{\*\falt Arial Unicode MS};}"
    rb"{\f4\fnil\fcharset0{\*\panose 05010000000000000000}Wingdings;}"
    rb"{\f5\fnil\fcharset0{\*\panose 05010000000000000000}Arial;}}"
)


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        (rb"{\listtext\pard\plain\f1 \'b7\tab}", "\u2022\titem"),  # Word: Symbol's bullet
        (rb"{\listtext\pard\plain \loch\f3 \'96\tab}", "\u2022\titem"),  # LibreOffice
        (rb"{\listtext\pard\plain\f4 \u-3844\'fc\tab}", "\u2022\titem"),  # Wingdings
        (rb"{\pntext\f1 \'b7\tab}", "\u2022\titem"),  # Word 6's list text
        (rb"{\listtext\pard\plain\f0 2.\tab}", "2.\titem"),  # a number: as it is
        (rb"{\listtext\pard\plain\f5 -\tab}", "-\titem"),  # a text font's dash: as it is
    ],
)
def test_a_symbol_font_s_list_marker_is_a_bullet(
    tmp_path: Path, marker: bytes, expected: str
) -> None:
    assert read(tmp_path, SYMBOL_FONTS + marker + rb"item\par}") == expected + "\n"


def test_a_symbol_font_outside_a_marker_is_read_as_its_glyphs(tmp_path: Path) -> None:
    """The Symbol font's ``a`` is an alpha (tests/readers/test_symbol_fonts.py); a text
    font's byte after it is that code page's."""
    assert read(tmp_path, SYMBOL_FONTS + rb"{\f1 a}\'b7\par}") == "\u03b1\u00b7\n"


def test_binary_after_the_document_s_group_is_not_text(tmp_path: Path) -> None:
    """Bytes after the closing brace (a transfer's padding, a tool's trailer: Tika's
    testRTFListOverride.rtf ends in binary) are not read; a document after them is."""
    junk = b"\xef\xbf\xbd8\x11$DM\xef\xbf\xbd\x17q\x00\x00"
    assert read(tmp_path, HEADER + rb"Body\par}" + junk) == "Body\n"
    assert read(tmp_path, HEADER + rb"Body\par}" + b"more}" + junk) == "Body\n"
    second = HEADER + rb"Second\par}"
    assert read(tmp_path, HEADER + rb"One\par}" + junk + second) == "One\n\nSecond\n"
    many = HEADER + rb"a\par}" + b"}x" * 20_000 + b"\x00"  # stray braces: one look each
    assert read(tmp_path, many) == "a\n"


_PIECES = st.sampled_from(
    [
        b"{", b"}", b"\\par ", b"\\'b7", b"\\'96", b"\\u-3844?", b"\\listtext ", b"\\pntext ",
        b"\\f1 ", b"\\f3 ", b"\\plain ", b"\\list ", b"\\leveltext ", b"\\*", b"\\bin3 ",
        b"{\\rtf1 ", b"text ", b"\x00\xff", b"\\uc0 ", b"\\ud83d ", b";",
        b"{\\field ", b"{\\*\\fldinst SYMBOL 97 ", b"\\\\f \"Symbol\"", b"\\\\u ", b"{\\fldrslt ",
        b"SYMBOL 1114112 ", b"SYMBOL 0xd800 ",
    ]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=60))
@settings(max_examples=300, deadline=None)
def test_any_document_of_these_pieces_reads_to_text(pieces: list[bytes]) -> None:
    """Symbol fonts, markers, list definitions, stray braces and binary in any order: text
    or a limit, never another exception, never a lone surrogate."""
    sink = TextSink(1_000_000)
    try:
        rtf_to_text(SYMBOL_FONTS + b"".join(pieces), sink)
    except LimitExceeded:
        return
    sink.getvalue().encode("utf-8")


_OBJECT_PIECES = st.sampled_from(
    [
        b"{", b"}", b"\\object ", b"{\\*\\objdata ", b"01050000020000000100", b"{\\result ",
        b"{\\pict ", b"\\emfblip ", b"\\wmetafile8 ", b"{\\*\\blipuid 0102}", b"{\\nonshppict ",
        b"{\\*\\shppict ", b"0100000020454d46", b"text ", b"\\par ", b"\\bin2 ", b"zz",
    ]
)  # fmt: skip


@given(st.lists(_OBJECT_PIECES, max_size=60))
@settings(max_examples=300, deadline=None)
def test_objects_and_their_pictures_in_any_order_read_to_text_and_bytes(
    pieces: list[bytes],
) -> None:
    """Objects, their data and the pictures of them, nested and cut anywhere: the text and
    a picture only for an object whose data came first, never an exception."""
    from engine.readers.rtf import rtf_document

    sink = TextSink(1_000_000)
    try:
        objects, pictures = rtf_document(b"{\\rtf1 " + b"".join(pieces), sink)
    except LimitExceeded:
        return
    assert set(pictures) <= set(range(len(objects)))
    assert all(kind in ("emf", "wmf") for kind, _data in pictures.values())
    sink.getvalue().encode("utf-8")
