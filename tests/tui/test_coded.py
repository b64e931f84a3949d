"""Coded columns: codes and a table stand for a list of repeating values, in every use."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from tui.coded import Coded

VALUES = st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "pdf", "text/plain"])))


@given(VALUES, VALUES)
def test_a_coded_column_reads_as_its_values(
    first: list[str | None], second: list[str | None]
) -> None:
    col = Coded.of(first)
    assert list(col) == first and len(col) == len(first)
    assert [col[i] for i in range(len(first))] == first
    col.extend(Coded.of(list(reversed(second))))  # another table order: recoded
    col.extend(second)
    assert list(col) == first + list(reversed(second)) + second
    assert pickle.loads(pickle.dumps(col)) == col


def test_codes_widen_past_a_byte_and_keep_their_values() -> None:
    values = [f"error {i}" for i in range(300)] * 2
    col = Coded.of(values)
    assert col.codes.typecode == "H" and list(col) == values
    small = Coded.of(["x"] * 3)
    for i in range(300):
        small.append(str(i))
    small[0] = "y"
    assert small.codes.typecode == "H"
    assert list(small) == ["y", "x", "x", *map(str, range(300))]
    byte = Coded.of(["x", "z"])
    byte.extend(small)  # a wider column appended to a narrow one
    assert list(byte) == ["x", "z", *small]


def test_a_mask_and_ranks_decide_each_value_once() -> None:
    col = Coded.of(["b", None, "a", "b"])
    hit = [1 if v == "b" else 0 for v in col.values]
    assert list(col.mask(hit)) == [1, 0, 0, 1]
    rank = {v: i for i, v in enumerate(sorted(v or "" for v in col.values))}
    assert list(col.ranks([rank[v or ""] for v in col.values])) == [2, 0, 1, 2]
