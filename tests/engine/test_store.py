"""The store survives crashes and refuses a second writer."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import StoreLocked
from engine.records import Record, Summary
from engine.store import Store, atomic_write, parse_jsonl
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet

QUARRY = [sys.executable, "-m", "engine"]


def _run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*QUARRY, *args], capture_output=True, text=True, timeout=120, **kw)  # type: ignore[call-overload]


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    atomic_write(target, b"one")
    atomic_write(target, [b"tw", b"o"])
    assert target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_records_round_trip_through_jsonl(tmp_path: Path) -> None:
    rec = Record(
        root="/r",
        path="a b/ü.txt",
        size=3,
        mtime_ns=5,
        status="error",
        reason="corrupt",
        error='bad "quote"\nline',
        needs=("pdftotext",),
    )
    store = Store(tmp_path)
    with store.writer():
        store.write_records([rec])
    assert store.load_records() == [rec]


def test_summary_round_trips(tmp_path: Path) -> None:
    summary = Summary(roots=("/r",), files=2, counts={"ok": 2}, tools_missing={"tesseract": 1})
    store = Store(tmp_path)
    with store.writer():
        store.write_summary(summary)
    assert store.load_summary() == replace(summary, store=str(tmp_path))  # (where it is)


def test_second_writer_in_process_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.writer(), pytest.raises(StoreLocked, match="in use"), Store(tmp_path).writer():
        pass


def test_second_writer_gets_exit_1_and_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    store = Store(tmp_path / ".quarry")
    with store.writer():
        proc = _run("sweep", str(tmp_path))
    assert proc.returncode == 1
    assert "in use by another quarry process" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_sigkill_mid_sweep_leaves_the_previous_store(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(20):
        (root / f"first{i}.txt").write_text(f"first {i}\n")
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    out = root / ".quarry"
    jsonl_before = (out / "extract.jsonl").read_bytes()
    summary_before = (out / "extract.summary.json").read_bytes()
    texts_before = len(list((out / "extract").rglob("*.txt")))
    for i in range(1500):
        (root / f"more{i:04}.txt").write_text(f"more text {i}\n" * 5)
    proc = subprocess.Popen([*QUARRY, "sweep", "-q", str(root)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((out / "extract").rglob("*.txt"))) > texts_before + 50:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert (out / "sweep.dirty").exists(), "a killed sweep leaves its marker for the next GC"
    assert (out / "extract.jsonl").read_bytes() == jsonl_before
    assert (out / "extract.summary.json").read_bytes() == summary_before
    assert len(parse_jsonl(jsonl_before)) == 20
    # The next sweep takes the lock again and finishes the job, leaving no orphan texts.
    result = sweep([root], SweepOptions(tools=ToolSet.empty()))
    records = Store(out).load_records()
    assert len(records) == 1520 and result.summary.files == 1520
    assert not (out / "sweep.dirty").exists()
    shas = {r.sha256 for r in records if r.has_text}
    assert {p.stem for p in (out / "extract").rglob("*.txt")} == shas


def test_a_sweep_syncs_the_stores_file_system_once_not_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.store as store_mod

    synced: list[int] = []

    def syncfs(fd: int) -> int:
        synced.append(os.fstat(fd).st_dev)
        return 0

    def no_sync() -> None:
        raise AssertionError("os.sync flushes every file system of the machine")

    monkeypatch.setattr(store_mod, "_syncfs", lambda: syncfs)
    monkeypatch.setattr(os, "sync", no_sync)
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"{i}.txt").write_text(f"text {i}\n")
    sweep([root], SweepOptions(out=tmp_path / "store", tools=ToolSet.empty(), workers=1))
    assert synced == [os.stat(tmp_path / "store").st_dev]


def test_without_syncfs_the_store_is_synced_with_os_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.store as store_mod

    calls: list[str] = []
    monkeypatch.setattr(store_mod, "_syncfs", lambda: None)
    monkeypatch.setattr(os, "sync", lambda: calls.append("sync"))
    store_mod.sync_fs(tmp_path)
    failing = lambda fd: -1  # noqa: E731  (syncfs failed: errno set, -1)
    monkeypatch.setattr(store_mod, "_syncfs", lambda: failing)
    store_mod.sync_fs(tmp_path)
    assert calls == ["sync", "sync"]


def test_syncfs_is_found_on_linux() -> None:
    import engine.store as store_mod

    if not sys.platform.startswith("linux"):
        pytest.skip("syncfs is Linux's")
    fn = store_mod._syncfs()
    assert fn is not None
    fd = os.open(".", os.O_RDONLY)
    try:
        assert fn(fd) == 0
    finally:
        os.close(fd)


def test_records_are_made_while_the_texts_sync_and_written_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import engine.db as db_mod
    import engine.store as store_mod

    events: list[str] = []
    rendered = threading.Event()
    real_lines = db_mod.RecordDB.lines
    real_write = store_mod.atomic_write

    def lines(self: db_mod.RecordDB) -> Iterator[bytes]:
        yield from real_lines(self)
        events.append("lines made")
        rendered.set()

    def syncfs(_fd: int) -> int:
        # The lines go out meanwhile (bounded: without that overlap this waits 10 s).
        events.append("sync begins" + ("" if rendered.wait(10) else ", lines not made meanwhile"))
        events.append("sync ends")
        return 0

    def write(path: Path, data: object, before_replace: Callable[[], None] | None = None) -> None:
        def then() -> None:
            if before_replace is not None:
                before_replace()
            events.append(f"write {path.name}")

        real_write(path, data, then)  # type: ignore[arg-type]

    monkeypatch.setattr(store_mod, "_syncfs", lambda: syncfs)
    monkeypatch.setattr(db_mod.RecordDB, "lines", lines)
    monkeypatch.setattr(store_mod, "atomic_write", write)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("some text\n")
    sweep([root], SweepOptions(out=tmp_path / "store", tools=ToolSet.empty(), workers=1))
    assert "sync begins" in events  # not "..., lines not made meanwhile"
    assert events.index("sync ends") < events.index("write extract.jsonl")
    assert events.count("sync ends") == 1


@pytest.mark.parametrize(
    ("code", "hint"),
    [(errno.EROFS, True), (errno.EACCES, True), (errno.EPERM, True), (errno.ENOSPC, False)],
)
def test_a_store_the_user_may_not_write_where_it_goes_says_how_to_put_it_elsewhere(
    tmp_path: Path, code: int, hint: bool
) -> None:
    """Read-only media or another user's folder: the store's default place, beside the
    folder swept, is one the user may not write, whatever it holds; a full disk is not."""
    out = tmp_path / ".quarry"
    exc = OSError(code, os.strerror(code), str(out))
    said = str(Store(out)._unwritable(exc))
    assert said.startswith(f"cannot write the store: {out}: {os.strerror(code)}"), said
    assert said.endswith("; --out DIR keeps the store elsewhere") == hint, said
