"""Suite-wide guards: no leaked threads, no network, no user configuration, quiet tools, and
no Hypothesis deadline (an example that writes to disk may take 200 ms on a loaded machine:
the suite makes no timing assumption)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("quarry", deadline=None)
settings.load_profile("quarry")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
RAM_TMP = Path("/dev/shm")
RAM_TMP_FREE = 4 << 30
"""Room a RAM file system must have for the tests' temporary folders to go there."""


def _temporary_folders_in_ram() -> str:
    """Put the tests' temporary folders (``tmp_path``, ``tempfile``, and those of every
    process a test starts, by ``TMPDIR``) on the machine's RAM file system when it has one
    with room, and say where they are.

    What the product does is the same there; what the suite waits on is not: its thousands of
    stores each sync their files and folders, and a virtual disk made those syncs and the
    deletion of the trees most of the time of the tests that sweep often (five of the
    heaviest files: 115 s on the disk against 70 s). A ``TMPDIR`` the user set is kept, and a
    machine without the room (a container's 64 MB ``/dev/shm``) keeps its usual folder.
    """
    if "TMPDIR" in os.environ:
        return os.environ["TMPDIR"]
    try:
        room = os.statvfs(RAM_TMP)
        if room.f_bavail * room.f_frsize < RAM_TMP_FREE:
            return tempfile.gettempdir()
        here = RAM_TMP / f"textquarry-tests-{os.getuid()}"
        here.mkdir(mode=0o700, exist_ok=True)
        if here.stat().st_uid != os.getuid() or not os.access(here, os.W_OK):
            return tempfile.gettempdir()  # another user's folder of that name: not ours
    except OSError:
        return tempfile.gettempdir()
    os.environ["TMPDIR"] = str(here)  # the xdist workers and every process a test starts
    tempfile.tempdir = str(here)
    return str(here)


TEMPORARY = _temporary_folders_in_ram()


def pytest_configure(config: pytest.Config) -> None:
    """The project's modules compiled once, before any test (by the controller, not by each
    xdist worker). The suite starts hundreds of Python processes (``quarry`` in a terminal,
    the readers' forkservers, Dask workers); where ``PYTHONDONTWRITEBYTECODE`` is set, as in
    this project's CI sandbox, each compiled every module it imported again, ~0.25 s of CPU a
    process (as the benchmarks do: :mod:`tests.bench.benchkit`)."""
    if hasattr(config, "workerinput"):
        return
    from tests.bench.benchkit import compile_project

    compile_project(REPO)


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never read or write the user's home configuration or cache (each test has a
    tool-version cache of its own: a fake tool is never answered by another test's)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("QUARRY_CACHE_DIR", raising=False)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to reach another host fails the test; loopback and Unix sockets are fine."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if host not in ("127.0.0.1", "::1", "localhost"):
                raise AssertionError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    """A test must stop every thread it starts (observers, consumers, pools)."""
    before = set(threading.enumerate())
    yield
    deadline = 5.0
    import time

    end = time.monotonic() + deadline
    leaked: list[threading.Thread] = []
    while time.monotonic() < end:
        leaked = [
            t
            for t in threading.enumerate()
            if t not in before and t.is_alive() and not t.daemon and not _is_infra(t)
        ]
        if not leaked:
            return
        time.sleep(0.05)
    raise AssertionError(f"threads leaked by the test: {[t.name for t in leaked]}")


def _is_infra(t: threading.Thread) -> bool:
    # asyncio's default executor and pytest-timeout's helper belong to the harness.
    return t.name.startswith(("asyncio_", "ThreadPoolExecutor"))


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    """A private copy of the bundled fixtures folder (tests may change it)."""
    dest = tmp_path / "sample"
    shutil.copytree(
        FIXTURES, dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".quarry")
    )
    return dest


def pytest_report_header() -> str:
    tools = [
        t for t in ("pdftotext", "pdftoppm", "tesseract", "antiword", "catdoc") if shutil.which(t)
    ]
    return (
        f"external tools on PATH: {', '.join(tools) or 'none'}; cores: {os.cpu_count()}; "
        f"temporary folders in {TEMPORARY}"
    )
