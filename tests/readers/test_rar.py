"""RAR archives through bsdtar's tar stream: members, verdicts, and a tool that is stopped.

The stream's handling (a tool that fails before or after some members, one that hangs, one
that writes for ever, a reader that leaves early) is checked with a stand-in ``bsdtar`` that
writes a tar stream with Python's tarfile, so it runs on a machine without libarchive; the real
``bsdtar`` reads RAR 4 archives written byte by byte (:mod:`tests.readers.rarkit`), damaged
ones and any bytes after a RAR signature, and the shared corpus's RAR when it is there.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, EncryptedFile, LimitExceeded, NeedsTool, ToolFailed
from engine.extract import Outcome, ReadTask, read_one
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.archive import RarReader
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.registry import reader_for
from engine.readers.toolpipe import piped
from engine.records import Member
from engine.tools import Tool, ToolSet, discover
from fixtures.gen.common import zip_bytes
from tests.readers.rarkit import MARKER, rar4

BSDTAR = shutil.which("bsdtar")
real = pytest.mark.skipif(BSDTAR is None, reason="bsdtar (libarchive-tools) not on PATH")
CORPUS_RAR = Path(
    "/work/shared/corpus/tika/tika-parsers/tika-parsers-standard/tika-parsers-standard-modules/"
    "tika-parser-pkg-module/src/test/resources/test-documents/test-documents.rar"
)

_FAKE = """\
import io, os, sys, tarfile, time
with open({pidfile!r}, "w") as f:
    f.write(str(os.getpid()))
out = sys.stdout.buffer
buf = io.BytesIO()
tf = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
for name, data in {members!r}:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))
if {whole!r}:
    tf.close()
out.write(buf.getvalue())
if {endless!r}:
    info = tarfile.TarInfo("endless.txt")
    info.size = 1 << 40
    out.write(info.tobuf(tarfile.PAX_FORMAT))
    while True:
        out.write(b"a" * 65536)
out.flush()
sys.stderr.write({err!r})
sys.stderr.flush()
if {hang!r}:
    time.sleep(600)
sys.exit({code!r})
"""


@dataclasses.dataclass
class Fake:
    tool: Tool
    pidfile: Path

    def gone(self) -> bool:
        """Whether the stand-in's process has ended (and was reaped)."""
        pid = int(self.pidfile.read_text())
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def fake_bsdtar(
    tmp_path: Path,
    members: list[tuple[str, bytes]],
    *,
    code: int = 0,
    err: str = "",
    whole: bool = True,
    hang: bool = False,
    endless: bool = False,
) -> Fake:
    """A ``bsdtar`` that writes ``members`` as a tar stream, then ``err``, and exits ``code``
    (``whole``: with the tar's end; ``hang``: not before it is killed; ``endless``: a member
    that never ends)."""
    pidfile = tmp_path / "fake.pid"
    script = tmp_path / "fake_bsdtar.py"
    script.write_text(
        _FAKE.format(
            pidfile=str(pidfile), members=members, code=code, err=err, whole=whole, hang=hang,
            endless=endless,
        )
    )  # fmt: skip
    exe = tmp_path / "bin" / "bsdtar"
    exe.parent.mkdir(exist_ok=True)
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    exe.chmod(0o755)
    return Fake(Tool("bsdtar", str(exe), "3.6.2"), pidfile)


def read(path: Path, tools: ToolSet, limits: Limits = DEFAULT_LIMITS) -> tuple[str, ReadInfo]:
    sink = TextSink(1_000_000)
    info = RarReader().read(path, ReadContext("application/vnd.rar", limits, tools), sink)
    return sink.getvalue(), info


def read_task(
    tmp_path: Path, data: bytes, tools: ToolSet, name: str = "a.rar", **limits: int
) -> tuple[Outcome, str]:
    """The whole read of a file ``name`` holding ``data``, as a worker makes it."""
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    task = ReadTask(str(path), "0" * 64, dataclasses.replace(DEFAULT_LIMITS, **limits),
                    tools, str(out))  # fmt: skip
    outcome = read_one(task)
    text = Path(outcome.text_file).read_text(encoding="utf-8") if outcome.text_file else ""
    return outcome, text


@pytest.fixture
def rar(tmp_path: Path) -> Path:
    path = tmp_path / "a.rar"
    path.write_bytes(rar4([("a.txt", b"alpha\n")]))
    return path


# -- the stand-in: the stream and the tool's end ---------------------------------------------


def test_without_bsdtar_a_rar_waits_for_it(rar: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(rar, ToolSet.empty())
    assert caught.value.tools == ("bsdtar",)
    assert detect(rar) == "application/vnd.rar"


def test_each_member_is_read_from_the_stream(tmp_path: Path, rar: Path) -> None:
    fake = fake_bsdtar(
        tmp_path,
        [
            ("notes/a.txt", b"alpha\n"),
            ("b.html", b"<p>beta</p>"),
            ("inner.zip", zip_bytes({"c.txt": b"gamma\n"})),
        ],
    )
    text, info = read(rar, ToolSet((fake.tool,)))
    assert text == (
        "# member notes/a.txt\nalpha\n# member b.html\nbeta\n"
        "# member inner.zip\n# member inner.zip//c.txt\ngamma\n"
    )
    assert [(m.path, m.status) for m in info.members] == [
        ("notes/a.txt", "ok"), ("b.html", "ok"), ("inner.zip", "ok"), ("inner.zip//c.txt", "ok"),
    ]  # fmt: skip
    assert info.extractor == "bsdtar" and info.note is None
    assert fake.gone()


def test_a_tool_that_fails_after_some_members_keeps_them_and_says_why(
    tmp_path: Path, rar: Path
) -> None:
    fake = fake_bsdtar(
        tmp_path, [("a.txt", b"alpha\n")], code=1, whole=False,
        err="bsdtar: Truncated RAR file data\nbsdtar: Error exit delayed from previous errors.\n",
    )  # fmt: skip
    text, info = read(rar, ToolSet((fake.tool,)))
    assert text == "# member a.txt\nalpha\n"
    assert info.members[-1] == Member(
        "(rest of the archive)", "error", "corrupt", "bsdtar: Truncated RAR file data"
    )
    assert info.note == "1 of 2 members not read"


def test_an_archive_that_needs_a_password_is_encrypted(tmp_path: Path, rar: Path) -> None:
    fake = fake_bsdtar(tmp_path, [], code=1, err="bsdtar: Encryption is not supported\n")
    with pytest.raises(EncryptedFile, match="Encryption is not supported"):
        read(rar, ToolSet((fake.tool,)))


def test_a_failure_without_words_is_still_a_verdict(tmp_path: Path, rar: Path) -> None:
    fake = fake_bsdtar(tmp_path, [], code=1, whole=False, err="bsdtar: (null)\n")
    with pytest.raises(CorruptFile, match=r"stopped \(exit 1\) without a reason"):
        read(rar, ToolSet((fake.tool,)))


def test_a_tool_that_hangs_is_stopped_at_its_time_and_the_members_kept(
    tmp_path: Path, rar: Path
) -> None:
    fake = fake_bsdtar(tmp_path, [("a.txt", b"alpha\n")], whole=False, hang=True)
    text, info = read(rar, ToolSet((fake.tool,)), Limits(tool_timeout_s=1.0))
    assert text == "# member a.txt\nalpha\n"
    rest = info.members[-1]
    assert (rest.path, rest.status, rest.reason) == (
        "(rest of the archive)",
        "error",
        "tool_failed",
    )
    assert rest.error == "bsdtar timed out after 1 s"
    assert fake.gone()


def test_a_tool_that_hangs_before_any_member_fails_the_read(tmp_path: Path, rar: Path) -> None:
    fake = fake_bsdtar(tmp_path, [], whole=False, hang=True)
    with pytest.raises(ToolFailed, match="timed out"):
        read(rar, ToolSet((fake.tool,)), Limits(tool_timeout_s=1.0))
    assert fake.gone()


def test_a_member_that_never_ends_stops_at_the_archive_budget(tmp_path: Path, rar: Path) -> None:
    """Past its own cap a member is passed over, which costs the tool inflating all of it:
    counted against the archive's budget, it stops the read, and the tool with it."""
    fake = fake_bsdtar(tmp_path, [("a.txt", b"alpha\n")], whole=False, endless=True)
    limits = Limits(zip_member_bytes=64 * 1024, archive_bytes=1 << 20)
    with pytest.raises(LimitExceeded) as caught:
        read(rar, ToolSet((fake.tool,)), limits)
    assert caught.value.limit == "archive_bytes"
    assert fake.gone()


def test_a_member_past_its_cap_is_passed_over_and_the_next_one_read(tmp_path: Path) -> None:
    fake = fake_bsdtar(tmp_path, [("big.txt", b"b" * 100_000), ("small.txt", b"small\n")])
    outcome, text = read_task(tmp_path, rar4([]), ToolSet((fake.tool,)), zip_member_bytes=50_000)
    assert text == "# member small.txt\nsmall\n"
    assert [(m.path, m.status, m.reason) for m in outcome.members] == [
        ("big.txt", "error", "limit"), ("small.txt", "ok", None),
    ]  # fmt: skip


def test_a_reader_that_leaves_early_stops_the_tool(tmp_path: Path, rar: Path) -> None:
    fake = fake_bsdtar(tmp_path, [], whole=False, endless=True)
    ctx = ReadContext("application/vnd.rar", tools=ToolSet((fake.tool,)))
    with pytest.raises(RuntimeError), piped(ctx, "bsdtar", ["-cf", "-"]) as tool:
        assert tool.stdout.read(10)
        raise RuntimeError("the reader is done")
    assert fake.gone()


# -- the real bsdtar ------------------------------------------------------------------------


@real
def test_a_rar_s_members_with_the_real_tool(tmp_path: Path) -> None:
    data = rar4([
        ("docs/a.txt", b"alpha beta\n"),
        ("docs/page.html", b"<html><body><h1>Title</h1><p>Body text</p></body></html>"),
        ("inner.zip", zip_bytes({"deep/c.txt": b"gamma\n"})),
    ])  # fmt: skip
    outcome, text = read_task(tmp_path, data, discover())
    assert (outcome.status, outcome.extractor, outcome.mime) == (
        "ok",
        "bsdtar",
        "application/vnd.rar",
    )
    assert "# member docs/a.txt\nalpha beta\n" in text
    assert "Body text" in text and "# member inner.zip//deep/c.txt\ngamma\n" in text
    assert [m.status for m in outcome.members] == ["ok"] * 4


@real
def test_a_cut_rar_keeps_its_first_members(tmp_path: Path) -> None:
    data = rar4([("a.txt", b"alpha\n"), ("b.txt", b"beta " * 2000)])
    outcome, text = read_task(tmp_path, data[: len(data) - 5000], discover())
    assert outcome.status == "ok" and text.startswith("# member a.txt\nalpha\n")
    rest = outcome.members[-1]
    assert (rest.path, rest.status, rest.reason) == ("b.txt", "error", "corrupt")  # cut inside


@real
def test_junk_after_the_signature_is_corrupt_in_bsdtar_s_words(tmp_path: Path) -> None:
    outcome, _text = read_task(tmp_path, MARKER + b"garbage" * 10, discover())
    assert (outcome.status, outcome.reason) == ("error", "corrupt")
    assert outcome.error is not None and outcome.error.startswith("bsdtar: ")
    assert str(tmp_path) not in outcome.error  # the tool's words, without the file's path


@real
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tail=st.binary(max_size=400))
def test_any_bytes_after_the_signature_give_a_verdict(tmp_path: Path, tail: bytes) -> None:
    outcome, _text = read_task(tmp_path, MARKER + tail, discover())
    assert outcome.status in ("ok", "empty", "error")
    assert outcome.reason != "crashed", outcome.error


@pytest.mark.skipif(
    BSDTAR is None or not CORPUS_RAR.is_file(), reason="bsdtar or the corpus missing"
)
def test_the_corpus_rar(tmp_path: Path) -> None:
    outcome, text = read_task(tmp_path, CORPUS_RAR.read_bytes(), discover())
    assert outcome.status == "ok"
    assert len(outcome.members) == 9 and all(m.status == "ok" for m in outcome.members)
    assert "Apache Tika is a toolkit" in text


# -- as a user meets it ----------------------------------------------------------------------


def _quarry(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args], capture_output=True, timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_rar_waits_on_bsdtar_and_is_read_once_it_is_there(tmp_path: Path) -> None:
    """Swept without the tool, the RAR is ``unsupported/needs_tool`` and ``quarry tools``
    counts it waiting on bsdtar; swept with it (where it is installed), it is read."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "mail.rar").write_bytes(rar4([("a.txt", b"alpha\n")]))
    store = tmp_path / "s"
    proc = _quarry(
        "sweep", "-q", "--workers", "1", "--without", "bsdtar", str(root), "--out", str(store)
    )
    assert proc.returncode == 0, proc.stderr
    proc = _quarry("show", str(root / "mail.rar"), "--store", str(store), "--json")
    record = orjson.loads(proc.stdout)
    assert (record["status"], record["reason"]) == ("unsupported", "needs_tool"), record
    proc = _quarry("tools", str(store), "--json")
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["bsdtar"]["files_waiting"] == 1
    assert "libarchive-tools" in rows["bsdtar"]["install"]["debian"]
    if BSDTAR is None:
        return
    proc = _quarry("sweep", "-q", "--workers", "1", str(root), "--out", str(store))
    assert proc.returncode == 0, proc.stderr
    proc = _quarry("show", str(root / "mail.rar"), "--store", str(store), "--json")
    record = orjson.loads(proc.stdout)
    assert (record["status"], record["extractor"], record["why"]) == (
        "ok",
        "bsdtar",
        "tools-changed",
    )


# -- the other formats bsdtar reads ----------------------------------------------------------

HEADS = {
    M.CAB: b"MSCF\0\0\0\0" + bytes(60),
    M.XAR: b"xar!\x00\x1c\x00\x01" + bytes(60),
    M.LHA: b"\x25\x7a-lh5-" + bytes(60),
    M.CPIO: b"070701" + b"0" * 104 + bytes(20),
}


@pytest.mark.parametrize("mime", sorted(HEADS))
def test_libarchive_formats_are_told_apart_and_wait_on_bsdtar(tmp_path: Path, mime: str) -> None:
    path = tmp_path / "archive.bin"
    path.write_bytes(HEADS[mime])
    assert detect(path) == mime
    reader = reader_for(mime)
    assert reader is not None and reader.tools == ("bsdtar",)
    with pytest.raises(NeedsTool):
        reader.read(path, ReadContext(mime, tools=ToolSet.empty()), TextSink(1000))


def test_text_that_begins_as_a_cpio_header_is_text(tmp_path: Path) -> None:
    path = tmp_path / "numbers.csv"
    path.write_text("070707,070701,12\n" * 20)
    assert detect(path) == M.CSV


@real
@pytest.mark.parametrize("fmt", ["iso9660", "xar", "cpio"])
def test_what_bsdtar_writes_it_reads(tmp_path: Path, fmt: str) -> None:
    src = tmp_path / "src"
    (src / "docs").mkdir(parents=True)
    (src / "docs" / "readme.txt").write_text("hello from the image\n")
    (src / "page.html").write_text("<html><body><p>A page on a disc</p></body></html>")
    made = tmp_path / f"made.{'iso' if fmt == 'iso9660' else fmt}"
    assert BSDTAR is not None
    subprocess.run([BSDTAR, "--format", fmt, "-cf", str(made), "-C", str(src), "."], check=True)
    outcome, text = read_task(tmp_path, made.read_bytes(), discover(), name=made.name)
    assert (outcome.status, outcome.extractor) == ("ok", "bsdtar"), outcome.error
    assert "hello from the image" in text and "A page on a disc" in text
