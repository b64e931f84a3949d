"""The incremental index agrees with a recount from scratch after any sequence of changes."""

from __future__ import annotations

import random

from engine.index import RecordIndex
from engine.records import Record
from engine.summary import build_summary
from engine.tools import ToolSet

STATES = [
    dict(status="ok", sha256="a" * 64, chars=5),
    dict(status="ok", sha256="b" * 64, chars=7, reused=True),
    dict(status="error", sha256="c" * 64, reason="corrupt"),
    dict(status="unsupported", sha256="d" * 64, reason="needs_tool", needs=("tesseract",)),
    dict(status="empty", sha256="e" * 64, reason="scanned", needs=("pdftoppm", "tesseract")),
    dict(status="skipped", reason="link"),
]


def rec(path: str, state: int) -> Record:
    return Record(root="/r", path=path, size=1, mtime_ns=1, **STATES[state])  # type: ignore[arg-type]


def test_incremental_tally_matches_a_recount() -> None:
    rng = random.Random(7)
    index = RecordIndex()
    for _ in range(300):
        new = {("/r", f"p{rng.randrange(30)}"): rec(f"p{rng.randrange(30)}", rng.randrange(6))}
        new = {r.key: r for r in new.values()}
        gone = [("/r", f"p{rng.randrange(30)}") for _ in range(rng.randrange(3))]
        gone = [k for k in gone if k not in new]
        index.apply(new, gone)
        fresh = build_summary(index.records.values(), [], ToolSet.empty(), 0, 0)
        kept = build_summary(index.tally, [], ToolSet.empty(), 0, 0)
        assert kept == fresh
        texts = {r.sha256 for r in index.records.values() if r.has_text}
        assert index.referenced_texts() == texts


def test_same_content_prefers_a_record_with_text() -> None:
    index = RecordIndex([rec("err", 2).evolve(sha256="a" * 64), rec("good", 0)])
    found = index.same_content("a" * 64)
    assert found is not None and found.path == "good"
    index.apply({}, [("/r", "good")])
    assert not index.has_text_refs("a" * 64)


def test_bulk_build_equals_one_at_a_time() -> None:
    rng = random.Random(3)
    recs = [rec(f"p{i}", rng.randrange(6)) for i in range(200)]
    bulk = RecordIndex(recs)
    stepwise = RecordIndex()
    for r in recs:
        stepwise.apply({r.key: r}, ())
    assert bulk.records == stepwise.records
    assert build_summary(bulk.tally, [], ToolSet.empty(), 0, 0) == build_summary(
        stepwise.tally, [], ToolSet.empty(), 0, 0
    )
    assert bulk.referenced_texts() == stepwise.referenced_texts()
    for sha in {r.sha256 for r in recs if r.sha256}:
        a, b = bulk.same_content(sha), stepwise.same_content(sha)
        assert a is not None and b is not None and a.has_text == b.has_text
