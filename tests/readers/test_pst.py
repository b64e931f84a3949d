"""Outlook data files (.pst, .ost), read through readpst.

The real file (``data/pst/``, see its SOURCES.md) is told apart on any machine and read where
readpst is installed (CI installs pst-utils). On a bare machine readpst is a stand-in that
writes what readpst writes (a mailbox file per folder in the folder given), or writes without
end, or fails, to hold the reader to its bounds and verdicts.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, LimitExceeded, NeedsTool, TimeSpent, ToolFailed
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.pst import PstReader
from engine.tools import ToolSet, discover
from tests.quarrycli import quarry, sweep
from tests.readkit import stand_in

DATA = Path(__file__).parent / "data" / "pst"
REAL = DATA / "testPST_variousBodyTypes.pst"
HEADER = b"!BDN" + b"\x00" * 4 + b"SM" + b"\x17\x00" + b"\x00" * 500
"""The start of a PST (Unicode: version 23), enough for detection."""
MBOX = (
    b"From someone Mon Jan  1 00:00:00 2024\n"
    b"From: Ann <ann@example.com>\nSubject: quarterly figures\n\n"
    b"The invoice number 4711 is attached.\n\n"
)


def read(path: Path, tools: ToolSet, limits: Limits = DEFAULT_LIMITS) -> tuple[str, ReadInfo]:
    sink = TextSink(1_000_000)
    ctx = ReadContext(M.PST, limits=limits, tools=tools)
    info = PstReader().read(path, ctx, sink)
    return sink.getvalue(), info


def readpst(tmp_path: Path, script: str) -> ToolSet:
    """A stand-in readpst: ``$out`` is the folder it is told to write into, ``$file`` the
    file (as readpst is called: ``-q -8 -o OUT -- FILE``)."""
    head = 'out="$4"; file="$6"; [ "$1 $2 $3 $5" = "-q -8 -o --" ] || exit 9\n'
    return ToolSet((stand_in(tmp_path, "readpst", head + script),))


def pst(tmp_path: Path, name: str = "mail.pst") -> Path:
    path = tmp_path / name
    path.write_bytes(HEADER)
    return path


# -- told apart ------------------------------------------------------------------------------


def test_a_pst_and_an_ost_are_told_apart_by_their_magic_whatever_their_name(
    tmp_path: Path,
) -> None:
    assert detect(REAL) == M.PST
    renamed = tmp_path / "mailbox.dat"
    renamed.write_bytes(HEADER)
    assert detect(renamed) == M.PST
    offline = tmp_path / "cache.bin"
    offline.write_bytes(HEADER.replace(b"SM", b"SO", 1))
    assert detect(offline) == M.OST
    book = tmp_path / "book.pab"
    book.write_bytes(HEADER.replace(b"SM", b"AB", 1))  # an address book: no mail, not taken
    assert detect(book) == M.OCTET


def test_without_readpst_a_pst_waits_on_it(tmp_path: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(pst(tmp_path), ToolSet.empty())
    assert caught.value.tools == ("readpst",)


# -- with a stand-in -------------------------------------------------------------------------


def test_each_file_readpst_writes_is_a_member_and_its_mail_is_read(tmp_path: Path) -> None:
    mbox = MBOX.decode()
    tools = readpst(
        tmp_path,
        f"printf '%s' '{mbox}' > \"$out/Inbox.mbox\"\n"
        "printf 'BEGIN:VCARD\\nFN:Bob Builder\\nEND:VCARD\\n' > \"$out/Contacts.contacts\"\n",
    )
    text, info = read(pst(tmp_path), tools)
    assert info.extractor == "readpst"
    assert [m.path for m in info.members] == ["Contacts.contacts", "Inbox.mbox"]
    assert "# member Inbox.mbox" in text
    assert "The invoice number 4711 is attached." in text
    assert "Bob Builder" in text
    assert info.note is None


def test_output_past_the_byte_budget_stops_readpst_and_is_a_limit(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    tools = readpst(
        tmp_path,
        f'echo $$ > "{pidfile}"\n'
        'while :; do head -c 65536 /dev/zero >> "$out/Inbox.mbox" || exit 3; done\n',
    )
    limits = replace(DEFAULT_LIMITS, archive_bytes=1 << 20)
    with pytest.raises(LimitExceeded) as caught:
        read(pst(tmp_path), tools, limits)
    assert caught.value.limit == "archive_bytes"
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped, and reaped: nothing left running


def test_the_folders_written_before_a_bound_stopped_readpst_are_kept(tmp_path: Path) -> None:
    """Stopped at the byte budget while it writes its second folder, the first is read and
    the bound named after it (as a container's text is kept at a cap)."""
    mbox = MBOX.decode()
    tools = readpst(
        tmp_path,
        f"printf '%s' '{mbox}' > \"$out/Inbox.mbox\"\n"
        'while :; do head -c 65536 /dev/zero >> "$out/Junk.mbox" || exit 3; done\n',
    )
    sink = TextSink(1_000_000)
    limits = replace(DEFAULT_LIMITS, archive_bytes=1 << 20)
    with pytest.raises(LimitExceeded) as caught:
        PstReader().read(pst(tmp_path), ReadContext(M.PST, limits=limits, tools=tools), sink)
    assert caught.value.limit == "archive_bytes"
    assert "The invoice number 4711 is attached." in sink.getvalue()
    assert sink.info is not None and [m.path for m in sink.info.members] == ["Inbox.mbox"]


def test_a_mailbox_too_big_for_the_read_s_time_gives_the_folders_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """readpst still writing when its share of the read's time is spent is stopped; the
    folders it wrote are read in the time left, and the time is named.

    Its share is a tenth here, not three quarters: of a 4 s read, the second left after 3 s
    ran out under CI's load before the folder's first message was read (the member read's
    first imports)."""
    import engine.readers.pst as pst_reader

    monkeypatch.setattr(pst_reader, "TOOL_SHARE", 0.1)
    mbox = MBOX.decode()
    tools = readpst(tmp_path, f"printf '%s' '{mbox}' > \"$out/Inbox.mbox\"\nexec sleep 600")
    sink = TextSink(1_000_000)
    limits = replace(DEFAULT_LIMITS, timeout_s=30.0)
    ctx = ReadContext(M.PST, limits=limits, tools=tools, deadline=time.monotonic() + 30.0)
    with pytest.raises(TimeSpent, match="readpst stopped after"):
        PstReader().read(pst(tmp_path), ctx, sink)
    assert "The invoice number 4711 is attached." in sink.getvalue()


def test_more_files_than_members_stops_readpst_and_is_a_limit(tmp_path: Path) -> None:
    tools = readpst(tmp_path, 'i=0; while :; do i=$((i+1)); : > "$out/F$i.mbox" || exit 3; done')
    limits = replace(DEFAULT_LIMITS, archive_members=50)
    with pytest.raises(LimitExceeded) as caught:
        read(pst(tmp_path), tools, limits)
    assert caught.value.limit == "archive_members"


def test_a_file_readpst_cannot_read_is_corrupt_in_its_words(tmp_path: Path) -> None:
    tools = readpst(tmp_path, 'echo "Error opening File"; exit 1')
    with pytest.raises(CorruptFile, match="readpst could not read it: Error opening File"):
        read(pst(tmp_path), tools)


def test_readpst_killed_by_a_signal_is_the_tool_s_failure(tmp_path: Path) -> None:
    tools = readpst(tmp_path, "kill -SEGV $$")
    with pytest.raises(ToolFailed, match="killed by signal"):
        read(pst(tmp_path), tools)


def test_what_readpst_wrote_before_it_failed_is_read_and_the_stop_said(tmp_path: Path) -> None:
    mbox = MBOX.decode()
    tools = readpst(
        tmp_path,
        f"printf '%s' '{mbox}' > \"$out/Inbox.mbox\"\necho 'Could not get root record'; exit 1",
    )
    text, info = read(pst(tmp_path), tools)
    assert "The invoice number 4711 is attached." in text
    assert info.note == "readpst stopped before the end (Could not get root record)"


def test_a_link_among_what_readpst_wrote_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch codes\n")
    tools = readpst(tmp_path, f'ln -s "{secret}" "$out/Inbox.mbox"')
    text, info = read(pst(tmp_path), tools)
    assert "launch codes" not in text
    assert info.members == ()


# -- with the real tool ----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("readpst") is None, reason="no readpst")
def test_the_real_file_s_messages_are_read() -> None:
    text, info = read(REAL, discover())
    assert info.extractor == "readpst"
    assert text.count("# message ") == 4
    for body in ("Forwarded (html)", "Forwarded RTF", "Forwarded plain text"):
        assert body in text
    assert "# member tmp.mbox" in text


@pytest.mark.skipif(shutil.which("readpst") is None, reason="no readpst")
def test_a_damaged_pst_is_corrupt_in_readpst_s_words(tmp_path: Path) -> None:
    path = tmp_path / "cut.pst"
    path.write_bytes(REAL.read_bytes()[:4096])
    with pytest.raises(CorruptFile, match="readpst could not read it: "):
        read(path, discover())


def test_a_folder_with_a_pst_as_a_user_meets_it(tmp_path: Path) -> None:
    """Swept without readpst the file waits on it, and ``quarry tools`` names the package;
    swept again with it (where installed) the mail is read (``why: tools-changed``)."""
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copy(REAL, root / REAL.name)
    store = tmp_path / "s"
    proc = sweep(root, store, "--without", "readpst")
    assert proc.returncode == 0, proc.stderr
    proc = quarry("tools", store, "--json")
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["readpst"]["files_waiting"] == 1
    assert "pst-utils" in rows["readpst"]["install"]["debian"]
    proc = sweep(root, store)
    assert proc.returncode == 0, proc.stderr
    (record,) = map(orjson.loads, (store / "extract.jsonl").read_bytes().splitlines())
    assert record["mime"] == M.PST
    if shutil.which("readpst") is None:
        assert (record["status"], record["reason"]) == ("unsupported", "needs_tool")
    else:
        assert (record["status"], record["extractor"], record["why"]) == (
            "ok",
            "readpst",
            "tools-changed",
        )
