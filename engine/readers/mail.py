"""E-mail messages (``.eml``): headers, the body, the attachments and what they say.

Parsed with :mod:`email`, its headers kept raw and decoded here (see :func:`parse_message`).
The text is the From/To/Cc/Date/Subject lines, a blank line, then the plain body, or, when
there is none, the HTML body through
:func:`engine.readers.html.html_to_text`; then one ``[attachment: name]`` line per attachment,
then each attachment's own text after a ``# member NAME`` line: attachments are read as
members of a container (:mod:`engine.readers.members`: their own verdicts in the record, the
same readers and bounds, one level deeper; past ``archive_depth`` they are only named).
An attached message (``message/rfc822``) is written after them, the same way (one its sender
encoded in base64 or quoted-printable, as GroupWise does, decoded first).

Mail is often broken, so nothing here trusts it: a charset Python does not know, or bytes
that do not fit the declared one, go through the text reader's fallbacks (strict declared
charset, UTF-8, cp1252); bad base64 is decoded as far as it goes; a header that will not
parse is shown raw; parts nested deeper than :data:`MAX_DEPTH` are ignored. The mbox reader
writes each of its messages through :func:`write_message`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink, read_all
from engine.readers.html import html_to_text, meta_charset
from engine.readers.members import MemberReader
from engine.readers.text import decode_bytes

# The email package (7 ms to import, email.policy most of it) is imported by the functions that
# parse and walk a message: every sweep imports this module to learn the readers, few read mail.
if TYPE_CHECKING:
    from email.message import Message

HEADERS = ("From", "To", "Cc", "Date", "Subject")
"""Header lines written before the body, in this order."""
MAX_DEPTH = 20
"""Multipart levels (and attached messages) followed before the rest is ignored."""


def parse_message(data: bytes) -> Message:
    """Parse a message's bytes, its headers kept raw.

    The classic policy (``compat32``), not the modern one: the modern policy parses a header
    into an object at every look (Content-Type five times a message, by the parser itself
    too), most of an mbox's read time. Header lines are decoded here (:func:`header_text`).
    """
    from email import policy
    from email.message import Message
    from email.parser import BytesParser

    parser = BytesParser(_class=Message, policy=policy.compat32)
    try:
        return parser.parsebytes(data)
    except RecursionError as exc:
        raise CorruptFile("message nests too deeply to parse") from exc


def write_message(
    msg: Message,
    sink: TextSink,
    depth: int = 0,
    members: MemberReader | None = None,
    prefix: str = "",
) -> None:
    """Write headers, body, attachments and attached messages of ``msg``.

    With ``members``, each attachment is read as a member named ``prefix + name``.
    """
    for name in HEADERS:
        value = header_text(msg, name)
        if value:
            sink.line(f"{name}: {value}")
    sink.write("\n")
    leaves = [_Leaf.of(part) for part in _leaves(msg, depth)]
    body = _pick_body(leaves)
    if body is not None:
        _write_body(body, sink)
    attached: list[Message] = []
    files: list[_Leaf] = []
    for leaf in leaves:
        if leaf is body or leaf.attachment is None:
            continue
        sink.line(f"[attachment: {leaf.attachment}]")
        if leaf.ctype == "message/rfc822":
            attached.extend(_inner_messages(leaf.part))
        else:
            files.append(leaf)
    if members is not None:
        for leaf in files:
            payload = leaf.part.get_payload(decode=True)
            if isinstance(payload, bytes) and payload:
                members.read(prefix + (leaf.attachment or "attachment"), [payload])
    for inner in attached:
        if depth + 1 < MAX_DEPTH:
            sink.write("\n")
            write_message(inner, sink, depth + 1, members, prefix)


@dataclass(frozen=True, slots=True)
class _Leaf:
    """A non-multipart part with its headers parsed once (the modern policy parses slowly)."""

    part: Message
    ctype: str
    """Its content type, lower case."""
    attachment: str | None
    """Its name when it is an attachment; None for inline parts."""

    @classmethod
    def of(cls, part: Message) -> _Leaf:
        ctype = part.get_content_type()
        return cls(part, ctype, _attachment_name(part, ctype))


def header_text(msg: Message, name: str) -> str:
    """One header's value on one line, its encoded words decoded; '' when absent.

    Read from the raw header, not through the modern policy's header objects: those parse
    every address to render it again (95% of an mbox's read time: 1.3 ms a message), for a
    line that only needs its encoded words decoded. Raw 8-bit bytes are decoded as the text
    reader decodes a file (UTF-8, else cp1252).
    """
    wanted = name.lower()
    values = [decode_header_value(v) for k, v in msg.raw_items() if k.lower() == wanted]
    return " ".join(", ".join(values).split())


def decode_header_value(value: object) -> str:
    """A raw header value as text: RFC 2047 encoded words decoded, stray bytes decoded."""
    text = str(value)
    if has_surrogates(text):  # 8-bit bytes the parser kept as surrogate escapes
        text, _ = decode_bytes(text.encode("utf-8", "surrogateescape"), None)
    if "=?" not in text:
        return text
    from email.header import decode_header

    try:
        parts = decode_header(text)
    except (ValueError, IndexError, TypeError, AssertionError):
        return text
    words: list[str] = []
    for part, charset in parts:
        if isinstance(part, str):
            words.append(part)
        else:
            words.append(_decoded_word(part, charset))
    return "".join(words)


def _decoded_word(data: bytes, charset: str | None) -> str:
    if charset is None:  # text between encoded words, as decode_header encoded it
        return data.decode("raw-unicode-escape")
    if charset != "unknown-8bit":
        try:
            return data.decode(charset)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode_bytes(data, None)[0]


def has_surrogates(text: str) -> bool:
    """Whether ``text`` holds surrogate escapes (undecodable bytes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _leaves(msg: Message, depth: int) -> Iterator[Message]:
    """Non-multipart parts in document order, ignoring any deeper than MAX_DEPTH."""
    from email.message import Message

    stack: list[tuple[Message, int]] = [(msg, depth)]
    while stack:
        part, level = stack.pop()
        if not part.is_multipart() or part.get_content_type() == "message/rfc822":
            yield part
        elif level < MAX_DEPTH:
            children = part.get_payload()
            if isinstance(children, list):
                stack.extend(
                    (child, level + 1) for child in reversed(children) if isinstance(child, Message)
                )


def _pick_body(leaves: list[_Leaf]) -> _Leaf | None:
    for kind in ("text/plain", "text/html"):
        for leaf in leaves:
            if leaf.ctype == kind and leaf.attachment is None:
                return leaf
    return None


def _write_body(leaf: _Leaf, sink: TextSink) -> None:
    payload = leaf.part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return
    charset = _charset(leaf.part)
    if leaf.ctype == "text/html":
        markup, _ = decode_bytes(payload, charset or meta_charset(payload))
        html_to_text(markup, sink)
        return
    text, _ = decode_bytes(payload, charset)
    sink.write(text if text.endswith("\n") or not text else text + "\n")


def _charset(part: Message) -> str | None:
    try:
        return part.get_content_charset()
    except (ValueError, LookupError, TypeError):
        return None


def _attachment_name(part: Message, ctype: str) -> str | None:
    """The name to list ``part`` under when it is an attachment, else None."""
    try:
        disposition = (part.get_content_disposition() or "").lower()
        name = part.get_filename() if disposition or ctype != "text/plain" else None
    except (ValueError, IndexError, TypeError, AttributeError, LookupError):
        disposition, name = "attachment", None
    if name:
        return " ".join(decode_header_value(name).split())
    if ctype == "message/rfc822":
        inner = _inner_messages(part)
        subject = header_text(inner[0], "Subject") if inner else ""
        return f"message: {subject}" if subject else "message"
    if disposition == "attachment":
        return f"unnamed {ctype}"
    return None


def _inner_messages(part: Message) -> list[Message]:
    from email.message import Message

    payload = part.get_payload()
    if not isinstance(payload, list):
        return []
    inner = [p for p in payload if isinstance(p, Message)]
    encoded = _transfer_encoded(part, inner)
    return inner if encoded is None else [encoded]


def _transfer_encoded(part: Message, inner: list[Message]) -> Message | None:
    """The attached message of ``part`` when its sender encoded it in base64 or
    quoted-printable (RFC 2046 allows neither for ``message/rfc822``; GroupWise sends base64),
    decoded and parsed; None for one sent as the RFC has it. The parser took the encoded
    lines for a message: base64's for one of no headers whose body they are, quoted-printable's
    for one whose headers are as written (an ASCII header needs no escape) and whose body keeps
    its ``=XX`` escapes. Decoded here as any part's body is (bad base64 as far as it goes)."""
    from email.message import Message

    cte = str(part.get("Content-Transfer-Encoding", "")).strip().lower()
    if cte not in ("base64", "quoted-printable") or len(inner) != 1:
        return None
    parsed = inner[0]
    if cte == "quoted-printable":
        try:  # (as str: the carrier decodes a str payload only)
            encoded = parsed.as_bytes().decode("ascii", "surrogateescape")
        except (ValueError, LookupError, TypeError):
            return None
    elif parsed.keys() or not isinstance(body := parsed.get_payload(), str):
        return None  # (a colon is no base64: lines with headers were never encoded)
    else:
        encoded = body
    carrier = Message()
    carrier["Content-Transfer-Encoding"] = cte
    carrier.set_payload(encoded)
    raw = carrier.get_payload(decode=True)
    return parse_message(raw) if isinstance(raw, bytes) and raw.strip() else None


class EmailReader:
    """Reads single e-mail messages (RFC 822 / MIME)."""

    name = "email"
    version = 5
    mimes = frozenset({M.EML})
    tools: tuple[str, ...] = ()

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the headers, body and attachment names of the message at ``path``."""
        data = read_all(path)
        msg = parse_message(data)
        del data
        with attachments(ctx, sink) as members:
            try:
                write_message(msg, sink, members=members)
            except RecursionError as exc:
                raise CorruptFile("message nests too deeply to read") from exc
            if members is None:
                return ReadInfo(extractor="email")
            return replace(members.finish("email"), extractor="email")


@contextmanager
def attachments(ctx: ReadContext, sink: TextSink) -> Iterator[MemberReader | None]:
    """A reader for a message's attachments, or None past ``archive_depth`` (then only named)."""
    if ctx.depth >= ctx.limits.archive_depth:
        yield None
        return
    with MemberReader(ctx, sink) as members:
        yield members


READERS = (EmailReader(),)
