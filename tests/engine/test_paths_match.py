"""The paths' trigram index finds every record a query's path words keep (and maybe more).

:func:`engine.sqlquery.paths_match` is only ever a filter in front of the query's own
clause: it may find records the words do not keep, never miss one they keep. Over random
paths of the letters where case folding differs (``İ``, ``ı``, the Kelvin sign, a combining
dot, a lone surrogate) and random ASCII words, lowercase or not, the index must find every
path Python's matching keeps.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.db import DB, RecordDB, key_bytes
from engine.query import Query
from engine.records import Record, Status
from engine.sqlquery import paths_match

PATH_LETTERS = "aAbBiIkK\u0130\u0131\u212a\u0307/\"' .x\udc80"
WORD_LETTERS = "aAbBiIkK/\"'.x"
VARIANTS = {"i": "iI\u0130\u0131", "I": "iI\u0130\u0131", "k": "kK\u212a", "K": "kK\u212a",
            "a": "aA", "A": "aA", "b": "bB", "B": "bB"}  # fmt: skip
"""What a word's letter may be written as in a path (its other case, and the letters whose
folding differs between Python and the index)."""


@st.composite
def paths_and_words(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """ASCII words, and paths that hold them (each letter maybe written another way), or
    not, among random others."""
    words = draw(st.lists(st.text(WORD_LETTERS, min_size=3, max_size=6), min_size=1, max_size=2))
    paths = draw(st.lists(st.text(PATH_LETTERS, max_size=10), max_size=6))
    for _ in range(draw(st.integers(0, 6))):
        word = draw(st.sampled_from(words))
        written = "".join(draw(st.sampled_from(VARIANTS.get(c, c))) for c in word)
        around = st.text(PATH_LETTERS, max_size=4)
        paths.append(draw(around) + written + draw(around))
    return list(dict.fromkeys(p for p in paths if p)), words


@settings(max_examples=200, deadline=None)
@given(case=paths_and_words())
@example(case=(["axİb", "AXIB", "axib"], ["axi"]))  # (Python lowers İ to i and a dot)
@example(case=(["\u212aab", "kab"], ["kab"]))  # (the Kelvin sign)
def test_the_index_finds_every_path_the_words_keep(case: tuple[list[str], list[str]]) -> None:
    import tempfile
    from pathlib import Path
    from unittest import mock

    paths, words = case
    query = Query.parse(" ".join(words))
    match = paths_match(query)
    if match is None:
        return  # (no word the index can take: a quote split it, say)
    recs = [Record(root="/r", path=p, size=1, mtime_ns=0, status=Status.OK) for p in paths]
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch("engine.db.SORTED_FROM", 0),
        RecordDB.open_writer(Path(tmp) / DB) as db,
    ):
        db.put(recs)
        db.commit()
        db.make_sorted()
        assert db.has_paths_index()
        found = {
            bytes(p)
            for (p,) in db.con.execute(
                "SELECT path FROM records WHERE id IN"
                " (SELECT rowid FROM paths_fts WHERE paths_fts MATCH ?)",
                (match,),
            )
        }
    kept = {key_bytes(r.path) for r in recs if query.matches_record(r)}
    assert kept <= found
