"""Signed files (.p7m, PKCS#7/CMS SignedData): the document inside, whatever the encoding.

The envelopes are written here value by value (DER with definite lengths, BER with indefinite
ones and the content in chunks, base64 and PEM forms); nothing is signed for real, as nothing
is verified.
"""

from __future__ import annotations

import base64
import contextlib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import PKCS7_SIGNED, detect
from engine.errors import EncryptedFile
from engine.extract import Outcome
from engine.readers.compressed import signed_content
from tests.readkit import read_bytes

ID_DATA = bytes.fromhex("2a864886f70d010701")
ENVELOPED = bytes.fromhex("2a864886f70d010703")
SHA256 = bytes.fromhex("608648016503040201")
CORPUS = Path("/work/shared/corpus")


def tlv(tag: int, content: bytes) -> bytes:
    """A value with a definite length (DER)."""
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    size = (n.bit_length() + 7) // 8
    return bytes([tag, 0x80 | size]) + n.to_bytes(size, "big") + content


def indefinite(tag: int, *values: bytes) -> bytes:
    """A constructed value with an indefinite length (BER)."""
    return bytes([tag, 0x80]) + b"".join(values) + b"\0\0"


def signed(payload: bytes | None, *, ber: bool = False, chunk: int = 0) -> bytes:
    """ContentInfo { signedData, [0] SignedData { 1, {sha256}, {data, [0] payload}, {} } }."""
    wrap = (lambda tag, *v: indefinite(tag, *v)) if ber else (lambda tag, *v: tlv(tag, b"".join(v)))
    if payload is None:
        content = b""
    elif chunk:
        parts = [tlv(0x04, payload[i : i + chunk]) for i in range(0, len(payload), chunk)]
        content = wrap(0xA0, indefinite(0x24, *parts) if ber else tlv(0x24, b"".join(parts)))
    else:
        content = wrap(0xA0, tlv(0x04, payload))
    encap = wrap(0x30, tlv(0x06, ID_DATA), content)
    digests = tlv(0x31, tlv(0x30, tlv(0x06, SHA256)))
    body = wrap(0x30, tlv(0x02, b"\x01"), digests, encap, tlv(0x31, b""))
    return wrap(0x30, tlv(0x06, PKCS7_SIGNED), wrap(0xA0, body))


INVOICE = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<FatturaElettronica><Descrizione>Consulenza'
    b" tecnica, marzo</Descrizione><Importo>1250.00</Importo></FatturaElettronica>\n"
)


def read(tmp_path: Path, data: bytes, name: str = "fattura.xml.p7m") -> tuple[Outcome, str]:
    return read_bytes(tmp_path, name, data)


@pytest.mark.parametrize(
    "data",
    [
        signed(INVOICE),
        signed(INVOICE, ber=True),
        signed(INVOICE, ber=True, chunk=17),
        signed(INVOICE, chunk=64),
        base64.encodebytes(signed(INVOICE)),
        b"-----BEGIN PKCS7-----\n" + base64.encodebytes(signed(INVOICE)) + b"-----END PKCS7-----\n",
    ],
    ids=["der", "ber", "ber-chunks", "der-chunks", "base64", "pem"],
)
def test_the_signed_document_is_read_as_the_file_it_is(tmp_path: Path, data: bytes) -> None:
    outcome, text = read(tmp_path, data)
    assert (outcome.status, outcome.mime) == ("ok", M.PKCS7)
    assert outcome.extractor is not None and outcome.extractor.startswith("p7m+")
    assert "Consulenza tecnica, marzo" in text and "1250.00" in text


def test_a_signed_file_is_told_apart_by_its_first_bytes(tmp_path: Path) -> None:
    pem = b"-----BEGIN PKCS7-----\n" + base64.encodebytes(signed(INVOICE, ber=True))
    for data in (signed(INVOICE), base64.encodebytes(signed(INVOICE)), pem):
        (tmp_path / "invoice").write_bytes(data)
        assert detect(tmp_path / "invoice") == M.PKCS7
    (tmp_path / "invoice").write_bytes(b"MIIB is how this line of text begins\n")
    assert detect(tmp_path / "invoice") == M.PLAIN


def test_a_detached_signature_holds_no_text(tmp_path: Path) -> None:
    outcome, _text = read(tmp_path, signed(None))
    assert (outcome.status, outcome.reason) == ("empty", "no_text")
    assert outcome.error is not None and "detached" in outcome.error


def test_an_envelope_encrypted_for_its_recipients_is_encrypted(tmp_path: Path) -> None:
    data = tlv(0x30, tlv(0x06, ENVELOPED) + tlv(0xA0, tlv(0x30, tlv(0x02, b"\x00"))))
    outcome, _text = read(tmp_path, data)
    assert (outcome.status, outcome.reason) == ("error", "encrypted")


@pytest.mark.parametrize(
    "data",
    [
        b"\x30\x03\x02\x01\x01",  # a SEQUENCE, but no ContentInfo
        signed(INVOICE)[:-20],  # cut short
        b"\x30\x80\x06\x09" + PKCS7_SIGNED + b"\xa0\x80" + b"\x30\x80" * 5000,  # too deep
    ],
    ids=["no-contentinfo", "cut", "deep"],
)
def test_what_is_no_envelope_is_corrupt(tmp_path: Path, data: bytes) -> None:
    outcome, _text = read(tmp_path, data)
    assert (outcome.status, outcome.reason) == ("error", "corrupt"), outcome.error


@settings(max_examples=200)
@given(payload=st.binary(max_size=3000), ber=st.booleans(), chunk=st.integers(0, 300))
def test_any_payload_comes_back_whole(payload: bytes, ber: bool, chunk: int) -> None:
    assert signed_content(signed(payload, ber=ber, chunk=chunk)) == payload


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_content_or_a_verdict(tail: bytes) -> None:
    data = b"\x30\x80\x06\x09" + PKCS7_SIGNED + tail
    with contextlib.suppress(ValueError, EncryptedFile):
        signed_content(data)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_corpus_s_signed_xml(tmp_path: Path) -> None:
    found = sorted(CORPUS.rglob("*.p7m"))
    if not found:
        pytest.skip("no .p7m in the corpus")
    outcome, text = read(tmp_path, found[0].read_bytes(), found[0].name)
    assert outcome.status == "ok" and text.startswith('<?xml version="1.0"')


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not on PATH")
def test_what_openssl_signs_and_encrypts(tmp_path: Path) -> None:
    """Envelopes as a real signer writes them: DER, streamed BER, detached, encrypted."""
    key, cert, body = tmp_path / "k.pem", tmp_path / "c.pem", tmp_path / "body.txt"
    body.write_bytes(b"The quarterly figures are in this signed note.\n")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-subj", "/CN=quarry test", "-days", "2"],
        check=True, capture_output=True,
    )  # fmt: skip
    sign = ["openssl", "cms", "-sign", "-in", str(body), "-signer", str(cert), "-inkey", str(key)]
    made = {
        "der.p7m": [*sign, "-nodetach", "-outform", "DER"],
        "streamed.p7m": [*sign, "-nodetach", "-stream", "-outform", "DER"],
        "pem.p7m": [*sign, "-nodetach", "-outform", "PEM"],
        "detached.p7m": [*sign, "-outform", "DER"],
        "sealed.p7m": ["openssl", "cms", "-encrypt", "-in", str(body), "-aes256", "-outform",
                       "DER", str(cert)],
    }  # fmt: skip
    verdicts = {}
    for name, cmd in made.items():
        data = subprocess.run(cmd, check=True, capture_output=True).stdout
        outcome, text = read(tmp_path, data, name)
        verdicts[name] = (outcome.status, outcome.reason, "quarterly figures" in text)
    assert verdicts == {
        "der.p7m": ("ok", None, True),
        "streamed.p7m": ("ok", None, True),
        "pem.p7m": ("ok", None, True),
        "detached.p7m": ("empty", "no_text", False),
        "sealed.p7m": ("error", "encrypted", False),
    }
