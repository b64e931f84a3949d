"""Outlook .msg files through extract-msg.

The text is the message's From/To/Cc/Date/Subject lines, an empty line, then the body: the
plain-text body when there is one, else the HTML body through the HTML reader, else the
compressed RTF body through the RTF reader. Attachments are listed by name after the body,
then read as members of a container, as an ``.eml``'s are (:mod:`engine.readers.members`:
each its own verdict in the record, its text after a ``# member NAME`` line, the same bounds);
an attached message (an Outlook item inside the item) is written after them the same way.
Past ``archive_depth`` attachments are only named. extract-msg's own exceptions, warnings and
log lines never leave the reader: a file it cannot parse is ``error/corrupt``; an attachment
whose data it cannot give is named and not read.
"""

from __future__ import annotations

import codecs
import logging
import os
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from engine import mimes as M
from engine.errors import CorruptFile, ReadFailure
from engine.readers.base import ReadContext, ReadInfo, TextSink, quiet_library
from engine.readers.html import decode_html, html_to_text
from engine.readers.mail import MAX_DEPTH, attachments
from engine.readers.members import MemberReader
from engine.readers.rtf import rtf_to_text

MESSAGE_CODEPAGE = "3FFD0003"
INTERNET_CPID = "3FDE0003"
HEADERS = (("From", "sender"), ("To", "to"), ("Cc", "cc"), ("Date", "date"), ("Subject", "subject"))
"""Header line label and the extract-msg attribute it comes from, in output order."""


def _get(msg: Any, attr: str) -> Any:
    """A property of ``msg``, or None when extract-msg cannot decode it."""
    try:
        return getattr(msg, attr, None)
    except (ReadFailure, MemoryError):
        raise
    # Properties decode lazily and any of them can fail on a damaged stream: that part is
    # missing, the rest of the message is still worth reading.
    except Exception:
        return None


def _header_value(value: Any) -> str:
    if isinstance(value, datetime):
        from email.utils import format_datetime  # the email package only once mail is read

        # 1601-01-01 is a FILETIME of zero: no date at all.
        return format_datetime(value) if value.year > 1601 else ""
    text = " ".join(str(value).replace("\x00", " ").split())
    return "" if text == "<>" else text


def _internet_codepage(msg: Any) -> str | None:
    """The code page of 8-bit strings when only PR_INTERNET_CPID names it.

    extract-msg reads 8-bit strings by PR_MESSAGE_CODEPAGE and falls back to a Latin
    encoding without it, which turns a Big5 or Shift-JIS message into mojibake.
    """
    if _get(msg, "areStringsUnicode") is not False:
        return None
    props = _get(msg, "props")
    if props is None or props.get(MESSAGE_CODEPAGE) is not None:
        return None
    cpid = props.get(INTERNET_CPID)
    value = getattr(cpid, "value", None)
    if not isinstance(value, int) or value in (0, 1200, 1252, 28591, 28605, 65001):
        return None
    try:
        return codecs.lookup(f"cp{value}").name
    except LookupError:
        return None


def write_headers(msg: Any, sink: TextSink) -> None:
    """The header lines that have a value."""
    for label, attr in HEADERS:
        value = _get(msg, attr)
        if value:
            text = _header_value(value)
            if text:
                sink.line(f"{label}: {text}")


def write_body(msg: Any, sink: TextSink) -> None:
    """Plain body, else HTML body, else RTF body."""
    body = _get(msg, "body")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        sink.write(body.replace("\r\n", "\n").strip("\n") + "\n")
        return
    html = _get(msg, "htmlBody")
    if isinstance(html, bytes):
        html = decode_html(html)[0]
    if isinstance(html, str) and html.strip():
        html_to_text(html, sink)
        return
    rtf = _get(msg, "rtfBody")
    if isinstance(rtf, bytes) and rtf.strip():
        rtf_to_text(rtf, sink)


def _name_of(att: Any) -> str:
    for attr in ("longFilename", "shortFilename", "displayName", "name"):
        name = _get(att, attr)
        if isinstance(name, str) and name.strip():
            return name.strip()
    return "(unnamed)"


def _write(msg: Any, sink: TextSink, members: MemberReader | None, depth: int = 0) -> None:
    write_headers(msg, sink)
    sink.write("\n")
    write_body(msg, sink)
    atts = list(_get(msg, "attachments") or ())
    if atts:
        sink.line("\nAttachments:")
        for att in atts:
            sink.line(f"- {_name_of(att)}")
    if members is None:
        return
    inner: list[Any] = []
    for att in atts:
        if _get(att, "hidden") is True:
            continue  # shown inside the body (a logo, a signature image): not an attachment
        data = _get(att, "data")
        if isinstance(data, bytes):
            if data:
                members.read(_name_of(att), [data])
        elif data is not None and hasattr(data, "attachments"):
            inner.append(data)  # an embedded Outlook item: extract-msg opened it as one
    for item in inner:
        if depth + 1 < MAX_DEPTH:
            sink.write("\n")
            _write(item, sink, members, depth + 1)


def _open(path: Path, encoding: str | None) -> Any:
    import extract_msg

    try:
        return extract_msg.openMsg(os.fspath(path), overrideEncoding=encoding)
    except (ReadFailure, MemoryError):
        raise
    # Any failure to open is this file's problem; extract-msg's messages can quote the
    # file, so only the exception's type is kept.
    except Exception as exc:
        raise CorruptFile(f"extract-msg could not open it ({type(exc).__name__})") from exc


class MsgReader:
    """Outlook messages (and other .msg items) by extract-msg."""

    name = "msg"
    version = 4
    """3: a body only in RTF read as the RTF reader's version 3 reads it. 4: as its version 5
    reads it (the Symbol font's glyphs as their characters)."""
    mimes = frozenset({M.MSG})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write headers, body, attachment names and attachments of the message at ``path``."""
        with quiet_library("extract_msg", logging.CRITICAL):
            msg = _open(path, None)
            encoding = _internet_codepage(msg)
            if encoding is not None:
                msg.close()
                msg = _open(path, encoding)
            try:
                with attachments(ctx, sink) as members:
                    try:
                        _write(msg, sink, members)
                    except RecursionError as exc:
                        raise CorruptFile("message nests too deeply to read") from exc
                    if members is None:
                        return ReadInfo("msg")
                    return replace(members.finish("msg"), extractor="msg")
            finally:
                msg.close()


READERS = (MsgReader(),)
