"""``text:"words"`` in the query line: the model asks the engine which records' texts match,
and the term combines with every other."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.grep import matching_keys
from engine.query import Query, TextTerm
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from fixtures.gen._pdfwriter import text_pdf
from tui.loader import load_rows, rows_of
from tui.model import RecordModel

FILES: dict[str, str | bytes] = {
    "invoice.pdf": text_pdf(["Invoice 2024-117", "amount due"], ["total due 42 EUR"]),
    "notes.txt": "an invoice mentioned in passing\n",
    "other.txt": "nothing here\n",
    "Copy.txt": "an invoice mentioned in passing\n",
    "bad.pdf": b"%PDF-1.4 broken invoice",
}


def _records(out: Path) -> list[Record]:
    return Store(out).load_records()


def _model(records: list[Record], out: Path | None) -> RecordModel:
    data = b"".join(r.to_json() + b"\n" for r in sorted(records, key=lambda r: r.key))
    opened = rows_of(data)  # the engine's table of the lines, read as the app reads a store
    m = RecordModel()
    m.data = opened.table
    for chunk in load_rows(opened, 2, 2):
        m.extend(chunk.rows)
    if out is not None:  # as the app wires it: the engine answers from the store
        m.text_lookup = lambda term: matching_keys(Store(out), term.pattern)  # type: ignore[arg-type]
    return m


def _shown(m: RecordModel) -> list[str]:
    return [m.rows[m.rid_at(i)][1] for i in range(len(m.view))]  # type: ignore[index]


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in FILES.items():
        if isinstance(body, bytes):
            (root / name).write_bytes(body)
        else:
            (root / name).write_text(body)
    out = tmp_path / "store"
    sweep([root], SweepOptions(out=out, tools=ToolSet.empty(), workers=1))
    return root, out


def test_a_text_term_keeps_the_records_whose_text_matches(store: tuple[Path, Path]) -> None:
    _root, out = store
    m = _model(_records(out), out)
    m.set_query('text:"invoice"')
    assert _shown(m) == ["Copy.txt", "invoice.pdf", "notes.txt"]  # not bad.pdf: no text
    m.set_query('text:"Invoice"')  # smart case, as every term
    assert _shown(m) == ["invoice.pdf"]
    m.set_query('text:"invoice" mime:pdf')
    assert _shown(m) == ["invoice.pdf"]
    m.set_query('text:"amount due total"')  # across the page break
    assert _shown(m) == ["invoice.pdf"]
    m.set_query("text:'/due \\d+ eur/' !path:notes")  # quoted: a space and a backslash
    assert _shown(m) == ["invoice.pdf"]
    m.set_query('!text:"invoice"')
    assert _shown(m) == ["bad.pdf", "other.txt"]
    m.set_query('text:"invoice" status:error')
    assert _shown(m) == []
    assert m.view_counts()["all"] == 0


def test_a_text_term_that_means_nothing_says_so_and_filters_nothing(
    store: tuple[Path, Path],
) -> None:
    _root, out = store
    m = _model(_records(out), out)
    q = m.set_query("text:/(/ mime:pdf")
    assert q.error is not None and q.error.startswith("text: not a regular expression")
    assert _shown(m) == ["bad.pdf", "invoice.pdf"]
    assert Query.parse('text:""').error == "text: an empty pattern: give a word or more to look for"
    assert "text:" in (Query.parse("txt:x").error or "")  # listed among the fields


def test_without_a_store_to_ask_the_term_says_so_and_filters_nothing(
    store: tuple[Path, Path],
) -> None:
    _root, out = store
    m = _model(_records(out), None)
    q = m.set_query('text:"invoice" mime:pdf')
    assert q.error == "text: no store to search the texts of here (the term filters nothing)"
    assert _shown(m) == ["bad.pdf", "invoice.pdf"]


def test_the_answer_follows_the_store(store: tuple[Path, Path]) -> None:
    root, out = store
    m = _model(_records(out), out)
    asked: list[TextTerm] = []
    lookup = m.text_lookup
    assert lookup is not None
    m.text_lookup = lambda term: (asked.append(term), lookup(term))[1]
    m.set_query('text:"passing"')
    assert _shown(m) == ["Copy.txt", "notes.txt"]
    m.set_query('text:"passing" !path:zzz')  # the same term: not asked again
    assert len(asked) == 1
    (root / "notes.txt").write_text("rewritten without it\n")
    sweep([root], SweepOptions(out=out, tools=ToolSet.empty(), workers=1))
    m.apply([r for r in _records(out) if r.path == "notes.txt"])
    m.texts_changed()  # (the old answer filters until the new one comes, never asked here)
    assert _shown(m) == ["Copy.txt", "notes.txt"] and len(asked) == 1
    stale = m.unanswered(m.query)
    assert [t.value for t in stale] == ["passing"]
    m.prime_texts({t: lookup(t) for t in stale})  # (the worker's answer)
    m.set_query(m.query.text)
    assert _shown(m) == ["Copy.txt"]
    assert m.unanswered(m.query) == ()


def test_the_engine_answers_alike_with_and_without_the_index(store: tuple[Path, Path]) -> None:
    _root, out = store
    q = TextTerm.parse("invoice", False).pattern
    assert q is not None
    indexed = matching_keys(Store(out), q)
    for name in ("extract.db", "extract.db-wal", "extract.db-shm"):
        (out / name).unlink(missing_ok=True)
    assert matching_keys(Store(out), q) == indexed
    assert {p for _r, p in indexed} == {"Copy.txt", "invoice.pdf", "notes.txt"}


def test_answers_found_in_a_worker_are_taken_without_asking(store: tuple[Path, Path]) -> None:
    _root, out = store
    m = _model(_records(out), None)
    m.text_lookup = lambda term: pytest.fail("asked on the drawing thread")
    term = Query.parse('text:"passing"').searches[0]
    assert term.pattern is not None
    m.prime_texts({term: matching_keys(Store(out), term.pattern)})  # (the worker's answer)
    m.set_query('text:"passing"')
    assert _shown(m) == ["Copy.txt", "notes.txt"]
