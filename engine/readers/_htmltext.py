"""The HTML-to-text parser behind :func:`engine.readers.html.html_to_text` (see that module).

Its own module because it subclasses :class:`html.parser.HTMLParser`, and ``html.parser``
(with ``html.entities``) costs a few milliseconds to import: the registry imports every reader
module at each sweep's start, and only a sweep that reads HTML needs the parser.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from engine.readers.base import TextSink

_SKIP = frozenset({"script", "style", "noscript", "template"})
_CELL = frozenset({"td", "th"})
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
    "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html",
    "legend", "li", "main", "menu", "nav", "ol", "optgroup", "option", "p", "pre", "section",
    "summary", "table", "tbody", "tfoot", "thead", "title", "tr", "ul",
})  # fmt: skip
_WS = re.compile(r"[ \t\n\r\f\v]+")
_CDATA_END = re.compile(r"</\s*(script|style)(?:[\t\n\r\f /][^>]*)?>", re.IGNORECASE)
_STUCK = 4096
"""Unconsumed characters at the end past which the tail counts as an unclosed construct."""
_FLUSH_AT = 1 << 16
"""Characters buffered in one line before they are handed to the sink anyway."""


class TextParser(HTMLParser):
    """Turns parser events into lines written to a sink."""

    def __init__(self, sink: TextSink) -> None:
        super().__init__(convert_charrefs=True)
        self._sink = sink
        self._line: list[str] = []
        self._buffered = 0
        self._open = False  # the current line has content (some of it may be flushed already)
        self._flushed = False  # part of the current line went to the sink already
        self._skip = 0
        self._pre = 0
        self._pre_start = False
        self._space = False  # whitespace seen since the last text of this line
        self._gap = True  # at the start of a line or a cell: no space needed
        self._row_cells = 0
        self._newlines = 2  # trailing newlines already written (2: no blank line at the top)

    # parser events

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag == "br":
            self._break()
        elif tag in _CELL:
            self._cell()
        elif tag in _BLOCK:
            self._end_line()
            if tag == "tr":
                self._row_cells = 0
            elif tag == "pre":
                self._pre += 1
                self._pre_start = True

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK:
            self._end_line()
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SKIP:
            self.handle_starttag(tag, attrs)
            if tag != "br":
                self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            self._pre_text(data)
        else:
            self._text(data)

    # CPython's markup base asserts on malformed declarations (``<![if--``, ``<!DOCTYPE<``);
    # a browser reads them as bogus comments that end at the next ``>``.

    def parse_marked_section(self, i: int, report: bool = True) -> int:
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            return self._bogus_comment(i)

    def parse_html_declaration(self, i: int) -> int:
        try:
            return super().parse_html_declaration(i)
        except AssertionError:
            return self._bogus_comment(i)

    def set_cdata_mode(self, elem: str, **kwargs: bool) -> None:
        super().set_cdata_mode(elem, **kwargs)
        self.interesting = re.compile(rf"</\s*{elem}(?=[\t\n\r\f />])", re.IGNORECASE)

    def parse_endtag(self, i: int) -> int:
        # ``</script language>`` ends a script in a browser; CPython 3.11 only ends it on an
        # exact ``</script>`` and would drop the rest of the page as script.
        if self.cdata_elem is not None:
            match = _CDATA_END.match(self.rawdata, i)
            if match and match.group(1).lower() == self.cdata_elem:
                self.handle_endtag(self.cdata_elem)
                self.clear_cdata_mode()
                return match.end()
        return super().parse_endtag(i)

    def _bogus_comment(self, i: int) -> int:
        end = self.rawdata.find(">", i + 2)
        return -1 if end < 0 else end + 1

    # line building

    def _text(self, data: str) -> None:
        words = _WS.sub(" ", data)
        if words[:1] == " ":
            self._space = True
        words = words.strip(" ")
        if not words:
            return
        if self._space and not self._gap:
            words = " " + words
        self._append(words)
        self._space = data[-1:].isspace()

    def _pre_text(self, data: str) -> None:
        if self._pre_start and data.startswith("\n"):
            data = data[1:]  # a newline right after <pre> is not content
        self._pre_start = False
        if data:
            self._append(data)

    def _append(self, text: str) -> None:
        self._line.append(text)
        self._open = True
        self._gap = False
        self._buffered += len(text)
        if self._buffered >= _FLUSH_AT:
            self._write("".join(self._line))
            self._flushed = True
            self._line.clear()
            self._buffered = 0

    def _cell(self) -> None:
        if self._row_cells:
            self._append("\t")
            self._gap = True
        self._row_cells += 1
        self._space = False

    def _break(self) -> None:
        if self._open:
            self._end_line()
        elif self._newlines < 2:
            self._write("\n")

    def _end_line(self) -> None:
        if self._open:
            line = "".join(self._line)
            # A row of empty cells or a line of &nbsp; is layout, not text.
            if line.strip() or self._flushed:
                self._write(line + "\n")
            self._flushed = False
            self._line.clear()
            self._buffered = 0
            self._open = False
        self._gap = True
        self._space = False
        self._pre_start = False

    def _write(self, text: str) -> None:
        if not text:
            return
        stripped = text.rstrip("\n")
        self._newlines = len(text) - len(stripped) if stripped else self._newlines + len(text)
        self._sink.write(text)

    def finish(self) -> None:
        """Flush what the parser still holds and the last line.

        A long tail the parser could not consume starts with a tag, comment or quote that never
        closes: a browser swallows it to the end, and :meth:`close` would rescan it once per
        ``<`` (quadratic, CPython gh-135462), so it is dropped instead.
        """
        if len(self.rawdata) > _STUCK and self.rawdata.startswith("<"):
            self.rawdata = ""
        self.close()
        self._end_line()
