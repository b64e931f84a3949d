"""Text on its way to programs that obey some of its characters: a terminal, a spreadsheet.

A document's text and a file's name are data written by whoever sent the folder. Two readers
of ours act on what they hold: a terminal runs escape sequences (``ESC ]0;title BEL``
retitles the window, ``ESC ]52;c;...`` writes the clipboard, a carriage return overwrites
the line) and a spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (CSV injection). The rules for both live here, in the engine, so that the command
line (``quarry show``) and the dashboard (the inspector, the CSV export) say the same thing.

- :func:`for_terminal`: every character a terminal would obey becomes a visible symbol
  (the Control Pictures block, ``␛`` for ESC); newlines and tabs are kept. For people only.
- :func:`csv_text` / :func:`csv_text_back`: a text cell a spreadsheet shows and never runs,
  and the exact text again from it.
"""

from __future__ import annotations

import re
import unicodedata

BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Characters that reorder the text around them (Trojan Source)."""

_TERMINAL_UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff" + "".join(BIDI) + "]"
)


def _picture(m: re.Match[str]) -> str:
    ch = m.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␛ for ESC, ␀ for NUL, ␍ for CR
    if code == 0x7F:
        return "␡"
    if code <= 0x9F or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"<{unicodedata.name(ch, hex(code)).lower()}>"


def for_terminal(text: str) -> str:
    """``text`` as a terminal may be given it: nothing in it is obeyed.

    C0 controls but newline and tab (ESC, CR, BEL, form feed...) become their Control
    Picture (``␛``, ``␍``...), DEL ``␡``, C1 controls and lone surrogates ``\\ufffd``, line
    and paragraph separators and bidirectional overrides their name in angle brackets
    (``<right-to-left override>``). Everything else, any script, is kept. For people: it
    is not reversible (a text may hold ``␛`` itself).
    """
    if text.isprintable():
        return text
    return _TERMINAL_UNSAFE.sub(_picture, text)


# -- CSV ------------------------------------------------------------------------------------

FORMULA_STARTS = frozenset("=+-@\t\r'\uff1d\uff0b\uff0d\uff20")
"""First characters that make a CSV cell get a leading ``'``: what OWASP lists for CSV
injection (``= + - @``, tab, carriage return), their full-width forms (``＝ ＋ － ＠``, which
some spreadsheets take as the ASCII ones), and ``'`` itself, so that the prefix is always
the one added here and can be taken off again."""

_CSV_UNSAFE = re.compile(r"[\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff" + "".join(BIDI) + "]")
_CSV_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CSV_BACK = re.compile(r"\\(?:([\\nrt])|x([0-9a-f]{2})|u([0-9a-f]{4}))")
_CSV_BACK_NAMED = {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def _csv_escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _CSV_NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def csv_text(value: str) -> str:
    """``value`` as a CSV cell that a spreadsheet shows and never runs, and a terminal never
    obeys.

    Control characters, line and paragraph separators, bidirectional overrides and lone
    surrogates become backslash escapes (``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u202e``)
    and a backslash is doubled, so no cell holds a line break or an escape sequence; then a
    cell that starts with one of :data:`FORMULA_STARTS` gets a leading ``'`` (OWASP's advice
    for CSV injection). :func:`csv_text_back` gives ``value`` back exactly.
    """
    if value.isprintable() and "\\" not in value:
        cell = value
    else:
        cell = _CSV_UNSAFE.sub(_csv_escape, value)
    return "'" + cell if cell[:1] in FORMULA_STARTS else cell


def _csv_unescape(m: re.Match[str]) -> str:
    named, byte, code = m.groups()
    if named is not None:
        return _CSV_BACK_NAMED[named]
    return chr(int(byte or code, 16))


def csv_text_back(cell: str) -> str:
    """The text :func:`csv_text` made ``cell`` from: the leading ``'`` taken off (only that
    function puts one there) and the backslash escapes undone."""
    if cell.startswith("'"):
        cell = cell[1:]
    return _CSV_BACK.sub(_csv_unescape, cell) if "\\" in cell else cell


_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029" + "".join(BIDI) + "]")


def json_safe(text: str) -> str:
    """Serialised JSON with every character a terminal or a spreadsheet would obey written as
    a ``\\uXXXX`` escape: the same JSON value, and nothing raw in it to obey.

    JSON encoders escape the C0 controls already; DEL, the C1 controls, line and paragraph
    separators and bidirectional overrides they write as they are. Outside strings, JSON
    holds only ASCII punctuation, so the replacement touches string contents alone.
    """
    if text.isascii() and "\x7f" not in text:
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


__all__ = ["BIDI", "FORMULA_STARTS", "csv_text", "csv_text_back", "for_terminal", "json_safe"]
