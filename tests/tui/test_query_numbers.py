"""The query line's number terms (``size:>10M``, ``chars:<100``, ``ms:>=5000``, ``pages:3``),
held to an oracle written apart from the parser: exact fractions of the typed number."""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from engine.query import FIELDS, NUMBER_FIELDS, Query

OPS: dict[str, Callable[[Fraction, Fraction], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
    "=": operator.eq, "": operator.eq,
}  # fmt: skip
"""What each comparison means (none typed: ``=``)."""
SCALE = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
"""The units as ``ls -h`` prints them."""

numbers = st.integers(0, 2**63 - 1) | st.integers(0, 5000)
"""A record's number: anything a 64-bit count holds, often small (near the bounds typed)."""
whole = st.integers(0, 10**6).map(str)
decimal = st.tuples(st.integers(0, 4096), st.integers(0, 999)).map(lambda t: f"{t[0]}.{t[1]}")
units = st.sampled_from(["", "k", "K", "m", "M", "g", "G", "t", "kb", "KiB", "MB", "b"])


def unit_of(suffix: str) -> int:
    """The oracle's reading of a suffix: its first letter, any case (``b`` alone: bytes)."""
    letter = suffix[:1].lower()
    return SCALE[letter if letter in SCALE else ""]


def column(values: list[int]) -> Callable[[str], array[int]]:
    return lambda _field: array("q", values)


@given(st.lists(numbers, min_size=1, max_size=20), st.sampled_from(list(OPS)),
       whole | decimal, units, st.booleans())  # fmt: skip
def test_a_size_term_keeps_exactly_the_sizes_it_says(
    sizes: list[int], op: str, number: str, unit: str, bang: bool
) -> None:
    bound = Fraction(number) * unit_of(unit)
    query = Query.parse(f"{'!' if bang else ''}size:{op}{number}{unit}")
    if op in ("=", "") and bound.denominator != 1:  # 1.3K is 1331.2 bytes: no size is that
        assert not query.active and query.error and "not a whole number" in query.error
        return
    assert query.active and query.error is None
    want = [OPS[op](Fraction(n), bound) is not bang for n in sizes]
    assert [query.matches_row(lambda _f, n=n: n) for n in sizes] == want  # type: ignore[misc]
    assert list(query.mask(column(sizes), [])) == [int(w) for w in want]


@given(st.sampled_from(["chars", "ms", "pages"]), st.lists(numbers | st.none(), max_size=20),
       st.sampled_from(list(OPS)), st.integers(0, 2**64), st.booleans())  # fmt: skip
def test_a_count_term_compares_whole_numbers_and_a_missing_one_never_matches(
    field: str, values: list[int | None], op: str, bound: int, bang: bool
) -> None:
    if field != "pages":  # only a record's pages can be missing
        values = [0 if v is None else v for v in values]
    query = Query.parse(f"{'!' if bang else ''}{field}:{op}{bound}")
    assert query.active and query.error is None
    want = [(v is not None and OPS[op](Fraction(v), Fraction(bound))) is not bang for v in values]
    assert [query.matches_row(lambda _f, v=v: v) for v in values] == want  # type: ignore[misc]
    stored = [-1 if v is None else v for v in values]  # the model's column: -1 for none
    assert list(query.mask(column(stored), [])) == [int(w) for w in want]


@given(st.integers(0, 2**40), st.sampled_from(["k", "m", "g"]))
def test_a_size_in_units_round_trips(count: int, unit: str) -> None:
    """``size:=3M`` keeps a record of 3 * 1024 * 1024 bytes, and not one byte either side."""
    n = count * SCALE[unit]
    query = Query.parse(f"size:{count}{unit.upper()}")
    assert [query.matches_row(lambda _f, v=v: v) for v in (n - 1, n, n + 1)] == [  # type: ignore[misc]
        False, True, False
    ]  # fmt: skip


BAD = st.one_of(
    st.sampled_from([">lots", "<-", ">", "", ">=", "<-1", "1.5.2", "10X", "1e3", "0x10"]),
    st.from_regex(r"[<>]?=?[a-zA-Z_\-+]+[0-9]*", fullmatch=True),
    st.from_regex(r"[<>]=?-[0-9]+", fullmatch=True),
)


@given(st.sampled_from(NUMBER_FIELDS), BAD, st.booleans())
def test_a_value_that_is_no_number_is_an_error_and_filters_nothing(
    field: str, value: str, bang: bool
) -> None:
    query = Query.parse(f"{'!' if bang else ''}{field}:{value}")
    assert query.error and query.error.startswith(f"{field}:"), query.error
    assert not query.active  # no record is filtered by it: the count says "N of N"
    assert query.mask(column([1, 2]), []) == b""


def test_a_count_takes_no_unit_and_no_fraction() -> None:
    for text in ("chars:>1.5", "ms:1K", "pages:<2b", "chars:1,000"):
        query = Query.parse(text)
        assert "is not a whole number" in (query.error or "") and not query.active, text


@given(st.sampled_from(NUMBER_FIELDS), st.text(max_size=12))
def test_any_value_is_a_term_or_an_error_never_an_exception(field: str, value: str) -> None:
    query = Query.parse(f"{field}:{value}")
    assert query.active or query.error or not value.strip()
    query.matches("a line of activity")


def test_number_terms_combine_with_text_terms_and_free_text() -> None:
    rows = [
        {"path": "a/big.pdf", "status": "ok", "size": 20 << 20, "chars": 50, "ms": 9000},
        {"path": "a/small.pdf", "status": "ok", "size": 10, "chars": 5000, "ms": 10},
        {"path": "b/big.txt", "status": "error", "size": 30 << 20, "chars": 0, "ms": 6000},
    ]

    def kept(text: str) -> list[str]:
        query = Query.parse(text)
        assert query.error is None, query.error
        return [str(r["path"]) for r in rows if query.matches_row(r.get)]  # type: ignore[arg-type]

    assert kept("size:>10M") == ["a/big.pdf", "b/big.txt"]
    assert kept("size:>10M chars:<100 ms:>5000 status:ok") == ["a/big.pdf"]
    assert kept("pdf !size:>10M") == ["a/small.pdf"]
    assert kept("size:>=10m size:<=25M") == ["a/big.pdf"]


def test_an_unknown_field_lists_the_number_fields_and_the_nearest_name() -> None:
    error = Query.parse("sise:>10K").error or ""
    assert error.startswith("no field sise: did you mean size:?")
    assert all(f in error for f in FIELDS) and "chars pages ms" in error


def test_an_activity_line_matches_a_number_term_as_its_words() -> None:
    """A line of text has no fields: ``size:>10K`` in the activity filter is text."""
    assert Query.parse("size:>10K").matches("filter size:>10K typed")
    assert not Query.parse("size:>10K").matches("a.pdf 20K")


def test_a_number_of_many_digits_is_said_not_parsed() -> None:
    """Python refuses to parse an int of 4,300 digits: the term says so, it never raises."""
    for text in ("size:>" + "9" * 5000, "chars:" + "1" * 31, "size:1." + "0" * 40):
        query = Query.parse(text)
        assert "has too many digits" in (query.error or "") and not query.active
    assert Query.parse("size:>" + "9" * 30).active  # within the bound: nothing matches it
