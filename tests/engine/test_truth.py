"""The store is always true: a text is filed under the hash of the bytes it was made from.

Through the real sweep (worker processes, the fault reader's hooks acting mid-read): a file
edited during its read, a file that never stops changing, a file deleted during its read, a
text deleted from the store, a text that does not match its content (verify).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.events import Event, Notice
from engine.extract import ReadTask, hash_file, read_one
from engine.limits import Limits, MiB
from engine.records import Reason, Record, Status, Why
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from tests.faultreader import EDITED, fixture

pytestmark = pytest.mark.timeout(90)

LIMITS = Limits(timeout_s=10.0, memory_bytes=512 * MiB)
FAULT_TEXT = "fault reader: read before the file changed\n"


@pytest.fixture(autouse=True)
def faults(fault_reader: None) -> None:
    """The hooks that change files mid-read live in the fault reader (tests/engine/conftest.py)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "docs"
    r.mkdir()
    return r


def _sweeper(root: Path, events: list[Event] | None = None, **kw: object) -> Sweeper:
    opts = SweepOptions(
        out=root.parent / "store",
        limits=LIMITS,
        workers=2,
        tools=ToolSet.empty(),
        **kw,  # type: ignore[arg-type]
    )
    return Sweeper([root], opts, (events if events is not None else []).append)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sweep(root: Path, **kw: object) -> dict[str, Record]:
    with _sweeper(root, **kw) as s:
        s.run()
        return {k[1]: r for k, r in s.records.items()}


def _assert_true_store(root: Path) -> None:
    """Every record's hash is its file's, and its text is what a fresh read of it gives."""
    with _sweeper(root) as s:
        for (_, rel), rec in s.records.items():
            if rec.sha256 is None:
                continue
            assert rec.sha256 == _sha((root / rel).read_bytes()), rel
            assert rec.size == (root / rel).stat().st_size, rel
            if rec.has_text:
                assert s.store.has_text(rec.sha256), rel


def test_a_file_edited_mid_read_is_filed_under_what_was_read_and_its_copy_keeps_its_own(
    root: Path,
) -> None:
    old = fixture("edit", str(root / "zzA.bin"))
    (root / "zzA.bin").write_bytes(old)
    (root / "zzB.bin").write_bytes(old)  # a copy: one read serves both, unless A changes
    with _sweeper(root) as s:
        s.run()
        a = s.records[(str(root), "zzA.bin")]
        b = s.records[(str(root), "zzB.bin")]
        assert (root / "zzA.bin").read_bytes() == EDITED  # the hook did edit it mid-read
        assert a.sha256 == _sha(EDITED) and a.size == len(EDITED) and a.status == Status.OK
        assert s.store.read_text(a.sha256) == EDITED.decode()
        assert b.sha256 == _sha(old) and b.size == len(old) and b.status == Status.OK
        assert s.store.read_text(b.sha256) == FAULT_TEXT
        assert b.why == Why.NEW and a.why == Why.NEW
    _assert_true_store(root)


def test_a_file_that_never_stops_changing_is_recorded_as_changing_then_read(root: Path) -> None:
    (root / "log.bin").write_bytes(fixture("churn"))
    (root / "calm.txt").write_text("calm\n")
    recs = _sweep(root)
    log = recs["log.bin"]
    assert (log.status, log.reason, log.sha256) == (Status.SKIPPED, Reason.CHANGING, None)
    assert "changed during each of 3 reads" in (log.error or "")
    assert recs["calm.txt"].status == Status.OK
    (root / "log.bin").write_text("the writer stopped\n")
    recs = _sweep(root)
    assert recs["log.bin"].status == Status.OK
    _assert_true_store(root)


def test_a_file_deleted_during_its_read_is_dropped_not_corrupt(root: Path) -> None:
    (root / "gone.bin").write_bytes(fixture("delete"))
    (root / "copy.bin").write_bytes(fixture("ok"))
    recs = _sweep(root)
    assert "gone.bin" not in recs
    assert recs["copy.bin"].status == Status.OK


def test_a_copy_is_read_in_place_of_its_twin_that_was_deleted(root: Path) -> None:
    data = fixture("delete")
    (root / "a.bin").write_bytes(data)
    (root / "b.bin").write_bytes(data)
    recs = _sweep(root)
    # a.bin deletes itself; b.bin then deletes itself too: neither leaves a false record.
    assert recs == {}


def test_the_worker_hashes_what_it_reads_when_the_engines_hash_is_stale(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("first content\n")
    got = hash_file(f)
    assert got is not None
    sha, ident = got
    f.write_text("second, longer content\n")  # after the engine hashed it
    (tmp_path / "tmp").mkdir()
    task = ReadTask(str(f), sha, LIMITS, ToolSet.empty(), str(tmp_path / "tmp"), 14, ident)
    o = read_one(task)
    assert o.sha256 == _sha(b"second, longer content\n") != sha
    assert o.size == f.stat().st_size and o.text_file is not None
    assert Path(o.text_file).read_text() == "second, longer content\n"


def test_a_text_deleted_from_the_store_is_read_again(root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    _sweep(root)
    events: list[Event] = []
    with _sweeper(root, events) as s:
        s.run()  # the second sweep: everything reused
        sha = s.records[(str(root), "a.txt")].sha256 or ""
        s.store.text_path(sha).unlink()
    with _sweeper(root, events) as s:
        result = s.run()
        a = s.records[(str(root), "a.txt")]
        assert s.store.read_text(sha) == "alpha\n"
        assert (a.why, result.extracted, result.repaired) == (Why.REPAIR, 1, 1)
        assert s.records[(str(root), "b.txt")].reused
    assert any(isinstance(e, Notice) and e.kind == "repaired" for e in events)


def test_verify_replaces_a_text_that_does_not_match_its_content(root: Path) -> None:
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    (root / "copy.txt").write_text("alpha\n")
    _sweep(root)
    _sweep(root)  # from the second sweep on, the store is stable
    with _sweeper(root) as s:
        sha = s.records[(str(root), "a.txt")].sha256 or ""
        before = s.store.jsonl_path.read_bytes()
        s.store.text_path(sha).write_text("the text of something else\n")
    plain = _sweep(root)  # an ordinary sweep cannot see it
    assert plain["a.txt"].reused
    with _sweeper(root, verify=True) as s:
        result = s.run()
        assert s.store.read_text(sha) == "alpha\n"
        assert result.repaired == 1 and s.records[(str(root), "a.txt")].why == Why.REPAIR
    with _sweeper(root, verify=True) as s:
        result = s.run()
        assert result.repaired == 0 and result.extracted == 0
    assert before != b""


def test_quarry_sweep_verify_repairs_a_wrong_text(root: Path) -> None:
    import subprocess
    import sys

    (root / "a.txt").write_text("alpha\n")
    out = root.parent / "store"
    cmd = [sys.executable, "-m", "engine", "sweep", str(root), "--out", str(out), "--quiet"]
    assert subprocess.run(cmd, capture_output=True, timeout=60).returncode == 0
    text = next((out / "extract").glob("*/*.txt"))
    text.write_text("not what a.txt holds\n")
    proc = subprocess.run([*cmd, "--verify"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert text.read_text() == "alpha\n"
    assert "1 text missing or not matching its content: read again" in proc.stderr
