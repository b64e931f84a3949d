"""The query line (:mod:`engine.query`) compiled to SQL over the index's ``records`` table.

``quarry export --where`` filters through it, and a viewer that pages rows from the index
can: one ``WHERE`` clause that keeps exactly the records :meth:`Query.matches_record` keeps
(a property test holds the two to each other over random records and queries).

Most terms run in SQLite's own C functions:

- a number (``size:>10M``) is a range over its integer column (a record without ``pages``
  matches no range, and so passes an inverted one, as on the dashboard);
- a case-sensitive literal is ``instr`` over the column's bytes: a path is keyed as UTF-8
  (lone surrogates as code points, :func:`engine.db.key_bytes`), where a string holds
  another exactly when its bytes hold the other's;
- a lowercase literal of ASCII characters is ``LIKE '%literal%'``, which ignores the case of
  ASCII letters only: Python's ``str.lower`` folds two more characters into ASCII (``İ``
  U+0130 and the Kelvin sign U+212A), and LIKE stops at a NUL, so a value holding one of
  those is decided in Python as well. (``LIKE`` over the path's text is 1.2 s over ten
  million rows here, ``instr(lower(path))`` 2.3 s: ``tests/bench/bench_where.py``.)

The rest (a regular expression, a lowercase literal beyond ASCII, ``text:`` terms) call a
Python function the clause installs on the connection (:meth:`Where.install`), decided the
way the dashboard decides them. A missing text is the empty string, as there.

A big store's index has a trigram index of its paths (:data:`engine.db.PATHS_INDEX`): a
query whose words over the path find few records there (:func:`drive`) keeps only those,
read by row id (:attr:`Where.driven`), and still decides each by its own clause.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from engine.db import PATHS_INDEX, RecordDB, key_bytes, name_of
from engine.quality import VERDICTS
from engine.query import Compare, Query, Term, TextTerm
from engine.records import Key

HIT = "quarry_hit"
"""The Python function a clause calls for a term SQLite cannot decide alone."""
IN_TEXT = "quarry_in_text"
"""The Python function a clause calls for a ``text:`` term (is this key among its answers)."""
_FOLDS_TO_ASCII = ("\u0130", "\u212a")
"""The characters whose ``str.lower()`` holds an ASCII letter (``İ`` -> ``i̇``, ``K`` -> ``k``)."""
_LIKE_ESCAPES = str.maketrans({"\\": "\\\\", "%": "\\%", "_": "\\_"})
"""A literal inside a LIKE pattern, its wildcards and the escape character escaped."""
FEW = ("status", "reason", "quality")
"""The fields the index's ``counts`` table holds every value of (:func:`known_values`)."""
_TEXT_COLUMNS = ("status", "reason", "mime", "extractor", "error", "why")
"""Text fields stored as they are (a missing one is NULL)."""
_MISSING = frozenset(_TEXT_COLUMNS) - {"status"}
"""The text fields a record may lack (NULL in the index: every record has a status)."""


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "''") + "'"


_QUALITY = f"CASE WHEN quality IN ({', '.join(map(_quoted, VERDICTS))}) THEN quality ELSE '' END"
"""A record's verdict as the dashboard knows it (a newer writer's verdict is none)."""


@dataclass(frozen=True, slots=True)
class Where:
    """A compiled query: the clause, its parameters, and the Python it calls."""

    sql: str
    """A boolean expression over ``records``' columns (``1`` for an empty query)."""
    params: tuple[object, ...]
    """The clause's ``?`` values, in order."""
    terms: tuple[Term, ...] = ()
    """The terms :data:`HIT` decides, by position."""
    texts: tuple[frozenset[Key], ...] = ()
    """The keys each ``text:`` term keeps, by position (:data:`IN_TEXT`)."""
    driven: bool = False
    """The clause keeps only records the paths' trigram index finds (:func:`driven_by`):
    read them by row id (``records NOT INDEXED``), never by a walk of a B-tree."""

    def install(self, con: sqlite3.Connection) -> None:
        """Give ``con`` the Python functions the clause calls (replacing a previous clause's)."""
        terms, texts = self.terms, self.texts

        def hit(i: int, value: object) -> int:
            if isinstance(value, bytes):  # a root or path, keyed as bytes
                value = name_of(value)
            return 1 if terms[i].hit(value if isinstance(value, str) else None) else 0

        def in_text(i: int, root: bytes, path: bytes) -> int:
            return 1 if (name_of(root), name_of(path)) in texts[i] else 0

        con.create_function(HIT, 2, hit, deterministic=True)
        con.create_function(IN_TEXT, 3, in_text, deterministic=True)


def known_values(con: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """Every value the index's records hold of the fields its ``counts`` table keeps (status,
    reason, quality; a missing one as ``''``), read from that table in one statement."""
    rows = con.execute("SELECT status, reason, quality FROM counts WHERE n > 0").fetchall()
    return {field: frozenset(row[i] for row in rows) for i, field in enumerate(FEW)}


def compile_where(
    query: Query,
    text_keys: Mapping[TextTerm, frozenset[Key]] | None = None,
    values: Mapping[str, frozenset[str]] | None = None,
) -> Where:
    """``query`` as a clause over ``records``; ``text_keys`` holds the answers to its
    ``text:`` terms (:func:`engine.grep.matching_keys`), none given: no record's text matches;
    ``values`` every value of a few-valued field (:func:`known_values`), whose terms are then
    decided once a value and run as ``IN`` lists (2.7 s -> 0.6 s over ten million rows)."""
    parts: list[str] = []
    params: list[object] = []
    terms: list[Term] = []
    texts: list[frozenset[Key]] = []
    for term in query.terms:
        if values is not None and term.field in values:
            parts.append(_among(term, values[term.field], params))
            continue
        parts.append(_term(term, terms, params))
    for compare in query.numbers:
        parts.append(_compare(compare, params))
    for search in query.searches:
        texts.append((text_keys or {}).get(search, frozenset()))
        sql = f"{IN_TEXT}({len(texts) - 1}, root, path)"
        parts.append(f"NOT {sql}" if search.invert else sql)
    sql = " AND ".join(f"({p})" for p in parts) if parts else "1"
    return Where(sql, tuple(params), tuple(terms), tuple(texts))


def paths_match(query: Query) -> str | None:
    """An FTS5 query of :data:`engine.db.PATHS_INDEX` that finds every record ``query``'s
    words over the path keep, and more (None: it has no such word). A word counts when it
    is a literal of three ASCII characters or more that keeps the paths holding it (not
    ``!word``): each of its trigrams must be in the path. The index folds case as a lowercase
    word does, but for one letter: Python lowers ``İ`` (U+0130) to ``i`` and a combining dot,
    the index keeps it, so a lowercase word's trigram with an ``i`` also takes ``İ`` there
    (the Kelvin sign it folds to ``k`` itself)."""
    parts: list[str] = []
    for term in query.terms:
        word = term.literal
        if (
            term.field != "path"
            or term.invert
            or word is None
            or len(word) < 3
            or not word.isascii()
            or "\x00" in word
        ):
            continue
        for gram in dict.fromkeys(word[i : i + 3] for i in range(len(word) - 2)):
            forms = _forms(gram) if term.icase else [gram]
            parts.append("(" + " OR ".join(_fts_string(f) for f in forms) + ")")
    return " AND ".join(parts) if parts else None


def _forms(gram: str) -> list[str]:
    """``gram`` and each way of writing its ``i``s as ``İ``."""
    forms = [""]
    for c in gram:
        forms = [f + x for f in forms for x in ((c, "\u0130") if c == "i" else (c,))]
    return forms


def _fts_string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


DRIVE_UNDER = 100_000
"""Records the trigrams of a query's path words may find in the paths' index
(:data:`~engine.db.PATHS_INDEX`) for the query to be read through it, by row id; past that
a walk of the keys is the faster (ten million records: a word in 100 paths counted in 4 ms
through it against 1.9 s walked; ``.pdf``, in every path, 8 s against 1.6 s)."""


def drive(db: RecordDB, where: Where, query: Query) -> Where:
    """``where`` (``query`` compiled), read through the paths' index of ``db`` when it has
    one and the query's words over the path find fewer than :data:`DRIVE_UNDER` records there
    (a probe of the index: a few milliseconds)."""
    match = paths_match(query)
    if match is None or not db.has_paths_index():
        return where
    return driven_if_few(db.con, where, match)


def driven_if_few(con: sqlite3.Connection, where: Where, match: str) -> Where:
    """``where`` driven by ``match`` (:func:`driven_by`) when the paths' index, which the
    index at ``con`` has, finds fewer than :data:`DRIVE_UNDER` records for it."""
    probe = (
        f"SELECT count(*) FROM (SELECT rowid FROM {PATHS_INDEX}"
        f" WHERE {PATHS_INDEX} MATCH ? LIMIT ?)"
    )
    (found,) = con.execute(probe, (match, DRIVE_UNDER)).fetchone()
    return driven_by(where, match) if found < DRIVE_UNDER else where


def driven_by(where: Where, match: str) -> Where:
    """``where``, keeping only the records :data:`engine.db.PATHS_INDEX` finds for
    ``match`` (:func:`paths_match`): read by their row ids, a few, not by a walk of all."""
    sql = f"id IN (SELECT rowid FROM {PATHS_INDEX} WHERE {PATHS_INDEX} MATCH ?) AND ({where.sql})"
    return Where(sql, (match, *where.params), where.terms, where.texts, driven=True)


def _among(term: Term, values: frozenset[str], params: list[object]) -> str:
    """A term over a field whose every value is known: the values it keeps, as a list."""
    shown = (lambda v: v if v in VERDICTS else "") if term.field == "quality" else str
    kept = sorted(v for v in values if term.hit(shown(v)))
    params.extend(kept)
    column = "status" if term.field == "status" else f"coalesce({term.field}, '')"
    sql = f"{column} IN ({', '.join('?' * len(kept))})"
    return f"NOT ({sql})" if term.invert else sql


def _column(name: str) -> str:
    if name == "path":
        return "path"
    if name == "quality":
        return _QUALITY
    if name in _TEXT_COLUMNS:
        return f"coalesce({name}, '')"
    raise ValueError(f"not a text field: {name!r}")


def _term(term: Term, terms: list[Term], params: list[object]) -> str:
    column = _column(term.field)
    blob = term.field == "path"
    literal = term.literal
    if literal is not None and not blob and not _encodes(literal):
        sql = "0"  # a lone surrogate (a byte the command line could not decode): no text has one
    elif literal is not None and not term.icase:
        params.append(key_bytes(literal) if blob else literal)
        sql = f"instr({column}, ?) > 0"
    elif (
        literal is not None and literal.isascii() and "\x00" not in literal
    ):  # (LIKE ends at a NUL)
        terms.append(term)
        text = "CAST(path AS TEXT)" if blob else column
        params.append("%" + literal.translate(_LIKE_ESCAPES) + "%")
        # LIKE stops at a NUL, which no path holds and a foreign store's text might
        rare = (*_FOLDS_TO_ASCII, *(() if blob else ("\x00",)))
        folds = " OR ".join(f"instr({text}, {_char(c)}) > 0" for c in rare)
        sql = f"{text} LIKE ? ESCAPE '\\' OR (({folds}) AND {HIT}({len(terms) - 1}, {column}))"
    else:
        terms.append(term)
        sql = f"{HIT}({len(terms) - 1}, {column})"
    if term.field in _MISSING and not term.hit(None):
        # a record without the field keeps nothing the term asks: one test of the column
        # where the LIKE and its guards ran (the errors of ten million records: 1.7 s -> 0.6 s)
        sql = f"{term.field} IS NOT NULL AND ({sql})"
    return f"NOT ({sql})" if term.invert else sql


def _char(c: str) -> str:
    return "char(0)" if c == "\x00" else _quoted(c)


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _compare(compare: Compare, params: list[object]) -> str:
    column = compare.field  # size, chars, pages, ms: integers (pages NULL for none)
    sql = f"{column} IS NOT NULL AND {column} >= ?"
    params.append(compare.low)
    if compare.high is not None:
        sql += f" AND {column} <= ?"
        params.append(compare.high)
    return f"NOT ({sql})" if compare.invert else sql


__all__ = [
    "DRIVE_UNDER",
    "FEW",
    "HIT",
    "IN_TEXT",
    "Where",
    "compile_where",
    "drive",
    "driven_by",
    "driven_if_few",
    "known_values",
    "paths_match",
]
