"""The dashboard's model on its own: counts, filters, sorts, live changes, cursor keys."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from engine import dbread
from engine.records import Record
from engine.store import Store, read_jsonl
from tui.loader import Rows, load_rows, open_rows, rows_of
from tui.model import Query, RecordModel
from tui.poll import diff_store

ROOT = "/srv/docs"


def rec(path: str, status: str = "ok", **kw: object) -> Record:
    """A record under the fixed test root."""
    return Record(root=ROOT, path=path, size=kw.pop("size", 10), mtime_ns=1, status=status, **kw)  # type: ignore[arg-type]


def model_of(records: list[Record]) -> RecordModel:
    """A model loaded the way the app loads a store: the engine's table, in chunks."""
    data = b"".join(r.to_json() + b"\n" for r in sorted(records, key=lambda r: r.key))
    return load_source(data, 2)


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


# -- columns, loader and following ----------------------------------------------------------


def write_store(tmp_path: Path, records: list[Record], extra: bytes = b"") -> Store:
    store = Store(tmp_path / "store")
    store.out.mkdir(parents=True, exist_ok=True)
    lines = b"".join(r.to_json() + b"\n" for r in sorted(records, key=lambda r: r.key))
    store.jsonl_path.write_bytes(lines + extra)
    return store


def load_source(source: Rows | bytes, size: int | None = None) -> RecordModel:
    opened = rows_of(source) if isinstance(source, bytes) else source
    m = RecordModel()
    m.data = opened.table
    for chunk in load_rows(opened, size, size):
        m.extend(chunk.rows)
        m.note_bad(chunk.bad, chunk.bad_count)
    return m


def test_blocks_odd_lines_and_records_read_back(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(dbread, "FILE_BLOCK", 700)  # many blocks; some lines span two reads
    many = [rec(f"d/{i:03d}.txt", chars=i, error="x" * (i % 7) * 100) for i in range(60)]
    data = b"".join(r.to_json() + b"\n" for r in many)
    data = data.replace(b"\n", b"\n\n{torn\n", 1) + b'{"root": 1}\n[1, 2]\n'
    m = load_source(data, 7)  # many chunks
    assert len(m) == 60 and paths(m) == [r.path for r in many]
    # "{torn", '{"root": 1}', "[1, 2]", numbered in the whole file as the engine's reader does
    assert m.bad_lines == 3
    assert [str(b) for b in m.bad_first] == [str(b) for b in read_jsonl(data).bad]
    assert all(m.record(m.ids[r.key]) == r for r in many)
    assert list(m.rows) == [m.rows[i] for i in range(len(m.rows))]


def test_source_keeps_the_file_it_loaded(tmp_path: Path) -> None:
    store = write_store(tmp_path, RECORDS)
    source = open_rows(store)
    m = load_source(source)
    new = store.jsonl_path.with_suffix(".new")
    new.write_bytes(rec("z.txt").to_json() + b"\n")
    os.replace(new, store.jsonl_path)  # how the engine writes
    assert m.record(m.ids[(ROOT, "b/old.doc")]).needs == ("antiword", "catdoc")  # type: ignore[union-attr]


def test_diff_store_names_changed_and_added_keys_only(tmp_path: Path) -> None:
    store = write_store(tmp_path, RECORDS)
    m = load_source(open_rows(store))
    m.apply([rec("c/notes.md", chars=99)])  # shown live, differently from its line
    changed = [r for r in RECORDS if r.path not in ("a/two.pdf", "c/big.bin")]  # one removed
    changed += [rec("a/two.pdf", chars=7), rec("c/new.txt")]
    tmp = tmp_path / "next.jsonl"
    tmp.write_bytes(b"".join(r.to_json() + b"\n" for r in sorted(changed, key=lambda r: r.key)))
    os.replace(tmp, store.jsonl_path)
    message = diff_store(store, m)
    assert message.changed == {(ROOT, "a/two.pdf"), (ROOT, "c/new.txt"), (ROOT, "c/notes.md")}
    m.clear()
    m.data = message.data.table
    m.extend(message.chunk.rows)
    assert len(m) == 6 and m.record(m.ids[(ROOT, "a/two.pdf")]).chars == 7  # type: ignore[union-attr]


def test_unsorted_store_with_a_key_twice_keeps_the_later_line() -> None:
    lines = [rec("b.txt"), rec("a.txt", chars=1), rec("c.txt"), rec("a.txt", chars=2)]
    m = load_source(b"".join(r.to_json() + b"\n" for r in lines))
    assert len(m) == 3 and paths(m) == ["a.txt", "b.txt", "c.txt"]
    assert m.record(m.ids[(ROOT, "a.txt")]).chars == 2  # type: ignore[union-attr]
    assert m.chars == 2 and m.tab_counts()["ok"] == 3


def test_sort_ties_follow_the_key_and_live_changes_resort() -> None:
    m = model_of([rec(f"p{i}", chars=i % 2) for i in range(6)])
    m.set_sort("chars")
    assert paths(m) == ["p0", "p2", "p4", "p1", "p3", "p5"]
    m.apply([rec("p0", chars=5), rec("a0", chars=1)])
    m.set_tab("ok")  # a refilter after a change: the cached order is not stale
    assert paths(m) == ["p2", "p4", "a0", "p1", "p3", "p5", "p0"]
    m.apply([], removed=[(ROOT, "p3")])
    assert (ROOT, "p3") not in m.ids and m.rows[m.rows.__len__() - 1] is not None
    assert list(m.rows).count(None) == 1 and len(m) == 6


def test_literal_and_regex_masks_agree_with_matches() -> None:
    names = ["A/Report.PDF", "b/report.pdf", "c/notes.md", "d/ÉTÉ.txt"]
    for text in ["report", "Report", "!pdf", r"\.(md|txt)$", "été", "a["]:
        q = Query.parse(text)
        lower = [p.lower() for p in names]
        assert list(q.mask(lambda _f: names, lower)) == [int(q.matches(p)) for p in names], text


def test_field_terms_regex_inversion_and_quoting() -> None:
    m = model_of(RECORDS)
    m.set_query("reason:corrupt mime:pdf")
    assert paths(m) == []  # the test records have no MIME type
    m.set_query("reason:corrupt")
    assert paths(m) == ["a/two.pdf"]
    m.set_query("status:error !path:tmp/")
    assert paths(m) == ["a/two.pdf"]
    m.set_query('error:"bad xref"')
    assert paths(m) == ["a/two.pdf"]
    m.set_query("!reason:. path:b/")  # no reason at all (a missing value is empty text)
    assert paths(m) == []
    m.set_query("status:^(empty|skipped)$")
    assert paths(m) == ["b/scan.pdf", "c/big.bin"]
    assert m.view_counts() == {"all": 2, "ok": 0, "empty": 1, "unsupported": 0,
                               "error": 0, "skipped": 1}  # fmt: skip
    m.set_query("nosuch:thing")  # not a field: it filters nothing and the query says why
    assert len(paths(m)) == len(m) and "no field nosuch:" in (m.query.error or "")
    m.set_query("")
    assert m.view_counts() == m.tab_counts()


def test_live_changes_follow_a_field_query() -> None:
    m = model_of(RECORDS)
    m.set_query("reason:corrupt")
    m.apply([rec("d/new.docx", "error", reason="corrupt", error="Bad CRC-32")])
    assert paths(m) == ["a/two.pdf", "d/new.docx"]
    m.apply([rec("a/two.pdf", chars=5)])  # fixed: it leaves the view
    assert paths(m) == ["d/new.docx"]


def test_live_updates_keep_the_order_within_a_sort() -> None:
    same = [rec(f"s/{i}.txt", "error", reason="corrupt", error="x") for i in range(6)]
    m = model_of(same)
    m.set_sort("reason")
    before = paths(m)
    m.apply([same[2].evolve(error="y", ms=5)])  # its sort value is unchanged: it stays put
    assert paths(m) == before
    m.apply([same[2].evolve(reason="timeout")])  # a new value: it moves to its place
    assert paths(m)[-1] == "s/2.txt"


def test_needs_are_carried_from_any_line_and_live_changes() -> None:
    """The tools a record waits on, whatever the line holds: a container's list, none, a
    foreign store's ``null`` or string (the block then takes the lenient way)."""

    def line(path: str, status: str, needs: object, reason: str | None = None) -> bytes:
        d = {"root": ROOT, "path": path, "status": status, "reason": reason, "needs": needs}
        return orjson.dumps(d) + b"\n"

    data = b"".join(
        [
            line("a.zip", "ok", ["antiword", "catdoc"]),
            line("b.doc", "unsupported", ["antiword"], "needs_tool"),
            line("c.txt", "ok", []),
            line("d.png", "unsupported", None, "needs_tool"),
            line("e.pdf", "empty", "tesseract", "scanned"),
        ]
    )
    m = load_source(data)
    assert len(m) == 5
    assert m.waiting() == [
        ((ROOT, "a.zip"), ("antiword", "catdoc")),
        ((ROOT, "b.doc"), ("antiword",)),
        ((ROOT, "e.pdf"), ("tesseract",)),  # a string: one tool, as the engine reads any line
    ]
    m.apply([rec("a.zip", "ok"), rec("f.eml", "ok", needs=("tesseract",))])
    assert [key[1] for key, _ in m.waiting()] == ["b.doc", "e.pdf", "f.eml"]


def test_number_terms_filter_count_and_follow_live_changes() -> None:
    m = model_of([
        rec("a/big.pdf", size=20 << 20, chars=50, ms=9000, pages=3),
        rec("a/small.pdf", size=10, chars=5000, ms=10, pages=12),
        rec("b/big.txt", "error", size=30 << 20, ms=6000),
        rec("b/note.txt", size=1024, chars=99),
    ])  # fmt: skip
    m.set_query("size:>10M")
    assert paths(m) == ["a/big.pdf", "b/big.txt"]
    assert m.view_counts()["all"] == 2 and m.view_counts()["error"] == 1
    m.set_query("size:>10M chars:<100 ms:>5000 status:ok")
    assert paths(m) == ["a/big.pdf"]
    m.set_query("size:1K")  # a bare number is "=", K = 1024
    assert paths(m) == ["b/note.txt"]
    m.set_query("pages:<5")  # a text has no pages: no comparison keeps it, "!" does
    assert paths(m) == ["a/big.pdf"]
    m.set_query("!pages:<5")
    assert paths(m) == ["a/small.pdf", "b/big.txt", "b/note.txt"]
    m.set_sort("size")
    m.set_query("size:>=1k !path:pdf")
    assert paths(m) == ["b/note.txt", "b/big.txt"]
    m.apply([rec("b/note.txt", size=5), rec("c/new.bin", size=4096)])  # live: in and out
    assert paths(m) == ["c/new.bin", "b/big.txt"]
    m.set_query("size:>lots")  # not a number: it filters nothing and says why
    assert len(paths(m)) == len(m) and "not a size" in (m.query.error or "")
