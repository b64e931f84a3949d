"""A column of values that repeat (a MIME type, a reason, an error message): small integer
codes, one per row, and the table of the values they stand for.

Pure and Textual-free, below the model's columns and the query line, which both use it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

V = TypeVar("V")
"""What a column holds: a string, None, a tuple of tool names."""

_WIDER = {"B": "H", "H": "I", "I": "Q"}
"""The next code width when a column's table outgrows the current one."""


class _Index(dict[Any, int]):
    """Value -> code, a new code for each value not met yet (one C dict lookup per row)."""

    def __init__(self, values: list[Any]) -> None:
        super().__init__((v, i) for i, v in enumerate(values))
        self.table = values

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self.table)
        self.table.append(value)
        return code


class Coded(Sequence[V], Generic[V]):
    """A column of values that repeat (a MIME type, a reason): a code per row and a table.

    A million rows take 1 MB (``array('B')``) instead of 8 MB of pointers and a pickle memo
    entry each; a filter decides each distinct value once and maps the codes through the
    answers with ``bytes.translate``. The codes widen (``H``, ``I``) past 256 distinct values.
    ``column[i]`` is the value; codes of a value never change once given.
    """

    __slots__ = ("codes", "lookup", "values")

    def __init__(self, values: Sequence[V] = (), codes: array[int] | None = None) -> None:
        self.values: list[V] = list(values)
        """Code -> value."""
        self.lookup = _Index(self.values)
        """Value -> code (new values get the next code)."""
        self.codes: array[int] = array("B") if codes is None else codes
        """One code per row."""

    @classmethod
    def of(cls, values: Iterable[V], again: Callable[[], Iterable[V]] | None = None) -> Coded[V]:
        """The column of ``values`` (their first appearances make the table, in order).

        ``again`` gives the values anew when they are an iterator (``map`` over rows) that a
        column of more than 256 distinct values must read twice; without it an iterator is
        made a list first.
        """
        col: Coded[V] = cls()
        if again is None and not isinstance(values, list):
            values = list(values)
        try:  # bytearray(map(...)) is a C loop; array("B", map(...)) is 3x slower
            col.codes = array("B", bytearray(map(col.lookup.__getitem__, values)))
            return col
        except ValueError:  # a code past 255: more distinct values than a byte holds
            pass
        for kind in ("H", "I", "Q"):
            try:
                col.codes = array(kind, map(col.lookup.__getitem__, again() if again else values))
                return col
            except OverflowError:
                continue
        raise OverflowError("too many distinct values")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Coded, (self.values, self.codes))

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, i: int) -> V: ...
    @overload
    def __getitem__(self, i: slice) -> list[V]: ...
    def __getitem__(self, i: int | slice) -> V | list[V]:
        if isinstance(i, slice):
            return list(map(self.values.__getitem__, self.codes[i]))
        return self.values[self.codes[i]]

    def __iter__(self) -> Iterator[V]:
        return map(self.values.__getitem__, self.codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Coded):
            other = list(other)
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Coded({list(self)!r})"

    def code(self, value: V) -> int:
        """The code of ``value`` (given one now if it has none)."""
        code: int = self.lookup[value]
        limit = 1 << (8 * self.codes.itemsize)
        if code >= limit:
            self.codes = array(_WIDER[self.codes.typecode], self.codes)
        return code

    def append(self, value: V) -> None:
        """Add one row at the end."""
        code = self.code(value)
        self.codes.append(code)

    def __setitem__(self, i: int, value: V) -> None:
        code = self.code(value)
        self.codes[i] = code

    def extend(self, other: Coded[V] | Iterable[V]) -> None:
        """Append the rows of ``other`` (its codes recoded into this table, in C when they
        fit a byte)."""
        if not isinstance(other, Coded):
            for value in other:
                self.append(value)
            return
        remap = [self.code(v) for v in other.values]
        same = remap == list(range(len(remap)))
        if same and other.codes.typecode == self.codes.typecode:
            self.codes.extend(other.codes)  # a copy of memory, no loop over the rows
        elif same and other.codes.itemsize < self.codes.itemsize:
            self.codes.extend(array(self.codes.typecode, other.codes))
        elif other.codes.typecode == self.codes.typecode == "B":
            table = bytes(remap) + bytes(256 - len(remap))
            self.codes.frombytes(other.codes.tobytes().translate(table))
        else:
            self.codes.extend(array(self.codes.typecode, map(remap.__getitem__, other.codes)))

    def mask(self, answer: Sequence[int]) -> bytes | bytearray:
        """One byte per row: ``answer[code]`` (0 or 1) of its value."""
        if self.codes.typecode == "B":
            table = bytes(answer) + bytes(256 - len(answer))
            return self.codes.tobytes().translate(table)
        return bytearray(map(answer.__getitem__, self.codes))

    def ranks(self, rank: Sequence[int]) -> array[int]:
        """Each row's ``rank[code]`` (a sort key), as ``array('q')``."""
        return array("q", map(rank.__getitem__, self.codes))
