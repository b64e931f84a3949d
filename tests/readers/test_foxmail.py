"""Foxmail mailboxes (``.box``): a binary separator before each message, read as an mbox's
messages are."""

from __future__ import annotations

import io
from email.message import EmailMessage
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.readers.mbox import FOXMAIL_SEPARATOR, split_foxmail
from tests.readkit import read_bytes

SEP = FOXMAIL_SEPARATOR + b"S\r\n"


def message(subject: str, body: str, attachment: bytes | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Li Wei <li@example.cn>"
    msg["To"] = "user@foxmail.com"
    msg["Subject"] = subject
    msg.set_content(body)
    if attachment is not None:
        msg.add_attachment(attachment, maintype="text", subtype="plain", filename="note.txt")
    return msg.as_bytes()


def test_each_message_of_a_foxmail_mailbox_is_read(tmp_path: Path) -> None:
    box = SEP + message("欢迎使用", "你好，世界。这是第一封邮件。") + SEP
    box += message("Second", "The second message.", b"attached words\n")
    outcome, text = read_bytes(tmp_path, "Inbox.box", box)
    assert (outcome.status, outcome.mime, outcome.reader) == ("ok", M.FOXMAIL, "foxmail")
    assert (outcome.extractor, outcome.pages) == ("foxmail", 2)
    assert "# message 1\n" in text and "Subject: 欢迎使用" in text and "这是第一封邮件" in text
    assert "# message 2\n" in text and "The second message." in text
    assert "attached words" in text
    assert [(m.path, m.status) for m in outcome.members] == [("message 2/note.txt", "ok")]
    assert "\x10" not in text and "\x11" not in text


def test_a_foxmail_mailbox_is_told_apart_by_its_first_bytes(tmp_path: Path) -> None:
    (tmp_path / "mail").write_bytes(SEP + message("x", "y"))
    assert detect(tmp_path / "mail") == M.FOXMAIL


def test_a_separator_after_a_message_that_did_not_end_its_line(tmp_path: Path) -> None:
    box = SEP + message("one", "first").rstrip(b"\n") + SEP + message("two", "second")
    outcome, text = read_bytes(tmp_path, "Inbox.box", box)
    assert outcome.pages == 2 and "first" in text and "second" in text


def test_a_mailbox_of_a_separator_alone_is_empty(tmp_path: Path) -> None:
    outcome, _text = read_bytes(tmp_path, "Empty.box", SEP)
    assert outcome.status == "empty"


_LINES = st.lists(
    st.binary(max_size=40).filter(lambda b: FOXMAIL_SEPARATOR not in b and b"\n" not in b),
    min_size=1,
    max_size=5,
)


@given(st.lists(_LINES, min_size=1, max_size=5))
@settings(max_examples=200, deadline=None)
def test_split_gives_back_the_messages_it_was_given(messages: list[list[bytes]]) -> None:
    bodies = [b"\n".join(lines) + b"\n" for lines in messages]
    box = b"".join(SEP + body for body in bodies)
    assert list(split_foxmail(io.BytesIO(box))) == [body for body in bodies if body.strip()]
