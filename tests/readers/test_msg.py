"""The Outlook .msg reader.

No .msg can be generated without an OLE2 writer, so the layout is checked with stand-in
message objects, junk input with real files, and real messages from the shared corpus when
it is present.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers import msg as msgmod
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.msg import MsgReader

CORPUS = Path("/work/shared/corpus")


@dataclass
class FakeAttachment:
    longFilename: str | None = None
    shortFilename: str | None = None
    data: Any = None
    hidden: bool = False


@dataclass
class FakeMessage:
    sender: str | None = "Ann <ann@example.org>"
    to: str | None = "Bob <bob@example.org>"
    cc: str | None = None
    date: Any = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    subject: str | None = "Quarterly\x00 numbers"
    body: Any = None
    htmlBody: Any = None
    rtfBody: Any = None
    attachments: list[FakeAttachment] = field(default_factory=list)

    def close(self) -> None:
        pass


HEAD = (
    "From: Ann <ann@example.org>\nTo: Bob <bob@example.org>\n"
    "Date: Tue, 02 Jan 2024 03:04:05 +0000\nSubject: Quarterly numbers\n\n"
)


def read(
    message: FakeMessage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **ctx: Any
) -> tuple[str, ReadInfo]:
    monkeypatch.setattr(msgmod, "_open", lambda path, encoding: message)
    sink = TextSink(100_000)
    info = MsgReader().read(tmp_path / "x.msg", ReadContext(M.MSG, **ctx), sink)
    return sink.getvalue(), info


def render(message: FakeMessage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    text, info = read(message, monkeypatch, tmp_path)
    assert info == ReadInfo("msg")
    return text


def test_plain_body_and_attachments(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    message = FakeMessage(
        body="Hello\r\nworld\r\n\r\n",
        attachments=[
            FakeAttachment("report.pdf"),
            FakeAttachment(None, "NOTES~1.TXT"),
            FakeAttachment(),
        ],
    )
    expected = HEAD + "Hello\nworld\n\nAttachments:\n- report.pdf\n- NOTES~1.TXT\n- (unnamed)\n"
    assert render(message, monkeypatch, tmp_path) == expected


def test_attachments_are_read_as_members(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each attachment's text after a ``# member`` line, its verdict in the record; an
    attached Outlook item written after them; an inline (hidden) one only named."""
    inner = FakeMessage(
        subject="Forwarded",
        body="Inner body",
        attachments=[FakeAttachment("inner.csv", data=b"a,b\n1,2\n")],
    )
    message = FakeMessage(
        body="Outer body",
        attachments=[
            FakeAttachment("notes.txt", data=b"Minutes of the meeting\n"),
            FakeAttachment("empty.txt", data=b""),
            FakeAttachment("broken.pdf", data=b"%PDF-1.4 not really"),
            FakeAttachment("logo.txt", data=b"inline logo\n", hidden=True),
            FakeAttachment("Forwarded", data=inner),
        ],
    )
    text, info = read(message, monkeypatch, tmp_path)
    assert text.startswith(HEAD + "Outer body\n\nAttachments:\n- notes.txt\n- empty.txt\n")
    assert "# member notes.txt\nMinutes of the meeting\n" in text
    assert "Subject: Forwarded\n\nInner body\n" in text
    assert "# member inner.csv\n" in text and "inline logo" not in text
    verdicts = {m.path: (m.status, m.reason) for m in info.members}
    assert verdicts["notes.txt"] == ("ok", None) and verdicts["inner.csv"][0] == "ok"
    assert verdicts["broken.pdf"][0] == "error"
    assert "logo.txt" not in verdicts and "empty.txt" not in verdicts
    assert info.extractor == "msg" and info.note == "1 of 3 members not read"


def test_attachments_past_the_depth_bound_are_only_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    message = FakeMessage(body="B", attachments=[FakeAttachment("a.txt", data=b"secret\n")])
    limits = ReadContext(M.MSG).limits
    text, info = read(message, monkeypatch, tmp_path, depth=limits.archive_depth)
    assert text == HEAD + "B\n\nAttachments:\n- a.txt\n" and info == ReadInfo("msg")


def test_html_body_goes_through_the_html_reader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    html = b"<html><body><p>Hi <b>there</b></p><script>x()</script></body></html>"
    text = render(FakeMessage(body="  ", htmlBody=html), monkeypatch, tmp_path)
    assert text.startswith(HEAD)
    assert "Hi there" in text and "x()" not in text


def test_rtf_body_is_the_last_resort(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rtf = rb"{\rtf1\ansi{\fonttbl{\f0 Arial;}}From RTF\par}"
    assert render(FakeMessage(rtfBody=rtf), monkeypatch, tmp_path) == HEAD + "From RTF\n"


def test_missing_and_broken_fields(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Broken(FakeMessage):
        def __getattribute__(self, name: str) -> Any:
            if name == "subject":  # extract-msg decodes lazily and can fail here
                raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")
            return super().__getattribute__(name)

    message = Broken(sender=None, cc="<>", date=datetime(1601, 1, 1, tzinfo=UTC), body="Body")
    assert render(message, monkeypatch, tmp_path) == "To: Bob <bob@example.org>\n\nBody\n"


@pytest.mark.parametrize(
    "data",
    [b"", b"not an outlook message", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600],
    ids=["zero-bytes", "text", "ole-junk"],
)
def test_junk_is_corrupt(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "junk.msg"
    path.write_bytes(data)
    with pytest.raises(CorruptFile) as caught:
        MsgReader().read(path, ReadContext(M.MSG), TextSink(1000))
    assert str(caught.value).startswith("extract-msg could not open it (")


REAL = {
    "unstructured/example-docs/fake-email.msg": (
        'From: "Matthew Robinson" <mrobinson@unstructured.io>',
        "Subject: Test Email\n\nThis is a test email to use for unit tests.",
    ),
    "unstructured/example-docs/fake-email-attachment.msg": (
        "Attachments:\n- fake-attachment.txt\n",
        "# member fake-attachment.txt\nHey this is a fake attachment!",
    ),
    "tika/tika-parsers/tika-parsers-standard/tika-parsers-standard-modules/"
    "tika-parser-microsoft-module/src/test/resources/test-documents/testMSG_att_msg.msg": (
        "# member smbprn.00009008.KdcPjl.pdf\n",
        "Subject: Test Attachment\n\nBlah blah blah",
    ),
    "tika/tika-parsers/tika-parsers-standard/tika-parsers-standard-modules/"
    "tika-parser-microsoft-module/src/test/resources/test-documents/testMSG_chinese.msg": (
        "From: Tests Chang@FT (張毓倫)",
        "MSG 格式測試",
    ),
}


@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_messages(rel: str) -> None:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip("shared corpus not present")
    sink = TextSink(1_000_000)
    MsgReader().read(path, ReadContext(M.MSG), sink)
    for part in REAL[rel]:
        assert part in sink.getvalue()
