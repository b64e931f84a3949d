"""A watching sweeper holds no record in memory: its index answers what each batch asks, and
answers it as the records in memory would have."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.db import RecordDB
from engine.dbindex import IndexedRecords
from engine.index import RecordIndex, Tally
from engine.records import Record, Status
from engine.store import Store
from engine.sweep import Sweeper
from tests.engine.watchkit import watched

_names = st.lists(
    st.text(alphabet="ab é/\udcff\udc80z\u00c0-_.", min_size=1, max_size=6).filter(
        lambda n: all(part not in ("", ".", "..") for part in n.split("/"))
    ),
    min_size=0,
    max_size=12,
    unique=True,
)


def _record(root: str, path: str, i: int) -> Record:
    ok = i % 3 != 0
    return Record(
        root=root,
        path=path,
        size=10 + i % 4,
        mtime_ns=i,
        status=Status.OK if ok else Status.ERROR,
        sha256=f"{i % 5:064x}",
        mime="text/plain",
        reason=None if ok else "corrupt",
        chars=i,
        needs=("pdftotext",) if i % 4 == 1 else (),
    )


@settings(max_examples=60, deadline=None)
@given(names=_names, rels=st.lists(st.text(alphabet="ab é/\udcffz", max_size=4), max_size=4))
def test_the_index_answers_as_the_records_in_memory_do(names: list[str], rels: list[str]) -> None:
    import tempfile

    records = [_record("/r", n, i) for i, n in enumerate(sorted(names))]
    memory = RecordIndex(records)
    with tempfile.TemporaryDirectory() as d, RecordDB.open_writer(Path(d) / "x.db") as db:
        db.put(records)
        served = IndexedRecords(lambda: db, Tally.of(records))
        assert served.keys_under("/r", rels) == memory.keys_under("/r", rels)
        assert served.referenced_texts() == memory.referenced_texts()
        for r in records:
            assert served.records[r.key] == r and r.key in served.records
            assert served.has_text_refs(r.sha256 or "") == memory.has_text_refs(r.sha256 or "")
            same = served.same_content(r.sha256 or "", r.path)
            assert same is not None and same.sha256 == r.sha256
            # the one with text first, as the records in memory prefer it
            assert same.has_text == (memory.same_content(r.sha256 or "", r.path) or r).has_text
        assert list(served.records) == sorted(r.key for r in records)
        assert list(served.records.values()) == sorted(records, key=lambda r: r.key)
        assert ("/r", "not there") not in served.records


def test_a_watching_sweeper_holds_no_record_and_keeps_every_count(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(6):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    with watched(root, False) as w:
        sweeper = w.session.sweeper
        assert isinstance(sweeper.index, IndexedRecords)  # nothing held between batches
        (root / "new.txt").write_text("a new file\n")
        (root / "copy.txt").write_text("file 1\n")  # the content of another file
        w.wait("the new files", lambda r: {"new.txt", "copy.txt"} <= set(r))
        (root / "f0.txt").unlink()
        (root / "f2.txt").write_text("edited\n")
        w.wait("the change", lambda r: "f0.txt" not in r and r["f2.txt"].chars == 7)
        with w.session.lock:
            held = dict(sweeper.records)
            tally = sweeper.index.tally
            assert isinstance(sweeper.index, IndexedRecords)
        expect = Tally.of(list(held.values()))
        assert (tally.files, tally.counts, tally.chars) == (
            expect.files,
            expect.counts,
            expect.chars,
        )
        assert {p for _r, p in held} == {"f1.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt",
                                          "new.txt", "copy.txt"}  # fmt: skip
        out = w.session.store.out
    assert {r.key: r for r in Store(out).load_records()} == held


def test_a_watcher_started_again_on_an_unchanged_folder_loads_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for i in range(6):
        (root / f"f{i}.txt").write_text(f"file {i}\n")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 not really")  # an error: read again each sweep
    an_hour_ago = time.time() - 3600  # (a file changed as a sweep starts is never judged)
    for f in root.iterdir():
        os.utime(f, (an_hour_ago, an_hour_ago))
    for _ in range(2):  # a cold sweep, then one that marks every record reused
        with watched(root, False) as w:
            first = w.records()
            out = w.session.store.out
    assert (out / "extract.stat").is_file()  # what the next sweep is judged by

    loads: list[str] = []
    for name in ("_load", "_heavy"):  # the sweeper's two ways to hold every record
        real = getattr(Sweeper, name)

        def counted(self: Sweeper, _real: Any = real, _n: str = name) -> Any:
            loads.append(_n)
            return _real(self)

        monkeypatch.setattr(Sweeper, name, counted)
    with watched(root, False) as w:
        sweeper = w.session.sweeper
        assert w.session.store.out == out
        assert isinstance(sweeper.index, IndexedRecords)
        assert loads == []  # the quick sweep judged the folder; the index serves the records
        assert sweeper.index.tally.files == len(first) == 7
        (root / "new.txt").write_text("a new file\n")
        (root / "f0.txt").unlink()
        w.wait("the change", lambda r: "new.txt" in r and "f0.txt" not in r)
        with w.session.lock:
            held = dict(sweeper.records)
            tally = sweeper.index.tally
        expect = Tally.of(list(held.values()))
        assert (tally.files, tally.counts, tally.chars) == (
            expect.files,
            expect.counts,
            expect.chars,
        )
        assert loads == []
    monkeypatch.undo()
    assert {r.key: r for r in Store(out).load_records()} == held
    summary = Store(out).load_summary()
    assert summary is not None and summary.files == 7
    assert {s: n for s, n in summary.counts.items() if n} == {"ok": 6, "error": 1}
