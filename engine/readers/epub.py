"""EPUB e-books: their XHTML documents in spine order, through the HTML reader.

``META-INF/container.xml`` names the package document (OPF); its manifest and spine give the
documents in reading order. Each is read under the :mod:`zipsafe` caps (and counted against
``xml_bytes``), decoded as the HTML reader decodes pages, and converted by
:func:`engine.readers.html.html_to_text`. Container and package documents go through
:mod:`xmlsafe` (no DTD, UTF-8/16). A spine document listed in ``META-INF/encryption.xml``
makes the book :class:`EncryptedFile` (obfuscated fonts alone do not). Spine entries that are
missing or not (X)HTML are skipped.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import unquote

from engine import mimes as M
from engine.errors import CorruptFile, EncryptedFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.html import decode_html, html_to_text
from engine.readers.xmlsafe import Rules, XmlBudget, parse
from engine.readers.zipsafe import SafeZip

_NS = {
    "urn:oasis:names:tc:opendocument:xmlns:container": "c",
    "http://www.idpf.org/2007/opf": "opf",
    "http://www.w3.org/2001/04/xmlenc#": "enc",
}
_CONTAINER = "META-INF/container.xml"
_ENCRYPTION = "META-INF/encryption.xml"
_HTML_TYPES = frozenset({M.XHTML, M.HTML, "text/x-oeb1-document"})


def _collect(zf: SafeZip, name: str, tag: str, budget: XmlBudget) -> list[dict[str, str]]:
    """The attributes of every ``tag`` start in member ``name``."""
    found: list[dict[str, str]] = []
    rules = Rules(_NS, starts=frozenset({tag}), on_start=lambda _t, a: found.append(a))
    with zf.open(name) as stream:
        parse(stream, rules, budget)
    return found


def _package(zf: SafeZip, budget: XmlBudget) -> str:
    """The OPF member named by the container (the first ``.opf`` member without one)."""
    if zf.has(_CONTAINER):
        for attrs in _collect(zf, _CONTAINER, "c:rootfile", budget):
            path = attrs.get("full-path", "")
            if path and zf.has(path):
                return path
    for name in zf.names():
        if name.endswith(".opf"):
            return name
    raise CorruptFile("EPUB has no package document")


def _spine(zf: SafeZip, opf: str, budget: XmlBudget) -> list[str]:
    """Member names of the (X)HTML documents in spine order."""
    manifest: dict[str, tuple[str, str]] = {}
    order: list[str] = []
    folder = posixpath.dirname(opf)

    def on_start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "opf:item":
            href = unquote(attrs.get("href", "").split("#", 1)[0])
            member = posixpath.normpath(posixpath.join(folder, href)) if href else ""
            manifest[attrs.get("id", "")] = (member, attrs.get("media-type", ""))
        else:
            order.append(attrs.get("idref", ""))

    rules = Rules(_NS, starts=frozenset({"opf:item", "opf:itemref"}), on_start=on_start)
    with zf.open(opf) as stream:
        parse(stream, rules, budget)
    docs = (manifest.get(idref, ("", "")) for idref in order)
    return [m for m, kind in docs if m and kind in _HTML_TYPES and zf.has(m)]


def _encrypted(zf: SafeZip, budget: XmlBudget) -> set[str]:
    if not zf.has(_ENCRYPTION):
        return set()
    refs = _collect(zf, _ENCRYPTION, "enc:CipherReference", budget)
    return {posixpath.normpath(unquote(a.get("URI", ""))) for a in refs}


class EpubReader:
    """Reads EPUB 2 and 3 e-books."""

    name = "epub"
    version = 1
    mimes = frozenset({M.EPUB})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the text of every spine document into ``sink``, in reading order."""
        budget = XmlBudget(ctx.limits)
        with SafeZip(path, ctx.limits) as zf:
            docs = _spine(zf, _package(zf, budget), budget)
            locked = _encrypted(zf, budget).intersection(docs)
            if locked:
                raise EncryptedFile(f"{len(locked)} EPUB documents are encrypted")
            for doc in docs:
                data = zf.read(doc)
                budget.spend(len(data))
                markup, _encoding = decode_html(data)
                del data
                html_to_text(markup, sink)
        return ReadInfo(extractor=self.name)


READERS = (EpubReader(),)
