"""XML files: the text without its base64 contents, and the documents those carry as members
(an Italian e-invoice's PDF attachments, signed or not)."""

from __future__ import annotations

import base64
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.readers import xmldoc
from fixtures.gen._pdfwriter import text_pdf
from tests.readers.test_p7m import signed
from tests.readkit import read_bytes

PDF = text_pdf(["Fattura numero 42 del 3 marzo", "Totale dovuto 1250,00 euro"])


def _wrapped(data: bytes, width: int = 76) -> str:
    flat = base64.b64encode(data).decode("ascii")
    return "\n".join(flat[i : i + width] for i in range(0, len(flat), width))


def invoice(attachment: bytes, name: str = "fattura.pdf", wrap: int = 76) -> bytes:
    body = _wrapped(attachment, wrap) if wrap else base64.b64encode(attachment).decode()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<p:FatturaElettronica xmlns:p="urn:x">\n'
        "<Descrizione>Consulenza tecnica, marzo</Descrizione>\n<Allegati>\n"
        f"  <NomeAttachment>{name}</NomeAttachment>\n  <FormatoAttachment>PDF"
        f"</FormatoAttachment>\n  <Attachment>{body}</Attachment>\n</Allegati>\n"
        "</p:FatturaElettronica>\n"
    ).encode()


@pytest.mark.parametrize("wrap", [76, 64, 0], ids=["mime", "pem", "one-line"])
def test_an_invoice_s_attachment_is_a_member_and_not_its_text(tmp_path: Path, wrap: int) -> None:
    outcome, text = read_bytes(tmp_path, "IT01234567890_00001.xml", invoice(PDF, wrap=wrap))
    assert (outcome.status, outcome.mime, outcome.reader) == ("ok", M.XML, "xml")
    assert [(m.path, m.status) for m in outcome.members] == [("fattura.pdf", "ok")]
    assert "Consulenza tecnica, marzo" in text and "<NomeAttachment>fattura.pdf" in text
    assert "Totale dovuto 1250,00 euro" in text  # the PDF's own text, after the XML's
    assert "<Attachment></Attachment>" in text  # its base64 taken out
    assert outcome.quality is not None and outcome.quality.verdict == "good"


def test_a_signed_invoice_s_attachment_is_a_member_too(tmp_path: Path) -> None:
    outcome, text = read_bytes(tmp_path, "IT01234567890_00001.xml.p7m", signed(invoice(PDF)))
    assert (outcome.status, outcome.mime) == ("ok", M.PKCS7)
    assert [(m.path, m.status) for m in outcome.members] == [("fattura.pdf", "ok")]
    assert "Totale dovuto 1250,00 euro" in text and "JVBERi" not in text


def test_an_attachment_without_a_file_name_is_named_by_its_element(tmp_path: Path) -> None:
    data = f"<doc><ns:blob>{_wrapped(PDF)}</ns:blob><blob>{_wrapped(PDF)}</blob></doc>"
    outcome, _text = read_bytes(tmp_path, "soap.xml", data.encode())
    assert [m.path for m in outcome.members] == ["blob-1", "blob-2"]


def test_base64_of_no_document_leaves_the_text_and_adds_no_member(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(3000)
    outcome, text = read_bytes(tmp_path, "logo.xml", f"<logo>{_wrapped(png)}</logo>".encode())
    assert (outcome.status, outcome.members, text) == ("ok", (), "<logo></logo>")


@pytest.mark.parametrize(
    "node",
    [
        "a long paragraph of words " * 60,  # prose: spaces
        "\n".join(["apple", "banana", "cherry", "dates"] * 80),  # a word a line: ragged
        "Zm9v" * 60,  # too short to be taken for base64 content (240 characters)
        (" " * 99 + "\n") * 20,  # an XMP packet's padding: white space alone
    ],
    ids=["prose", "word-list", "short", "padding"],
)
def test_text_that_is_no_base64_stays(tmp_path: Path, node: str) -> None:
    _outcome, text = read_bytes(tmp_path, "words.xml", f"<w>{node}</w>".encode())
    assert text == f"<w>{node}</w>"


def test_a_file_past_the_whole_size_is_read_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = invoice(PDF)
    monkeypatch.setattr(xmldoc, "WHOLE_BYTES", len(data) - 1)
    outcome, text = read_bytes(tmp_path, "big.xml", data)
    assert outcome.members == () and _wrapped(PDF)[:76] in text


_OLE = base64.b64encode(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" * 200).decode()
_PIECES = st.sampled_from(
    ["<a>", "</a>", "<NomeAttachment>x.pdf</NomeAttachment>", _wrapped(PDF), _wrapped(PDF)[:300],
     "text ", "\n", "=", "<", ">", _OLE, " " * 300]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=12))
@settings(max_examples=200, deadline=None)
def test_any_text_is_kept_but_for_whole_base64_contents(pieces: list[str]) -> None:
    """Whatever the pieces: no exception; only element contents go, never markup, each of
    at least MIN_BASE64 characters; no more documents than contents taken."""
    text = "".join(pieces)
    kept, found = xmldoc.taken_out(text)
    assert (kept.count("<"), kept.count(">")) == (text.count("<"), text.count(">"))
    gone = len(text) - len(kept)
    assert gone == 0 or gone >= xmldoc.MIN_BASE64
    assert len(found) * xmldoc.MIN_BASE64 <= gone
