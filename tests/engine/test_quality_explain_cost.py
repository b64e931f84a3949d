"""Explaining a verdict does not build the common-word table (issue 25).

The dashboard's errors screen explains each quality group in a line ("6% common words in any
of 43 languages..."); counting the languages built the whole word table (221,000 words as bit
masks, ~0.2 s of the UI thread) at the first ``x`` of a session.
"""

from __future__ import annotations

import pytest

from engine import quality
from engine.quality import Quality, summary_line
from engine.quality_words import load_lines


def test_naming_the_languages_builds_no_word_table(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = quality._Models()
    monkeypatch.setattr(quality, "MODELS", fresh)
    q = Quality("garbled", lang=None, common=0.063, signals=("common",))
    n = len(load_lines())
    assert summary_line(q) == f"garbled: 6.3% common words in any of {n} languages, expected > 30%"
    assert fresh._masks is None
    # the codes are the table's bit order, built or not
    assert fresh.codes == tuple(sorted(load_lines()))
    fresh.masks()
    assert fresh.codes == tuple(sorted(load_lines()))


@pytest.mark.parametrize(
    ("per_page", "words"), [(1, "1 character"), (0, "0 characters"), (2, "2 characters")]
)
def test_a_sparse_verdict_counts_its_characters_in_words(per_page: int, words: str) -> None:
    """ "1 characters per page" was on the errors screen of the fixtures (issue 25's words)."""
    q = Quality("suspect", per_page=per_page, signals=("sparse",))
    assert summary_line(q) == f"suspect: {words} per page, expected > 8"
