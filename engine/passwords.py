"""Passwords for encrypted files: held in memory only, never shown, and tried in a worker.

An operator's retry may carry :class:`Passwords` (``quarry retry --password-file``, the
dashboard's ``P``). They travel with each read (``ReadTask.passwords``) through the worker's
pipe, in memory, and nowhere else: not in a record, the summary, an event, a log line, an
exception's text, a ``repr`` or a tool's command line. :class:`Passwords` hides its values
from ``repr`` and ``str`` so that a debug print or a traceback's locals cannot show them.

In the worker, a reader that raises :class:`~engine.errors.EncryptedFile` hands the file to
:func:`unlock`, which tries each password in order and writes a decrypted copy to a private
file (mode 0600) in the store's ``tmp/`` folder, where a killed worker's copy is removed by
the next writer (:meth:`engine.store.Store.clean_tmp`). The normal reader then reads that copy
(pdftotext, OCR and every other way included), and the copy is removed at once:

- PDF: pypdf ``decrypt``; the decrypted document is written out by pypdf (a password never
  reaches pdftotext's command line);
- OLE2 packages (encrypted DOCX/XLSX/PPTX, and RC4-encrypted ``.doc``/``.xls``/``.ppt``):
  msoffcrypto-tool.

A file that none of the passwords opens stays ``error/encrypted``, with a message that says
how many passwords were tried and never what they were.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engine.errors import EncryptedFile, UsageError
from engine.names import shown
from engine.store import folder_of, temp_file

_PDF_MAGIC = b"%PDF"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAX_FILE_BYTES = 1 << 20
"""Largest password file read (a password list, not a dictionary attack)."""


@dataclass(frozen=True, slots=True)
class Passwords:
    """Candidate passwords, tried in order; ``repr`` and ``str`` never show them."""

    values: tuple[str, ...] = field(default=(), repr=False)
    """The passwords (never empty strings: the empty password is always tried anyway)."""

    @classmethod
    def of(cls, values: Iterable[str]) -> Passwords:
        """Passwords from ``values``, empty ones and repeats left out, order kept."""
        return cls(tuple(dict.fromkeys(v for v in values if v)))

    def __add__(self, other: Passwords) -> Passwords:
        return Passwords.of((*self.values, *other.values))

    def __bool__(self) -> bool:
        return bool(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __repr__(self) -> str:
        return f"Passwords(<{len(self.values)} hidden>)"

    __str__ = __repr__


NO_PASSWORDS = Passwords()
"""No password: the default of every read."""


def did_not_open(passwords: Passwords) -> str:
    """The verdict on a file that none of ``passwords`` opened (never naming them)."""
    if len(passwords) == 1:
        return "needs a password: the password given did not open it"
    return f"needs a password: none of the {len(passwords)} passwords given opened it"


def read_password_file(path: str | os.PathLike[str]) -> Passwords:
    """The passwords of a file, one a line (tried in order); blank lines are skipped.

    Only line ends are stripped: a password may begin or end with spaces. Raises
    UsageError (one line, naming the file but no password) when the file is missing, is not
    a file, is too large, is not UTF-8 or holds no password.
    """
    name = shown(os.fspath(path))
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"no such password file: {name}") from None
    except IsADirectoryError:
        raise UsageError(
            f"not a file: {name} (a password file holds one password a line)"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read the password file {name}: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(f"the password file {name} is larger than {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"the password file {name} is not UTF-8 text") from None
    passwords = Passwords.of(line.rstrip("\r") for line in text.split("\n"))
    if not passwords:
        raise UsageError(f"the password file {name} holds no password (one a line)")
    return passwords


# -- in the worker ---------------------------------------------------------------------------


def unlock(path: Path, passwords: Passwords, scratch: str) -> Path:
    """A decrypted copy of ``path`` in a private file under ``scratch``; the caller removes it.

    Raises EncryptedFile when none of ``passwords`` opens it, or when its encryption is not
    one this module can undo.
    """
    with open(path, "rb") as fh:
        magic = fh.read(8)
    if magic.startswith(_PDF_MAGIC) or b"%PDF" in _head(path):
        decrypt = _decrypt_pdf
    elif magic == _OLE_MAGIC:
        decrypt = _decrypt_office
    else:
        raise EncryptedFile("needs a password: this kind of encryption cannot be opened here")
    with folder_of(scratch) as folder:  # the store's tmp/: never written through a link
        fd, name = temp_file(folder, ".unlocked-", path.suffix[:16])
    copy = Path(scratch) / name
    try:
        with os.fdopen(fd, "w+b") as out:
            if not decrypt(path, passwords, out):
                raise EncryptedFile(did_not_open(passwords))
    except BaseException:
        with contextlib.suppress(OSError):
            copy.unlink()
        raise
    return copy


def _head(path: Path) -> bytes:
    """The first KiB: a PDF may have junk before its header (readers allow 1 KiB)."""
    with open(path, "rb") as fh:
        return fh.read(1024)


def _decrypt_pdf(path: Path, passwords: Passwords, out: IO[bytes]) -> bool:
    """Write the decrypted PDF to ``out``; False when no password opens it."""
    import logging

    from engine.readers.base import quiet_library  # the readers' side, in the worker only

    with quiet_library("pypdf", logging.CRITICAL):
        return _pypdf_decrypt(path, passwords, out)


def _pypdf_decrypt(path: Path, passwords: Passwords, out: IO[bytes]) -> bool:
    from pypdf import PasswordType, PdfReader, PdfWriter
    from pypdf import errors as pe

    try:
        reader = PdfReader(path, strict=False)
        for candidate in passwords:
            if reader.decrypt(candidate) != PasswordType.NOT_DECRYPTED:
                PdfWriter(clone_from=reader).write(out)
                return True
        return False
    except pe.DependencyError:
        raise EncryptedFile(
            "needs a password: its encryption needs a library not installed"
        ) from None
    except (MemoryError, RecursionError, EncryptedFile):
        raise
    except Exception as exc:  # pypdf's own errors: the file, not the password, is at fault
        raise EncryptedFile(
            f"needs a password: pypdf could not decrypt it ({type(exc).__name__})"
        ) from None


def _decrypt_office(path: Path, passwords: Passwords, out: IO[bytes]) -> bool:
    """Write the decrypted Office file to ``out``; False when no password opens it."""
    import msoffcrypto
    from msoffcrypto import exceptions as me

    for candidate in passwords:
        with open(path, "rb") as fh:
            try:
                office = msoffcrypto.OfficeFile(fh)
                _load_key(office, candidate)
                out.seek(0)
                out.truncate()
                office.decrypt(out)
                return True
            except me.InvalidKeyError:
                continue
            except (MemoryError, RecursionError):
                raise
            except Exception as exc:  # an encryption it does not know, a broken package
                # The library's message is not kept: it is not ours to vouch for.
                kind = type(exc).__name__
                raise EncryptedFile(
                    f"needs a password: msoffcrypto-tool could not decrypt it ({kind})"
                ) from None
    return False


def _load_key(office: Any, password: str) -> None:
    """Give ``password`` to msoffcrypto-tool, verified: a wrong one raises InvalidKeyError.

    OOXML packages check a password only when asked (``verify_password``); the legacy
    formats (``.doc``, ``.xls``, ``.ppt``: Doc97File, Xls97File, Ppt97File) always check it
    and take no such keyword (passing it was a TypeError on every one of them).
    """
    if getattr(office, "format", None) == "ooxml":
        office.load_key(password=password, verify_password=True)
    else:
        office.load_key(password=password)
