"""A big store's triage groups, counted by its index, are the groups of the store held.

The errors and unsupported screens of a paged store merge the index's tallies
(:mod:`engine.tallies`) into their groups instead of reading every record; a group's files are
read as it is shown, the first :data:`tui.triage.FILES_READ`. Over random records (several
roots, messages that differ only by a number or a name, odd MIME types, suspect texts with
their signals, tools that would unlock a file), with and without the triage B-tree, every
group must be the one the held store's records make: its key, count, MIME types, example,
the tools it waits on, its first files in key order; and the files waiting on each tool.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.db import DB, RecordDB
from engine.quality import Quality
from engine.records import STATUSES, Record
from engine.store import Store
from engine.tallies import Kind, first_keys_walked
from tests.tui.test_paged_model import _held, _paged, _write
from tui.triage import (
    ErrorGroup,
    UnsupportedGroup,
    error_records,
    group_errors,
    group_quality,
    group_unsupported,
    quality_records,
    tally_errors,
    tally_examples,
    tally_quality,
    tally_unsupported,
    unsupported_records,
    waiting_of,
    waiting_tallied,
)

MESSAGES = (None, "", "bad 1", "bad 22", "no 'a.txt' here", "no 'b.txt' here", "EOF marker")
SIGNALS = ((), ("common",), ("noise", "common"), ("mojibake",), ("odd one",))


@st.composite
def _template(draw: st.DrawFn) -> dict[str, object]:
    verdict = draw(st.sampled_from((None, "good", "suspect", "garbled")))
    quality = None
    if verdict is not None:
        quality = Quality(verdict, signals=list(draw(st.sampled_from(SIGNALS))))
    return {
        "status": draw(st.sampled_from(STATUSES)),
        "mime": draw(st.sampled_from(("", "application/pdf", "text/plain", "x/é"))),
        "reason": draw(st.sampled_from((None, "corrupt", "needs_tool", "no_reader"))),
        "error": draw(st.sampled_from(MESSAGES)),
        "needs": draw(st.sampled_from(((), ("tesseract",), ("antiword", "catdoc")))),
        "quality": quality,
    }


@st.composite
def triage_records(draw: st.DrawFn) -> list[Record]:
    """Records made from a few templates (so that tallies hold several records and groups
    merge several tallies), under several roots."""
    templates = draw(st.lists(_template(), min_size=1, max_size=6))
    count = draw(st.integers(0, 40))
    out = []
    for i in range(count):
        fields = draw(st.sampled_from(templates))
        root = draw(st.sampled_from(("/r", "/r\u00e9", "/s")))
        path = draw(st.sampled_from(("a", "b/c", "é", "z"))) + f"{i:02}"
        out.append(Record(root=root, path=path, size=i, mtime_ns=1, **fields))  # type: ignore[arg-type]
    return out


def _shuffled(recs: list[Record], trees: bool, random: Random, out: Path) -> Store:
    """:func:`_write`, the index's rows then written again in a random order (a watched
    store's table is not in key order: a walk of it must sort)."""
    store = _write(out, recs, trees=trees)
    with RecordDB.open_writer(out / DB) as db:
        mixed = random.sample(recs, len(recs))
        db.drop([r.key for r in mixed])
        db.commit()
        db.put(mixed)
        db.commit()
    return store


def _said(group: ErrorGroup | UnsupportedGroup) -> tuple[object, ...]:
    """What the screens show of a group but its files."""
    extra = group.mimes if isinstance(group, ErrorGroup) else group.needs
    return (group.ident, group.count, group.example, group.example_path, dict(extra))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recs=triage_records(), trees=st.booleans(), limit=st.integers(1, 5), random=st.randoms())
def test_the_index_tallies_group_as_the_held_records_do(
    recs: list[Record], trees: bool, limit: int, random: Random
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = _shuffled(recs, trees, random, Path(tmp) / "store")
        held, paged = _held(store), _paged(store)
        try:
            suspect = tally_quality(paged.tallies(Kind.SUSPECT))
            tally_examples(paged, suspect)
            kinds: list[tuple[list[ErrorGroup] | list[UnsupportedGroup], list[object]]] = [
                (group_errors(error_records(held)), tally_errors(paged.tallies(Kind.ERRORS))),
                (group_quality(quality_records(held)), suspect),
                (
                    group_unsupported(unsupported_records(held)),
                    tally_unsupported(paged.tallies(Kind.UNSUPPORTED)),
                ),
            ]
            for whole, tallied in kinds:
                assert [_said(g) for g in tallied] == [_said(g) for g in whole]  # type: ignore[arg-type]
                parts = [g.tallied for g in tallied if g.tallied is not None]  # type: ignore[attr-defined]
                if parts:  # (every group's first files in one walk, as without the tree)
                    walked = first_keys_walked(
                        paged.browse.path, parts[0][0], [t for _k, t in parts], limit
                    )
                    assert walked == [g.keys[:limit] for g in whole]
                for held_group, paged_group in zip(whole, tallied, strict=True):
                    assert paged_group.keys == []  # (read as it is shown)
                    assert paged_group.tallied is not None
                    kind, tallies = paged_group.tallied
                    keys = paged.first_keys(kind, tallies, limit)
                    assert keys == held_group.keys[:limit]
            assert waiting_tallied(paged) == waiting_of(held.waiting())
        finally:
            paged.close()


def test_a_groups_example_is_its_first_record_in_key_order(tmp_path: Path) -> None:
    """The index orders a group's tallies by message; the example is still the first file."""
    recs = [
        Record(root="/r", path=path, size=1, mtime_ns=1, status="error", reason="corrupt",
               error=error, mime=mime)
        for path, error, mime in (("a00", "bad 22", "text/plain"), ("z01", "bad 1", ""))
    ]  # fmt: skip
    for trees in (True, False):
        paged = _paged(_write(tmp_path / str(trees), recs, trees=trees))
        try:
            (group,) = tally_errors(paged.tallies(Kind.ERRORS))
            assert (group.example, group.example_path, group.count) == ("bad 22", "a00", 2)
            assert group.mime_text() == "text/plain, ?"
        finally:
            paged.close()
