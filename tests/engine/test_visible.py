"""The rules for text that other programs obey (engine.visible): a terminal, a spreadsheet."""

from __future__ import annotations

import csv
import io
import unicodedata

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from engine.visible import BIDI, csv_text, csv_text_back, for_terminal, json_safe

FORMULA = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
"""What a spreadsheet may run when a cell starts with it (OWASP, and the full-width forms)."""

texts = st.text(
    st.characters(codec=None, exclude_categories=()),  # any code point, surrogates included
    max_size=40,
) | st.text(alphabet="=+-@'\t\r\n\x1b\\xun0123456789abcdef\u202e\uff1d\x85\u2028 ", max_size=12)


def obeyed(ch: str) -> bool:
    """A character a terminal acts on, or that reorders or breaks a line."""
    return ch in BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")


@given(texts)
@example('=HYPERLINK("http://x","click")')
@example("-rf")
@example("'=1+1")
@example("\\x1b")
@example("\x1b]52;c;cHduZWQ=\x07")
@example("\uff1dSUM(A1)")
def test_a_csv_cell_is_never_run_never_obeyed_and_gives_its_text_back(value: str) -> None:
    cell = csv_text(value)
    out = io.StringIO(newline="")
    csv.writer(out).writerow([cell, "next"])
    (back,) = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert back == [cell, "next"]
    assert csv_text_back(back[0]) == value
    assert cell == value or cell == "'" + value or "\\" in cell  # prefix, escapes, or as is
    assert cell[:1] not in FORMULA
    assert not any(map(obeyed, cell))
    assert not any(map(obeyed, out.getvalue().removesuffix("\r\n")))
    if value.isprintable() and "\\" not in value:  # nothing to escape: as is, or the prefix
        assert cell in (value, "'" + value)
        assert (cell != value) == (value != "" and value[0] in FORMULA | {"'"})


def test_the_documented_cases() -> None:
    assert csv_text("=1+1") == "'=1+1"
    assert csv_text("-rf.txt") == "'-rf.txt"  # a name that starts with '-' gets the prefix
    assert csv_text("@SUM(A1)") == "'@SUM(A1)"
    assert csv_text("'quoted") == "''quoted"
    assert csv_text("\tx") == "\\tx"  # escaped first: no longer starts with a tab
    assert csv_text("a\x1b[2Jb\r\nc") == "a\\x1b[2Jb\\r\\nc"
    assert csv_text("back\\slash") == "back\\\\slash"
    assert csv_text("plain name.txt") == "plain name.txt"


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | texts.filter(
        lambda t: not any("\ud800" <= c <= "\udfff" for c in t)),  # JSON holds no surrogate
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts.filter(
        lambda t: not any("\ud800" <= c <= "\udfff" for c in t)), inner, max_size=3),
    max_leaves=8,
))  # fmt: skip
def test_json_safe_keeps_the_value_and_nothing_in_it_is_obeyed(value: object) -> None:
    safe = json_safe(orjson.dumps(value).decode())
    assert orjson.loads(safe) == value
    assert not any(map(obeyed, safe)) and "\x7f" not in safe


@given(texts)
def test_for_terminal_keeps_lines_and_tabs_and_nothing_else_that_is_obeyed(value: str) -> None:
    shown = for_terminal(value)
    assert shown.count("\n") == value.count("\n") and shown.count("\t") == value.count("\t")
    assert not any(obeyed(ch) for ch in shown if ch not in "\n\t")
    assert "\x7f" not in shown
