"""The built-in RTF reader: escapes, code pages, skipped destinations and bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.readers.rtf import MAX_DEPTH, RtfReader
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
