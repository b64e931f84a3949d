"""The dashboard's model on its own: counts, filters, sorts, live changes, cursor keys."""

from __future__ import annotations

from engine.records import Record
from tui.loader import load_rows
from tui.model import Query, RecordModel

ROOT = "/srv/docs"


def rec(path: str, status: str = "ok", **kw: object) -> Record:
    """A record under the fixed test root."""
    return Record(root=ROOT, path=path, size=kw.pop("size", 10), mtime_ns=1, status=status, **kw)  # type: ignore[arg-type]


def model_of(records: list[Record]) -> RecordModel:
    """A model loaded the way the app loads a store: through the JSONL loader."""
    data = b"".join(r.to_json() + b"\n" for r in sorted(records, key=lambda r: r.key))
    m = RecordModel()
    m.data = data
    for chunk in load_rows(data, chunk_rows=2):
        m.extend(chunk.rows, chunk.starts)
    return m


def paths(m: RecordModel) -> list[str]:
    return [m.rows[m.rid_at(i)][1] for i in range(len(m.view))]  # type: ignore[index]


RECORDS = [
    rec("a/one.txt", chars=30, reused=True),
    rec("a/two.pdf", "error", reason="corrupt", error="bad xref", chars=0, size=5),
    rec("b/scan.pdf", "empty", reason="scanned", size=99),
    rec("b/old.doc", "unsupported", reason="needs_tool", needs=("antiword", "catdoc")),
    rec("c/big.bin", "skipped", reason="too_large", size=7),
    rec("c/notes.md", chars=12),
]


def test_counts_and_totals() -> None:
    m = model_of(RECORDS)
    assert len(m) == 6
    assert m.tab_counts() == {
        "all": 6,
        "ok": 2,
        "empty": 1,
        "unsupported": 1,
        "error": 1,
        "skipped": 1,
    }
    assert m.reasons["error/corrupt"] == 1
    assert m.reused == 1 and m.chars == 42
    assert m.groups("error") == [("corrupt", 1)]


def test_full_record_is_rebuilt_from_the_line() -> None:
    m = model_of(RECORDS)
    r = m.record(m.ids[(ROOT, "b/old.doc")])
    assert r is not None and r.needs == ("antiword", "catdoc")


def test_tab_and_query_filters_stick_together() -> None:
    m = model_of(RECORDS)
    m.set_query("pdf")
    assert paths(m) == ["a/two.pdf", "b/scan.pdf"]
    m.set_tab("error")
    assert paths(m) == ["a/two.pdf"]
    m.set_tab("all")
    assert m.query.text == "pdf" and len(m.view) == 2


def test_query_regex_invert_and_case() -> None:
    m = model_of(RECORDS)
    m.set_query(r"^c/.*\.md$")
    assert paths(m) == ["c/notes.md"]
    m.set_query("!pdf")
    assert "a/two.pdf" not in paths(m) and len(m.view) == 4
    m.set_query("ONE")
    assert paths(m) == []
    m.set_query("one")
    assert paths(m) == ["a/one.txt"]
    q = Query.parse("a[")
    assert q.error and q.matches("xa[y")


def test_sort_by_columns_and_reverse() -> None:
    m = model_of(RECORDS)
    m.set_sort("size")
    assert paths(m)[0] == "a/two.pdf" and paths(m)[-1] == "b/scan.pdf"
    m.set_sort("size")  # same column again: descending
    assert m.sort_reverse and paths(m)[0] == "b/scan.pdf"
    m.set_sort("status", reverse=False)
    statuses = [m.rows[m.rid_at(i)][2] for i in range(len(m.view))]  # type: ignore[index]
    assert statuses == sorted(statuses)


def test_apply_replaces_adds_removes_and_keeps_keys() -> None:
    m = model_of(RECORDS)
    m.set_tab("ok")
    cursor = m.ids[(ROOT, "c/notes.md")]
    changed = m.apply(
        [rec("a/one.txt", "error", reason="timeout"), rec("a/zzz.txt", chars=5)],
        removed=[(ROOT, "c/big.bin")],
    )
    assert len(changed) == 2
    assert m.tab_counts()["error"] == 2 and m.tab_counts()["skipped"] == 0
    assert paths(m) == ["a/zzz.txt", "c/notes.md"]  # the new key sorts in, out of id order
    assert m.position(cursor) == 1
    assert m.record(m.ids[(ROOT, "a/one.txt")]).reason == "timeout"  # type: ignore[union-attr]
    assert m.chars == 12 + 5


def test_apply_respects_a_sorted_view() -> None:
    m = model_of(RECORDS)
    m.set_sort("chars", reverse=True)
    m.apply([rec("d/huge.txt", chars=1000)])
    assert paths(m)[0] == "d/huge.txt"
    m.apply([rec("d/huge.txt", chars=1)])
    assert paths(m)[0] == "a/one.txt"
    assert sorted(m.view) == sorted(set(m.view)) and len(m.view) == 7
