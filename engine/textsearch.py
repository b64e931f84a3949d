"""Searching the store's texts: what a pattern means, where it matches, which files hold it.

A pattern is words (``invoice total``: the words in that order, any run of white space
between them, so a phrase matches across a line break or a page break) or a regular
expression (Python's ``re`` syntax). Either way the full-text index (:mod:`engine.textindex`)
only narrows the texts to look at: every literal run of three characters or more that a match
must contain is looked up, quoted, in the trigram index (case-insensitively: a superset), and
the pattern itself then decides on each candidate text. A pattern with no such run (``to``,
``\\d+``) looks at every text: correct, and slower on a big store.

Positions are given as people count them in a text: pages are separated by form feeds (PDF),
lines counted from 1 within the page, columns in characters from 1.

A regular expression runs on the ``regex`` package, in its ``re``-compatible mode, for two
things ``re`` lacks: a bound on the time a match may take, and letting go of the interpreter's
lock while it matches. A pattern that backtracks without end (``(a+)+$`` on a text with a long
run of ``a``: one of the fixtures) ran for ever under ``re``, holding the lock: ``quarry grep``
never ended, and the dashboard, whose search runs in a thread, froze with it (not even ``q``
was heard). It now stops after :data:`MATCH_S` on a text, as :class:`PatternTooSlow`. Words
stay on ``re``: escaped words with white space between them cannot backtrack like that, and
``regex``'s bound costs ~1 us a text tried (a pattern with no fragment tries every text).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sqlite3
import unicodedata
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, TypeVar

from engine.errors import QuarryError
from engine.visible import for_terminal

if TYPE_CHECKING:
    import regex as rx  # (the name ``regex`` is the flag of a pattern that is one)

MIN_FRAGMENT = 3
"""The trigram tokenizer finds strings of at least this many characters."""
CONTEXT = 60
"""Characters of a snippet on each side of the match."""
MATCH_S = 5.0
"""Seconds a pattern may take over one text (every match in it) before it is given up as
:class:`PatternTooSlow`: a plain pattern goes through the largest text kept (16 million
characters) in well under a second."""

_UNINDEXABLE = re.compile(r"[\x00\ud800-\udfff]+")
"""What no stored text holds (NUL is removed; a lone surrogate cannot reach SQLite)."""
_BREAKS = re.compile(r"[\n\f]+")
_ANY_I = re.compile("[iI]")
_M = TypeVar("_M")


class BadPattern(QuarryError):
    """A pattern that means nothing: empty, or a regular expression that does not compile."""


class PatternTooSlow(BadPattern):
    """A pattern that took over :data:`MATCH_S` on one text (it backtracks without end)."""

    def __init__(self) -> None:
        super().__init__(
            f"the pattern took over {MATCH_S:g} s on one text: a repeat inside a repeat, "
            "like (a+)+, can try for ever; make it simpler"
        )


@dataclass(frozen=True, slots=True)
class Query:
    """A compiled pattern: ``regex`` decides, ``fragments`` (each at least
    :data:`MIN_FRAGMENT` characters, all in every match) narrow the texts to try."""

    regex: re.Pattern[str] | rx.Pattern[str]
    """Words' pattern (``re``), or a regular expression's (``regex``, bounded in time)."""
    fragments: tuple[str, ...]
    exact: bool = False
    """The index's answer is the pattern's: one word of ASCII characters, any case (the
    trigram index finds exactly the texts holding it, folding ASCII case as the pattern
    does): the texts need not be read to know which match."""

    @property
    def fts(self) -> str | None:
        """The FTS5 MATCH expression of the fragments (None: every text is a candidate).
        Each is a quoted string (a ``"`` in it doubled): nothing a user types is read as
        FTS5 query syntax."""
        if not self.fragments:
            return None
        return " AND ".join('"' + f.replace('"', '""') + '"' for f in self.fragments)


@dataclass(frozen=True, slots=True)
class Match:
    """One match in a text: where it starts (offset, page, line, column) and a one-line
    snippet of the text around it, safe for a terminal."""

    start: int
    end: int
    page: int
    line: int
    column: int
    text: str
    snippet: str


@contextlib.contextmanager
def quiet_patterns() -> Iterator[None]:
    """Compile a user's pattern without ``re``'s FutureWarnings (``[[`` is a "possible nested
    set"): printed, one would land on the dashboard's screen or in ``quarry grep``'s output,
    and the pattern works as typed. (The query line's ``path:/.../`` terms come here too.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


def parse(pattern: str, *, regex: bool = False, ignore_case: bool = False) -> Query:
    """The :class:`Query` of ``pattern``; BadPattern for an empty pattern or a regular
    expression that does not compile."""
    flags = re.IGNORECASE if ignore_case else 0
    if not regex:
        words = unicodedata.normalize("NFC", pattern).split()
        if not words:
            raise BadPattern("an empty pattern: give a word or more to look for")
        compiled = re.compile(r"\s+".join(_word_pattern(w, ignore_case) for w in words), flags)
        fragments = _indexable(words)
        exact = ignore_case and len(words) == 1 and fragments == (words[0],) and words[0].isascii()
        return Query(compiled, fragments, exact)
    if not pattern:
        raise BadPattern("an empty pattern: give a word or more to look for")
    import regex as rx  # (~9 ms, for a regular expression only: not on the dashboard's start)

    try:
        with quiet_patterns():
            re.compile(pattern, flags)  # (re's words for what is wrong with it)
            tree = sre_parse.parse(pattern, flags)
            bounded = rx.compile(pattern, flags | rx.V0)
    except (re.error, rx.error, OverflowError, RecursionError, ValueError) as exc:
        raise BadPattern(f"not a regular expression: {exc}") from exc
    runs = _required_runs(tree)
    return Query(bounded, _indexable(unicodedata.normalize("NFC", r) for r in runs))


def _word_pattern(word: str, ignore_case: bool) -> str:
    """``word`` as a regular expression. Any case: an ``i`` is ``i`` or ``I`` only, as the
    index folds it (Python's case-insensitive ``i`` also takes the Turkish ``İ`` and ``ı``,
    which the index keeps apart: those texts would never even be candidates)."""
    escaped = re.escape(word)
    return _ANY_I.sub("(?-i:[iI])", escaped) if ignore_case else escaped


def _indexable(runs: Iterable[str]) -> tuple[str, ...]:
    """The parts of ``runs`` the index can look up, longest first (the rarest, likely)."""
    parts = {p for run in runs for p in _UNINDEXABLE.split(run) if len(p) >= MIN_FRAGMENT}
    return tuple(sorted(parts, key=lambda p: (-len(p), p)))


def risky(pattern: str, flags: int = 0) -> bool:
    """Whether the regular expression ``pattern`` (one ``re`` compiles) may backtrack without
    end even on a short value: a repeat of more than once over a part that itself repeats or
    branches (``(a+)+``, ``(.*)*x``, ``(a|aa)*``), or a back reference. Such a pattern tries
    every way of splitting a run of what it repeats: ``(.*)*x`` took 1.5 s on 24 characters
    without an ``x``, twice as long for each one more."""
    with quiet_patterns():
        return _risky(sre_parse.parse(pattern, flags), inside=False)


def _risky(tree: object, *, inside: bool) -> bool:
    for op, arg in tree:  # type: ignore[attr-defined]
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE"):
            return True
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            many = arg[1] > 1
            if (many and inside) or _risky(arg[2], inside=inside or many):
                return True
        elif name == "BRANCH":
            if inside or any(_risky(b, inside=False) for b in arg[1]):
                return True
        elif name == "SUBPATTERN":
            if _risky(arg[-1], inside=inside):
                return True
        elif name in ("ASSERT", "ASSERT_NOT"):
            if _risky(arg[1], inside=inside):
                return True
        elif name == "ATOMIC_GROUP" and _risky(arg, inside=inside):
            return True
    return False


def _required_runs(tree: object) -> list[str]:
    """The runs of literal characters every match of the parsed regular expression contains:
    consecutive literals of the sequence, and those inside a group or a repeat of at least
    one that the sequence requires. Anything else (alternatives, classes, optional parts)
    ends a run and adds none: fewer fragments only mean more candidates."""
    runs: list[str] = []
    current: list[str] = []

    def end_run() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, arg in tree:  # type: ignore[attr-defined]
        name = str(op)
        if name == "LITERAL":
            current.append(chr(arg))
            continue
        end_run()
        if name == "SUBPATTERN":
            runs.extend(_required_runs(arg[-1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and arg[0] >= 1:
            runs.extend(_required_runs(arg[2]))
        elif name == "ATOMIC_GROUP":
            runs.extend(_required_runs(arg))
    end_run()
    return runs


def matches(text: str, query: Query, limit: int | None = None) -> Iterator[Match]:
    """The matches of ``query`` in ``text``, in order (at most ``limit``); pages and lines
    are counted as the matches go (one pass over the text, however many there are)."""
    page, line, line_start, upto = 1, 1, 0, 0
    pattern = query.regex
    if isinstance(pattern, re.Pattern):
        found: Iterable[re.Match[str] | rx.Match[str]] = _first(pattern.finditer(text), limit)
    else:  # every match first: the bound counts the matching, not what the caller does
        try:
            found = list(_first(pattern.finditer(text, concurrent=True, timeout=MATCH_S), limit))
        except TimeoutError:
            raise PatternTooSlow() from None
    for m in found:
        start, end = m.span()
        for br in _BREAKS.finditer(text, upto, start):
            for ch in br.group():
                if ch == "\f":
                    page, line = page + 1, 1
                else:
                    line += 1
            line_start = br.end()
        upto = start
        yield Match(
            start,
            end,
            page,
            line,
            start - line_start + 1,
            m.group(),
            _snippet(text, line_start, start, end),
        )


def _snippet(text: str, line_start: int, start: int, end: int) -> str:
    """The match on one line with up to :data:`CONTEXT` characters of its line(s) each side
    (a break inside the match shown as one space), nothing in it obeyed by a terminal."""
    before = text[max(line_start, start - CONTEXT) : start]
    stop = _BREAKS.search(text, end)
    after = text[end : min(stop.start() if stop else len(text), end + CONTEXT)]
    body = _BREAKS.sub(" ", text[start:end])
    return for_terminal(f"{before}{body}{after}".replace("\t", " "))


def candidates(con: sqlite3.Connection, query: Query) -> Iterator[tuple[int, str]]:
    """(row, text) of the indexed texts that may match ``query``: those holding every
    fragment, or every text when it has none. ``con`` reads an index whose text index is
    ready (:func:`engine.textindex.is_ready`), in the caller's transaction."""
    match = query.fts
    sql = "SELECT rowid, body FROM text_fts"
    cur = con.execute(sql + " WHERE text_fts MATCH ?", (match,)) if match else con.execute(sql)
    while batch := cur.fetchmany(1024):
        yield from batch


def matching_rows(con: sqlite3.Connection, query: Query) -> list[int]:
    """The rows of the indexed texts ``query`` matches: from the index alone when it is
    :attr:`Query.exact` (no text read: a frequent word in a million texts is a list of
    numbers), else each candidate text tried; ``con`` as for :func:`candidates`."""
    if query.exact and query.fts is not None:
        cur = con.execute("SELECT rowid FROM text_fts WHERE text_fts MATCH ?", (query.fts,))
        return [rowid for (rowid,) in cur]
    return [rowid for rowid, body in candidates(con, query) if found_in(body, query)]


def found_in(text: str, query: Query) -> bool:
    """Whether ``query`` matches ``text`` (PatternTooSlow: it could not tell in time)."""
    pattern = query.regex
    if isinstance(pattern, re.Pattern):
        return pattern.search(text) is not None
    try:
        return pattern.search(text, concurrent=True, timeout=MATCH_S) is not None
    except TimeoutError:
        raise PatternTooSlow() from None


def _first(found: Iterator[_M], limit: int | None) -> Iterator[_M]:
    return found if limit is None else itertools.islice(found, limit)


NAMED_BY_SQL = (
    "SELECT rec.root, rec.path, t.sha256, t.id FROM json_each(?) j"
    " JOIN text_rows t ON t.id = j.value"
    " JOIN records rec ON rec.sha256 = t.sha256 AND rec.status = 'ok'"
)
"""The ``ok`` records naming the texts of a JSON list of text rows (found by ``by_sha``)."""


def named_by(
    con: sqlite3.Connection, rows: Iterable[int]
) -> Iterator[tuple[bytes, bytes, str, int]]:
    """(root, path, hash, row) of each ``ok`` record naming the text of one of ``rows``
    (root and path as the index keys them), in one statement whatever their number."""
    cur = con.execute(NAMED_BY_SQL, (json.dumps(list(rows)),))
    while batch := cur.fetchmany(4096):
        yield from batch


def matching_hashes(con: sqlite3.Connection, query: Query) -> set[str]:
    """The hashes of the indexed texts ``query`` matches; ``con`` as for :func:`candidates`."""
    return {sha for _r, _p, sha, _id in named_by(con, matching_rows(con, query))}
