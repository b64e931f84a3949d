"""Any store through the dashboard's loader and model: foreign records, garbage, odd names.

The lines are read by the engine (its index of them, :mod:`engine.dbread`), as the dashboard
reads a store; the dashboard parses none of them itself.

Property tests draw record lines of any shape (fields missing, unknown or of the wrong type,
torn, not JSON, not objects) and any file name the OS can hold (bytes that are not UTF-8,
newlines, escape sequences), written the way the store writes them (``path`` valid UTF-8 with
``\\xNN`` for each undecodable byte, ``path_b64`` holding the exact bytes). The load must
keep every line that is a record, count and name every line that is not, never crash, and
give back the exact name.
"""

from __future__ import annotations

import base64
import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.names import shown
from engine.records import BadRecord, Record, is_sha256
from engine.store import read_jsonl
from tui.loader import load_rows, rows_of
from tui.model import RecordModel
from tui.widgets.record_table import cell_text

NAME_BYTES = (
    st.binary(min_size=1, max_size=40)
    .map(lambda b: b.replace(b"/", b"_"))
    .filter(lambda b: b"\0" not in b and b not in (b".", b".."))
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
FIELDS = ("root", "path", "size", "mtime_ns", "status", "sha256", "mime", "reason", "extractor",
          "reader", "v", "chars", "pages", "error", "needs", "tools", "reused", "why", "ms",
          "crashes", "path_b64", "root_b64", "extra")  # fmt: skip


def store_form(raw: bytes) -> dict[str, str]:
    """How the store writes a name: text with ``\\xNN`` escapes, plus base64 when not UTF-8."""
    try:
        return {"path": raw.decode("utf-8")}
    except UnicodeDecodeError:
        text = "".join(
            f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c
            for c in raw.decode("utf-8", "surrogateescape")
        )
        return {"path": text, "path_b64": base64.b64encode(raw).decode()}


def load(data: bytes) -> tuple[RecordModel, list[Any]]:
    """The model of ``data`` loaded as the app loads a store (in chunks of 3 rows), and the
    first few lines that are not records (``m.bad_lines`` counts them all)."""
    opened = rows_of(data)
    m = RecordModel()
    m.data = opened.table
    bad = []
    for chunk in load_rows(opened, 3, 3):
        m.extend(chunk.rows)
        m.note_bad(chunk.bad, chunk.bad_count)
        bad.extend(chunk.bad)
    return m, bad


@settings(deadline=None)  # a loaded CI machine is slow, not wrong
@given(st.lists(NAME_BYTES, min_size=1, max_size=8, unique=True))
def test_any_byte_name_comes_back_exactly_and_is_shown_on_one_line(names: list[bytes]) -> None:
    lines = []
    for raw in sorted(names):
        d = {"root": "/r", **store_form(raw), "status": "ok", "sha256": "a" * 64, "size": 1}
        lines.append(orjson.dumps(d))
    m, bad = load(b"\n".join(lines) + b"\n")
    assert not bad and len(m) == len(names)
    for raw in names:
        name = os.fsdecode(raw)
        rid = m.ids[("/r", name)]
        record = m.record(rid)
        assert record is not None and os.fsencode(record.path) == raw
        row = m.rows[rid]
        assert row is not None
        cell = cell_text("path", row)
        assert cell == shown(name) and "\n" not in cell and "\x1b" not in cell
        assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in cell)


def dumps(value: object) -> bytes:
    """JSON as another writer may write it: big integers, Infinity and all."""
    return json.dumps(value).encode()


LINE = st.one_of(
    st.dictionaries(st.sampled_from(FIELDS), JSONISH, max_size=10).map(dumps),
    st.builds(
        lambda d, extra: dumps({"path": "p", "status": "ok", **d, **extra}),
        st.dictionaries(st.sampled_from(FIELDS[2:]), JSONISH, max_size=6),
        st.dictionaries(st.text(max_size=6), JSONISH, max_size=2),
    ),
    JSONISH.map(dumps),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=12), st.booleans())
def test_any_lines_load_every_record_and_count_the_rest(lines: list[bytes], torn: bool) -> None:
    data = b"\n".join(lines) + b"\n"
    if torn and len(data) > 3:
        data = data[: len(data) // 2 + 1]  # a store cut in half
    m, bad = load(data)
    written = [x for x in data.split(b"\n") if x.strip()]
    records = read_jsonl(data).records
    keys = {r.key for r in records}  # (a key written twice: the later line wins)
    assert len(m) == len(keys) and set(m.ids) == keys  # every record kept
    assert len(records) + m.bad_lines == len(written)  # every other line counted
    assert len({b.line for b in bad}) == len(bad) == min(m.bad_lines, 5)
    for rid in range(len(m.rows)):
        if m.rows[rid] is None:
            continue
        record = m.record(rid)
        assert record is not None and isinstance(record.path, str) and record.path
        assert record.sha256 is None or is_sha256(record.sha256)
        assert isinstance(record.size, int) and isinstance(record.needs, tuple)
        for column in ("path", "status", "reason", "mime", "extractor", "chars", "pages", "size"):
            cell_text(column, m.rows[rid])  # type: ignore[arg-type]
    expected = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            try:
                Record.from_json(line)
            except BadRecord:
                expected.append(number)
    assert m.bad_lines == len(expected)  # every line that is no record counted
    assert [b.line for b in bad] == expected[:5]  # and the first named, as the careful path
    assert expected == [b.line for b in read_jsonl(data).bad]  # and the engine's reader


def test_extract_stage_records_unknown_fields_and_bad_hashes() -> None:
    lines = [
        {"root": "/srv", "path": "a.pdf", "sha256": "0" * 64, "mime": "application/pdf",
         "status": "unsupported", "extractor": None, "chars": 0, "error": "needs pdftotext",
         "v": 2, "tools": ["tesseract", "pdftotext"], "extra": {"x": 1}},
        {"root": "/srv", "path": "b.txt", "status": "ok", "chars": "12", "size": -1.5,
         "pages": "3", "reused": "yes", "needs": "antiword"},
        {"root": "/srv", "path": "c.txt", "status": "frobbed"},
        {"root": "/srv", "path": "d.txt", "status": "ok", "sha256": "../../../../tmp/victim"},
        {"root": "/srv", "path": "e.txt", "status": "ok", "sha256": "A" * 64},
    ]  # fmt: skip
    data = b"\n".join(map(orjson.dumps, lines)) + b'\n{"root": "/srv", "path": "f.t'
    m, bad = load(data)
    sha = "sha256 is not 64 lowercase hex digits"
    assert len(m) == 3
    assert [str(b) for b in bad] == [f"line 4: {sha}", f"line 5: {sha}", "line 6: cut short"]
    a = m.record(m.ids[("/srv", "a.pdf")])
    assert a is not None and a.tools == "tools:pdftotext,tesseract" and a.size == 0 and a.v == 2
    b = m.record(m.ids[("/srv", "b.txt")])
    assert b is not None and b.sha256 is None and not b.has_text and b.chars == 0
    assert b.needs == ("antiword",) and b.pages is None and b.reused is False
    c = m.record(m.ids[("/srv", "c.txt")])
    assert c is not None and c.status == "frobbed" and c.sha256 is None
    assert m.bad_text() == (
        f"3 unreadable lines in extract.jsonl left out (line 4: {sha}; line 5: {sha}; "
        "line 6: cut short)"
    )
    assert m.bad_text() == read_jsonl(data).left_out()  # the words of quarry show
    assert [(b.line, b.why) for b in read_jsonl(data).bad][:2] == [(4, sha), (5, sha)]


def test_lines_that_are_not_records_are_named() -> None:
    data = (
        b'[1, 2]\nnull\n{"root": "/r", "path": "x"}\n{"root": "/r", "status": "ok"}\n'
        b'{"root": "/r", "path": 3, "status": "ok"}\n{"path": "x", "status": "ok"}\n\n'
    )
    m, bad = load(data)
    assert m.bad_lines == 6 and [str(b) for b in bad] == [
        "line 1: not a JSON object (an array)",
        "line 2: not a JSON object (null)",
        "line 3: status is not a non-empty string",
        "line 4: path is not a non-empty string",
        "line 5: path is not a non-empty string",
    ]  # fmt: skip (the first five named: the words say how many more)
    assert m.bad_text() == read_jsonl(data).left_out()  # as quarry show says them


def test_a_record_line_reads_back_whole(tmp_path: Path) -> None:
    raw = b"caf\xe9.txt"
    line = orjson.dumps({"root": "/r", **store_form(raw), "status": "ok", "size": 3})
    assert os.fsencode(Record.from_json(line).path) == raw


def test_quality_is_read_when_well_formed_and_dropped_when_not() -> None:
    good = {"verdict": "good", "v": 1, "lang": "en", "script": "Latin", "common": 0.5,
            "repl": 0, "odd": 0, "mojibake": 0, "run": 0, "signals": []}  # fmt: skip
    for quality, verdict in ((good, "good"), ({"verdict": 3}, None), ([1], None)):
        line = orjson.dumps({"root": "/r", "path": "q.txt", "status": "ok", "quality": quality})
        record = Record.from_json(line)
        assert (record.quality.verdict if record.quality else None) == verdict
