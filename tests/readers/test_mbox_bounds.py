"""Mailboxes under their bounds: a message cap, and the text read so far kept when a cap or
the read's time stops it, as for the other containers; headers decoded from their raw lines.

Time is never measured here: the read's clock (``ReadContext.remaining``) is replaced by one
that runs out after a given number of looks.
"""

from __future__ import annotations

from email.header import Header
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.extract import Outcome, ReadTask, read_one
from engine.limits import DEFAULT_LIMITS
from engine.readers.base import ReadContext, TextSink
from engine.readers.mail import EmailReader
from engine.tools import ToolSet
from tests.readers.test_archives import _read as read_named


def mbox(count: int) -> bytes:
    """A mailbox of ``count`` short messages."""
    return b"".join(
        b"From a@example.org Mon Jan  1 00:00:00 2024\n"
        + f"From: A <a@example.org>\nSubject: note {i}\n\nbody {i}\n\n".encode()
        for i in range(1, count + 1)
    )


def _read(tmp_path: Path, data: bytes, **limits: int) -> tuple[Outcome, str]:
    return read_named(tmp_path, "box.mbox", data, **limits)


def _clock(monkeypatch: pytest.MonkeyPatch, looks: int) -> None:
    """The read's time runs out after ``looks`` looks at the clock."""
    left = [looks]

    def remaining(self: ReadContext) -> float:
        left[0] -= 1
        return 3600.0 if left[0] >= 0 else 0.0

    monkeypatch.setattr(ReadContext, "remaining", remaining)


def test_the_message_cap_keeps_the_messages_before_it(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, mbox(30), mbox_messages=10)
    assert (outcome.status, outcome.extractor, outcome.pages) == ("ok", "mbox", 10)
    assert "# message 10\n" in text and "# message 11\n" not in text
    assert "Subject: note 10\n\nbody 10\n" in text
    assert text.endswith("[quarry: text cut at the mbox_messages cap: more than 10 messages]\n")
    assert outcome.error == "text cut: mbox_messages: more than 10 messages"


def test_a_mailbox_at_the_cap_is_read_whole(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, mbox(10), mbox_messages=10)
    assert (outcome.status, outcome.pages, outcome.error) == ("ok", 10, None)
    assert text.endswith("Subject: note 10\n\nbody 10\n")


def test_the_text_cap_keeps_the_count_of_messages_begun(tmp_path: Path) -> None:
    outcome, text = _read(tmp_path, mbox(30), max_chars=200)
    assert (outcome.status, outcome.extractor) == ("ok", "mbox")
    assert outcome.pages == text.count("# message ") == 4
    assert outcome.error == "text cut at the max_chars cap (200 characters)"


def test_a_read_out_of_time_keeps_the_messages_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clock(monkeypatch, looks=5)
    outcome, text = _read(tmp_path, mbox(50))
    assert (outcome.status, outcome.pages) == ("ok", 5)
    assert "Subject: note 5\n" in text and "# message 6\n" not in text
    assert text.endswith(
        "[quarry: text cut at the timeout_s cap: the read's 60 s ran out after 5 messages]\n"
    )


def test_a_read_out_of_time_before_any_text_is_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clock(monkeypatch, looks=0)
    outcome, text = _read(tmp_path, mbox(3))
    assert (outcome.status, outcome.reason, text) == ("error", "timeout", "")


def test_an_archive_out_of_time_keeps_the_members_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixtures.gen import archives as A

    members = {f"m{i}.txt": f"member {i}\n".encode() for i in range(1, 9)}
    path = tmp_path / "a.zip"
    path.write_bytes(A.zip_bytes(members))
    _clock(monkeypatch, looks=3)
    out = tmp_path / "out"
    out.mkdir()
    outcome = read_one(ReadTask(str(path), "0" * 64, DEFAULT_LIMITS, ToolSet.empty(), str(out)))
    assert outcome.status == "ok" and outcome.text_file is not None
    text = Path(outcome.text_file).read_text(encoding="utf-8")
    assert text.startswith("# member m1.txt\nmember 1\n# member m2.txt\nmember 2\n")
    assert "m4.txt" not in text
    assert "timeout_s cap: the read's 60 s ran out after 3 members" in text


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    subject=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80),
    charset=st.sampled_from(["utf-8", "iso-8859-1"]),
)
def test_encoded_subjects_come_back_as_written(tmp_path: Path, subject: str, charset: str) -> None:
    if charset == "iso-8859-1" and any(ord(c) > 0xFF for c in subject):
        charset = "utf-8"
    encoded = Header(subject, charset).encode()
    path = tmp_path / "m.eml"
    path.write_bytes(f"Subject: {encoded}\n\nbody\n".encode("ascii"))
    sink = TextSink(10**6)
    EmailReader().read(path, ReadContext(mime=M.EML), sink)
    first = sink.getvalue().splitlines()[0]
    words = " ".join(subject.split())
    # a subject of nothing but spaces is no subject line (Hypothesis found ' ')
    assert first == ("Subject: " + words if words else "")


def test_raw_eight_bit_headers_are_decoded(tmp_path: Path) -> None:
    path = tmp_path / "m.eml"
    path.write_bytes("From: Jörg <j@example.org>\nSubject: Café\n\nbody\n".encode())
    sink = TextSink(10**6)
    EmailReader().read(path, ReadContext(mime=M.EML), sink)
    assert sink.getvalue().startswith("From: Jörg <j@example.org>\nSubject: Café\n\n")
