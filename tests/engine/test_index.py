"""The incremental index agrees with a recount from scratch after any sequence of changes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index import RecordIndex, Tally
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


@settings(max_examples=60)
@given(
    st.lists(st.integers(0, len(STATES) - 1), max_size=12),
    st.lists(st.integers(0, len(STATES) - 1), max_size=12),
)
def test_tallies_taken_in_and_out_are_the_tally_of_what_is_left(
    kept: list[int], looked: list[int]
) -> None:
    """A merge's tally of every record, less the tally of the records it sent to a run,
    plus the tally of what that run decided, is the tally of the store after it
    (:meth:`Tally.take`, as a killed sweep's resume counts)."""
    kept_records = [rec(f"k{i}", s) for i, s in enumerate(kept)]
    looked_records = [rec(f"l{i}", s) for i, s in enumerate(looked)]
    decided = [rec(f"l{i}", (s + 1) % len(STATES)) for i, s in enumerate(looked[::2])]
    total = Tally.of(kept_records + looked_records)
    total.take(Tally.of(looked_records), -1)
    total.take(Tally.of(decided))
    summary = build_summary(total, [], ToolSet.empty(), 0, 0)
    assert summary == build_summary(kept_records + decided, [], ToolSet.empty(), 0, 0)


def test_same_content_prefers_a_record_with_text() -> None:
    index = RecordIndex([rec("err", 2).evolve(sha256="a" * 64), rec("good", 0)])
    found = index.same_content("a" * 64, "copy")
    assert found is not None and found.path == "good"
    index.apply({}, [("/r", "good")])
    assert not index.has_text_refs("a" * 64)


def test_same_content_is_found_only_under_a_name_read_the_same_way() -> None:
    """A record of these bytes named ``.doc`` holds the Word reader's verdict: a ``.msg`` of
    the same bytes may be read by another reader, so it is not offered for reuse."""
    doc = rec("junk.doc", 2)
    for index in (RecordIndex([doc]), RecordIndex()):
        index.apply({doc.key: doc}, ())
        assert index.same_content(doc.sha256 or "", "sub/Copy.DOC") is doc
        assert index.same_content(doc.sha256 or "", "junk.msg") is None
        assert index.same_content(doc.sha256 or "", "junk") is None
    index.apply({}, [doc.key])
    assert index.same_content(doc.sha256 or "", "copy.doc") is None


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
        a, b = bulk.same_content(sha, "q"), stepwise.same_content(sha, "q")
        assert a is not None and b is not None and a.has_text == b.has_text


def test_big_batches_recount_to_what_one_at_a_time_gives() -> None:
    """Batches past the bulk threshold (a first re-sweep, a big move) rebuild everything;
    the result is what applying the same changes one record at a time gives."""
    rng = random.Random(11)
    paths = [f"p{i}" for i in range(3000)]
    bulk = RecordIndex([rec(p, rng.randrange(6)) for p in paths[:2000]])
    stepwise = RecordIndex(bulk.records.values())
    held = bulk.records
    for size in (1500, 40, 2600, 3000):
        new = {r.key: r for r in (rec(p, rng.randrange(6)) for p in rng.sample(paths, size))}
        gone = [("/r", p) for p in rng.sample(paths, rng.randrange(200)) if ("/r", p) not in new]
        bulk.apply(new, iter(gone))
        for key in gone:
            stepwise.apply({}, [key])
        for key, r in new.items():
            stepwise.apply({key: r}, ())
        assert bulk.records is held  # a run holds the dict: it is changed, not replaced
        assert bulk.records == stepwise.records
        fresh = build_summary(bulk.records.values(), [], ToolSet.empty(), 0, 0)
        assert build_summary(bulk.tally, [], ToolSet.empty(), 0, 0) == fresh
        assert build_summary(stepwise.tally, [], ToolSet.empty(), 0, 0) == fresh
        assert bulk.referenced_texts() == stepwise.referenced_texts()
        for sha in {r.sha256 for r in bulk.records.values() if r.sha256}:
            a, b = bulk.same_content(sha, "q"), stepwise.same_content(sha, "q")
            assert a is not None and b is not None and a.has_text == b.has_text
            assert bulk.may_hold(a.size) and stepwise.may_hold(b.size)


def test_evolve_changes_only_what_it_is_given_and_refuses_unknown_names() -> None:
    r = rec("p", 0)
    moved = r.evolve(path="q", reused=True)
    assert (moved.path, moved.reused, moved.sha256, moved.chars) == ("q", True, r.sha256, 5)
    assert r.path == "p" and not r.reused
    try:
        r.evolve(reused=True, colour="red")
    except TypeError as exc:
        assert "colour" in str(exc)
    else:
        raise AssertionError("an unknown field was accepted")


_names = st.sampled_from(["a", "a/b", "a/b/c", "a/bc", "ab", "b/a", "a/", "é/x", "\udcff/y", "z"])
_ops = st.lists(
    st.tuples(st.booleans(), st.sampled_from(["/r", "/s"]), _names), min_size=0, max_size=40
)


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.sampled_from(["/r", "/s"]), _names), max_size=12),
    _ops,
    st.lists(st.sampled_from(["", "a", "a/", "a/b", "b", "é", "\udcff", "q"]), min_size=1),
)
def test_keys_under_a_folder_are_what_a_pass_over_every_record_finds(
    first: list[tuple[str, str]], ops: list[tuple[bool, str, str]], rels: list[str]
) -> None:
    """What a watch batch answers for (the records at or under the paths it was given),
    found by binary search in keys kept sorted through every change, is exactly what a pass
    over every record finds."""
    index = RecordIndex(Record(root=r, path=p, size=1, mtime_ns=1, status="ok") for r, p in first)
    index.keys_under("/r", [""])  # the sorted keys exist from here on, kept by apply
    for add, root, path in ops:
        if add:
            index.apply({(root, path): Record(root=root, path=path, size=2, mtime_ns=2,
                                              status="ok")}, ())  # fmt: skip
        else:
            index.apply({}, [(root, path)])
    for root in ("/r", "/s"):
        prefixes = tuple(r.rstrip("/") + "/" if r else "" for r in rels)
        brute = sorted(
            k for k in index.records if k[0] == root and (k[1] in rels or k[1].startswith(prefixes))
        )
        assert index.keys_under(root, rels) == brute
