"""E-mail and mbox readers: exact text for plain, HTML, multipart and broken messages."""

from __future__ import annotations

import base64
import quopri
from pathlib import Path

import pytest

from engine import mimes as M
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.mail import EmailReader
from engine.readers.mbox import MboxReader

HEAD = (
    b"From: =?utf-8?q?J=C3=B6rg_M=C3=BCller?= <jorg@example.org>\n"
    b"To: Ann <ann@example.org>, bob@example.org\n"
    b"Cc: carol@example.org\n"
    b"Date: Tue, 02 Jan 2024 03:04:05 +0000\n"
    b"Subject: Quarterly\n numbers\n"
    b"Message-ID: <1@example.org>\n"
)
HEAD_TEXT = (
    "From: Jörg Müller <jorg@example.org>\n"
    "To: Ann <ann@example.org>, bob@example.org\n"
    "Cc: carol@example.org\n"
    "Date: Tue, 02 Jan 2024 03:04:05 +0000\n"
    "Subject: Quarterly numbers\n"
    "\n"
)


def read_eml(tmp_path: Path, data: bytes) -> tuple[str, ReadInfo]:
    path = tmp_path / "mail.eml"
    path.write_bytes(data)
    sink = TextSink(10**9)
    info = EmailReader().read(path, ReadContext(mime=M.EML), sink)
    return sink.getvalue(), info


def read_mbox(tmp_path: Path, data: bytes) -> tuple[str, ReadInfo]:
    path = tmp_path / "box.mbox"
    path.write_bytes(data)
    sink = TextSink(10**9)
    info = MboxReader().read(path, ReadContext(mime=M.MBOX), sink)
    return sink.getvalue(), info


def test_plain_message(tmp_path: Path) -> None:
    body = "Hello Ann,\nthe numbers are up — a lot.\n".encode()
    data = HEAD + b"Content-Type: text/plain; charset=utf-8\n\n" + body
    text, info = read_eml(tmp_path, data)
    assert text == HEAD_TEXT + "Hello Ann,\nthe numbers are up — a lot.\n"
    assert info.extractor == "email"


def test_html_only_message(tmp_path: Path) -> None:
    data = HEAD + (
        b"MIME-Version: 1.0\nContent-Type: text/html; charset=iso-8859-1\n"
        b"Content-Transfer-Encoding: quoted-printable\n\n"
        b"<html><head><style>p{}</style></head><body><p>Caf=E9 &amp; cr=E8me</p>"
        b"<table><tr><td>a</td><td>b</td></tr></table></body></html>\n"
    )
    assert read_eml(tmp_path, data)[0] == HEAD_TEXT + "Café & crème\na\tb\n"


def alternative_with_attachment() -> bytes:
    pdf = base64.encodebytes(b"%PDF-1.4 fake").decode()
    return (
        HEAD
        + (
            "MIME-Version: 1.0\n"
            'Content-Type: multipart/mixed; boundary="outer"\n\n'
            "--outer\n"
            'Content-Type: multipart/alternative; boundary="inner"\n\n'
            "--inner\nContent-Type: text/plain; charset=utf-8\n\nPlain body.\n"
            "--inner\nContent-Type: text/html; charset=utf-8\n\n<p>HTML body.</p>\n"
            "--inner--\n"
            "--outer\n"
            'Content-Type: application/pdf; name="report.pdf"\n'
            'Content-Disposition: attachment; filename="report.pdf"\n'
            "Content-Transfer-Encoding: base64\n\n"
            f"{pdf}"
            "--outer\n"
            "Content-Type: image/png\n"
            "Content-Disposition: attachment; filename*=utf-8''gr%C3%BC%C3%9Fe.png\n\n"
            "xx\n"
            "--outer--\n"
        ).encode()
    )


def test_multipart_prefers_plain_and_lists_attachments(tmp_path: Path) -> None:
    text, info = read_eml(tmp_path, alternative_with_attachment())
    # The attachments are read too: the fake PDF fails alone, the "png" is two letters of text.
    assert text == HEAD_TEXT + (
        "Plain body.\n[attachment: report.pdf]\n[attachment: grüße.png]\n# member grüße.png\nxx\n"
    )
    assert [(m.path, m.status, m.reason) for m in info.members] == [
        ("report.pdf", "error", "corrupt"),
        ("grüße.png", "ok", None),
    ]
    assert info.note == "1 of 2 members not read"


def test_attached_message_is_written_after(tmp_path: Path) -> None:
    inner = b"From: x@example.org\nSubject: Inner\n\nInner body.\n"
    data = HEAD + (
        b'Content-Type: multipart/mixed; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\nOuter body.\n"
        b"--b\nContent-Type: message/rfc822\n\n" + inner + b"--b--\n"
    )
    text, _ = read_eml(tmp_path, data)
    assert text == HEAD_TEXT + (
        "Outer body.\n[attachment: message: Inner]\n\n"
        "From: x@example.org\nSubject: Inner\n\nInner body.\n"
    )


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        (b"Content-Type: text/plain; charset=x-no-such\n", "naïve".encode(), "naïve\n"),
        (b"Content-Type: text/plain; charset=utf-8\n", "naïve".encode("cp1252"), "naïve\n"),
        (b"Content-Type: text/plain; charset=koi8-r\n", "привет".encode("koi8_r"), "привет\n"),
        (
            b"Content-Type: text/plain\nContent-Transfer-Encoding: base64\n",
            b"SGVsbG8gd29ybGQ!!!=",
            "Hello world\n",
        ),
        (b"Content-Type: text/plain\nContent-Transfer-Encoding: x-weird\n", b"raw", "raw\n"),
    ],
    ids=["unknown-charset", "charset-lie", "koi8", "bad-base64", "unknown-cte"],
)
def test_broken_encodings_fall_back(
    tmp_path: Path, headers: bytes, body: bytes, expected: str
) -> None:
    text, _ = read_eml(tmp_path, b"Subject: s\n" + headers + b"\n" + body)
    assert text == "Subject: s\n\n" + expected


def test_broken_encoded_word_header(tmp_path: Path) -> None:
    text, _ = read_eml(tmp_path, b"Subject: =?bogus?q?Hi=FF?= there\n\nbody\n")
    assert text.startswith("Subject: Hi")
    assert text.endswith("there\n\nbody\n")


def test_no_headers_no_body(tmp_path: Path) -> None:
    assert read_eml(tmp_path, b"")[0] == "\n"


def test_deep_nesting_is_bounded(tmp_path: Path) -> None:
    depth = 60
    parts = [f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(depth)]
    closing = [f"\n--b{i}--\n" for i in reversed(range(depth))]
    data = "Subject: deep\n" + "".join(parts) + "Content-Type: text/plain\n\nbottom"
    data += "".join(closing)
    text, _ = read_eml(tmp_path, data.encode())
    assert text == "Subject: deep\n\n"


def test_very_deep_nesting_is_corrupt_or_bounded(tmp_path: Path) -> None:
    depth = 3000
    parts = [f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(depth)]
    try:
        text, _ = read_eml(tmp_path, ("Subject: deep\n" + "".join(parts)).encode())
    except CorruptFile as exc:
        assert "deep" in str(exc)
    else:
        assert text.startswith("Subject: deep\n")


def test_many_attachments(tmp_path: Path) -> None:
    parts = "".join(
        f'--b\nContent-Disposition: attachment; filename="f{i}.bin"\n\nx\n' for i in range(3_000)
    )
    data = f'Subject: many\nContent-Type: multipart/mixed; boundary="b"\n\n{parts}--b--\n'
    text, _ = read_eml(tmp_path, data.encode())
    assert text.count("[attachment: ") == 3_000
    assert "[attachment: f2999.bin]\n# member f0.bin\nx\n" in text
    assert text.endswith("# member f2999.bin\nx\n")


MBOX = (
    b"From alice@example.org Mon Jan  1 10:00:00 2024\n"
    b"From: alice@example.org\nSubject: one\n\nFirst body.\n>From the quoted line.\n\n"
    b"From bob@example.org Mon Jan  1 11:00:00 2024\n"
    b"From: bob@example.org\nSubject: two\nContent-Type: text/html\n\n<p>Second <b>body</b></p>\n\n"
    b"From carol@example.org Mon Jan  1 12:00:00 2024\n"
    b"From: carol@example.org\nSubject: three\n\nThird body.\nFrom inside a paragraph stays.\n"
)


def test_mbox_three_messages(tmp_path: Path) -> None:
    text, info = read_mbox(tmp_path, MBOX)
    assert text == (
        "# message 1\nFrom: alice@example.org\nSubject: one\n\n"
        "First body.\nFrom the quoted line.\n"
        "\n# message 2\nFrom: bob@example.org\nSubject: two\n\nSecond body\n"
        "\n# message 3\nFrom: carol@example.org\nSubject: three\n\n"
        "Third body.\nFrom inside a paragraph stays.\n"
    )
    assert (info.extractor, info.pages) == ("mbox", 3)


def test_mbox_crlf_and_empty(tmp_path: Path) -> None:
    text, info = read_mbox(tmp_path, MBOX.replace(b"\n", b"\r\n"))
    assert info.pages == 3
    assert "Second body\n" in text
    assert read_mbox(tmp_path, b"")[1].pages == 0


INNER = b"From: x@example.org\nSubject: Inner\n\nInner body, caf\xc3\xa9 = 2.\n"


def _attached(cte: bytes, body: bytes) -> bytes:
    return HEAD + (
        b'Content-Type: multipart/mixed; boundary="b"\n\n'
        b"--b\nContent-Type: text/plain\n\nOuter body.\n"
        b"--b\nContent-Type: message/rfc822\nContent-Transfer-Encoding: " + cte + b"\n"
        b'Content-Disposition: attachment; filename="fwd.eml"\n\n' + body + b"\n--b--\n"
    )


LONG = INNER.replace(b"\n\n", b"\n\n" + b"x" * 90 + b" ")  # (a soft line break in it)


@pytest.mark.parametrize(
    ("cte", "body", "inner"),
    [
        (b"base64", base64.encodebytes(INNER), INNER),
        (b"base64", base64.encodebytes(INNER).replace(b"\n", b"\n!!"), INNER),  # bad bytes
        (b"quoted-printable", quopri.encodestring(INNER), INNER),
        (b"Quoted-Printable", quopri.encodestring(LONG), LONG),
    ],
    ids=["base64", "bad-base64", "quoted-printable", "qp-soft-break"],
)
def test_an_attached_message_its_sender_encoded_is_decoded(
    tmp_path: Path, cte: bytes, body: bytes, inner: bytes
) -> None:
    """RFC 2046 allows only 7bit, 8bit or binary for message/rfc822; GroupWise sends base64
    (Tika's testGroupWiseEml.eml): the encoded lines were the text, in no message."""
    text, _ = read_eml(tmp_path, _attached(cte, body))
    head, _, attached = text.partition("[attachment: fwd.eml]\n\n")
    assert head == HEAD_TEXT + "Outer body.\n"
    assert attached == inner.decode()


def test_an_attached_message_sent_as_the_rfc_has_it_is_not_decoded_again(
    tmp_path: Path,
) -> None:
    inner = b"From: x@example.org\nSubject: Inner\n\nA body that looks like base64 QUJD\n"
    text, _ = read_eml(tmp_path, _attached(b"base64", inner))  # (labelled, never encoded)
    assert text.endswith("Subject: Inner\n\nA body that looks like base64 QUJD\n")
