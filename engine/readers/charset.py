"""The charset of 8-bit text that has no byte-order mark and is not UTF-8.

charset-normalizer (a maintained detector: it decodes the bytes with every candidate codec and
keeps those whose text is least "messy", then ranks them by how well the letters fit a
language) makes the guess, with three rules of our own around it, because its first choice
on short Western text is often a sibling codec that reads a few letters differently:

1. Fewer than :data:`MIN_EVIDENCE` non-ASCII bytes say too little to guess from: cp1252,
   which never fails and is what such files most often are.
2. cp1252 wins when it is among the near-best candidates, or when a near-best candidate
   decodes the sample to exactly the cp1252 text (cp1250 on German umlauts, say).
3. Among candidates the detector cannot tell apart (as little mess, as good a fit), the most
   common codec in :data:`PREFERRED` is taken; and among codecs that decode the sample to the
   same text, the common one is named (``cp866`` rather than its Ukrainian variant ``cp1125``).

UTF-16 and UTF-32 are never guessed here: without a BOM they are found by their NUL bytes
before this module is asked.

:func:`declared_fits` tells whether a charset declared by a document (an HTML ``<meta>``, a
MIME part) is plausible for its bytes, so a declaration the bytes contradict can be ignored.
"""

from __future__ import annotations

import codecs

SAMPLE_BYTES = 64 * 1024
"""Bytes looked at to guess (cut at the last line break before this many)."""
MIN_EVIDENCE = 4
"""Fewest non-ASCII bytes worth a guess."""
NEAR = 0.1
"""How much more "mess" (charset-normalizer's chaos, 0..1) than the best still counts as a tie."""
PREFERRED = (
    "cp1252", "cp1251", "cp866", "koi8_r", "cp1250", "cp1253", "cp1254", "cp1255", "cp1256",
    "cp1257", "cp850", "cp437", "iso8859_2", "koi8_u", "cp932", "euc_jp", "gb18030", "big5",
    "euc_kr", "cp874",
)  # fmt: skip
"""Common codecs, named in preference to a rarer one that decodes the sample identically."""
_WESTERN = frozenset({"cp1252", "iso8859-1", "iso8859-15", "ascii"})
_NEVER = ["utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be", "utf_7"]
TIE = 0.01
"""Differences in chaos or coherence below this are no difference."""


def sample_of(data: bytes) -> bytes:
    """The first :data:`SAMPLE_BYTES` of ``data``, cut after a line break when there is one."""
    if len(data) <= SAMPLE_BYTES:
        return data
    head = data[:SAMPLE_BYTES]
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut > SAMPLE_BYTES // 2 else head


def _codec(name: str) -> str:
    """Python's canonical name for a codec (``koi8-r``, ``cp866``, ``iso8859-2``)."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        return name


_PREFERRED = tuple(_codec(c) for c in PREFERRED)


def _decoded(sample: bytes, codec: str) -> str | None:
    try:
        return sample.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def guess_charset(data: bytes) -> str:
    """A Python codec name for ``data`` (8-bit text, not UTF-8, no BOM); ``cp1252`` by default."""
    sample = sample_of(data)
    if sum(1 for b in sample if b >= 0x80) < MIN_EVIDENCE:
        return "cp1252"
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample, cp_exclusion=_NEVER))
    if not matches:
        return "cp1252"
    best = matches[0]
    near = [m for m in matches if m.chaos <= best.chaos + NEAR]
    western = _decoded(sample, "cp1252")
    for match in near:
        if _codec(match.encoding) in _WESTERN or str(match) == western:
            return "cp1252"
    ties = [m for m in near if m.chaos <= best.chaos + TIE and m.coherence >= best.coherence - TIE]
    best = min(ties, key=lambda m: _rank(_codec(m.encoding)))
    return _common_sibling(sample, str(best), _codec(best.encoding))


def _rank(codec: str) -> int:
    return _PREFERRED.index(codec) if codec in _PREFERRED else len(_PREFERRED)


def _common_sibling(sample: bytes, text: str, codec: str) -> str:
    for name in _PREFERRED:
        if name == codec:
            return codec
        if _decoded(sample, name) == text:
            return name
    return codec


def declared_fits(data: bytes, codec: str) -> bool:
    """Whether the bytes bear out a declared charset.

    True when the sample decodes with ``codec`` and that text is about as free of mess as
    the best the detector finds (within :data:`NEAR`). Little evidence always fits.
    """
    sample = sample_of(data)
    if _decoded(sample, codec) is None:
        return False
    if sum(1 for b in sample if b >= 0x80) < MIN_EVIDENCE:
        return True
    from charset_normalizer import from_bytes

    declared = list(from_bytes(sample, cp_isolation=[codec]))
    if not declared:
        return False
    best = list(from_bytes(sample, cp_exclusion=_NEVER))
    return not best or declared[0].chaos <= best[0].chaos + NEAR
