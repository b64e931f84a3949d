"""Streamed XML on a budget, for the Office, OpenDocument and e-book readers.

:func:`parse` feeds a byte stream to expat in chunks. Only the element being read is kept as a
tree: a *block* (a paragraph, a row, a shared string) is built while it is open, handed to the
reader's callback when it ends, then dropped; everything outside blocks is never built (a
reader can still see chosen start tags and their attributes). Elements in ``skip`` are ignored
with all they hold. Tags and attribute names come back as ``prefix:local`` through the
reader's namespace map (``{uri}local`` for namespaces it does not name).

Refused (error/refused): a DTD with an internal subset (``<!DOCTYPE x [...]>``), any entity
declaration (which only a DTD can hold), and any encoding but UTF-8 / UTF-16. A DOCTYPE that
only names an external DTD (StarOffice's ``<!DOCTYPE office:document-content PUBLIC ...
"office.dtd">``) is allowed: the external DTD is never loaded (parameter entity parsing is off
and no external entity is ever resolved), so it can declare nothing.

Bounds: ``limits.xml_bytes`` counted on the bytes fed to the parser, across every part of one
document (:class:`XmlBudget`), and ``limits.parts_per_block`` elements in one block.
Malformed XML raises CorruptFile; TextCapReached from the reader's callback propagates untouched.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from engine.errors import CorruptFile, LimitExceeded, Refused
from engine.limits import Limits

CHUNK = 64 * 1024
"""Bytes fed to expat per call: small, so a refusal stops the parser within one chunk."""
_HEAD = 1024
_DECL = re.compile(r"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._-]+)")
_ALLOWED = frozenset({"utf-8", "utf8", "utf-16", "utf-16le", "utf-16be", "us-ascii", "ascii"})

BlockHandler = Callable[[Element], None]
StartHandler = Callable[[str, dict[str, str]], None]


class ByteSource(Protocol):
    """Anything with ``read(size) -> bytes``: a file or a zip member stream."""

    def read(self, size: int = ..., /) -> bytes:
        """The next at most ``size`` bytes; b"" at the end."""
        ...


class XmlBudget:
    """Bytes of XML one document may still feed to a parser (``limits.xml_bytes``)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.used = 0

    def spend(self, n: int) -> None:
        """Count ``n`` more bytes; LimitExceeded past the cap."""
        self.used += n
        if self.used > self.limits.xml_bytes:
            raise LimitExceeded("xml_bytes", f"more than {self.limits.xml_bytes} bytes of XML")


@dataclass(frozen=True, slots=True)
class Rules:
    """What one parse keeps and where it goes."""

    ns: Mapping[str, str]
    """Namespace URI -> prefix used in tag names (``w`` gives ``w:p``; ``""`` gives ``p``)."""
    blocks: frozenset[str] = frozenset()
    """Tags built whole and handed to ``on_block`` when they end (outermost ones only)."""
    on_block: BlockHandler | None = None
    """Called with each finished block; the block is dropped afterwards."""
    starts: frozenset[str] = frozenset()
    """Tags outside blocks whose start (tag, attributes) is reported to ``on_start``."""
    on_start: StartHandler | None = None
    """Called for each start tag in ``starts`` met outside a block."""
    skip: frozenset[str] = frozenset()
    """Tags ignored with everything inside them (binary data, deleted text...)."""
    lift: frozenset[str] = frozenset()
    """Tags right inside a skipped element of a block kept, with their attributes and not
    their content, as children of the skipped element's parent: a Word run's font
    (``w:rFonts``) without building the rest of its properties."""


def check_head(head: bytes) -> None:
    """Refuse XML that is neither UTF-8 nor UTF-16 (the byte-order mark, then the declaration)."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) or head[:4] in (
        b"\x00\x00\x00<",
        b"<\x00\x00\x00",
    ):
        raise Refused("XML encoding is UTF-32, not UTF-8 or UTF-16")
    if head.startswith(codecs.BOM_UTF8):
        text = head[3:].decode("utf-8", "replace")
    elif head.startswith(codecs.BOM_UTF16_LE) or head[:2] == b"<\x00":
        text = head.decode("utf-16-le", "replace").lstrip("\ufeff")
    elif head.startswith(codecs.BOM_UTF16_BE) or head[:2] == b"\x00<":
        text = head.decode("utf-16-be", "replace").lstrip("\ufeff")
    else:
        text = head.decode("latin-1")
    match = _DECL.match(text)
    if match and match.group(1).lower() not in _ALLOWED:
        raise Refused(f"XML encoding {match.group(1)[:40]} is not UTF-8 or UTF-16")


class _Stream:
    """The expat handlers of one parse: block building, skipping, start reports."""

    def __init__(self, rules: Rules, limits: Limits) -> None:
        self.rules = rules
        self.max_parts = limits.parts_per_block
        self.names: dict[str, str] = {}
        self.skip_depth = 0
        self.block_depth = 0
        self.parts = 0
        self.builder: TreeBuilder | None = None
        self.lift = frozenset(
            f"{uri}}}{tag.partition(':')[2]}"
            for tag in rules.lift
            for uri, prefix in rules.ns.items()
            if prefix == tag.partition(":")[0]
        )
        """:attr:`Rules.lift` as expat names them (``uri}local``): no lookup a skipped tag."""

    def name(self, raw: str) -> str:
        """``uri}local`` from expat -> ``prefix:local`` (cached per distinct name)."""
        known = self.names.get(raw)
        if known is None:
            uri, sep, local = raw.rpartition("}")
            if not sep:
                known = raw
            else:
                prefix = self.rules.ns.get(uri)
                if prefix is None:
                    known = f"{{{uri}}}{local}"
                else:
                    known = f"{prefix}:{local}" if prefix else local
            self.names[raw] = known
        return known

    def start(self, raw: str, attrs: dict[str, str]) -> None:
        """expat StartElementHandler."""
        if self.skip_depth:
            self.skip_depth += 1
            if raw in self.lift and self.skip_depth == 2 and self.block_depth:
                self._lift(self.name(raw), attrs)
            return
        tag = self.name(raw)
        if tag in self.rules.skip:
            self.skip_depth = 1
            return
        if self.block_depth:
            self._start_in_block(tag, attrs)
        elif tag in self.rules.blocks:
            self.builder = TreeBuilder()
            self.parts = 0
            self._start_in_block(tag, attrs)
        elif tag in self.rules.starts and self.rules.on_start is not None:
            self.rules.on_start(tag, {self.name(k): v for k, v in attrs.items()})

    def _lift(self, tag: str, attrs: dict[str, str]) -> None:
        """A child of a skipped element that :attr:`Rules.lift` names: kept, empty, in the
        skipped element's place."""
        self._start_in_block(tag, attrs)
        assert self.builder is not None
        self.builder.end(tag)
        self.block_depth -= 1

    def _start_in_block(self, tag: str, attrs: dict[str, str]) -> None:
        self.block_depth += 1
        self.parts += 1
        if self.parts > self.max_parts:
            raise LimitExceeded("parts_per_block", f"more than {self.max_parts} parts in a {tag}")
        assert self.builder is not None
        self.builder.start(tag, {self.name(k): v for k, v in attrs.items()})

    def end(self, raw: str) -> None:
        """expat EndElementHandler."""
        if self.skip_depth:
            self.skip_depth -= 1
            return
        if not self.block_depth:
            return
        assert self.builder is not None
        self.builder.end(self.name(raw))
        self.block_depth -= 1
        if self.block_depth == 0:
            block = self.builder.close()
            self.builder = None
            if self.rules.on_block is not None:
                self.rules.on_block(block)

    def data(self, text: str) -> None:
        """expat CharacterDataHandler (buffered: one call per text node)."""
        if self.block_depth and not self.skip_depth:
            assert self.builder is not None
            self.builder.data(text)


def _refuse_dtd(*_args: object) -> None:
    raise Refused("XML with a DTD or entity declarations is refused")


def _check_doctype(
    _name: str, _system_id: str | None, _public_id: str | None, has_internal_subset: int
) -> None:
    """A DOCTYPE naming only an external DTD declares nothing we read: allowed."""
    if has_internal_subset:
        raise Refused("XML with a DTD or entity declarations is refused")


def _refuse_external(*_args: object) -> int:
    raise Refused("XML with external entities is refused")


def _make_parser(handlers: _Stream) -> expat.XMLParserType:
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.buffer_size = CHUNK
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _check_doctype
    parser.EntityDeclHandler = _refuse_dtd
    parser.UnparsedEntityDeclHandler = _refuse_dtd
    parser.ExternalEntityRefHandler = _refuse_external
    parser.StartElementHandler = handlers.start
    parser.EndElementHandler = handlers.end
    parser.CharacterDataHandler = handlers.data
    return parser


def _head(source: ByteSource, budget: XmlBudget) -> bytes:
    """The first bytes (at least ``_HEAD`` unless the document is shorter)."""
    head = b""
    while len(head) < _HEAD:
        chunk = source.read(CHUNK)
        if not chunk:
            break
        budget.spend(len(chunk))
        head += chunk
    return head


def parse(source: ByteSource, rules: Rules, budget: XmlBudget) -> None:
    """Parse one XML document from ``source`` under ``rules``, spending ``budget``."""
    handlers = _Stream(rules, budget.limits)
    parser = _make_parser(handlers)
    chunk = _head(source, budget)
    if not chunk:
        raise CorruptFile("XML part is empty")
    check_head(chunk)
    try:
        while chunk:
            parser.Parse(chunk, False)
            chunk = source.read(CHUNK)
            budget.spend(len(chunk))
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise CorruptFile(f"XML is not well-formed: {exc}") from exc


def parse_bytes(data: bytes, rules: Rules, budget: XmlBudget) -> None:
    """:func:`parse` over bytes already in memory."""
    parse(_BytesSource(data), rules, budget)


class _BytesSource:
    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self._at = 0

    def read(self, size: int = CHUNK, /) -> bytes:
        part = bytes(self._view[self._at : self._at + size])
        self._at += len(part)
        return part


def element_text(elem: Element, skip: frozenset[str] = frozenset()) -> str:
    """All text inside ``elem`` in document order, leaving out ``skip`` subtrees (iterative)."""
    parts: list[str] = []
    stack: list[Element | str] = [elem]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        if item.tag in skip:
            if item.tail and item is not elem:
                parts.append(item.tail)
            continue
        if item.tail and item is not elem:
            stack.append(item.tail)
        stack.extend(reversed(list(item)))
        if item.text:
            parts.append(item.text)
    return "".join(parts)
