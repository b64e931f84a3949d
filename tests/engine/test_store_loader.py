"""The engine's store loader opens any ``extract.jsonl``: the extract stage's records, older
and newer writers, torn and garbage lines. Nothing read from a store is used unvalidated
(issue 10: a ``sha256`` of ``../../tmp/victim`` made ``show`` print and ``retry`` delete a
file outside the store)."""

from __future__ import annotations

import io
import json
import os
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.cli import main
from engine.events import Event, Notice
from engine.records import BadRecord, Record, is_sha256
from engine.store import Store, read_jsonl
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
FIELDS = [
    "root", "path", "size", "mtime_ns", "status", "sha256", "mime", "reason", "extractor",
    "reader", "v", "chars", "pages", "error", "needs", "tools", "reused", "why", "ms", "crashes",
]  # fmt: skip


def _good(i: int, root: str = "/r") -> dict[str, Any]:
    return Record(
        root, f"dir/f{i}.txt", 5, 7, "ok", sha256=f"{i:064x}", mime="text/plain", chars=5
    ).to_dict()


@st.composite
def damaged_lines(draw: st.DrawFn) -> bytes:
    """A store line as a buggy, foreign, older or newer writer (or a crash) may leave it."""
    rec = _good(draw(st.integers(0, 10**6)))
    kind = draw(st.sampled_from(["drop", "retype", "extra", "torn", "garbage", "good"]))
    if kind == "drop":
        rec.pop(draw(st.sampled_from(FIELDS)))
    elif kind == "retype":
        rec[draw(st.sampled_from(FIELDS))] = draw(json_values)
    elif kind == "extra":
        rec[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    elif kind == "garbage":
        return _dumps(draw(json_values)) if draw(st.booleans()) else draw(st.binary())
    line = _dumps(rec)
    if kind == "torn":
        line = line[: draw(st.integers(0, len(line) - 1))]
    return line


def _dumps(value: object) -> bytes:
    """JSON as any writer may produce it: huge integers, escaped lone surrogates."""
    return json.dumps(value).encode("ascii")


def _assert_usable(r: Record) -> None:
    assert r.sha256 is None or is_sha256(r.sha256)
    assert r.root.startswith("/") and "\0" not in r.root
    assert r.path and not r.path.startswith("/") and "\0" not in r.path
    assert not {".", "..", ""} & set(r.path.split("/"))
    assert isinstance(r.status, str) and r.status
    for name in ("size", "mtime_ns", "v", "chars", "ms", "crashes"):
        value = getattr(r, name)
        assert isinstance(value, int) and not isinstance(value, bool)
    assert all(isinstance(t, str) for t in r.needs)
    assert r.tools is None or isinstance(r.tools, str)


@settings(max_examples=300, deadline=None)
@given(st.lists(damaged_lines(), max_size=8))
def test_any_lines_load_into_valid_records_or_named_bad_lines(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    loaded = read_jsonl(data)
    nonblank = [n for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]
    assert len(loaded.records) + len(loaded.bad) == len(nonblank)
    assert {b.line for b in loaded.bad} <= set(nonblank)
    for r in loaded.records:
        _assert_usable(r)
    for bad in loaded.bad:
        assert "\n" not in bad.why and len(bad.why) < 200


@given(st.lists(st.integers(0, 10**6), unique=True, max_size=20))
def test_clean_stores_load_whole_and_unchanged(ids: list[int]) -> None:
    recs = [Record.from_dict(_good(i)) for i in sorted(ids)]
    data = b"".join(r.to_json() + b"\n" for r in recs)
    loaded = read_jsonl(data)
    assert loaded.records == recs and not loaded.bad


def test_the_extract_stage_own_records_are_read() -> None:
    line = orjson.dumps(
        {
            "root": "/srv/docs",
            "path": "a.pdf",
            "sha256": "0" * 64,
            "mime": "application/pdf",
            "status": "unsupported",
            "extractor": None,
            "chars": 0,
            "error": "needs pdftotext (poppler) on this machine",
            "v": 2,
            "tools": ["tesseract"],
            "extra": 1,
        }
    )
    torn = b'{"root": "/srv/docs", "path": "b.txt", "sta'
    loaded = read_jsonl(line + b"\n" + torn + b"\n")
    (rec,) = loaded.records
    assert (rec.size, rec.mtime_ns) == (0, 0)  # unknown: the file is hashed again
    assert rec.tools == "tools:tesseract"  # never equal to a fingerprint: retried
    assert [(b.line, b.why) for b in loaded.bad] == [(2, "cut short")]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"[1, 2]", "not a JSON object (an array)"),
        (b"null", "not a JSON object (null)"),
        (b"42", "not a JSON object (a number)"),
        (b'"text"', "not a JSON object (a string)"),
        (b'{"root": "/r", "path": "a", "status": "ok", "sha256": "../../tmp/victim"}', "sha256"),
        (b'{"root": "/r", "path": "../../etc/passwd", "status": "ok"}', "path"),
        (b'{"root": "/r", "path": "/etc/passwd", "status": "ok"}', "path"),
        (b'{"root": "r", "path": "a", "status": "ok"}', "root"),
        (b'{"root": "/r", "path": "a", "status": 3}', "status"),
        (b'{"root": "/r", "path": "a", "status": "ok", "path_b64": "@@"}', "path_b64"),
    ],
)
def test_unusable_lines_are_named(line: bytes, why: str) -> None:
    good = orjson.dumps(_good(1))
    loaded = read_jsonl(good + b"\n" + line + b"\n")
    assert len(loaded.records) == 1
    (bad,) = loaded.bad
    assert bad.line == 2 and why in bad.why


def test_a_bad_hash_never_becomes_a_path(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(ValueError, match="not a content hash"):
        store.text_path("../../tmp/victim")
    with pytest.raises(BadRecord):
        Record.from_dict({"root": "/r", "path": "a", "status": "ok", "sha256": "A" * 64})


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(damaged_lines(), min_size=1, max_size=6))
def test_every_verb_opens_a_damaged_store_and_a_sweep_repairs_it(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory(prefix="names-") as tmp:
        root = Path(tmp, "docs")
        root.mkdir()
        (root / "empty.txt").touch()  # empty: no worker needed
        store = Path(tmp, "store")
        store.mkdir()
        good = Record(str(root), "empty.txt", 0, 1, "empty", reason="no_text").to_json()
        (store / "extract.jsonl").write_bytes(b"\n".join([*lines, good]) + b"\n")
        bad = len(read_jsonl((store / "extract.jsonl").read_bytes()).bad)

        code, out, err = _run("show", str(root / "empty.txt"), "--store", str(store))
        assert code == 0, err
        assert (err.count("\n"), "unreadable line" in err) == ((1, True) if bad else (0, False))
        code, out, err = _run("tools", "--store", str(store), "--json")
        assert code == 0 and orjson.loads(out)

        events: list[Event] = []
        opts = SweepOptions(out=store, tools=ToolSet.empty())
        with Sweeper([root], opts, events.append) as sweeper:
            sweeper.run()
        repairs = [e for e in events if isinstance(e, Notice) and e.kind == "store-repair"]
        if bad:
            assert f"{bad} unreadable line{'s' if bad != 1 else ''} in" in repairs[0].message
            assert "line " in repairs[0].message
        reloaded = read_jsonl((store / "extract.jsonl").read_bytes())
        assert not reloaded.bad  # repaired: the store holds only usable records
        mine = [r.path for r in reloaded.records if r.root == str(root)]
        assert mine == ["empty.txt"]  # other roots' usable records are kept as they were


def test_retry_and_show_never_touch_what_a_hostile_hash_names(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("alpha")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    store = tmp_path / "store"
    store.mkdir()
    rel = os.path.relpath(victim.with_suffix(""), store / "extract" / "ab")
    hostile = Record(str(root), "a.txt", 5, 1, "ok", chars=5).to_dict() | {"sha256": rel}
    (store / "extract.jsonl").write_bytes(orjson.dumps(hostile) + b"\n")
    (store / "extract.summary.json").write_bytes(orjson.dumps({"roots": [str(root)], "files": 1}))

    code, out, err = _run("show", str(root / "a.txt"), "--store", str(store))
    assert code == 1 and str(victim) not in out + err and "precious" not in out
    assert "line 1: sha256 is not 64 lowercase hex digits" in err
    code, out, err = _run("retry", str(root / "a.txt"), "--store", str(store), "--workers", "1")
    assert code == 0, err
    assert victim.read_text() == "precious"
    (rec,) = Store(store).load_records()
    assert rec.status == "ok" and rec.sha256 is not None and is_sha256(rec.sha256)


_CLEAN = orjson.dumps(_good(7))
_ODD = [
    _CLEAN[:-1] + b',"zz":"\xff\xfe"}',  # not UTF-8, in a field no record has
    _CLEAN[:-1] + b',"zz":1e999}',  # a number past a double, likewise
    _CLEAN[:-1] + b',"zz":-1' + b"0" * 400 + b"}",
    _CLEAN[:-1] + b',"zz":[1.5E+400]}',
    _CLEAN[:-1] + b',"error":"\xc3\xa9 \xed\xa0\x80"}',  # an encoded surrogate
]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(damaged_lines(), max_size=12))
@example(lines=[_CLEAN, _ODD[0]])
@example(lines=[_ODD[1], _CLEAN])
@example(lines=[_CLEAN, _ODD[2], _CLEAN])
@example(lines=[_ODD[3]])
@example(lines=[_ODD[4], _CLEAN])
def test_blocks_read_as_each_line_alone_would_be(
    lines: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store with bad lines is read a block at a time (one msgspec call per clean block):
    the same records and the same named bad lines as reading every line by itself."""
    import engine.store as store_module

    monkeypatch.setattr(store_module, "_BLOCK_LINES", 3)  # several blocks in a few lines
    data = b"\n".join(lines)
    loaded = read_jsonl(data)
    records, bad = [], []
    for n, line in enumerate(data.split(b"\n"), 1):
        if line.strip():
            try:
                records.append(Record.from_json(line))
            except BadRecord:
                bad.append(n)
    assert loaded.records == records
    assert [b.line for b in loaded.bad] == bad


def test_one_torn_line_in_thousands_keeps_every_other_record() -> None:
    recs = [Record.from_dict(_good(i)) for i in range(5000)]
    lines = [r.to_json() for r in recs]
    lines[2500] = lines[2500][:40]  # torn mid-record
    lines.append(b'{"root": "/r", "pa')  # and a last line cut by a crash
    loaded = read_jsonl(b"\n".join(lines))
    assert [b.line for b in loaded.bad] == [2501, 5001]
    assert loaded.records == recs[:2500] + recs[2501:]


def test_needs_are_read_as_the_dashboard_reads_them() -> None:
    """A list's strings, or one tool named by a plain string: the engine counts and retries
    what the dashboard lists (its loader reads ``needs`` through the engine)."""
    from engine.records import Record

    def line(needs: object) -> bytes:
        d = _good(1)
        d.update(status="unsupported", reason="needs_tool", needs=needs)
        return orjson.dumps(d)

    cases = {
        "tesseract": ("tesseract",),
        "": (),
        ("antiword", 3, "catdoc"): ("antiword", "catdoc"),
        None: (),
        7: (),
    }
    for needs, tools in cases.items():
        raw = line(list(needs) if isinstance(needs, tuple) else needs)
        assert Record.from_json(raw).needs == tools, needs
        (only,) = read_jsonl(raw + b"\n").records
        assert only.needs == tools, needs
        assert Record.from_json(raw).needs == tools, needs
