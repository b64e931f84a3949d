"""The line cache behind cheap ``extract.jsonl`` rewrites: same bytes as a full rewrite."""

from __future__ import annotations

import random
from pathlib import Path

from engine.jsonl import LineCache, line_of
from engine.records import Reason, Record, Status
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
