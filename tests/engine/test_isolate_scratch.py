"""A read killed at its time limit leaves no scratch folder behind.

An archive member is copied to a scratch folder before it is read; when the member's read
hangs, the pool kills the worker, and the folder (up to a member's 64 MiB) must go with it,
or every sweep (errors are read again) adds one to the system's temporary folder. The member
here is a fault fixture (``where``) that writes where its copy lies, then hangs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import scratch
from engine.isolate import ReadPool
from engine.limits import Limits, MiB
from engine.records import Reason, Status
from engine.sweep import Sweeper, SweepOptions
from engine.tools import ToolSet
from fixtures.gen import archives as A
from tests import faultreader
from tests.engine.test_isolate import make, read_all
from tests.faultreader import ARGS, fixture

pytestmark = pytest.mark.timeout(90)

LIMITS = Limits(timeout_s=1.0, memory_bytes=256 * MiB, max_chars=10_000)


@pytest.fixture(autouse=True)
def faults(fault_reader: None) -> None:
    """Every test here uses the fault reader (tests/engine/conftest.py)."""


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A new folder of a short path: multiprocessing's forkserver makes its socket in the
    temporary folder, and a socket's path takes at most 107 bytes (pytest-xdist's tmp_path
    with a test's name in it is past that: 'AF_UNIX path too long'). Not removed afterwards:
    multiprocessing keeps using the ``pymp-*`` folder it made there for the rest of this
    process, and removes it itself at exit."""
    yield Path(tempfile.mkdtemp(prefix="qs-", dir="/tmp" if os.path.isdir("/tmp") else None))


@pytest.fixture
def system_tmp(short_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The engine's temporary folder, watched for what is left in it."""
    monkeypatch.setattr(tempfile, "tempdir", str(short_tmp))
    yield short_tmp


def _ours(folder: Path) -> list[str]:
    """What quarry left in ``folder`` (multiprocessing keeps its own ``pymp-*`` there)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("quarry-"))


def _hanging_zip(folder: Path, where: Path) -> Path:
    path = folder / "hangs.zip"
    path.write_bytes(A.zip_bytes({"m.bin": fixture("where", str(where))}))
    return path


def test_a_killed_member_read_leaves_no_scratch_folder(tmp_path: Path, system_tmp: Path) -> None:
    where = tmp_path / "where.txt"
    task = make(tmp_path, "clean", "ok")
    zipped = _hanging_zip(tmp_path, where)
    hangs = type(task)(str(zipped), "sha-zip", LIMITS, ToolSet.empty(), task.tmp_dir, 20)
    pool = ReadPool(LIMITS, workers=1)
    try:
        out = read_all(pool, [hangs, task])
        assert (out["hangs.zip"].status, out["hangs.zip"].reason) == (Status.ERROR, Reason.TIMEOUT)
        assert out["clean"].status == Status.OK
        copy = Path(where.read_text())
        assert copy.name.endswith(".bin")
        # member folder, in the worker's own folder, in the pool's temporary folder
        assert copy.parent.parent.name.startswith("quarry-worker-")
        assert copy.parent.parent.parent == system_tmp
        assert not copy.parent.exists(), f"{copy.parent} outlived the killed read"
    finally:
        pool.close()
    assert _ours(system_tmp) == []


def test_sweeps_that_read_a_hanging_member_again_leave_nothing(
    tmp_path: Path, system_tmp: Path
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    where = tmp_path / "where.txt"
    _hanging_zip(root, where)
    (root / "note.txt").write_text("plain text\n")
    options = SweepOptions(out=tmp_path / "store", limits=LIMITS, workers=1, tools=ToolSet.empty())
    copies = []
    with Sweeper([root], options, lambda _event: None) as sweeper:
        for _ in range(2):  # an error is read again at every sweep
            where.unlink(missing_ok=True)
            sweeper.run()
            rec = sweeper.records[(str(root), "hangs.zip")]
            assert (rec.status, rec.reason) == (Status.ERROR, Reason.TIMEOUT)
            copies.append(Path(where.read_text()))
            assert not copies[-1].parent.exists()
    assert copies[0].parent != copies[1].parent  # read twice, in two scratch folders
    assert _ours(system_tmp) == []
    assert [p.name for p in (tmp_path / "store" / "tmp").iterdir()] == []


def test_a_pool_removes_what_the_workers_of_a_killed_pool_left(system_tmp: Path) -> None:
    import subprocess
    import sys

    # A pool killed with its workers: its folders stay, their owner files no longer held.
    code = (
        "import sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from engine import scratch\n"
        "folder = scratch.WorkerFolder()\n"
        "open(folder.path + '/m1.bin', 'wb').write(b'x' * 1000)\n"
        "print(folder.path, flush=True)\n"
        "import os; os._exit(0)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(system_tmp)], capture_output=True, text=True, check=True
    )
    left = Path(run.stdout.strip())
    assert left.parent == system_tmp and (left / "m1.bin").exists()
    held = scratch.WorkerFolder()  # a pool still running (this process) keeps its folders
    try:
        pool = ReadPool(LIMITS, workers=1)
        try:
            assert read_all(pool, [make(system_tmp.parent, "clean", "ok")])["clean"].status == "ok"
        finally:
            pool.close()
        assert not left.exists()
        assert Path(held.path).exists()
    finally:
        held.remove()
    assert _ours(system_tmp) == []


def test_a_pool_never_closed_removes_its_folders_when_its_process_ends(
    tmp_path: Path, system_tmp: Path
) -> None:
    import subprocess
    import sys

    # As a Dask worker's pool: its process ends without closing it.
    make(tmp_path, "clean", "ok")
    code = (
        "import sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from engine.isolate import ReadPool\n"
        "from engine.readers import registry\n"
        "from tests.engine.test_isolate import LIMITS, make\n"
        f"registry.use_extra([{faultreader.SPEC!r}])\n"
        "from pathlib import Path\n"
        "pool = ReadPool(LIMITS, workers=1)\n"
        "task = make(Path(sys.argv[2]), 'clean', 'ok')\n"
        "print([str(o.status) for _, o in pool.read([task])])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(system_tmp), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert run.stdout.strip() == "['ok']"
    assert _ours(system_tmp) == []


def test_quarry_sweep_twice_leaves_nothing_in_tmpdir(tmp_path: Path, short_tmp: Path) -> None:
    import os
    import subprocess
    import sys

    root = tmp_path / "docs"
    root.mkdir()
    where = tmp_path / "where.txt"
    _hanging_zip(root, where)
    tmpdir = short_tmp
    env = faultreader.env({**os.environ, "TMPDIR": str(tmpdir)})
    for _ in range(2):  # the error is read again: each sweep kills one more read
        where.unlink(missing_ok=True)
        run = subprocess.run(
            [sys.executable, "-m", "engine", "sweep", str(root), "--timeout", "1", *ARGS],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2, run.stderr  # one error record
        assert "timeout" in run.stdout + run.stderr
        assert where.exists() and not Path(where.read_text()).parent.exists()
        assert _ours(tmpdir) == []


def test_a_pool_starting_beside_another_never_removes_its_live_folder(
    system_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two pools starting at once (two Dask workers of one machine): the other one looks for
    # orphans at the worst moment, between this pool's making its owner file and locking it.
    # Its folder was removed under its worker ("No such file or directory: .../quarry-members-").
    real_flock = scratch.fcntl.flock
    looked: list[int] = []

    def flock_after_the_other_pool_looked(fd: int, op: int) -> None:
        if not looked:
            looked.append(scratch.remove_orphans())
        real_flock(fd, op)

    monkeypatch.setattr(scratch.fcntl, "flock", flock_after_the_other_pool_looked)
    folder = scratch.WorkerFolder()
    try:
        assert looked == [0]
        assert Path(folder.path).is_dir()
        monkeypatch.setattr(scratch.fcntl, "flock", real_flock)
        assert scratch.remove_orphans() == 0  # held: another pool leaves it alone
        assert Path(folder.path).is_dir()
    finally:
        folder.remove()
    assert _ours(system_tmp) == []
