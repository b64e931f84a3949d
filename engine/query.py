"""The query line: free text over the path, and ``field:value`` terms over any text column.

``reason:corrupt mime:pdf !path:tmp/`` keeps the records whose reason contains ``corrupt``,
whose MIME type contains ``pdf`` and whose path does not contain ``tmp/``: terms are
separated by spaces (quote a value that holds one: ``error:"bad xref"``) and all must hold.
A value is plain text (smart case: lowercase ignores case) unless it holds a regular
expression's characters; ``!`` before a term inverts it. A word that is not ``field:value``
is matched against the path (but ``OR``, ``AND`` and ``NOT`` among other terms, which this
language has no use for, are errors that say so: :data:`LOGIC`). ``quality:`` takes verdict
names, any of several when they are separated by commas (``quality:suspect,garbled``). The
numbers ``size``, ``chars``, ``pages`` and ``ms`` take a comparison (``size:>10M``,
``chars:<100``, ``ms:>=5000``, ``pages:3``: a bare number is ``=``); a size may carry a unit
(``10K``, ``1.5m``, ``2G``: powers of 1024, as ``ls -h`` prints them). ``text:"words"`` and
``text:/regex/`` keep the records whose extracted text matches (:class:`TextTerm`: the words
in order with any white space between them, smart case; the engine answers, from the store's
full-text index: :mod:`engine.textsearch`). A
``name:value`` word whose name is not a field (``sise:>10K``), a
number term whose value is not one (``size:>lots``), or a status or quality that is none of
theirs (``status:bogus``), filters nothing: :attr:`Query.error` says
so (listing the fields, or the form of the value), and the screen shows it (a silent "0 of
817 records" looked like an answer).

:meth:`Query.mask` runs over whole columns in C: the path column by ``map`` of
``str.__contains__`` (or ``Pattern.search``); the status by ``bytes.translate``; the other
columns, which hold few distinct values, by deciding each distinct value once and mapping
the column through that answer. A million records filter in tens of ms either way.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import get_close_matches
from enum import Enum
from fractions import Fraction
from itertools import repeat
from operator import contains, is_not
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from engine.quality import VERDICTS
from engine.records import Record, Status
from engine.textsearch import BadPattern, quiet_patterns, risky
from engine.textsearch import Query as TextPattern
from engine.textsearch import parse as parse_text

if TYPE_CHECKING:
    import regex as rx

_REGEX_CHARS = set(".*+?[](){}|^$\\")
FLIP = bytes([1, 0, *range(2, 256)])
"""``bytes.translate`` table that inverts a 0/1 mask."""
TEXT_FIELDS: tuple[str, ...] = (
    "path", "status", "reason", "mime", "extractor", "error", "why", "quality",
)  # fmt: skip
"""Fields a term matches as text (``field:value``)."""
CLOSED: dict[str, tuple[str, ...]] = {
    "status": tuple(s.value for s in Status),
    "quality": VERDICTS,
}
"""Text fields whose values are a closed set: a value that matches none of them is an error
(``status:bogus`` filtered every record out, a silent "0 of N"), as an unknown field is."""
NUMBER_FIELDS: tuple[str, ...] = ("size", "chars", "pages", "ms")
"""Fields a term compares as numbers (``size:>10M``)."""
TEXT_SEARCH = "text"
"""The field of a term over the extracted texts (``text:"words"``)."""
FIELDS: tuple[str, ...] = (*TEXT_FIELDS, *NUMBER_FIELDS, TEXT_SEARCH)
"""Fields a term may name (``field:value``)."""
UNITS: dict[str, int] = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
"""A size's units (any case, ``B`` or ``iB`` after one allowed): powers of 1024, as ``ls -h``."""
_SIZE = re.compile(r"(?P<n>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(?P<unit>[kmgt])i?)?b?", re.I)
_INT = re.compile(r"(?P<n>[0-9]+)")
MAX_DIGITS = 30
"""Digits a number may have (past a 64-bit count anyway; bounds Python's int parsing)."""
_TERM = re.compile(r"(!?)([a-z]+):(.*)", re.DOTALL)
LOGIC: dict[str, str] = {
    "OR": "OR: every term must hold, there is no OR (OR in a path: path:OR)",
    "AND": "AND: every term must hold already: leave it out (AND in a path: path:AND)",
    "NOT": "NOT: a ! before a term inverts it, as !mime:pdf (NOT in a path: path:NOT)",
}
"""Words of other query languages, as a word of their own among other terms: an error, not a
path word (``mime:pdf OR status:error`` kept the records whose path held ``OR``: "0 of N")."""


FIELD_S = 0.1
"""Seconds a field's regular expression that may backtrack without end (:func:`risky`) may
take over one value; past that, it is given up for the rest of the query (:attr:`Term.slow`)."""


def _regex(value: str, flags: int) -> re.Pattern[str] | rx.Pattern[str]:
    """``value`` compiled, without ``re``'s FutureWarnings (:func:`quiet_patterns`); by the
    ``regex`` package, bounded in time, when it may backtrack without end (``path:(.*)*x``
    over a path of 40 characters without an ``x``: hours under ``re``, in the dashboard's
    drawing thread, which froze for good)."""
    with quiet_patterns():
        compiled = re.compile(value, flags)
        if not risky(value, flags):
            return compiled
        import regex as rx  # (~9 ms: only for such a pattern, not on the dashboard's start)

        return rx.compile(value, flags | rx.V0)


@runtime_checkable
class CodedColumn(Protocol):
    """A column of values that repeat, as the dashboard keeps one (``tui.coded.Coded``): the
    table of its distinct values and a code per row; a filter decides each value once."""

    values: list[Any]

    def mask(self, answer: Sequence[int]) -> bytes | bytearray:
        """One byte per row: ``answer[code]`` of its value."""
        ...


@dataclass(frozen=True, slots=True)
class Term:
    """One ``[!]field:value`` (or a bare word, over the path)."""

    field: str
    """One of :data:`FIELDS`."""
    value: str
    """What to look for."""
    invert: bool
    """True after ``!``: the term keeps what does not match."""
    pattern: re.Pattern[str] | rx.Pattern[str]
    """Compiled matcher (``regex``'s: bounded, see :func:`_regex`)."""
    literal: str | None
    """The value to look for as is (lowercase when :attr:`icase`); None for a regex."""
    icase: bool
    """Whether case is ignored (the value has no uppercase letter)."""
    error: str | None = None
    """Why the value did not compile as a regex (it is then matched as text), or, for a
    term kept as a word (:attr:`Query.bad`), why its value is not one the field has."""
    _gave_up: list[bool] = dataclasses.field(  # (``field`` is a field's name here)
        default_factory=lambda: [False], compare=False, repr=False
    )
    """Whether a bounded pattern took over :data:`FIELD_S` on a value (see :attr:`slow`)."""

    @classmethod
    def parse(cls, field: str, value: str, invert: bool) -> Term:
        """Plain text unless the value holds regex characters; smart case."""
        icase = not any(c.isupper() for c in value)
        flags = re.IGNORECASE if icase else 0
        error = None
        if _REGEX_CHARS & set(value):
            try:
                return cls(field, value, invert, _regex(value, flags), None, icase)
            except re.error as exc:
                error = str(exc)
        literal = value.lower() if icase else value
        return cls(field, value, invert, re.compile(re.escape(value), flags), literal, icase, error)

    def hit(self, value: str | None) -> bool:
        """Whether ``value`` (a missing one is empty) matches, before inversion."""
        text = value or ""
        if self.literal is not None:
            return self.literal in (text.lower() if self.icase else text)
        pattern = self.pattern
        if isinstance(pattern, re.Pattern):
            return pattern.search(text) is not None
        if self._gave_up[0]:
            return False
        try:
            return pattern.search(text, timeout=FIELD_S) is not None
        except TimeoutError:
            self._gave_up[0] = True
            return False

    @property
    def slow(self) -> bool:
        """Whether its pattern took over :data:`FIELD_S` on a value: from then on it matches
        nothing (:attr:`Query.error` says so), a bounded wait rather than a frozen screen."""
        return self._gave_up[0]

    def matches(self, value: str | None) -> bool:
        """Whether ``value`` passes this term."""
        return self.hit(value) is not self.invert


@dataclass(frozen=True, slots=True)
class TextTerm:
    """``[!]text:"words"`` or ``[!]text:/regex/``: the records whose extracted text matches.

    Which records those are is the store's to say (:func:`engine.grep.matching_keys`; the
    dashboard asks it through its model's ``text_lookup``); a viewer never reads a text for it."""

    value: str
    """What follows ``text:``."""
    invert: bool
    """True after ``!``."""
    pattern: TextPattern | None
    """The compiled pattern; None when it means nothing (:attr:`error` says why)."""
    error: str | None = None

    @classmethod
    def parse(cls, value: str, invert: bool) -> TextTerm:
        """Words (smart case: lowercase ignores case), or a regex between slashes."""
        regex = len(value) >= 2 and value.startswith("/") and value.endswith("/")
        body = value[1:-1] if regex else value
        icase = not any(c.isupper() for c in body)
        try:
            return cls(value, invert, parse_text(body, regex=regex, ignore_case=icase))
        except BadPattern as exc:
            return cls(value, invert, None, f"text: {exc}")


class Op(Enum):
    """How a number term compares (what follows ``field:``; none is ``=``)."""

    GE = ">="
    LE = "<="
    GT = ">"
    LT = "<"
    EQ = "="


class BadNumber(ValueError):
    """A number term's value is not a number of its field (the message says what is)."""


@dataclass(frozen=True, slots=True)
class Compare:
    """One ``[!]field:<op><number>`` over a number column: the whole numbers it keeps are
    ``low <= n <= high`` (a size in units is exact: ``>1.5K`` is ``>= 1537``)."""

    field: str
    """One of :data:`NUMBER_FIELDS`."""
    low: int
    """The least number kept (0: no lower bound, as no count is negative)."""
    high: int | None
    """The greatest number kept; None for no upper bound."""
    invert: bool
    """True after ``!``: the term keeps what does not match (a missing page count too)."""
    word: Term
    """The word as text (``size:>10k``), for a line of text that has no fields."""

    @classmethod
    def parse(cls, field: str, value: str, invert: bool) -> Compare:
        """``>10M`` and the like; raises :class:`BadNumber` saying what a value must be."""
        op = next((o for o in Op if value.startswith(o.value)), Op.EQ)
        number = value.removeprefix(op.value)
        bound = _number(field, number)
        floor, ceil = bound.numerator // bound.denominator, -(-bound.numerator // bound.denominator)
        if op is Op.EQ and floor != ceil:
            raise BadNumber(f"{field}: {number!r} is {float(bound):g} bytes, not a whole number")
        low, high = {
            Op.GE: (ceil, None), Op.GT: (floor + 1, None), Op.LE: (0, floor),
            Op.LT: (0, ceil - 1), Op.EQ: (floor, floor),
        }[op]  # fmt: skip
        return cls(field, low, high, invert, Term.parse(field, f"{field}:{value}", invert))

    def hit(self, value: int | None) -> bool:
        """Whether ``value`` (None: the record has none, as ``pages`` of a text) is kept,
        before inversion."""
        return value is not None and self.low <= value and (self.high is None or value <= self.high)

    def matches(self, value: int | None) -> bool:
        """Whether ``value`` passes this term."""
        return self.hit(value) is not self.invert

    def mask(self, values: Sequence[int]) -> bytes | bytearray:
        """One byte per value (-1 stands for none): one C loop, two for a ``<`` over pages."""
        low, high = self.low, self.high
        hits: bytes | bytearray
        if high is None:
            hits = bytearray(map(low.__le__, values))
        elif low == high:
            hits = bytearray(map(low.__eq__, values))
        else:
            hits = bytearray(map(high.__ge__, values))
            if low > 0 or self.field == "pages":  # -1 (no pages) is below every bound
                hits = and_masks([hits, bytearray(map(low.__le__, values))])
        return hits.translate(FLIP) if self.invert else hits


def _number(field: str, text: str) -> Fraction:
    """The value of a number term: a size with an optional unit, or a whole number."""
    if not text:
        raise BadNumber(f"{field}: needs a number after the comparison, as {field}:>100")
    size = field == "size"
    m = (_SIZE if size else _INT).fullmatch(text)
    if m is None:
        what = "a size (512, 10K, 1.5M, 2G; K = 1024)" if size else "a whole number"
        raise BadNumber(f"{field}: {text!r} is not {what}")
    if len(m["n"]) > MAX_DIGITS:
        raise BadNumber(f"{field}: {text!r} has too many digits")
    return Fraction(m["n"]) * UNITS[(m.groupdict().get("unit") or "").lower()]


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query line: every term must hold."""

    text: str
    """What the user typed."""
    terms: tuple[Term, ...] = ()
    """The terms, in the order typed."""
    unknown: tuple[Term, ...] = ()
    """Words typed as ``name:value`` whose name is not a field: no record is filtered by them
    (:attr:`error` says why); a line of text (:meth:`matches`) is, by the whole word."""
    numbers: tuple[Compare, ...] = ()
    """The number terms (``size:>10M``), in the order typed."""
    bad: tuple[Term, ...] = ()
    """Number terms whose value is not a number (``size:>lots``), and terms of a
    :data:`CLOSED` field whose value matches none of its values (``status:bogus``), as
    :attr:`unknown` words are kept: each :attr:`Term.error` says what the value must be."""
    texts: tuple[TextTerm, ...] = ()
    """The ``text:`` terms, in the order typed (one that means nothing filters nothing)."""

    @classmethod
    def parse(cls, text: str) -> Query:
        """Split ``text`` into terms (shell-like quoting; an unclosed quote is kept as is)."""
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        terms, unknown, numbers, bad, texts = [], [], [], [], []
        for word in words:
            m = _TERM.fullmatch(word)
            bare, bang = word.removeprefix("!"), word.startswith("!")
            if m and m.group(2) == TEXT_SEARCH:
                texts.append(TextTerm.parse(m.group(3), bang))
                continue
            if m and m.group(2) not in FIELDS:
                unknown.append(Term.parse(m.group(2), bare, bang))
                continue
            if m and m.group(2) in NUMBER_FIELDS:
                try:
                    numbers.append(Compare.parse(m.group(2), m.group(3), bang))
                except BadNumber as exc:
                    bad.append(replace(Term.parse(m.group(2), bare, bang), error=str(exc)))
                continue
            if word in LOGIC and len(words) > 1:
                bad.append(replace(Term.parse("path", word, False), error=LOGIC[word]))
                continue
            field, value = (m.group(2), m.group(3)) if m else ("path", bare)
            if field == "quality":
                value = _verdicts(value)
            if not value:
                continue
            term = Term.parse(field, value, bang)
            typed = m.group(3) if m else value  # (as typed: quality's list is made a regex)
            if wrong := _not_among(term, typed, CLOSED.get(field, ())):
                said = f"{field}: {wrong!r} is none of {' '.join(CLOSED[field])}"
                bad.append(replace(term, error=said))
                continue
            terms.append(term)
        return cls(text, tuple(terms), tuple(unknown), tuple(numbers), tuple(bad), tuple(texts))

    @property
    def error(self) -> str | None:
        """What in the query is not applied as typed: an unknown field (with the fields there
        are), a number term's value that is not a number, or a value that looked like a regex
        and is matched as text; None if none of these."""
        if self.unknown:
            typed = dict.fromkeys(t.field for t in self.unknown)
            names = ", ".join(f"{name}:" for name in typed)
            # The nearest field first: at 80 columns the list is cut after "quality size".
            near = [f"{f}:" for name in typed for f in get_close_matches(name, FIELDS, 1, 0.6)]
            guess = f" did you mean {' '.join(dict.fromkeys(near))}?" if near else ""
            return f"no field {names}{guess} ({' '.join(FIELDS)})"
        if self.bad:
            return self.bad[0].error
        if text := next((t.error for t in self.texts if t.error), None):
            return text
        if slow := next((t for t in self.terms if t.slow), None):
            return (
                f"{slow.field}:{slow.value} took over {FIELD_S:g} s on one value (a repeat "
                "inside a repeat, like (a+)+, can try for ever): it matched nothing from then on"
            )
        bad = next((t.error for t in self.terms if t.error), None)
        return f"not a regular expression ({bad}): matched as text" if bad else None

    @property
    def active(self) -> bool:
        """Whether the query filters any record."""
        return bool(self.terms or self.numbers or self.searches)

    @property
    def searches(self) -> tuple[TextTerm, ...]:
        """The ``text:`` terms that filter (those with a pattern)."""
        return tuple(t for t in self.texts if t.pattern is not None)

    def matches(self, text: str) -> bool:
        """Whether one line of text (an activity line) passes every term, each word matched
        as text (a line has no fields)."""
        words = (*self.terms, *self.unknown, *(c.word for c in self.numbers), *self.bad)
        return all(t.matches(text) for t in words)

    def matches_record(
        self, record: Record, text_hit: Callable[[TextTerm], bool] | None = None
    ) -> bool:
        """Whether ``record`` passes (its fields as :func:`field_value` gives them)."""
        return self.matches_row(lambda field: field_value(record, field), text_hit)

    def matches_row(
        self,
        get: Callable[[str], str | int | None],
        text_hit: Callable[[TextTerm], bool] | None = None,
    ) -> bool:
        """Whether a record passes; ``get(field)`` gives its value of a field (a number
        field's as an int, None when the record has none); ``text_hit(term)`` whether its
        text matches a ``text:`` term (none given: no record's does)."""
        return (
            all(t.matches(cast("str | None", get(t.field))) for t in self.terms)
            and all(c.matches(cast("int | None", get(c.field))) for c in self.numbers)
            and all((text_hit is not None and text_hit(t)) is not t.invert for t in self.searches)
        )

    def mask(
        self,
        columns: Callable[[str], Sequence[Any]],
        lower: Sequence[str],
        text_mask: Callable[[TextTerm], bytes | bytearray] | None = None,
    ) -> bytes:
        """One byte per row: 1 when it passes. ``columns(field)`` gives a field's column
        (``status`` as the names of the codes: see :meth:`status_table`; a number field as
        its integers, -1 for none); ``text_mask(term)`` the rows whose text matches a
        ``text:`` term (none given: no row's does)."""
        parts = [_term_mask(t, columns, lower) for t in self.terms]
        parts += [c.mask(columns(c.field)) for c in self.numbers]
        for t in self.searches:
            hits = text_mask(t) if text_mask is not None else bytes(len(lower))
            parts.append(hits.translate(FLIP) if t.invert else hits)
        return and_masks(parts) if parts else b""


def field_value(record: Record, field: str) -> str | int | None:
    """A record's value of a query field, as the dashboard shows it: a quality verdict this
    quarry does not know (a newer writer's) is none; ``pages`` None when it has none."""
    if field == "quality":
        verdict = record.quality.verdict if record.quality is not None else None
        return verdict if verdict in VERDICTS else None
    value: str | int | None = getattr(record, field)
    return value


def and_masks(parts: Sequence[bytes | bytearray]) -> bytes:
    """Byte-wise AND of equal-length 0/1 masks (as big integers: a few ms for a million)."""
    if len(parts) == 1:
        return bytes(parts[0])
    acc = int.from_bytes(parts[0], "little")
    for part in parts[1:]:
        acc &= int.from_bytes(part, "little")
    return acc.to_bytes(len(parts[0]), "little")


def _not_among(term: Term, typed: str, names: tuple[str, ...]) -> str | None:
    """What of ``typed`` (a term's value) matches none of ``names`` (a closed field's): the
    whole value, or one name of a list of them (``quality:suspect,bogus``); None for an open
    field or a value that matches."""
    if not names:
        return None
    if not any(term.hit(name) for name in names):
        return typed
    listed = typed.lower().split(",") if "," in typed and not _REGEX_CHARS & set(typed) else ()
    return next((n for n in listed if n and n not in names), None)


def _verdicts(value: str) -> str:
    """``suspect,garbled`` -> a regex for exactly those verdicts (names are lowercase)."""
    names = [re.escape(v) for v in value.lower().split(",") if v]
    if len(names) < 2 or _REGEX_CHARS & set(value):
        return value.lower()
    return f"^(?:{'|'.join(names)})$"


def _term_mask(
    term: Term, columns: Callable[[str], Sequence[Any]], lower: Sequence[str]
) -> bytes | bytearray:
    values = columns(term.field)
    hits: bytes | bytearray
    if term.field == "path":
        paths = cast("Sequence[str]", values)  # a path is never missing
        if term.literal is not None:
            hits = bytearray(map(contains, lower if term.icase else paths, repeat(term.literal)))
        elif isinstance(term.pattern, re.Pattern):
            hits = bytearray(map(is_not, map(term.pattern.search, paths), repeat(None)))
        else:
            hits = bytearray(map(term.hit, paths))
    elif isinstance(values, CodedColumn):  # decide each value of the table once, map the codes
        hits = values.mask([1 if term.hit(v) else 0 for v in values.values])
    else:  # few distinct values: decide each once, then map the column through the answers
        answer = {v: 1 if term.hit(v) else 0 for v in set(values)}
        hits = bytearray(map(answer.__getitem__, values))
    return hits.translate(FLIP) if term.invert else hits
