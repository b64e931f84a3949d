"""File names as the OS holds them, and as they may be shown on one line.

Inside the engine a path is a ``str`` as ``os.fsdecode`` gives it: bytes that are not UTF-8
become lone surrogates (U+DC80..U+DCFF, PEP 383), so ``os.fsencode`` gives the exact bytes
back and every name the OS can hold survives a round trip. Such a ``str`` must never reach a
terminal, a log line or an encoder as it is: :func:`shown` is the one view of a name for
people (one line, nothing a terminal interprets), and the store keeps names by the rules in
``records.py``.
"""

from __future__ import annotations

import unicodedata

# Characters that reorder the text around them (Trojan Source): shown as escapes so that a
# name cannot make another part of its line read differently.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode carries it
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def shown(name: str) -> str:
    """``name`` as one line that a terminal shows literally.

    Control characters (newline, carriage return, escape, C1), line and paragraph separators,
    bidirectional overrides and undecodable bytes become backslash escapes (``\\n``,
    ``\\x1b``, ``\\xe9``, ``\\u202e``); everything else, spaces and any script included, is
    kept. Meant for people: it is not reversible (a name may hold a backslash itself).
    """
    if name.isprintable():
        return name
    return "".join(
        _escape(ch) if ch in _BIDI or unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch
        for ch in name
    )


def is_utf8(name: str) -> bool:
    """Whether ``name`` came from bytes that are valid UTF-8 (no undecodable bytes in it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
