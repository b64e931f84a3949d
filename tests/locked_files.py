"""Encrypted documents made in the test (never taken from a shared corpus): a PDF by pypdf's
writer and a DOCX by msoffcrypto-tool, each holding a known sentence."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from msoffcrypto.format.ooxml import OOXMLFile
from pypdf import PdfReader, PdfWriter

from fixtures.gen import _pdfwriter
from fixtures.gen.office import docx_members, w_par

PDF_WORDS = "Top secret quarterly figures"
"""The sentence in :func:`locked_pdf`."""
DOCX_WORDS = "Confidential minutes of the board"
"""The sentence in :func:`locked_docx`."""


def locked_pdf(password: str, algorithm: str = "AES-256") -> bytes:
    """A one-page PDF that opens only with ``password`` (pypdf's own encryption)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(_pdfwriter.text_pdf([PDF_WORDS]))))
    writer.encrypt(password, "owner-" + password, algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def locked_docx(password: str) -> bytes:
    """A DOCX encrypted with ``password`` (ECMA-376 agile, as Word does).

    8 KiB of stored random bytes ride along: msoffcrypto-tool 6 writes a broken container when
    the encrypted package is small enough for the OLE2 mini stream (nolze/msoffcrypto-tool#105).
    """
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in docx_members(w_par(DOCX_WORDS)).items():
            zf.writestr(name, data)
        zf.writestr(zipfile.ZipInfo("docProps/padding.bin"), os.urandom(8192))
    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain.getvalue())).encrypt(password, out)
    return out.getvalue()


def write_locked(folder: Path, password: str) -> dict[str, str]:
    """``locked.pdf`` and ``locked.docx`` in ``folder``; their names -> expected words."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "locked.pdf").write_bytes(locked_pdf(password))
    (folder / "locked.docx").write_bytes(locked_docx(password))
    return {"locked.pdf": PDF_WORDS, "locked.docx": DOCX_WORDS}
