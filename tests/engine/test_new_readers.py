"""A quarry that learns a format reads the files of it that a store holds as no reader's: an
upgrade that added the Lotus reader left every ``.wk1`` swept before it
``unsupported/no_reader`` for good (the record's kind, ``application/octet-stream``, still
has no reader; only reading the file again tells it is Lotus's now). The readers the store's
last sweep had are in its summary; a sweep with more reads the files no reader took, once."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from unittest import mock

from engine import mimes as M
from engine import mimes as mimes_mod
from engine.mimes import DETECTION
from engine.records import Reason, Status, Why
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet
from tests.readers.test_lotus import classic, lotus_cell

NO_TOOLS = SweepOptions(tools=ToolSet(()))


def _as_an_older_quarry_left_it(root: Path) -> None:
    """The store as a quarry without the Lotus reader left it: the sheet no reader's, no
    Lotus reader in the summary, and no index or stat index of this quarry's."""
    store = Store(root / ".quarry")
    records = [
        dataclasses.replace(
            r, status=Status.UNSUPPORTED, reason=Reason.NO_READER, mime=M.OCTET, extractor=None,
            chars=0, sha256=r.sha256, quality=None, error="no reader for application/octet-stream",
        ) if r.path == "sheet.wk1" else r
        for r in store.load_records()
    ]  # fmt: skip
    store.write_records(records)
    for name in ("extract.db", "extract.db-wal", "extract.db-shm", "extract.stat"):
        (store.out / name).unlink(missing_ok=True)
    summary = store.out / "extract.summary.json"
    held = json.loads(summary.read_text())
    del held["readers"]["lotus"]
    summary.write_text(json.dumps(held))


def test_files_no_reader_took_are_read_again_once_when_readers_came(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "sheet.wk1").write_bytes(
        classic(0x0406, lotus_cell(0x0F, 0, 0, b"'Budget\x00"), lotus_cell(0x0D, 1, 0, b"\x07\x00"))
    )
    (root / "sound.xyz").write_bytes(bytes(range(256)) * 4)  # (no reader knows it)
    sweep([root], NO_TOOLS)
    _as_an_older_quarry_left_it(root)
    store = Store(root / ".quarry")

    sweep([root], NO_TOOLS)
    got = {r.path: r for r in store.load_records()}
    assert (got["sheet.wk1"].status, got["sheet.wk1"].extractor) == ("ok", "lotus")
    assert got["sheet.wk1"].why == Why.READER_CHANGED
    assert got["sound.xyz"].reason == Reason.NO_READER  # looked at again: still no one's
    assert got["sound.xyz"].why == Why.READER_CHANGED
    assert store.read_text(got["sheet.wk1"].sha256 or "") == "# sheet1\nBudget\t7\n"

    (store.out / "extract.stat").unlink(missing_ok=True)  # (the full way, not the quick one)
    sweep([root], NO_TOOLS)
    again = {r.path: r for r in store.load_records()}
    assert again["sound.xyz"].reused  # once: this sweep's summary names every reader
    assert again["sheet.wk1"].reused


def test_a_store_whose_last_sweep_had_every_reader_reads_no_such_file_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "sound.xyz").write_bytes(bytes(range(256)) * 4)  # (no reader knows it)
    sweep([root], NO_TOOLS)
    store = Store(root / ".quarry")
    (store.out / "extract.stat").unlink(missing_ok=True)
    sweep([root], NO_TOOLS)
    assert [r.reused for r in store.load_records()] == [True]


def test_files_no_reader_took_are_read_again_once_when_kinds_are_told_apart_anew(
    tmp_path: Path,
) -> None:
    """No reader came, but detection learned a kind (a Word file whose streams are named in
    upper case was an OLE2 file of no reader's): the summary's ``detection`` is older than
    this quarry's, and the stat index (whose environment says it) no longer answers."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "sound.xyz").write_bytes(bytes(range(256)) * 4)  # (no reader knows it)
    sweep([root], NO_TOOLS)
    store = Store(root / ".quarry")
    summary = store.out / "extract.summary.json"
    held = json.loads(summary.read_text())
    assert held["detection"] == DETECTION
    held["detection"] = DETECTION - 1
    summary.write_text(json.dumps(held))
    (store.out / "extract.stat").unlink(missing_ok=True)  # (an older environment's: unused)

    sweep([root], NO_TOOLS)
    (record,) = store.load_records()
    assert record.why == Why.READER_CHANGED and not record.reused
    assert json.loads(summary.read_text())["detection"] == DETECTION

    sweep([root], NO_TOOLS)  # (the quick way, when its stat index is this quarry's)
    assert [r.reused for r in store.load_records()] == [True]
    (store.out / "extract.stat").unlink(missing_ok=True)
    sweep([root], NO_TOOLS)  # (and the full way)
    assert [r.reused for r in store.load_records()] == [True]


def test_the_stat_index_of_an_older_detection_is_not_used() -> None:
    from engine import statindex

    now = statindex.environment(ToolSet(()), "rules")
    with mock.patch.object(mimes_mod, "DETECTION", DETECTION + 1):
        assert statindex.environment(ToolSet(()), "rules") != now


def test_text_records_that_came_out_garbled_are_read_again_when_kinds_are_told_apart_anew(
    tmp_path: Path,
) -> None:
    """A FITS file read as text by a quarry that did not tell FITS apart (its pixels made the
    text garbled) is read again by one that does, once; a good text is not."""
    from tests.readers.test_fits import FILE

    root = tmp_path / "docs"
    root.mkdir()
    (root / "nebula.fits").write_bytes(FILE)
    (root / "notes.txt").write_text("plain words of a note that reads well enough\n")
    for name in ("nebula.fits", "notes.txt"):  # long unchanged: the warm sweep's fast path
        os.utime(root / name, (time.time() - 3600, time.time() - 3600))
    sweep([root], NO_TOOLS)
    store = Store(root / ".quarry")
    # as the older quarry left it: the FITS file read as text, garbled
    lines = []
    for line in store.jsonl_path.read_text().splitlines():
        rec = json.loads(line)
        if rec["path"] == "nebula.fits":
            assert rec["reader"] == "fits"
            rec.update(mime=M.PLAIN, reader="text", v=2, extractor="text:cp1252")
            rec["quality"]["verdict"] = "garbled"
        lines.append(json.dumps(rec))
    store.jsonl_path.write_text("\n".join(lines) + "\n")
    summary = store.out / "extract.summary.json"
    held = json.loads(summary.read_text())
    held["detection"] = DETECTION - 1
    summary.write_text(json.dumps(held))
    for name in ("extract.stat", "extract.db", "extract.db-wal", "extract.db-shm"):
        (store.out / name).unlink(missing_ok=True)  # (built again from the older file)

    sweep([root], NO_TOOLS)
    got = {r.path: r for r in store.load_records()}
    assert (got["nebula.fits"].reader, got["nebula.fits"].why) == ("fits", Why.READER_CHANGED)
    assert got["notes.txt"].reused

    (store.out / "extract.stat").unlink(missing_ok=True)
    sweep([root], NO_TOOLS)  # once: this sweep's summary says this quarry's detection
    assert all(r.reused for r in store.load_records())
