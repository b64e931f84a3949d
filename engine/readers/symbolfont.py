"""Text drawn in a symbol font, as the characters its glyphs show.

A document may write a character as a code in a font whose glyphs are not the characters of
any code page: Word's ``Insert > Symbol`` in the Symbol font stores ``<w:sym w:font="Symbol"
w:char="F061"/>``, an RTF document ``{\\f3 a}`` in a font table naming Symbol, and either shows
an alpha. Read as the code, that alpha is an ``a`` ("a = 0.05" for "α = 0.05") or nothing. The
Symbol font's glyphs are Greek letters and mathematical signs with a published mapping to
Unicode (Adobe's Symbol encoding: its glyph names through the Adobe Glyph List, as Unicode's
``VENDORS/ADOBE/symbol.txt`` gives them), which :func:`recode` applies. Its code may come as
the byte (``0x61``) or in the private-use block Windows puts symbol fonts at (``U+F061``).

Pictures (Wingdings, Webdings, Zapf Dingbats, Marlett...) are no text: :func:`is_glyph_font`
tells them, and their glyphs are left out where a reader knows the font. The Symbol font's
pieces of tall brackets and extenders (no character of their own) are left out too.
"""

from __future__ import annotations

GLYPH_FONTS = ("symbol", "opensymbol", "wingdings", "webdings", "zapf", "marlett", "mt extra")
"""Font names (their start, any case) whose codes are glyphs, not a code page's characters."""
_SYMBOL = (
    " !∀#∃%&∋()∗+,−./"
    "0123456789:;<=>?"
    "≅ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟ"
    "ΠΘΡΣΤΥςΩΞΨΖ[∴]⊥_"
    "\x00αβχδεφγηιϕκλμνο"
    "πθρστυϖωξψζ{|}∼\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "€ϒ′≤⁄∞ƒ♣♦♥♠↔←↑→↓"
    "°±″≥×∝∂•÷≠≡≈…\x00\x00↵"
    "ℵℑℜ℘⊗⊕∅∩∪⊃⊇⊄⊂⊆∈∉"
    "∠∇®©™∏√⋅¬∧∨⇔⇐⇑⇒⇓"
    "◊〈®©™∑\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00〉∫⌠\x00⌡\x00\x00\x00\x00\x00\x00\x00\x00\x00"
)
"""The Symbol font's character for each code from 0x20 to 0xFE ("\\x00": none). Where Adobe's
list names a glyph Unicode has twice, the letter: capital delta U+0394 (not the increment
sign), omega U+03A9 (not the ohm sign), mu U+03BC (not the micro sign); the serif and sans
serif registered, copyright and trade mark signs (private-use in the list) as the signs."""
_FIRST = 0x20
_PRIVATE = 0xF000
"""Where Windows maps a symbol font's codes (``U+F020``-``U+F0FF``)."""


def _name(font: str | None) -> str:
    return (font or "").strip().lower()


def is_glyph_font(font: str | None) -> bool:
    """Whether ``font`` names a font whose codes are glyphs (Symbol, Wingdings...)."""
    return _name(font).startswith(GLYPH_FONTS)


def is_symbol(font: str | None) -> bool:
    """Whether ``font`` is the Symbol font (``Symbol``, ``Symbol MT``, ``SymbolPS``, as an RTF
    font table spells it up to its ``;``: not OpenSymbol, not Segoe UI Symbol), whose glyphs
    :func:`recode` knows."""
    name = _name(font).split(";", 1)[0].replace(" ", "").replace("-", "")
    return name in _SYMBOL_NAMES


_SYMBOL_NAMES = frozenset({"symbol", "symbolmt", "symbolps"})


def symbol_char(code: int) -> str:
    """The character of the Symbol font's ``code`` (a byte, or ``U+F0xx``); "" for a code
    without one (a bracket's piece, a code past the font)."""
    if _PRIVATE + _FIRST <= code <= _PRIVATE + 0xFF:
        code -= _PRIVATE
    if not _FIRST <= code < _FIRST + len(_SYMBOL):
        return ""
    char = _SYMBOL[code - _FIRST]
    return "" if char == "\x00" else char


def recode(text: str) -> str:
    """``text`` written in the Symbol font, as the characters its glyphs show: each code the
    font has becomes its character; a line break, a tab and anything past the font stay."""
    out = []
    for char in text:
        code = ord(char)
        if code < _FIRST or (code > 0xFF and not _PRIVATE <= code <= _PRIVATE + 0xFF):
            out.append(char)
        else:
            out.append(symbol_char(code))
    return "".join(out)


def sym(font: str | None, char: str | None) -> str:
    """The character of a Word symbol (``w:sym``: a font and a hexadecimal code): the Symbol
    font's glyph as its character; in any other picture font, or a code that is no number,
    nothing; in a font of characters, the code's own character (``U+F0xx`` none)."""
    try:
        code = int(char or "", 16)
    except ValueError:
        return ""
    if is_symbol(font):
        return symbol_char(code)
    if is_glyph_font(font) or _PRIVATE <= code <= _PRIVATE + 0xFF or not 0x20 <= code < 0x110000:
        return ""
    if 0xD800 <= code <= 0xDFFF:
        return ""
    return chr(code)
