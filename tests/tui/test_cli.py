"""The quarry command's dashboard entry points, as far as they run without a terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def quarry(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=60
    )


def test_read_only_never_creates_a_store(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    proc = quarry(str(tmp_path), "--read-only")
    assert proc.returncode == 1
    assert "no store at" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / ".quarry").exists()


def _docs(tmp_path: Path, *texts: str) -> Path:
    """A folder ``docs`` of ``a.txt``, ``b.txt``... holding ``texts``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in zip("abcdefgh", texts, strict=False):
        (docs / f"{name}.txt").write_text(text)
    return docs


def test_the_dashboard_without_a_terminal_says_what_to_run_and_makes_no_store(
    tmp_path: Path,
) -> None:
    """From cron, a script or ``nohup``, ``quarry DIR`` drew its screens into the log and
    watched on for good (no key could quit it); it says what runs without a terminal."""
    docs = _docs(tmp_path, "alpha")
    proc = subprocess.run(
        [sys.executable, "-m", "tui", str(docs)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "the dashboard needs a terminal" in proc.stderr and "'quarry watch DIR'" in proc.stderr
    assert not (docs / ".quarry").exists()  # nothing made, nothing read
    assert quarry("sweep", "-q", str(docs)).returncode == 0
    for argv in (["ui", str(docs)], [str(docs), "--read-only"]):
        proc = quarry(*argv)  # (its input a pipe: no keys to read)
        assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, (argv, proc.stderr)
        assert "needs a terminal" in proc.stderr and "'quarry export'" in proc.stderr


@pytest.mark.parametrize("closed", [0, 1, 2], ids=["stdin", "stdout", "stderr"])
@pytest.mark.parametrize("entry", ["tui", "engine"])
def test_a_command_started_with_a_standard_stream_closed_runs_as_with_it_open(
    tmp_path: Path, closed: int, entry: str
) -> None:
    """``quarry sweep DIR >&-`` ended in a traceback (``sys.stdout`` is None), ``2>&-`` in
    exit 1 with nothing said and no store; and the next file opened took the closed number, so
    what wrote to that stream wrote into it. The stream is the null device from the start."""
    docs = _docs(tmp_path, "alpha", "bravo")
    proc = subprocess.run(
        [sys.executable, "-m", entry, "sweep", "--json", str(docs)],
        capture_output=closed == 0,
        preexec_fn=lambda: os.close(closed),  # (the child's own stream)
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    store = docs / ".quarry"
    assert len((store / "extract.jsonl").read_bytes().splitlines()) == 2
    assert (store / "lock").read_text().strip().isdigit()  # (nothing else written into it)
    assert json.loads((store / "extract.summary.json").read_text())["files"] == 2


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_show_and_grep_on_a_terminal_that_lacks_a_character_write_its_escape(
    tmp_path: Path, encoding: str
) -> None:
    """Standard output in ASCII or Latin-1 took show and grep down (UnicodeEncodeError)."""
    docs = _docs(tmp_path, "a \u201cquoted\u201d word, \u041b\u043e\u0448\n")
    assert quarry("sweep", "-q", str(docs)).returncode == 0
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    for argv in (["show", str(docs / "a.txt")], ["grep", "quoted", str(docs)]):
        proc = subprocess.run(
            [sys.executable, "-m", "tui", *argv], env=env, capture_output=True, timeout=60
        )
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, (argv, proc.stderr)
        assert b"\\u201cquoted\\u201d" in proc.stdout and b"\\u041b" in proc.stdout, argv
    json_out = subprocess.run(
        [sys.executable, "-m", "tui", "show", "--json", str(docs / "a.txt")],
        env=env, capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(json_out.stdout)["text"].startswith("a \u201cquoted\u201d")


def test_headless_commands_still_work_through_quarry(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    proc = quarry("sweep", "-q", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".quarry" / "extract.jsonl").exists()


@pytest.mark.parametrize("times", [1, 3])
def test_a_command_ends_with_its_output_whole_and_its_status(tmp_path: Path, times: int) -> None:
    # The third sweep of an unchanged folder is a quick one, which ends the process at once.
    (tmp_path / "a.txt").write_text("alpha bravo")
    os.utime(tmp_path / "a.txt", (1_600_000_000, 1_600_000_000))  # (a fresh file is not trusted)
    for _ in range(times):
        proc = quarry("sweep", "--json", "--no-external", str(tmp_path))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["counts"]["ok"] == 1
    assert (tmp_path / ".quarry" / "extract.stat").is_file() == (times == 3)
    gone = quarry("sweep", "-q", str(tmp_path / "gone"))
    assert gone.returncode == 1 and "no such folder" in gone.stderr


def test_exit_handlers_still_run(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha bravo")
    code = (
        "import atexit, sys\n"
        "atexit.register(print, 'handler ran')\n"
        "from tui.cli import run\n"
        f"sys.argv = ['quarry', 'sweep', '-q', '--no-external', {str(tmp_path)!r}]\n"
        "run()\n"
    )
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout == "handler ran\n", proc.stderr


def test_the_quarry_program_skips_the_teardown_after_its_exit_handlers(tmp_path: Path) -> None:
    """``python -m tui`` (a quick sweep) ends at once after its exit handlers ran: an object
    left for the interpreter's teardown is never finalised; a caller of run() gets the usual
    exit (it may have registered handlers before run(), which must run)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("alpha bravo")
    site = tmp_path / "site"
    site.mkdir()
    mark = tmp_path / "torn-down"
    (site / "sitecustomize.py").write_text(
        "import os\n"
        "class _Mark:\n"  # (at teardown the module's globals may be gone: bound here)
        f"    def __del__(self, mkdir=os.mkdir, where={str(mark)!r}):\n"
        "        mkdir(where)\n"
        "_mark = _Mark()\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.getcwd()])}
    argv = ["sweep", "-q", "--no-external", str(tmp_path / "docs")]
    os.utime(tmp_path / "docs" / "a.txt", (1_600_000_000, 1_600_000_000))
    for _ in range(2):  # the third sweep is a quick one: no pool, no thread left at its end
        assert quarry(*argv).returncode == 0
    proc = subprocess.run(
        [sys.executable, "-m", "tui", *argv], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert not mark.exists()
    code = f"import sys\nfrom tui.cli import run\nsys.argv = ['quarry', *{argv!r}]\nrun()\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and mark.is_dir(), proc.stderr


def _writing_to_a_pipe(pid: int) -> bool:
    """Whether the process is blocked writing to a full pipe (as /proc says, where it does)."""
    try:
        return "pipe_write" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_reader_that_goes_early_ends_the_command_quietly(tmp_path: Path, unbuffered: str) -> None:
    # `quarry show FILE | head -c 1`: the reader closes the pipe with most of the text unread,
    # while the command is in the middle of writing it. With an unbuffered stdout (python -u,
    # PYTHONUNBUFFERED) that write took part of the text and the rest was dropped in silence.
    folder = tmp_path / "docs"
    folder.mkdir()
    long = folder / "long.txt"
    long.write_text("".join(f"line {i} of a long text\n" for i in range(20_000)))
    assert quarry("sweep", "-q", "--no-external", str(folder)).returncode == 0
    args = ["show", str(long)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    with subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + 10  # (where /proc does not say, the close comes anyway)
        while not _writing_to_a_pipe(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    assert "Broken pipe" not in err and "Exception ignored" not in err and "Traceback" not in err
    assert code == 1, err  # the text did not all reach its reader (Python's own status)


def _odd_tree(folder: Path) -> None:
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha bravo")
    (folder / "sub" / "b.html").write_text("<p>charlie</p>")
    (folder / "sub" / "skip.log").write_text("delta")
    (folder / "empty.txt").write_bytes(b"")
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text("echo")
    os.symlink("a.txt", folder / "link")


def test_a_sweep_walked_ahead_writes_what_a_sweep_walked_after_writes(tmp_path: Path) -> None:
    # The quarry script walks a plain sweep's folder while the engine is imported.
    folder = tmp_path / "docs"
    _odd_tree(folder)
    records = []
    for off, out in (("", "ahead"), ("1", "after")):
        env = {**os.environ, "QUARRY_NO_WALK_AHEAD": off} if off else None
        args = ["sweep", "--json", "--no-external", "--exclude", "*.log", str(folder)]
        proc = subprocess.run(
            [sys.executable, "-m", "tui", *args, "--out", str(tmp_path / out)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["files"] == 5
        lines = (tmp_path / out / "extract.jsonl").read_bytes().splitlines()
        records.append(
            sorted(
                (r["path"], r["status"], r["sha256"], r["size"], r["mtime_ns"])
                for r in map(json.loads, lines)
            )
        )
    assert records[0] == records[1]


def test_a_command_that_fails_leaves_no_walk_running(tmp_path: Path) -> None:
    # A walk ahead that never ends, and a command the parser refuses after the fork: the
    # child is ended with the command, not left to walk on.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    code = (
        "import sys, time\n"
        "import engine.walk\n"
        "from engine import ahead\n"
        "engine.walk.walk = lambda *a: time.sleep(600)\n"
        "start = ahead.start\n"
        "def started(argv):\n"
        "    start(argv)\n"
        "    print(ahead._pending.pid, flush=True)\n"
        "ahead.start = started\n"
        "from tui.cli import run\n"
        f"sys.argv = ['quarry', 'sweep', {str(tmp_path / 'a')!r}, '--json', "
        f"{str(tmp_path / 'b')!r}, '--out', {str(tmp_path / 's')!r}]\n"
        "run()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "unrecognized arguments" in proc.stderr, proc.stderr
    with pytest.raises(ProcessLookupError):  # killed and reaped before the command ended
        os.kill(int(proc.stdout), 0)
