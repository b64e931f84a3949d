"""The line cache behind cheap ``extract.jsonl`` rewrites: same bytes as a full rewrite."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.jsonl import LineCache, line_of
from engine.quality import Quality
from engine.records import Member, Reason, Record, Status
from engine.store import Store


def _rec(i: int, **kw: object) -> Record:
    base: dict[str, object] = {
        "root": "/r",
        "path": f"d{i % 7}/f{i:05d}.txt",
        "size": i,
        "mtime_ns": 10**18 + i,
        "status": Status.OK,
        "sha256": f"{i:064x}",
        "mime": "text/plain",
        "reader": "text",
        "v": 1,
        "chars": i,
    }
    base.update(kw)
    return Record(**base)  # type: ignore[arg-type]


def _full(records: list[Record]) -> bytes:
    return b"".join(r.to_json() + b"\n" for r in sorted(records, key=lambda r: r.key))


def test_line_of_is_to_json() -> None:
    r = _rec(
        3,
        status=Status.UNSUPPORTED,
        reason=Reason.NEEDS_TOOL,
        needs=("tesseract", "pdftoppm"),
        error="needs tesseract",
        pages=2,
        tools="abc",
    )
    assert line_of(r) == r.to_json() + b"\n"


_int64 = st.integers(-(2**63), 2**63 - 1)
_count = st.integers(0, 2**63 - 1)
_opt_text = st.none() | st.text(max_size=6)
_qualities = st.builds(
    Quality,
    verdict=st.text(max_size=6),
    v=_count,
    lang=_opt_text,
    script=_opt_text,
    common=st.none() | st.floats(),
    noise=st.floats(),
    repl=st.floats(),
    odd=st.floats(),
    mojibake=st.floats(),
    per_page=st.none() | _count,
    run=_count,
    signals=st.tuples(st.text(max_size=4)),
)
_members = st.builds(
    Member, path=st.text(max_size=6), status=st.text(max_size=6), reason=_opt_text,
    error=_opt_text, chars=_count,
)  # fmt: skip
_records = st.builds(
    Record,
    root=st.text(max_size=8),
    path=st.text(max_size=8),
    size=_count,
    mtime_ns=_int64,
    status=st.text(max_size=6),
    sha256=_opt_text,
    mime=st.text(max_size=6),
    reason=_opt_text,
    extractor=_opt_text,
    reader=_opt_text,
    v=_count,
    chars=_count,
    pages=st.none() | _count,
    error=_opt_text,
    needs=st.lists(st.text(max_size=4), max_size=2).map(tuple),
    tools=_opt_text,
    reused=st.booleans(),
    why=_opt_text,
    ms=_count,
    crashes=_count,
    quality=st.none() | _qualities,
    members=st.lists(_members, max_size=2).map(tuple),
)


def _orjson_line(record: Record) -> bytes:
    """What ``line_of`` wrote before it used msgspec: the stores out there hold these bytes."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return record.to_json() + b"\n"


def _floats_of(record: Record) -> list[float]:
    q = record.quality
    if q is None:
        return []
    return [x for x in (q.common, q.noise, q.repl, q.odd, q.mojibake) if x is not None]


@settings(max_examples=400, deadline=None)
@given(_records)
def test_line_of_writes_the_lines_orjson_wrote(record: Record) -> None:
    """Any record, names not UTF-8, any float (NaN, infinities), huge counts: the same JSON
    as before, and the same bytes but for a float of 1e16 or more (msgspec writes ``1e16``,
    orjson ``1e+16``; quality's numbers are shares and rates far below)."""
    line, before = line_of(record), _orjson_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert orjson.loads(line) == orjson.loads(before)  # NaN and infinities: null in both
    if all(abs(x) < 1e15 or x != x for x in _floats_of(record)):
        assert line == before
    if record.quality is None:
        try:
            expected = record.to_json() + b"\n"
        except orjson.JSONEncodeError:
            return
        assert line == expected


def test_render_follows_adds_removes_and_changes() -> None:
    rng = random.Random(5)
    records = {r.key: r for r in (_rec(i) for i in range(0, 400, 2))}
    cache = LineCache()
    assert cache.render(records.values()) == _full(list(records.values()))
    for step in range(30):
        for _ in range(rng.randint(0, 5)):
            r = _rec(rng.randrange(400), chars=step)
            records[r.key] = r
        for key in rng.sample(sorted(records), rng.randint(0, 3)):
            del records[key]
        assert cache.render(records.values()) == _full(list(records.values()))
    assert len(cache) == len(records)


def test_writer_primes_from_the_file_it_loads(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    records = [_rec(i) for i in range(50)]
    with store.writer():
        store.write_records(records)
    before = store.jsonl_path.read_bytes()
    with store.writer():
        loaded = {r.key: r for r in store.load_records()}
        assert len(store._lines) == 50
        changed = _rec(7, chars=99)
        loaded[changed.key] = changed
        store.write_records(loaded.values())
    after = store.jsonl_path.read_bytes()
    assert after == _full(list(loaded.values()))
    assert after != before
    assert len(Store(tmp_path / "store")._lines) == 0  # readers keep nothing
