"""A watching sweeper holds no record in memory: its index answers what each batch asks, and
answers it as the records in memory would have."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.db import RecordDB
from engine.dbindex import IndexedRecords, rows_of
from engine.events import Event, RecordsChanged, SweepFinished, SweepStarted
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


_roots = st.lists(
    st.text(alphabet="/ab é\udcff\udc80", max_size=5).map(lambda r: "/" + r),
    max_size=5,
    unique=True,
)


@settings(max_examples=60, deadline=None)
@given(roots=_roots, names=_names, data=st.data())
def test_the_index_gives_its_roots_and_each_roots_records_in_order(
    roots: list[str], names: list[str], data: st.DataObject
) -> None:
    """What the stat index judges a root at a time: every root that has a record (one
    search a root), and its records in path order, stopping where the caller stops."""
    import tempfile

    records = [
        _record(root, n, i)
        for i, (root, n) in enumerate(
            (r, n) for r in roots for n in names if data.draw(st.booleans())
        )
    ]
    with tempfile.TemporaryDirectory() as d, RecordDB.open_writer(Path(d) / "x.db") as db:
        db.put(records)
        served = IndexedRecords(lambda: db, Tally.of(records)).records
        assert served.roots() == sorted({r.root for r in records})
        for root in [*roots, "/elsewhere"]:
            want = sorted((r for r in records if r.root == root), key=lambda r: r.key)
            assert list(served.under(root)) == want
            first = next(served.under(root), None)
            assert first == (want[0] if want else None)


@settings(max_examples=60, deadline=None)
@given(names=_names, rels=st.lists(st.text(alphabet="ab é/\udcffz", max_size=4), max_size=4))
@example(names=[" "], rels=[" /"])  # a file " ", asked for what is under the folder " /"
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

    loads = _count_loads(monkeypatch)
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


def _count_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sweeper's two ways to hold every record, counted as they are called."""
    loads: list[str] = []
    for name in ("_load", "_heavy"):
        real = getattr(Sweeper, name)

        def counted(self: Sweeper, _real: Any = real, _n: str = name) -> Any:
            loads.append(_n)
            return _real(self)

        monkeypatch.setattr(Sweeper, name, counted)
    return loads


def test_a_watcher_started_on_a_folder_changed_meanwhile_merges_the_walk_with_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    for i in range(8):
        (root / ("sub" if i % 2 else "") / f"f{i}.txt").write_text(f"file {i}\n")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 not really")  # an error: read again each sweep
    an_hour_ago = time.time() - 3600
    for f in [*root.iterdir(), *(root / "sub").iterdir()]:
        os.utime(f, (an_hour_ago, an_hour_ago))
    for _ in range(2):  # a cold sweep, then one that marks every record reused
        with watched(root, False) as w:
            out = w.session.store.out
    # changed while nothing watched: an edit, a new file, a deletion, a new folder
    (root / "f0.txt").write_text("edited while away\n")
    (root / "sub" / "new.txt").write_text("new while away\n")
    (root / "sub" / "f1.txt").unlink()
    (root / "later").mkdir()
    (root / "later" / "x.txt").write_text("x\n")

    loads = _count_loads(monkeypatch)
    with watched(root, False) as w:
        sweeper = w.session.sweeper
        assert isinstance(sweeper.index, IndexedRecords)
        assert loads == []  # the walk was merged with the index, no record loaded
        finished = [e for e in w.events if isinstance(e, SweepFinished)]
        assert finished and finished[0].full
        # only what differs was looked at: the three changes and the error read again
        assert finished[0].reused == 7 - 1  # (f1 gone, f0 edited)
        records = w.records()
        assert set(records) == {"f0.txt", "f2.txt", "f4.txt", "f6.txt", "sub/f3.txt",
                                "sub/f5.txt", "sub/f7.txt", "sub/new.txt", "later/x.txt",
                                "bad.pdf"}  # fmt: skip
        assert records["f0.txt"].chars == len("edited while away\n")
        assert records["bad.pdf"].status == "error"
        (root / "f2.txt").unlink()  # and it watches on
        w.wait("the deletion", lambda r: "f2.txt" not in r)
        with w.session.lock:
            held = dict(sweeper.records)
            tally = sweeper.index.tally
        expect = Tally.of(list(held.values()))
        assert (tally.files, tally.counts, tally.chars, tally.reasons) == (
            expect.files,
            expect.counts,
            expect.chars,
            expect.reasons,
        )
        assert loads == []
    monkeypatch.undo()
    assert {r.key: r for r in Store(out).load_records()} == held
    summary = Store(out).load_summary()
    assert summary is not None and summary.files == 9


@settings(max_examples=80, deadline=None)
@given(
    names=_names,
    extra=_names,
    data=st.data(),
)
def test_the_merge_of_a_walk_with_the_index_looks_at_exactly_what_differs(
    names: list[str], extra: list[str], data: st.DataObject
) -> None:
    import tempfile

    from engine.merge import merge
    from engine.walk import Listing

    records = [
        _record("/r", n, i).evolve(reused=data.draw(st.booleans()))
        for i, n in enumerate(sorted(names))
    ]
    by_path = {r.path: r for r in records}
    # the walk: some of the records' files (as they are, or changed), and files of none
    listing = Listing("/r")
    found = [n for n in names if data.draw(st.booleans())]
    kinds: dict[str, str] = {}
    for path in [*found, *(n for n in extra if n not in by_path)]:
        r = by_path.get(path)
        kind = data.draw(st.sampled_from(["same", "resized", "touched", "odd"])) if r else "new"
        kinds[path] = kind
        size = r.size if r else 5
        listing.paths.append(path)
        listing.sizes.append(size + (kind == "resized"))
        listing.mtimes.append((r.mtime_ns if r else 0) + (kind == "touched"))
        if kind == "odd":
            listing.odd[len(listing.paths) - 1] = ("link", "")
    texts = {r.sha256 for r in records if data.draw(st.booleans())} - {None}

    def keeper(r: Record) -> tuple[str, str, bool] | None:
        if r.chars % 5 == 0 or not r.reused:  # (as the plan's: a record not reused is rewritten)
            return None
        return ("file", "", r.status == Status.ERROR)

    def keeps(r: Record) -> bool:
        judged = keeper(r)
        return judged is not None and not judged[2] and (not r.has_text or r.sha256 in texts)

    marking = data.draw(st.booleans())
    handed: list[Record] = []
    with tempfile.TemporaryDirectory() as d, RecordDB.open_writer(Path(d) / "x.db") as db:
        db.put(records)
        merged = merge(
            [listing],
            lambda root: rows_of(db, root),  # type: ignore[arg-type]
            keeper,
            texts,
            mark=handed.append if marking else None,
        )
    same = {p for p, k in kinds.items() if k == "same"}
    kept = {p for p in same if keeps(by_path[p])}
    # what the sweep would change only by its flag: handed on flagged, or (no mark) looked at
    marked = {
        p
        for p in same - kept
        if marking and not by_path[p].reused and keeps(by_path[p].evolve(reused=True))
    }
    assert set(merged.only.get("/r", [])) == (set(by_path) | set(kinds)) - kept - marked
    assert len(merged.only.get("/r", [])) == len(set(merged.only.get("/r", [])))
    assert handed == [by_path[p].evolve(reused=True) for p in sorted(marked)]
    assert (merged.kept, merged.marked) == (len(kept) + len(marked), len(marked))
    assert merged.files == len(listing.paths)
    # the tally counts the records as they are after the merge: the marked ones flagged
    expect = Tally.of([r.evolve(reused=True) if r.path in marked else r for r in records])
    assert (
        merged.tally.files,
        merged.tally.counts,
        merged.tally.chars,
        merged.tally.reused,
    ) == (expect.files, expect.counts, expect.chars, expect.reused)


def test_the_sweep_after_a_cold_one_flags_every_record_reused_without_loading_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sweep after a cold one changes every record by its ``reused`` flag alone:
    the merge writes each back flagged, no file is given to a run, nothing is loaded; the
    store is what a sweep that loads its records leaves, and the next sweep is quick."""
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet

    root = tmp_path / "root"
    root.mkdir()
    for i in range(12):
        (root / f"f{i:02d}.txt").write_text(f"file {i}\n")
    (root / "empty.txt").write_bytes(b"")
    (root / "bad.pdf").write_bytes(b"%PDF-1.4 not really\n")  # an error: read again
    an_hour_ago = time.time() - 3600
    for f in root.iterdir():
        os.utime(f, (an_hour_ago, an_hour_ago))

    events: list[Event] = []

    def sweep(out: Path, **kw: bool) -> tuple[list[str], dict[str, Record], Any]:
        loads = _count_loads(monkeypatch)
        opts = SweepOptions(out=out, tools=ToolSet.empty(), workers=1)
        events.clear()
        with Sweeper([root], opts, events.append, **kw) as sweeper:  # type: ignore[arg-type]
            result = sweeper.run()
        monkeypatch.undo()
        return loads, {r.path: r for r in Store(out).load_records()}, result

    sweep(tmp_path / "served", quick=True, served=True)  # cold
    loads, records, result = sweep(tmp_path / "served", quick=True, served=True)
    assert loads == [] and result.reused == 12  # (as a run counts: files with a byte)
    # told as a run tells its records, inside the sweep: the dashboard's rows take them
    kinds = [type(e) for e in events if isinstance(e, SweepStarted | RecordsChanged)]
    assert kinds[0] is SweepStarted and kinds.count(SweepStarted) == 1
    told = {r.path: r for e in events if isinstance(e, RecordsChanged) for r in e.records}
    assert {p for p, r in told.items() if r.reused} == set(records) - {"bad.pdf"}
    sweep(tmp_path / "loaded")  # the same two sweeps, each loading the records
    _, expect, expect_result = sweep(tmp_path / "loaded")
    assert all(r.reused for p, r in records.items() if p != "bad.pdf")
    strip = {"ms": 0, "root": ""}
    assert {p: r.evolve(**strip) for p, r in records.items()} == {
        p: r.evolve(**strip) for p, r in expect.items()
    }
    served, loaded = (Store(tmp_path / n).load_summary() for n in ("served", "loaded"))
    assert served is not None and loaded is not None
    assert (served.files, served.counts, served.reused) == (
        loaded.files, loaded.counts, loaded.reused,
    )  # fmt: skip
    assert result.reused == expect_result.reused
    served_calls: list[object] = []
    real_served = Sweeper._served
    monkeypatch.setattr(Sweeper, "_served", lambda s: served_calls.append(s) or real_served(s))
    loads, again, result = sweep(tmp_path / "served", quick=True, served=True)
    assert loads == [] and served_calls == [] and result.quick  # the stat index was left
    assert again == records


def test_a_sweep_where_most_files_differ_loads_the_records_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import merge
    from engine.sweep import SweepOptions
    from engine.tools import ToolSet

    root = tmp_path / "root"
    root.mkdir()
    for i in range(12):
        (root / f"f{i:02d}.txt").write_text(f"file {i}\n")
    an_hour_ago = time.time() - 3600
    for f in root.iterdir():
        os.utime(f, (an_hour_ago, an_hour_ago))
    opts = SweepOptions(tools=ToolSet.empty(), workers=1)

    def sweep() -> tuple[list[str], dict[str, Record]]:
        loads = _count_loads(monkeypatch)
        with Sweeper([root], opts, quick=True, served=True) as sweeper:
            sweeper.run()
            out = sweeper.store.out
        monkeypatch.undo()
        return loads, {r.path: r for r in Store(out).load_records()}

    monkeypatch.setattr(merge, "SAMPLE", 4)
    sweep()  # cold: every record new, none reused
    monkeypatch.setattr(merge, "SAMPLE", 4)
    loads, records = sweep()  # every record flagged reused by the merge
    assert loads == [] and all(r.reused for r in records.values())
    a_minute_ago = time.time() - 60
    for f in root.iterdir():  # touched: every file hashed again
        os.utime(f, (a_minute_ago, a_minute_ago))
    monkeypatch.setattr(merge, "SAMPLE", 4)
    loads, records = sweep()  # most differ: loaded, not merged
    assert loads == ["_load"] and len(records) == 12
    (root / "f03.txt").write_text("edited\n")
    monkeypatch.setattr(merge, "SAMPLE", 4)
    loads, records = sweep()  # one file of twelve: merged with the index
    assert loads == [] and records["f03.txt"].chars == len("edited\n")
    assert len(records) == 12
