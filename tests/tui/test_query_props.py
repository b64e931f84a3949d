"""Properties of the query line's parser: a word naming no field is said, never applied."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.query import FIELDS, TEXT_FIELDS, Query

names = st.from_regex(r"[a-z]{1,12}", fullmatch=True).filter(lambda n: n not in FIELDS)
values = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), max_size=12)


@given(names, values, st.booleans())
def test_an_unknown_field_is_an_error_naming_the_fields(name: str, value: str, bang: bool) -> None:
    query = Query.parse(("!" if bang else "") + f"{name}:{value}")
    assert not query.active  # it filters no record
    assert query.error is not None and f"no field {name}:" in query.error
    assert all(field in query.error for field in FIELDS)


@given(st.sampled_from(TEXT_FIELDS), st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True))
def test_a_known_field_is_a_term_and_no_error(field: str, value: str) -> None:
    query = Query.parse(f"{field}:{value}")
    assert query.active and query.error is None
    assert [t.field for t in query.terms] == [field]
