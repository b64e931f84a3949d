"""The Dask executor as a user meets it: the real ``quarry`` process.

``--executor dask-local:2`` prints the dashboard link and writes the store a local sweep
would; without dask installed it says how to install it; a scheduler killed mid-sweep ends
the sweep with one clear line and leaves the previous store as it was; a worker that cannot
see a root (its share not mounted: a tmpfs over the folder in a mount namespace of its own)
is refused before anything is read.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import faultreader
from tests.engine.daskkit import (
    WAIT_S,
    External,
    distributed,
    external_cluster,
    extra_worker,
    store_lines,
)
from tests.faultreader import fixture

pytestmark = pytest.mark.timeout(240)

QUARRY = [sys.executable, "-m", "tui"]
BLOCK = (
    "import sys\n"
    "sys.modules['dask'] = None\n"  # None in sys.modules: 'import dask' raises ImportError
    "sys.modules['distributed'] = None\n"
    "from engine.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def quarry(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QUARRY, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=200,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_engine_never_imports_dask_unless_asked(sample: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from engine.cli import main\n"
        f"rc = main(['sweep', {str(sample)!r}, '--out', {str(tmp_path / 's')!r}, '-q',"
        " '--no-external'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(rc, loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "2 []"  # fixtures/ holds hostile files: exit 2, no dask


def test_without_dask_the_executor_says_how_to_install_it(sample: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCK, "sweep", str(sample), "--executor", "dask-local:2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        "quarry: the Dask executor needs the dask package, which is not installed: "
        "pip install 'textquarry[dask]'"
    )
    assert "Traceback" not in out.stderr
    assert not (sample / ".quarry" / "extract.jsonl").exists()


def test_a_dask_install_that_cannot_import_is_refused_in_one_line(
    sample: Path, tmp_path: Path
) -> None:
    # Found (the factory only looks the packages up) but broken: the import, in the thread
    # that connects, fails, and the sweep is refused as a cluster that cannot be reached is.
    fake = tmp_path / "site" / "distributed"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no module named tornado')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), os.getcwd()])}
    out = subprocess.run(
        [sys.executable, "-m", "engine", "sweep", str(sample), "--out", str(tmp_path / "s"),
         "-q", "--executor", "dask-local:2"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        "quarry: cannot use the Dask cluster dask-local:2: importing Dask failed "
        "(no module named tornado); pip install 'textquarry[dask]'"
    )
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "s" / "extract.jsonl").exists()


def test_the_dask_executor_is_made_without_importing_dask(tmp_path: Path) -> None:
    # distributed's import (~0.3 s) runs in the thread that connects, beside the walk: the
    # executor, its settings and the worker's functions are there before it.
    code = (
        "import sys\n"
        "from engine.executors import dask_factory, parse_executor\n"
        "from engine.executors import dask_client, dask_worker\n"
        "from engine.limits import DEFAULT_LIMITS\n"
        "made = dask_factory(parse_executor('dask-local:2'))(DEFAULT_LIMITS, 2)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(type(made).__name__, loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "DaskExecutor []"


def test_a_dask_local_sweep_prints_the_dashboard_and_writes_the_local_store(
    sample: Path, tmp_path: Path
) -> None:
    local = quarry("sweep", sample, "--out", tmp_path / "local", "--no-external")
    dask = quarry(
        "sweep", sample, "--out", tmp_path / "dask", "--no-external", "--executor", "dask-local:2"
    )
    assert (local.returncode, dask.returncode) == (2, 2), dask.stderr
    assert "info: Dask dask-local:2: 2 workers, 2 threads; dashboard http://127.0.0.1:" in (
        dask.stderr
    )
    assert dask.stderr.count("info: Dask worker tcp://127.0.0.1:") == 2
    assert store_lines(tmp_path / "dask") == store_lines(tmp_path / "local")
    files = len(store_lines(tmp_path / "local"))
    assert f"quarry: {files} files in " in dask.stdout  # the summary table, as locally


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[External]:
    with external_cluster(tmp_path) as c:
        yield c


def test_a_scheduler_killed_mid_sweep_leaves_the_old_store(
    cluster: External, tmp_path: Path
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(20):
        (root / f"t{i:02}.txt").write_text(f"text {i}\n")
    out = tmp_path / "store"
    first = quarry("sweep", root, "--out", out, "-q", "--executor", cluster.spec)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (out / "extract.jsonl", out / "extract.summary.json")}
    for i in range(4):
        (root / f"hang{i}.bin").write_bytes(fixture("hang", str(i)))
    for i in range(20, 60):
        (root / f"t{i:02}.txt").write_text(f"text {i}\n")
    proc = subprocess.Popen(
        [*QUARRY, "sweep", str(root), "--out", str(out), "--timeout", "60",
         "--executor", cluster.spec, *faultreader.ARGS],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=faultreader.env(), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_reads(cluster)
        os.kill(cluster.scheduler.pid, signal.SIGKILL)
        _out, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("quarry: lost the Dask scheduler (dask://127.0.0.1:"), stderr
    assert last.endswith("the sweep stopped and the store is as the previous sweep left it")
    assert "Traceback" not in stderr
    after = {p.name: p.read_bytes() for p in (out / "extract.jsonl", out / "extract.summary.json")}
    assert after == before
    _lock_is_free(out)
    # Texts the workers had already put in place are collected by the next full sweep.
    assert (out / "sweep.dirty").exists()
    again = quarry(
        "sweep", root, "--out", out, "-q", "--timeout", "2", *faultreader.ARGS,
        env=faultreader.env(),
    )  # fmt: skip
    assert again.returncode == 2, again.stderr  # the four hanging files: error/timeout
    named = {r["sha256"] for r in store_lines(out) if r["status"] == "ok"}
    stored = {p.stem for p in (out / "extract").rglob("*.txt")}
    assert stored == named and not (out / "sweep.dirty").exists()


def _wait_for_reads(cluster: External) -> None:
    """Until the scheduler runs one of the sweep's read tasks."""
    with distributed.Client(cluster.address, timeout=30, set_as_default=False) as c:
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            if any(
                str(k).startswith("quarry-read-") for keys in c.processing().values() for k in keys
            ):
                return
            time.sleep(0.05)
    raise AssertionError("the sweep never reached the cluster")


def _lock_is_free(out: Path) -> None:
    fd = os.open(out / "lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if held
    finally:
        os.close(fd)


def _can_hide(folder: Path) -> bool:
    """Whether this machine lets us mount a tmpfs over a folder in a namespace of our own."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs none '{folder}'"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


@pytest.mark.parametrize("hidden", ["root", "store"])
def test_a_worker_that_cannot_see_a_folder_is_refused(
    sample: Path, tmp_path: Path, hidden: str
) -> None:
    out = tmp_path / "store"
    out.mkdir()
    folder = sample if hidden == "root" else out
    if not _can_hide(folder):
        pytest.skip("needs unshare and mount (root, or user namespaces) to hide a folder")
    wrap = ["unshare", "-m", "sh", "-c", f'mount -t tmpfs none \'{folder}\' && exec "$0" "$@"']
    with external_cluster(tmp_path, wrap=wrap) as c:
        res = quarry("sweep", sample, "--out", out, "--no-external", "--executor", c.spec)
    assert res.returncode == 1, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("quarry: Dask worker tcp://127.0.0.1:")
    if hidden == "root":
        assert f"cannot see {sample}/" in last
    else:
        assert "cannot see or write the store's tmp/ folder" in last
    assert last.endswith("same paths as this machine (README.md, 'Many machines')")
    assert not (out / "extract.jsonl").exists()


def test_a_worker_that_cannot_see_the_root_beside_one_that_can_is_named_once_and_gets_no_reads(
    sample: Path, tmp_path: Path
) -> None:
    if not _can_hide(sample):
        pytest.skip("needs unshare and mount (root, or user namespaces) to hide a folder")
    wrap = ["unshare", "-m", "sh", "-c", f'mount -t tmpfs none \'{sample}\' && exec "$0" "$@"']
    local = quarry("sweep", sample, "--out", tmp_path / "local", "--no-external")
    with (
        external_cluster(tmp_path, workers=1) as c,
        extra_worker(c.address, wrap=wrap),
        distributed.Client(c.address, timeout=30, set_as_default=False) as client,
    ):
        client.wait_for_workers(2, timeout=WAIT_S)
        res = quarry(
            "sweep", sample, "--out", tmp_path / "dask", "--no-external", "--executor", c.spec
        )
    assert res.returncode == local.returncode == 2, res.stderr  # hostile files: exit 2
    refused = [line for line in res.stderr.splitlines() if "gets no reads" in line]
    assert len(refused) == 1 and f"cannot see {sample}/" in refused[0], res.stderr
    assert "not read, earlier records kept" not in res.stderr  # no machine failure
    assert store_lines(tmp_path / "dask") == store_lines(tmp_path / "local")
