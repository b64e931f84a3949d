"""What ``quarry show`` prints: a record as a person reads it, or as a machine does (``--json``).

For people, one ``name: value`` line per field that holds something (an empty field is left
out), the verdict in words, the members of a container one a line; every value goes through
:func:`engine.names.shown`, so a name or a message is one line that a terminal shows as it is.
For machines, one JSON line: the record as ``extract.jsonl`` holds it, plus its ``text``.
"""

from __future__ import annotations

from datetime import datetime

import orjson

from engine.jsonl import line_of
from engine.names import shown
from engine.records import Record, read_with_words
from engine.visible import json_safe
from engine.words import count

WIDTH = 9
"""Width of the field names, right-aligned, so the values line up."""


def _field(name: str, value: str) -> str:
    return f"{name:>{WIDTH}}: {shown(value)}"


def _more(value: str) -> str:
    """A further line of the field above, aligned with its value."""
    return f"{'':>{WIDTH}}  {shown(value)}"


def record_lines(rec: Record) -> list[str]:
    """The lines a person reads for ``rec``: what it is, its verdict, then how it was read."""
    d = rec.to_dict()  # names as the store writes them (a name that is not UTF-8 escaped)
    lines = [_field("path", d["path"]), _field("root", d["root"])]
    lines.append(_field("status", rec.status + (f" / {rec.reason}" if rec.reason else "")))
    if rec.error:
        lines.append(_field("error", rec.error))
    if rec.quality is not None:
        lines.append(_field("quality", rec.quality.verdict))
        lines += [_more(reason) for reason in rec.quality.explain()]
    if rec.needs:
        lines.append(_field("needs", " or ".join(rec.needs)))
    if rec.members:
        lines += _member_lines(rec)
    lines += [_field(name, value) for name, value in _how(rec) if value]
    return lines


def _member_lines(rec: Record) -> list[str]:
    """``members: 3, 1 not read`` then one line a member, in the container's order."""
    bad = sum(1 for m in rec.members if m.status not in ("ok", "empty"))
    lines = [_field("members", f"{len(rec.members)}" + (f", {bad} not read" if bad else ""))]
    width = max(len(m.status) + len(m.reason or "") + 1 for m in rec.members)
    for m in rec.members:
        verdict = m.status + (f"/{m.reason}" if m.reason else "")
        said = f": {m.error}" if m.error and m.status != "ok" else ""
        lines.append(_more(f"{verdict:<{width}}  {m.path}{said}"))
    return lines


def _how(rec: Record) -> list[tuple[str, str]]:
    """How the file was read, as (name, value); an empty value is left out."""
    return [
        ("mime", rec.mime),
        ("extractor", rec.extractor or ""),
        ("reader", f"{rec.reader} v{rec.v}" if rec.reader else ""),
        ("chars", f"{rec.chars:,}" if rec.has_text or rec.chars else ""),
        ("pages", "" if rec.pages is None else f"{rec.pages:,}"),
        ("size", count(rec.size, "byte")),
        ("modified", _when(rec.mtime_ns)),
        ("sha256", rec.sha256 or ""),
        ("tool set", rec.tools or ""),
        ("read with", read_with_words(rec.read_with)),
        ("why", rec.why or ""),
        ("reused", "yes: kept from an earlier sweep, not read again" if rec.reused else ""),
        ("read in", f"{rec.ms:,} ms" if rec.ms else ""),
        ("crashes", f"{rec.crashes}" if rec.crashes else ""),
    ]


def _when(mtime_ns: int) -> str:
    """Local time with its offset; empty for 0 (a store that did not keep it)."""
    if not mtime_ns:
        return ""
    try:
        return datetime.fromtimestamp(mtime_ns / 1e9).astimezone().isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):  # a time no calendar here can hold
        return f"{mtime_ns} ns after 1970"


def record_json(rec: Record, text: str | None, *, with_text: bool) -> str:
    """One JSON line: the record as ``extract.jsonl`` holds it, then (``with_text``) ``text``:
    the stored text, or null for a record that has none. Nothing in it a terminal obeys."""
    line = line_of(rec)  # the store's own bytes: "{...}\n"
    if with_text:
        line = line[: line.rindex(b"}")] + b',"text":' + orjson.dumps(text) + b"}\n"
    return json_safe(line.decode())


__all__ = ["record_json", "record_lines"]
