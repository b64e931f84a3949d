"""The compact names of a store's texts answer as a set of the names would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.records import is_sha256
from engine.store import Store
from engine.textnames import TextNames

_hex = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
# hashes sharing their first 8 bytes (16 digits) with another: the bisection's ties
_twins = st.tuples(
    st.text(alphabet="0123456789abcdef", min_size=16, max_size=16),
    st.lists(st.text(alphabet="0123456789abcdef", min_size=48, max_size=48), max_size=4),
).map(lambda t: [t[0] + tail for tail in t[1]])
_odd = st.one_of(
    _hex.map(str.upper),  # not as the store names texts
    _hex.map(lambda h: h[:63]),
    _hex.map(lambda h: h + "0"),
    st.text(max_size=70),
).filter(lambda name: not is_sha256(name))


def _folders(names: list[str]) -> list[tuple[str, list[str]]]:
    by: dict[str, list[str]] = {}
    for name in names:
        by.setdefault(name[:2], []).append(name)
    return sorted(by.items())


@settings(max_examples=200, deadline=None)
@given(
    stored=st.lists(st.one_of(_hex, _twins.map(lambda t: t[0] if t else "")), max_size=40),
    twins=_twins,
    misplaced=st.lists(_hex, max_size=3),
    odd=st.lists(_odd, max_size=5),
    asked=st.lists(st.one_of(_hex, _odd), max_size=20),
)
def test_membership_is_the_sets(
    stored: list[str],
    twins: list[str],
    misplaced: list[str],
    odd: list[str],
    asked: list[str],
) -> None:
    texts = {n for n in [*stored, *twins] if n}
    folders = _folders([*texts, *odd])
    # a hash in a folder not its own is no text: the store never looks there
    folders += [(f"{chr(ord('g') + i)}0", [m]) for i, m in enumerate(misplaced)]
    folders.sort()
    names = TextNames.of(folders)
    assert len(names) == len(texts)
    for name in [*texts, *twins, *misplaced, *odd, *asked]:
        assert (name in names) == (name in texts), name
    assert names.issuperset(texts)
    assert names.issuperset(asked) == all(a in texts for a in asked)
    assert 42 not in names


def test_folders_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="out of order"):
        TextNames.of([("ab", []), ("aa", [])])


def test_a_stores_text_names_are_the_texts_it_holds(tmp_path: Path) -> None:
    """Through the store: texts as files, a link in a text's place, a stray file, a text in
    a folder not its own, a hidden temporary."""
    store = Store(tmp_path)
    shas = [f"{i:02x}" + "5" * 62 for i in (0, 1, 0xAB)] + ["ab" + "0" * 62]
    for sha in shas:
        store.put_text(sha, f"text of {sha[:4]}\n")
    folder = store.extract_dir / "ab"
    linked = "ab" + "7" * 62
    os.symlink(folder / f"{shas[2]}.txt", folder / f"{linked}.txt")
    (folder / "notes.txt").write_text("not a text\n")
    (folder / f".{'ab' + '8' * 62}.txt").write_text("a temporary\n")
    misplaced = "cd" + "9" * 62
    (folder / f"{misplaced}.txt").write_text("in the wrong folder\n")
    names = store.text_names()
    assert sorted(n for n in [*shas, linked, misplaced] if n in names) == sorted(shas)
    for sha in [*shas, linked, misplaced]:
        assert (sha in names) == store.has_text(sha)
