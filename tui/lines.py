"""One ``extract.jsonl`` line read tolerantly: any writer's record, validated before use.

The dashboard opens stores it did not write: the extract stage's own records (no ``size`` or
``mtime_ns``, ``tools`` as a list), records from newer or older writers (fields missing,
unknown or of another type) and torn or garbage lines. :func:`clean` turns a parsed line into
fields of the types :class:`~engine.records.Record` declares, or says why it cannot: a line
needs a ``path`` and a ``status`` to be a record. Nothing read from a store is trusted: a
``sha256`` is 64 hex digits or nothing (it becomes a path in the text store), and a name that
is not UTF-8 is restored from ``path_b64`` / ``root_b64`` (the store's lossless form) to the
``os.fsdecode`` string the engine uses. No Textual here.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass
from typing import Any

import orjson

from engine.quality import Quality
from engine.records import Member, Record, needs_of

_SHA256 = re.compile(r"[0-9a-f]{64}")
_INT = ("size", "mtime_ns", "v", "chars", "ms", "crashes")
_TEXT = ("mime",)
_OPTIONAL_TEXT = ("reason", "extractor", "reader", "error", "why")
NAMES_B64 = (("path", "path_b64"), ("root", "root_b64"))
"""Name fields and the fields holding their exact bytes (when they are not UTF-8)."""


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of ``extract.jsonl`` that is not a record."""

    number: int
    """1-based line number in the file."""
    why: str
    """What is wrong with it, in a few words."""

    def __str__(self) -> str:
        return f"line {self.number:,}: {self.why}"


class NotARecord(ValueError):
    """A parsed line cannot be a record (the message says why)."""


def valid_sha256(value: object) -> str | None:
    """``value`` when it is 64 lowercase hex digits (safe to use as a file name), else None."""
    return value if isinstance(value, str) and _SHA256.fullmatch(value) else None


def restore_name(text: str, b64: object) -> str:
    """The exact name: from ``b64`` (standard base64 of its bytes) when valid, else ``text``."""
    if not isinstance(b64, str) or not b64:
        return text
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return text
    if not raw or b"\0" in raw:
        return text
    return os.fsdecode(raw)


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return 0


def _opt_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _tools(value: object) -> str | None:
    """The tool-set fingerprint; the extract stage writes the list of tools present."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ",".join(v for v in value if isinstance(v, str)) or None
    return None


def clean(d: object) -> dict[str, Any]:
    """The fields of a parsed line, each of the type :class:`Record` declares.

    Raises :class:`NotARecord` when it has no usable ``path`` or ``status``.
    """
    if not isinstance(d, dict):
        raise NotARecord("not a JSON object" if d is not None else "null")
    path, status, root = d.get("path"), d.get("status"), d.get("root", "")
    if not isinstance(path, str) or not path:
        raise NotARecord("no path" if path is None else "path is not text")
    if not isinstance(status, str) or not status:
        raise NotARecord("no status" if status is None else "status is not text")
    if not isinstance(root, str):
        root = ""
    out: dict[str, Any] = {
        "root": restore_name(root, d.get("root_b64")),
        "path": restore_name(path, d.get("path_b64")),
        "status": status,
        "sha256": valid_sha256(d.get("sha256")),
        "needs": needs_of(d.get("needs")),
        "tools": _tools(d.get("tools")),
        "reused": d.get("reused") is True,
        "pages": _int(d["pages"]) if isinstance(d.get("pages"), int | float) else None,
        "quality": Quality.parse(d.get("quality")),  # tolerant itself: None for odd shapes
        "members": Member.parse(d.get("members")),  # likewise: odd entries are dropped
    }
    for name in _INT:
        out[name] = _int(d.get(name))
    for name in _TEXT:
        value = d.get(name)
        out[name] = value if isinstance(value, str) else ""
    for name in _OPTIONAL_TEXT:
        out[name] = _opt_text(d.get(name))
    return out


def parse_line(line: bytes) -> dict[str, Any]:
    """:func:`clean` fields of one line; raises :class:`NotARecord` saying what is wrong."""
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        torn = not line.rstrip().endswith(b"}")
        raise NotARecord("cut short" if torn else f"not JSON ({exc.msg})") from None
    return clean(d)


def record_from_line(line: bytes) -> Record:
    """The full record of one line (raises :class:`NotARecord`)."""
    return Record(**parse_line(line))
