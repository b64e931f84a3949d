"""One ``extract.jsonl`` line read as the engine reads it: any writer's record, validated.

The dashboard opens stores it did not write: the extract stage's own records (no ``size`` or
``mtime_ns``, ``tools`` as a list), records from newer or older writers (fields missing,
unknown or of another type) and torn, garbage or absurdly nested lines. Which line is a record
is the engine's call (:meth:`~engine.records.Record.from_dict`): ``quarry show``, a sweep and
the dashboard keep the same lines and name the same others. Nothing read from a store is
trusted: a ``sha256`` is 64 hex digits (it becomes a path in the text store), a name is a
plain absolute root and relative path, restored from ``path_b64`` / ``root_b64`` (the store's
lossless form) when it is not UTF-8. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.names import from_b64
from engine.records import BadRecord, Record, check_name, is_sha256


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
    return value if is_sha256(value) else None  # type: ignore[return-value]


def restore_name(text: str, b64: str | None, name: str) -> str:
    """The exact ``name`` (``root`` or ``path``): from ``b64`` (standard base64 of its bytes)
    when given, else ``text``, as :meth:`Record.from_dict` reads it; raises
    :class:`NotARecord` where the engine finds no usable name."""
    if b64 is None:
        return text
    try:
        return check_name(from_b64(b64), name)
    except ValueError as exc:  # BadRecord, or not base64
        raise NotARecord(f"{name}_b64 is {exc}" if "base64" in str(exc) else str(exc)) from None


def parse_line(line: bytes) -> Record:
    """The record of one line, judged by the engine (:meth:`Record.from_json`), so that the
    dashboard keeps exactly the lines ``quarry show`` and a sweep keep; raises
    :class:`NotARecord` saying what is wrong, in the engine's words."""
    try:
        return Record.from_json(line)
    except BadRecord as exc:
        raise NotARecord(str(exc)) from None


record_from_line = parse_line
"""The full record of one line (raises :class:`NotARecord`)."""
