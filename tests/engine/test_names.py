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
    assert shown("x\x9by") == "x\\x9by"
    assert shown(os.fsdecode(b"caf\xe9.txt")) == "caf\\xe9.txt"
    assert shown("evil\u202etxt.exe") == "evil\\u202etxt.exe"
    assert shown("a\u2028b") == "a\\u2028b"


def test_is_utf8() -> None:
    assert is_utf8("café.txt")
    assert not is_utf8(os.fsdecode(b"caf\xe9.txt"))


@given(st.binary(min_size=1, max_size=255))
def test_any_byte_name_is_one_printable_line(raw: bytes) -> None:
    out = shown(os.fsdecode(raw))
    assert "\n" not in out and "\r" not in out and "\x1b" not in out
    out.encode("utf-8")  # never a lone surrogate
    # spaces of any script are kept, as the docstring says (a Japanese name's ideographic
    # space, a no-break space); every other white space (tabs, line separators) is escaped
    assert all(
        ch.isprintable() or unicodedata.category(ch) == "Zs" or not ch.isspace() for ch in out
    )
