"""File names as the OS holds them, and as they may be shown on one line.

Inside the engine a path is a ``str`` as ``os.fsdecode`` gives it: bytes that are not UTF-8
become lone surrogates (U+DC80..U+DCFF, PEP 383), so ``os.fsencode`` gives the exact bytes
back and every name the OS can hold survives a round trip. Such a ``str`` must never reach a
terminal, a log line or an encoder as it is: :func:`shown` is the one view of a name for
people (one line, nothing a terminal interprets), and the store keeps names by the rules in
``records.py``.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import unicodedata

from engine.visible import BIDI as _BIDI  # shown as escapes: a name cannot reorder its line

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_INVISIBLE = frozenset("\u00ad\u180e\u200b\u2060\u2061\u2062\u2063\u2064\ufeff")
"""Characters drawn as nothing that play no part in how a script is drawn: the zero-width
space, the word joiner, the byte-order mark, the soft hyphen, the invisible operators. The
zero-width joiner and non-joiner are kept: emoji sequences and Persian or Indic names need
them."""


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode carries it
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:  # its own byte: \x1b is both
        return f"\\x{code:02x}"
    # a character, never \xNN: that is how an undecodable byte is shown, a different name
    return f"\\u{code:04x}"


def _looks_like_a_space(ch: str) -> bool:
    """A space that is not U+0020 but is drawn as one, one cell of nothing: a no-break space
    (U+00A0), the narrow one macOS puts in screenshot names (U+202F), en, em, thin spaces. The
    ideographic space (U+3000) is two cells wide, a look of its own: kept."""
    return (
        ch != " "
        and unicodedata.category(ch) == "Zs"
        and unicodedata.east_asian_width(ch) not in ("W", "F")
    )


def _hidden(ch: str) -> bool:
    """Whether ``ch`` must be escaped to be seen as what it is."""
    return (
        ch in _BIDI
        or ch in _INVISIBLE
        or unicodedata.category(ch) in _ESCAPED_CATEGORIES
        or _looks_like_a_space(ch)
    )


def shown(name: str) -> str:
    """``name`` as one line that a terminal shows literally, and that shows what it holds.

    Control characters (newline, carriage return, escape, C1), line and paragraph separators,
    bidirectional overrides and undecodable bytes become backslash escapes (``\\n``,
    ``\\x1b``, ``\\u009b``, ``\\u202e``; an undecodable byte as ``\\xe9``), and so do the
    spaces a terminal draws exactly as a plain space (a no-break space is ``\\u00a0``) and the
    characters it draws as nothing (a zero-width space is ``\\u200b``): a path read or
    copied off the screen without them names another file, or none.
    Everything else, the plain space, the ideographic space and any script included, is kept.
    Meant for people: it is not reversible (a name may hold a backslash itself).
    """
    if name.isprintable():
        return name
    return "".join(_escape(ch) if _hidden(ch) else ch for ch in name)


def is_utf8(name: str) -> bool:
    """Whether ``name`` came from bytes that are valid UTF-8 (no undecodable bytes in it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escaped(name: str) -> str:
    """``name`` as the store writes it in ``path``/``root``: always valid UTF-8.

    A name that is valid UTF-8 is returned as it is; in one that is not, each undecodable
    byte becomes the four characters ``\\xNN`` (the exact bytes travel beside it, in
    ``path_b64``/``root_b64``; see :func:`name_b64`).
    """
    if is_utf8(name):
        return name
    return "".join(_stored_char(ch) for ch in name)


def _stored_char(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate no file system gave us: keep it visible
        return f"\\u{code:04x}"
    return ch


def name_b64(name: str) -> str | None:
    """Standard base64 of the exact bytes of ``name``, or None when it is valid UTF-8."""
    if is_utf8(name):
        return None
    return base64.b64encode(os.fsencode(name)).decode("ascii")


def from_b64(data: str) -> str:
    """The name whose exact bytes ``data`` (standard base64) holds, as ``os.fsdecode`` gives it.

    Raises ValueError for text that is not strict base64.
    """
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise ValueError(f"not base64: {exc}") from exc
    return os.fsdecode(raw)


_DIGITS = re.compile(r"(\d+)")


def natural(name: str) -> list[str | int]:
    """A sort key putting ``page2`` before ``page10`` (its runs of digits as numbers)."""
    return [int(p) if p.isdigit() else p for p in _DIGITS.split(name)]
