"""Watch mode with a real observer on a temporary folder: each test natively and by polling.

Every wait is bounded and polls the store as a reader would (``Store.load_records``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import history
from engine.records import Status
from tests.engine.watchkit import Watched, no_threads_left, watching

# watchdog's inotify thread warns when the kernel reuses a watch descriptor for a new folder
# (the store's own extract/<aa>/); under "warnings are errors" that would kill its thread.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


@pytest.fixture(autouse=True)
def _threads_stopped() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    no_threads_left(before)


@pytest.fixture(params=[False, True], ids=["native", "polling"])
def w(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Watched]:
    # No history: these tests hold that a text no record names goes. The records a change
    # replaced, and their texts, are kept on purpose by default (tests/engine/test_history.py).
    monkeypatch.setenv(history.VERSIONS_ENV, "0")
    root = tmp_path / "root"
    root.mkdir()
    yield from watching(root, poll=request.param)


def _text(w: Watched, path: str) -> str:
    rec = w.records()[path]
    assert rec.sha256 is not None
    return w.session.store.read_text(rec.sha256)


def test_create(w: Watched) -> None:
    (w.root / "a.txt").write_text("alpha\n")
    recs = w.wait("a.txt", lambda r: "a.txt" in r)
    assert recs["a.txt"].status == Status.OK
    assert _text(w, "a.txt") == "alpha\n"


def test_modify_replaces_the_text(w: Watched) -> None:
    (w.root / "a.txt").write_text("one\n")
    old = w.wait("a.txt", lambda r: "a.txt" in r)["a.txt"].sha256
    (w.root / "a.txt").write_text("two, longer\n")
    w.wait("new content", lambda r: r["a.txt"].sha256 != old)
    assert _text(w, "a.txt") == "two, longer\n"
    # The promise: a record is visible only with its text. The old text stays while
    # extract.jsonl still names it (the file follows the index once changes settle), and
    # goes once the file no longer does: no orphan text is left behind.
    assert old is not None
    w.until("the old text gone", lambda: not w.session.store.has_text(old))
    assert w.jsonl()["a.txt"].sha256 != old


def test_atomic_save_is_one_change_and_the_temp_file_never_a_record(w: Watched) -> None:
    (w.root / "doc.txt").write_text("draft\n")
    old = w.wait("doc.txt", lambda r: "doc.txt" in r)["doc.txt"].sha256
    temp = w.root / "doc.txt.save-3f9a"  # not an ignored name: the rename alone hides it
    temp.write_text("final\n")
    os.replace(temp, w.root / "doc.txt")
    w.wait("saved content", lambda r: r["doc.txt"].sha256 != old)
    assert _text(w, "doc.txt") == "final\n"
    assert not w.ever_recorded("doc.txt.save-3f9a")


def test_move_of_a_file_reuses_its_text(w: Watched) -> None:
    (w.root / "a.txt").write_text("moving text\n")
    w.wait("a.txt", lambda r: "a.txt" in r)
    (w.root / "sub").mkdir()
    mark = w.mark()
    os.rename(w.root / "a.txt", w.root / "sub" / "b.txt")
    recs = w.wait("the move", lambda r: "sub/b.txt" in r and "a.txt" not in r)
    assert recs["sub/b.txt"].reused
    assert w.extracted(mark) == 0
    assert _text(w, "sub/b.txt") == "moving text\n"


def test_move_of_a_folder_in_out_and_within(w: Watched, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(3):
        (outside / f"f{i}.txt").write_text(f"file {i}\n")
    os.rename(outside, w.root / "d")  # a whole folder moved in
    names = {f"d/f{i}.txt" for i in range(3)}
    w.wait("folder moved in", lambda r: names <= set(r))
    mark = w.mark()
    os.rename(w.root / "d", w.root / "e")  # moved within: nothing read again
    moved = {n.replace("d/", "e/") for n in names}
    recs = w.wait("folder moved", lambda r: moved <= set(r) and not names & set(r))
    assert all(recs[n].reused for n in moved)
    assert w.extracted(mark) == 0
    os.rename(w.root / "e", tmp_path / "gone")  # moved out: records and texts go
    w.wait("folder moved out", lambda r: not moved & set(r))
    w.until("texts dropped", lambda: not list(w.session.store.text_hashes()))


def test_delete_removes_record_and_unreferenced_text(w: Watched) -> None:
    (w.root / "a.txt").write_text("same\n")
    (w.root / "b.txt").write_text("same\n")
    (w.root / "c.txt").write_text("only c\n")
    recs = w.wait("three files", lambda r: {"a.txt", "b.txt", "c.txt"} <= set(r))
    shared, own = recs["a.txt"].sha256, recs["c.txt"].sha256
    assert shared is not None and own is not None
    (w.root / "a.txt").unlink()
    (w.root / "c.txt").unlink()
    w.wait("deletes", lambda r: set(r) == {"b.txt"})
    w.until("c.txt's text dropped", lambda: not w.session.store.has_text(own))
    assert w.session.store.has_text(shared)  # b.txt still refers to it


def test_ignored_temp_files_are_never_recorded(w: Watched) -> None:
    junk = ["notes.txt~", ".#notes.txt", ".notes.txt.swp", "~$report.docx", "x.tmp", "4913"]
    for name in junk:
        (w.root / name).write_text("junk\n")
    (w.root / ".quarryignore").write_text("private/\n")
    (w.root / "private").mkdir()
    (w.root / "private" / "secret.txt").write_text("hidden\n")
    (w.root / "sentinel.txt").write_text("after the junk\n")
    recs = w.wait("sentinel", lambda r: "sentinel.txt" in r)
    assert set(recs) == {"sentinel.txt"}
    assert not any(w.ever_recorded(n) for n in [*junk, "private/secret.txt"])


def test_store_folder_changes_trigger_nothing(w: Watched) -> None:
    (w.root / "a.txt").write_text("a\n")
    w.wait("a.txt", lambda r: "a.txt" in r)
    mark = w.mark()
    (w.session.store.out / "stray.txt").write_text("not a document\n")
    (w.root / "b.txt").write_text("b\n")
    w.wait("b.txt", lambda r: "b.txt" in r)
    assert all(".quarry" not in p for b in w.batches(mark) for p in b.roots)
    assert not any(".quarry" in p for p in w.records())


def test_the_watching_notice_counts_its_folders_in_words(w: Watched) -> None:
    """ "watching 1 folder(s) natively" was in the dashboard's activity log (issue 25)."""
    from engine.events import Notice, NoticeKind

    said = [e.message for e in w.events if isinstance(e, Notice) and e.kind is NoticeKind.WATCHING]
    assert said and re.fullmatch(r"watching 1 folder (natively|by polling every \S+ s)", said[0])
