"""engine.names: any name the OS can hold is shown on one line that a terminal shows literally."""

from __future__ import annotations

import os
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from engine.names import is_utf8, shown


def test_plain_names_are_kept() -> None:
    assert shown("dossier/été 2024/Résumé (final).pdf") == "dossier/été 2024/Résumé (final).pdf"
    assert shown("日本語/報告.docx") == "日本語/報告.docx"


def test_control_characters_and_undecodable_bytes_are_escaped() -> None:
    assert shown("new\nline.txt") == "new\\nline.txt"
    assert shown("a\rb\tc") == "a\\rb\\tc"
    assert shown("\x1b[31mred") == "\\x1b[31mred"
    assert shown("x\x9by") == "x\\u009by"  # a character, not the undecodable byte 0x9b
    assert shown(os.fsdecode(b"caf\xe9.txt")) == "caf\\xe9.txt"
    assert shown("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    assert shown("a\u2028b") == "a\\u2028b"


def test_a_space_drawn_as_a_plain_one_is_escaped() -> None:
    # Read or copied off the screen, a no-break space looks like a plain space and the path
    # names another file; shown as an escape, the reader sees what the name holds.
    assert shown("no\u00a0break.txt") == "no\\u00a0break.txt"
    assert shown("Screenshot 10.00.00\u202fAM.png") == "Screenshot 10.00.00\\u202fAM.png"
    assert shown("em\u2003space") == "em\\u2003space"
    assert shown("会議\u3000資料.txt") == "会議\u3000資料.txt"  # two cells wide: its own look
    assert shown("plain space.txt") == "plain space.txt"
    # an undecodable byte 0xa0 is another name than a no-break space, and looks it
    assert shown(os.fsdecode(b"no\xa0break")) == "no\\xa0break"


def test_a_character_drawn_as_nothing_is_escaped_but_a_joiner_is_kept() -> None:
    # "report.pdf" and "re\u200bport.pdf" are two files that look the same on a terminal
    assert shown("re\u200bport.pdf") == "re\\u200bport.pdf"
    assert shown("\ufeffbom.txt") == "\\ufeffbom.txt"
    assert shown("soft\u00adhyphen") == "soft\\u00adhyphen"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467.jpg"  # one emoji, joined
    assert shown(family) == family
    assert shown("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.txt").count("\u200c") == 1


def test_is_utf8() -> None:
    assert is_utf8("café.txt")
    assert not is_utf8(os.fsdecode(b"caf\xe9.txt"))


@given(st.binary(min_size=1, max_size=255))
def test_any_byte_name_is_one_printable_line(raw: bytes) -> None:
    out = shown(os.fsdecode(raw))
    assert "\n" not in out and "\r" not in out and "\x1b" not in out
    out.encode("utf-8")  # never a lone surrogate
    # as the docstring says: of the white space only the plain space and the spaces a
    # terminal draws wider than it (the ideographic space) are kept, every other is escaped
    assert all(
        ch.isprintable() or not ch.isspace() or unicodedata.east_asian_width(ch) in ("W", "F")
        for ch in out
    )


@given(st.text(alphabet=st.characters(categories=["Zs", "Cc", "Zl", "Zp"]), max_size=20))
def test_no_white_space_but_the_plain_one_is_drawn_one_cell_wide(name: str) -> None:
    for ch in shown(name):
        if ch.isspace():
            assert ch == " " or unicodedata.east_asian_width(ch) in ("W", "F"), repr(ch)
