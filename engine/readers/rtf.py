"""RTF: a small reader of its own, no library.

It tokenises the file once with one regular expression and keeps a stack of group states.
Text comes from plain characters, ``\\'hh`` bytes (decoded in the document's code page:
``\\ansicpgN``, or a font's ``\\fcharsetN``, cp1252 by default), ``\\uN`` code points (their
``\\ucN`` fallback characters skipped) and the control words that stand for characters
(``\\par``, ``\\line``, ``\\tab``, ``\\cell``, quotes, dashes). Groups that hold no body text
(font and colour tables, style sheets, document info, pictures, objects, headers, footers,
field instructions, list definitions and every ``\\*`` destination) are discarded. Group depth
is bounded and ``\\binN`` data is skipped without being looked at. The document ends where its
outermost group does, as in Word, when binary bytes follow (a transfer's padding, a tool's
trailer: not text; a document written after them, ``{\\rtf`` again, is read too); seven-bit
text after it is read on, as before (a writer's stray brace).

An embedded object (``\\object``) is read as a member from its data (``\\objdata``) when that
holds a document; when it holds none (a link to a file elsewhere, an object of a class no
reader knows: an equation, a drawing), the picture of it the writer left in its
``\\result`` is read instead, when that is a Windows metafile (``\\emfblip``,
``\\wmetafileN``): Word draws the object's text into it (Tika's ``testRTFEmbeddedLink.rtf``, a
linked Word document, read empty: its whole text is in that picture). Other pictures are
never read.

A list item's marker (``\\listtext``, ``\\pntext``) drawn in a symbol font (Symbol, OpenSymbol,
Wingdings...: a glyph's code is no character of any code page; LibreOffice even declares
OpenSymbol Shift-JIS) is written as a bullet, ``\u2022``, not as the code page's character for
the glyph's byte (a U+FFFD, or a stray letter). Other text in the Symbol font is its glyphs'
characters (``{\\f1 a}`` an alpha where the font table names Symbol: Greek letters and
mathematical signs, :mod:`engine.readers.symbolfont`), whatever the document's code page. A
``SYMBOL`` field (how Word writes an inserted symbol: ``SYMBOL 97 \\f "Symbol"``, its result
often left empty) is the character its instruction names, once.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, LimitExceeded
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.embedded import Embedded, ole1_document, with_embedded
from engine.readers.symbolfont import is_glyph_font, is_symbol, recode, sym

MAX_DEPTH = 1000
MAX_OBJECTS = 1000
"""Embedded objects kept of one document (past them, ``\\objdata`` is skipped as before)."""
"""Deepest group nesting read; deeper is refused as a limit."""
FLUSH_CHARS = 65536
"""Text is handed to the sink in pieces of about this many characters."""

_TOKEN = re.compile(
    rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?"  # 1, 2: control word and its parameter
    rb"|\\'([0-9a-fA-F]{2})"  # 3: a byte in the current code page
    rb"|\\(.)"  # 4: control symbol
    rb"|([{}])"  # 5: group start or end
    rb"|[\r\n]+"  # line breaks in the file are not text
    rb"|([^\\{}\r\n]+)",  # 6: plain text
    re.S,
)

_SKIP_WORDS = (
    "fonttbl colortbl stylesheet info pict object objdata objclass header headerl "
    "headerr headerf footer footerl footerr footerf listtable listoverridetable revtbl "
    "rsidtbl generator xmlnstbl themedata colorschememapping datastore latentstyles "
    "filetbl pgdsctbl fldinst bkmkstart bkmkend sp nonshppict pn xe tc txe ftnsep "
    "ftnsepc aftnsep aftnsepc ftncn aftncn docvar userprops protusertbl passwordhash "
    "wgrffmtfilter mmathPr listpicture panose falt fname private list listlevel leveltext "
    "levelnumbers listname listoverride lfolevel"
)
SKIP_DESTINATIONS = frozenset(_SKIP_WORDS.split())
"""Destinations whose groups hold no body text."""

CHAR_WORDS = {
    "par": "\n", "line": "\n", "sect": "\n", "page": "\n", "row": "\n", "nestrow": "\n",
    "tab": "\t", "cell": "\t", "nestcell": "\t", "emdash": "\u2014", "endash": "\u2013",
    "bullet": "\u2022", "lquote": "\u2018", "rquote": "\u2019", "ldblquote": "\u201c",
    "rdblquote": "\u201d", "emspace": " ", "enspace": " ", "qmspace": " ",
}  # fmt: skip

CHAR_SYMBOLS = {"~": "\u00a0", "_": "\u2011", "-": "", "\\": "\\", "{": "{", "}": "}"}
CHAR_SYMBOLS["\n"] = CHAR_SYMBOLS["\r"] = "\n"  # a backslash before a line break is \par

CHARSET_CODECS = {
    0: "cp1252", 77: "mac_roman", 128: "cp932", 129: "cp949", 130: "johab", 134: "gbk",
    136: "cp950", 161: "cp1253", 162: "cp1254", 163: "cp1258", 177: "cp1255", 178: "cp1256",
    186: "cp1257", 204: "cp1251", 222: "cp874", 238: "cp1250", 255: "cp437",
}  # fmt: skip


SYMBOL_CHARSET = 2
"""``\\fcharset2``: the font's glyphs are symbols, its bytes no code page's characters."""
MARKER_WORDS = frozenset({"listtext", "pntext"})
_SYMBOL_FIELD = re.compile(r"\s*SYMBOL\s+(0x[0-9a-f]+|\d{1,7})\b", re.IGNORECASE)
"""A ``SYMBOL`` field's instruction and its character's number."""
_FIELD_FONT = re.compile(r'\\f\s*(?:"([^"]*)"|([^\s\\]+))')
"""Its ``\\f`` switch: the font the number is a code of."""
_FIELD_UNICODE = re.compile(r"\\u\b")
"""Its ``\\u`` switch: the number is a Unicode code point."""
_INSTRUCTION_BYTES = 256
"""How much of a field's instruction is kept (a SYMBOL field's fits many times)."""
METAFILES = {"emfblip": "emf", "wmetafile": "wmf"}
"""The control words naming a picture a Windows metafile, and its kind."""
"""Destinations that hold a list item's marker (its number or bullet) as the writer drew it."""
BULLET = "\u2022"


def _codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


@dataclass(frozen=True, slots=True)
class _Group:
    """What a group inherits from its parent and may change for its children."""

    skip: bool = False
    objdata: bool = False
    """In an object's ``\\objdata``: its hex digits are the embedded object, kept."""
    uc: int = 1
    codec: str = "cp1252"
    dest: str = ""
    """The destination this group belongs to (``fonttbl`` inside the font table...)."""
    symbol: bool = False
    """The current font is a symbol font."""
    adobe: bool = False
    """The current font is the Symbol font, whose glyphs are characters (Greek, math)."""
    marker: bool = False
    """In a list item's marker."""


class _Parser:
    """One pass over an RTF document's bytes, writing text to a sink."""

    def __init__(self, data: bytes, sink: TextSink) -> None:
        self.data = data
        self.sink = sink
        self.stack: list[_Group] = []
        self.state = _Group()
        self.out: list[str] = []
        self.size = 0
        self.pending = bytearray()  # \'hh bytes not yet decoded (multi-byte code pages)
        self.fallback = 0  # \uN fallback characters still to skip
        self.ignorable = False  # the last token was \*
        self.fonts: dict[int, str] = {}
        self.symbols: set[int] = set()
        """The fonts that are symbol fonts."""
        self.adobe: set[int] = set()
        """The fonts that are the Symbol font (:mod:`engine.readers.symbolfont`)."""
        self.instruction = bytearray()
        """The instruction of the field being read (its start: a ``SYMBOL`` field's)."""
        self.field_at = -1
        """The depth of the field group whose instruction that is (-1: none)."""
        self.font = -1  # font being defined in the font table
        self.font_name = bytearray()  # the start of its name, as the table spells it
        self.font_depth = 0  # the depth of its group (the name is not in a nested one)
        self.deff = 0  # the document's default font
        self.default = "cp1252"
        self.objects: list[bytearray] = []
        """Each ``\\objdata``'s hex digits, as they came."""
        self.pictures: list[tuple[int, str, bytearray]] = []
        """Each object's metafile picture: (its object's index in :attr:`objects`, ``emf`` or
        ``wmf``, its hex digits as they came)."""
        self.object_at = -1
        """The depth of the ``\\object`` group being read (-1: none)."""
        self.object = -1
        """The index its ``\\objdata`` has (or would have) in :attr:`objects`."""
        self.pict_at = -1
        """The depth of the ``\\pict`` group whose data is being kept (-1: none)."""
        self.binary_at: int | None = None
        """Where the first byte no RTF holds is (-1: none to the end), once looked for."""

    def run(self) -> None:
        pos, end = 0, len(self.data)
        while pos < end:
            m = _TOKEN.match(self.data, pos)
            if m is None:  # a lone backslash at the very end
                break
            pos = m.end()
            if m.group(3) is None:
                self._decode_pending()
            if m.group(1) is not None:
                pos = self._word(m.group(1).decode("ascii"), m.group(2), pos)
            elif m.group(3) is not None:
                self._hex(int(m.group(3), 16))
            elif m.group(4) is not None:
                self._symbol(m.group(4).decode("latin-1"))
            elif m.group(5) is not None:
                self._brace(m.group(5))
                if not self.stack and m.group(5) == b"}" and not self._goes_on(pos):
                    # the document's own group ended and binary follows: no part of it, but
                    # for another document a tool wrote after it
                    pos = self.data.find(b"{\\rtf", pos)
                    if pos < 0:
                        break
                    self._emit("\n")
            elif m.group(6) is not None:
                self._text(m.group(6))
        self._decode_pending()
        self._flush(final=True)

    def _goes_on(self, pos: int) -> bool:
        """Whether the bytes after ``pos`` could be more of the document, read on after its
        group closed (a writer's stray brace): seven-bit text to the end, as RTF is. The
        first byte that cannot be is looked for once (a stray brace each line costs no
        search of the rest each)."""
        if self.binary_at is None or (self.binary_at >= 0 and self.binary_at < pos):
            found = _NOT_RTF.search(self.data, pos)
            self.binary_at = found.start() if found is not None else -1
        return self.binary_at < 0

    # --- tokens ----------------------------------------------------------------------------

    def _brace(self, brace: bytes) -> None:
        self.fallback = 0
        self.ignorable = False
        if brace == b"{":
            if len(self.stack) >= MAX_DEPTH:
                raise LimitExceeded("rtf_depth", f"groups nested deeper than {MAX_DEPTH}")
            self.stack.append(self.state)
            self.state = replace(self.state, dest="") if not self.state.skip else self.state
        elif self.stack:
            self.state = self.stack.pop()
            if len(self.stack) < self.field_at:  # (a field without a result)
                self.field_at = -1
                if not self.state.skip:
                    self._field_symbol()
            if len(self.stack) < self.pict_at:
                self.pict_at = -1
            if len(self.stack) < self.object_at:
                self.object_at = self.object = -1

    def _word(self, word: str, param: bytes | None, pos: int) -> int:
        """Handle one control word; returns where reading goes on (past \\bin data)."""
        arg = int(param) if param is not None else None
        if word == "bin":
            return min(len(self.data), pos + max(0, arg or 0))
        ignorable, self.ignorable = self.ignorable, False
        if word in SKIP_DESTINATIONS or ignorable:
            self.state = replace(self.state, skip=True, dest=self.state.dest or word)
        elif word in MARKER_WORDS:
            self.state = replace(self.state, marker=True)
        if word == "field":
            self.instruction.clear()
            self.field_at = len(self.stack)
        elif word == "fldrslt" and not self.state.skip and self._field_symbol():
            self.state = replace(self.state, skip=True, dest="fldrslt")
        if word == "objdata" and len(self.objects) < MAX_OBJECTS:
            self.state = replace(self.state, objdata=True)
            self.objects.append(bytearray())
        elif word == "object":
            self.object_at, self.object = len(self.stack), len(self.objects)
        elif word in METAFILES and self._object_picture():
            self.pict_at = len(self.stack)
            self.pictures.append((self.object, METAFILES[word], bytearray()))
        if self.state.skip:
            self._table_word(word, arg)
            return pos
        if word == "u" and arg is not None:
            self._emit(chr(arg % 65536) if arg < 0 else chr(min(arg, 0x10FFFF)))
            self.fallback = self.state.uc
        elif self.fallback:
            self.fallback -= 1
        elif word in CHAR_WORDS:
            self._emit(CHAR_WORDS[word])
        else:
            self._format_word(word, arg)
        return pos

    def _object_picture(self) -> bool:
        """Whether the picture whose kind was just named is an object's own, to keep: in the
        ``\\result`` of an object whose data came first, not its ``\\nonshppict`` copy."""
        return (
            0 <= self.object < len(self.objects)
            and len(self.stack) > self.object_at
            and self.state.dest != "nonshppict"
            and not any(obj == self.object for obj, _kind, _hex in self.pictures)
        )

    def _format_word(self, word: str, arg: int | None) -> None:
        """Control words that change how later bytes are read."""
        if word == "uc" and arg is not None:
            self.state = replace(self.state, uc=max(0, min(arg, 10)))
        elif word == "ansicpg" and arg is not None:
            self.default = _codec(f"cp{arg}") or self.default
            self.state = replace(self.state, codec=self.default)
        elif word in ("mac", "pc", "pca"):
            self.default = {"mac": "mac_roman", "pc": "cp437", "pca": "cp850"}[word]
            self.state = replace(self.state, codec=self.default)
        elif word == "f" and arg is not None:
            self._font(arg)
        elif word == "deff" and arg is not None:
            self.deff = arg
        elif word == "plain":
            self._font(self.deff)

    def _font(self, font: int) -> None:
        """Text from here is in ``font``: its code page; the Symbol font's bytes are its
        glyphs' codes, each read as itself (Latin-1) and then as the glyph's character."""
        adobe = font in self.adobe
        codec = "latin-1" if adobe else self.fonts.get(font, self.default)
        self.state = replace(self.state, codec=codec, symbol=font in self.symbols, adobe=adobe)

    def _table_word(self, word: str, arg: int | None) -> None:
        """Inside the font table, remember each font's character set."""
        if self.state.dest != "fonttbl" or arg is None:
            return
        if word == "f":
            self.font = arg
            self.font_name.clear()
            self.font_depth = len(self.stack)
        elif word == "fcharset" and arg == SYMBOL_CHARSET:
            self.symbols.add(self.font)
        elif word == "fcharset" and arg in CHARSET_CODECS:
            self.fonts[self.font] = CHARSET_CODECS[arg]
        elif word == "cpg":
            self.fonts[self.font] = _codec(f"cp{arg}") or self.default

    def _symbol(self, sym: str) -> None:
        if sym == "*":
            self.ignorable = True
        elif self.state.skip:
            if self.state.dest == "fldinst" and len(self.instruction) < _INSTRUCTION_BYTES:
                self.instruction += sym.encode("latin-1")  # (a switch's backslash)
            return
        elif self.fallback:
            self.fallback -= 1
        elif sym in CHAR_SYMBOLS:
            self._emit(CHAR_SYMBOLS[sym])

    def _hex(self, byte: int) -> None:
        if self.state.skip:
            return
        if self.fallback:
            self.fallback -= 1
            return
        self.pending.append(byte)

    def _text(self, raw: bytes) -> None:
        self.ignorable = False
        if self.state.skip:
            if self.state.objdata:
                self.objects[-1] += raw
            elif len(self.stack) == self.pict_at:  # (not its \blipuid, a group inside)
                self.pictures[-1][2].extend(raw)
            elif self.state.dest == "fonttbl" and len(self.stack) == self.font_depth:
                self._font_name(raw)
            elif self.state.dest == "fldinst" and len(self.instruction) < _INSTRUCTION_BYTES:
                self.instruction += raw[: _INSTRUCTION_BYTES - len(self.instruction)]
            return
        if self.fallback:
            cut = min(self.fallback, len(raw))
            raw, self.fallback = raw[cut:], self.fallback - cut
        if raw:
            self._emit(raw.decode(self.state.codec, "replace"))

    def _field_symbol(self) -> bool:
        """Where a field's result begins, or its group ends without one: a ``SYMBOL`` field's
        character is written from its instruction (``SYMBOL 97 \\f "Symbol"``: Word leaves the
        result empty, or the character again in the symbol font, which is then skipped).
        Whether it was one."""
        instruction = bytes(self.instruction).decode("latin-1")
        self.instruction.clear()
        found = _SYMBOL_FIELD.match(instruction)
        if found is None:
            return False
        number = found.group(1)
        named = _FIELD_FONT.search(instruction, found.end())
        font = (named.group(1) or named.group(2)) if named is not None else None
        code = int(number, 16) if number.lower().startswith("0x") else int(number)
        if _FIELD_UNICODE.search(instruction, found.end()) or (font is None and code > 0xFF):
            char = chr(code) if code < 0x110000 and not 0xD800 <= code <= 0xDFFF else ""
        elif font is None:
            char = bytes([code]).decode(self.state.codec, "replace")
        else:
            char = sym(font, f"{code:X}")
        self._emit(char, drawn=False)
        return True

    def _font_name(self, raw: bytes) -> None:
        """Text in the font table: the font's name, up to its ``;`` (a symbol font's?)."""
        if len(self.font_name) < 64:
            self.font_name += raw[:64]
        name = bytes(self.font_name).decode("latin-1")
        if is_glyph_font(name):
            self.symbols.add(self.font)
        if is_symbol(name):
            self.adobe.add(self.font)

    # --- output ----------------------------------------------------------------------------

    def _decode_pending(self) -> None:
        if self.pending:
            self._emit(self.pending.decode(self.state.codec, "replace"))
            self.pending.clear()

    def _emit(self, text: str, *, drawn: bool = True) -> None:
        """Write ``text``; ``drawn``: as the current font draws it (a character a field's
        instruction names is itself already)."""
        if drawn and self.state.marker and self.state.symbol and not text.isspace():
            text = BULLET * sum(1 for c in text if not c.isspace())  # (a glyph, drawn)
        elif drawn and self.state.adobe:
            text = recode(text)
        self.out.append(text)
        self.size += len(text)
        if self.size >= FLUSH_CHARS:
            self._flush(final=False)

    def _flush(self, *, final: bool) -> None:
        text = "".join(self.out)
        carry = ""
        if not final and text and "\ud800" <= text[-1] <= "\udbff":
            text, carry = text[:-1], text[-1]  # the low half of the pair is still to come
        self.out, self.size = [carry] if carry else [], len(carry)
        # \uN gives UTF-16 halves for characters past the BMP: pair them, drop strays.
        self.sink.write(text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace"))


def rtf_to_text(data: bytes, sink: TextSink) -> list[bytes]:
    """Write the body text of the RTF document ``data``; CorruptFile when it is not RTF.
    Returns the objects embedded in it (each ``\\objdata``'s bytes: an OLE 1 object)."""
    return rtf_document(data, sink)[0]


def rtf_document(data: bytes, sink: TextSink) -> tuple[list[bytes], dict[int, tuple[str, bytes]]]:
    """:func:`rtf_to_text`, and each object's metafile picture by the object's index (its
    kind, ``emf`` or ``wmf``, and bytes)."""
    data = data.lstrip()
    if not data.startswith(b"{\\rtf"):
        raise CorruptFile("does not start with {\\rtf")
    parser = _Parser(data, sink)
    parser.run()
    pictures = {obj: (kind, _unhex(hexed)) for obj, kind, hexed in parser.pictures}
    return [_unhex(hexed) for hexed in parser.objects], pictures


def _embedded(objects: list[bytes], pictures: dict[int, tuple[str, bytes]]) -> Iterator[Embedded]:
    """Each object's document, or its metafile picture when it holds none."""
    for index, raw in enumerate(objects):
        found = ole1_document(index + 1, raw)
        if found is not None:
            yield found
        elif index in pictures and pictures[index][1]:
            kind, picture = pictures[index]
            yield f"embedded/object{index + 1}/picture.{kind}", picture


def _unhex(hexed: bytearray) -> bytes:
    """The bytes an ``\\objdata``'s hex digits spell (anything else in it left out)."""
    digits = _NOT_HEX.sub(b"", bytes(hexed))
    return bytes.fromhex(digits[: len(digits) // 2 * 2].decode("ascii"))


_NOT_HEX = re.compile(rb"[^0-9a-fA-F]+")
_NOT_RTF = re.compile(rb"[^\t\n\r\x20-\x7e]")
"""A byte no RTF document holds (it is seven-bit text; ``\\bin`` data is inside a group)."""


class RtfReader:
    """Rich Text Format by a built-in tokenizer."""

    name = "rtf"
    version = 5
    """2: the documents embedded in it as OLE objects are read as its members. 3: list
    definitions (a ``\\list`` outside its table) left out, a symbol font's list marker a
    bullet, nothing after the document's outermost group. 4: an object that holds no
    document read by the metafile picture of it in its ``\\result``. 5: text in the Symbol
    font as the characters its glyphs show (:mod:`engine.readers.symbolfont`); a ``SYMBOL``
    field as the character it names."""
    mimes = frozenset({M.RTF, "text/rtf"})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the body text of the RTF document at ``path``, then its embedded ones."""
        objects, pictures = rtf_document(path.read_bytes(), sink)
        return with_embedded(ReadInfo("rtf"), ctx, sink, _embedded(objects, pictures))


READERS = (RtfReader(),)
