"""MIME detection: content first, extension second.

Magic bytes decide where they exist (PDF, images, RTF, OLE2, zip); zip containers are told
apart by what is inside (ODF's ``mimetype`` member, OOXML's part names, EPUB's container);
text is sniffed for HTML, XML roots, e-mail headers and mbox. Only when the content says
nothing specific does the extension decide. A ``.pdf`` that is really HTML is HTML.
"""

from __future__ import annotations

import base64
import os
import re
import struct
import zipfile
from pathlib import Path

from engine import mimes as M

HEAD_BYTES = 8192
_ODF = "application/vnd.oasis.opendocument."
_SUN = "application/vnd.sun.xml."

_EXT: dict[str, str] = {
    ".txt": M.PLAIN, ".text": M.PLAIN, ".log": M.PLAIN, ".md": "text/markdown",
    ".rst": "text/x-rst", ".org": "text/x-org", ".ini": M.PLAIN, ".cfg": M.PLAIN,
    ".conf": M.PLAIN, ".vtt": "text/vtt", ".srt": M.PLAIN, ".tex": "text/x-tex",
    ".json": M.JSON, ".ndjson": "application/x-ndjson", ".jsonl": "application/x-ndjson",
    ".yaml": "application/x-yaml", ".yml": "application/x-yaml", ".toml": "application/toml",
    ".xml": M.XML, ".sql": "application/sql", ".svg": M.SVG, ".pem": "application/x-pem-file",
    ".crt": "application/x-pem-file", ".key": "application/x-pem-file",
    ".py": "text/x-python", ".js": "application/javascript", ".ts": "text/x-typescript",
    ".c": "text/x-c", ".h": "text/x-c", ".cpp": "text/x-c++", ".java": "text/x-java",
    ".go": "text/x-go", ".rs": "text/x-rust", ".rb": "text/x-ruby", ".sh": "application/x-sh",
    ".css": "text/css", ".ics": "text/calendar",
    ".html": M.HTML, ".htm": M.HTML, ".xhtml": M.XHTML,
    ".csv": M.CSV, ".tsv": M.TSV, ".tab": M.TSV,
    ".eml": M.EML, ".mbox": M.MBOX, ".msg": M.MSG, ".rtf": M.RTF, ".pdf": M.PDF,
    ".docx": M.DOCX, ".docm": M.DOCX, ".dotx": M.DOCX, ".dotm": M.DOCX,
    ".xlsx": M.XLSX, ".xlsm": M.XLSX, ".xltx": M.XLSX, ".xltm": M.XLSX,
    ".pptx": M.PPTX, ".pptm": M.PPTX, ".ppsx": M.PPTX, ".ppsm": M.PPTX, ".potx": M.PPTX,
    ".potm": M.PPTX,
    ".odt": M.ODT, ".ods": M.ODS, ".odp": M.ODP, ".odg": M.ODG,
    ".fodt": M.FODT, ".fods": M.FODS, ".fodp": M.FODP, ".fodg": M.FODG,
    ".ott": _ODF + "text-template", ".odm": _ODF + "text-master", ".oth": _ODF + "text-web",
    ".ots": _ODF + "spreadsheet-template", ".otp": _ODF + "presentation-template",
    ".otg": _ODF + "graphics-template", ".odc": _ODF + "chart", ".otc": _ODF + "chart-template",
    ".odf": _ODF + "formula",
    ".sxw": _SUN + "writer", ".stw": _SUN + "writer.template", ".sxg": _SUN + "writer.global",
    ".sxc": _SUN + "calc", ".stc": _SUN + "calc.template", ".sxi": _SUN + "impress",
    ".sti": _SUN + "impress.template", ".sxd": _SUN + "draw", ".std": _SUN + "draw.template",
    ".sxm": _SUN + "math", ".sxs": _SUN + "chart",
    ".epub": M.EPUB, ".fb2": M.FB2,
    ".doc": M.DOC, ".dot": M.DOC, ".xls": M.XLS, ".xlt": M.XLS, ".ppt": M.PPT, ".pps": M.PPT,
    ".png": M.PNG, ".jpg": M.JPEG, ".jpeg": M.JPEG, ".tif": M.TIFF, ".tiff": M.TIFF,
    ".bmp": M.BMP, ".gif": M.GIF, ".webp": M.WEBP,
    ".zip": M.ZIP, ".gz": "application/gzip", ".bz2": "application/x-bzip2",
    ".7z": "application/x-7z-compressed", ".rar": "application/vnd.rar",
    ".xlsb": M.XLSB, ".vsdx": M.VSDX, ".vsdm": M.VSDX, ".xps": M.XPS, ".oxps": "application/oxps",
    ".wri": M.WRI, ".wpd": M.WPD,
    ".tar": "application/x-tar", ".tgz": "application/gzip", ".tbz2": "application/x-bzip2",
    ".txz": M.XZ, ".xz": M.XZ, ".lzma": "application/x-lzma", ".zst": "application/zstd",
    ".tzst": "application/zstd", ".mp3": "audio/mpeg", ".wav": "audio/wav",
    ".heic": M.HEIC, ".heif": M.HEIF, ".hif": M.HEIF, ".avif": M.AVIF, ".jp2": M.JP2,
    ".j2k": M.J2K, ".j2c": M.J2K, ".jpc": M.J2K, ".mdb": M.ACCESS, ".accdb": M.ACCESS,
    ".p7m": M.PKCS7, ".iso": M.ISO, ".cab": M.CAB, ".lzh": M.LHA, ".lha": M.LHA,
    ".xar": M.XAR, ".cpio": M.CPIO, ".emf": M.EMF, ".wmf": M.WMF,
    ".djvu": M.DJVU, ".djv": M.DJVU, ".chm": M.CHM, ".vsd": M.VISIO, ".vst": M.VISIO,
    ".wps": M.WORKS, ".dbf": M.DBF, ".shw": M.COREL_SHOW, ".pst": M.PST, ".ost": M.OST,
}  # fmt: skip

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", M.PNG),
    (b"\xff\xd8\xff", M.JPEG),
    (b"II*\x00", M.TIFF),
    (b"MM\x00*", M.TIFF),
    (b"GIF87a", M.GIF),
    (b"GIF89a", M.GIF),
    (b"{\\rtf", M.RTF),
    (b"\x1f\x8b", "application/gzip"),
    (b"\x1f\x9d", M.COMPRESS),  # Unix compress (.Z)
    (b"BZh", "application/x-bzip2"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"ID3", "audio/mpeg"),
    (b"\x00\x00\x00\x0cjP  ", M.JP2),
    (b"\xff\x4f\xff\x51", M.J2K),  # a bare codestream: SOC, then SIZ
    (b"\x7fELF", "application/x-executable"),
    (b"SQLite format 3\x00", M.SQLITE),
    (b"\x37\x7f\x06\x82", M.SQLITE_WAL),  # (its checksums little-endian)
    (b"\x37\x7f\x06\x83", M.SQLITE_WAL),  # (big-endian)
    (b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7", M.SQLITE_JOURNAL),
    (b"\xfd7zXZ\x00", "application/x-xz"),
    (b"\x28\xb5\x2f\xfd", "application/zstd"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"\x00asm", "application/wasm"),
    (b"bplist00", M.BPLIST),
    (b"\x10" * 7 + b"\x11" * 6, M.FOXMAIL),  # the separator before each message
    (b"SIMPLE  =", M.FITS),  # its first card, the keyword padded to 8
    (b"ITSF\x03\x00\x00\x00", M.CHM),  # Compiled HTML Help, version 3
)
_PFF_CLIENTS = {b"SM": M.PST, b"SO": M.OST}
"""An Outlook data file's kind by the client magic after its ``!BDN``: Personal Folders, or
offline folders (the address books', ``AB``, hold no mail: left unknown)."""
_SHM_VERSION = frozenset({(3007000).to_bytes(4, "little"), (3007000).to_bytes(4, "big")})
"""The first field of a SQLite log index (``-shm``), in the writing machine's byte order; its
header is written twice, the copy 48 bytes on."""
_MAGIC_FIRST = frozenset(magic[0] for magic, _mime in _MAGIC)
"""First bytes of the magics above: a head that starts with none of them matches none."""
_FTYP: dict[bytes, str] = {
    b"heic": M.HEIC, b"heix": M.HEIC, b"heim": M.HEIC, b"heis": M.HEIC, b"hevc": M.HEIC,
    b"hevx": M.HEIC, b"mif1": M.HEIF, b"msf1": M.HEIF, b"avif": M.AVIF, b"avis": M.AVIF,
    b"qt  ": "video/quicktime", b"M4A ": "audio/mp4",
}  # fmt: skip
_RIFF: dict[bytes, str] = {b"WEBP": M.WEBP, b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
PKCS7_SIGNED = bytes.fromhex("2a864886f70d010702")
"""1.2.840.113549.1.7.2 (PKCS#7 SignedData), as a DER object identifier's content: a signed
file (``.p7m``) names it in its first bytes."""
_ACCESS_MAGIC = frozenset({b"Standard Jet DB", b"Standard ACE DB"})
"""What follows ``00 01 00 00`` in an Access database's first page: Jet (.mdb), ACE (.accdb)."""
_IWORK_FILES = frozenset(
    {"Index.zip", "index.apxl", "index.xml.gz", "buildVersionHistory.plist",
     "BuildVersionHistory.plist"}
)  # fmt: skip
"""Apple iWork's own files, at the root or in a ``Name.key/`` folder (any ``*.iwa`` too)."""
_IWORK_KINDS = {".key": M.KEYNOTE, ".pages": M.PAGES, ".numbers": M.NUMBERS}
_HEADER_LINE = re.compile(r"([A-Za-z][A-Za-z0-9-]{0,75}):[ \t]?")
_KNOWN_HEADERS = frozenset({
    "from", "to", "cc", "subject", "date", "received", "return-path", "message-id",
    "mime-version", "delivered-to", "reply-to", "sender", "content-type", "in-reply-to",
    "references", "x-mailer", "dkim-signature",
})  # fmt: skip
_HTML_HEAD_TAGS = frozenset({"meta", "title", "link", "style", "script", "base"})
_XML_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)[\s>/]")


COMPRESSED_SUFFIXES = frozenset({".gz", ".bz2", ".bz", ".xz", ".lzma", ".zst", ".zstd", ".z"})
"""Suffixes whose reader names the payload after the rest of the file's name."""


def name_key(name: str) -> str:
    """What of a file's name its reading looks at, lower case: the suffix detection falls back
    on when the content says nothing specific, and for a compressed file the payload's suffix
    before it (``Report.CSV.gz`` gives ``.csv.gz``).

    The same bytes under two names whose keys differ may be read two ways (a broken OLE2 file
    named ``.doc`` goes to the Word reader, named ``.msg`` to the Outlook one), so a verdict is
    reused, and the reads of a sweep shared, only between files of one content and one key.
    """
    # (string operations with PurePosixPath's rules: a path object a call was most of the
    # time of a record's indexing, twice a record)
    base = name.lower().rsplit("/", 1)[-1]
    suffix = _suffix(base)
    if suffix in COMPRESSED_SUFFIXES:
        return _suffix(base[: -len(suffix)]) + suffix
    return suffix


def _suffix(name: str) -> str:
    """``PurePosixPath(name).suffix`` of a name without a slash: from its last dot, unless
    that dot begins or ends it."""
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def detect(path: Path, head: bytes | None = None) -> str:
    """Return the MIME type of the file at ``path`` (``head`` = its first bytes, if read)."""
    if head is None:
        try:
            with open(path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        except OSError:
            return _by_extension(path) or M.OCTET
    if not head:
        return M.EMPTY
    by_content = _by_magic(path, head)
    if by_content:
        return by_content
    if _looks_binary(head):
        ext = _by_extension(path)
        if ext is not None and _is_textual(ext) and _mostly_nul(head):
            return M.OCTET  # its name says text, its bytes are none (Android's binary XML)
        return ext or M.OCTET
    return _sniff_text(path, head)


def _by_extension(path: Path) -> str | None:
    return _EXT.get(path.suffix.lower())


def by_name(path: str) -> str | None:
    """The MIME type a file's name suggests, without opening it (None: the name says
    nothing). What the content says wins in :func:`detect`; this is for routing a read
    before it happens (a Dask executor sends PDFs to workers with pdftotext)."""
    return _by_extension(Path(path))


LOTUS_CLASSIC = b"\x00\x00\x02\x00"
"""A BOF record of 2 bytes: Lotus 1-2-3 release 1-2, Quattro (:mod:`engine.readers.lotus`)."""
RELEASE3 = b"\x00\x00\x1a\x00"
"""A BOF record of 26 bytes: Lotus 1-2-3 release 3 and later."""
_CLASSIC_VERSIONS = frozenset({0x0404, 0x0405, 0x0406, 0x5120, 0x5121, *range(0x1001, 0x1008)})
"""WKS, WK1 (and Symphony's), WQ1, WQ2, Quattro Pro for Windows."""
_RELEASE3_VERSIONS = frozenset(range(0x1000, 0x1006))
"""WK3, WK4, 123."""


def lotus_kind(head: bytes) -> str | None:
    """The MIME type of the Lotus or Quattro file ``head`` opens, else None."""
    if len(head) < 6:
        return None
    version = int.from_bytes(head[4:6], "little")
    if head[:4] == LOTUS_CLASSIC and version in _CLASSIC_VERSIONS:
        return M.LOTUS if version < 0x1000 else M.QUATTRO
    if head[:4] == RELEASE3 and version in _RELEASE3_VERSIONS:
        return M.LOTUS
    return None


def _plist_kind(path: Path) -> str:
    """A binary property list is a web archive by its name (what it holds says so too, but
    only once parsed whole)."""
    return M.WEBARCHIVE if path.suffix.lower() == ".webarchive" else M.BPLIST


def _by_magic(path: Path, head: bytes) -> str | None:
    # A tar's first bytes are a member's name, which may be anything (even "{\rtf"): its
    # magic at offset 257 goes first.
    if head[257:262] == b"ustar":
        return "application/x-tar"
    if head[0] in _MAGIC_FIRST:
        for magic, mime in _MAGIC:
            if head.startswith(magic):
                return _plist_kind(path) if mime == M.BPLIST else mime
    if head[:4] == b"\xffWPC":
        return M.WPD
    if head[:4] == b"!BDN" and head[8:10] in _PFF_CLIENTS:
        return _PFF_CLIENTS[head[8:10]]
    if head[:4] in _SHM_VERSION and head[48:52] == head[:4]:  # (both copies of its header)
        return M.SQLITE_SHM
    if (metafile := _metafile_kind(head)) is not None:
        return metafile
    if head[:8] == b"AT&TFORM" and head[12:16] in (b"DJVU", b"DJVM"):
        return M.DJVU
    if head[0] in _DBF_VERSIONS and _is_dbf(path, head):
        return M.DBF
    if head[:1] == b"\x30" and PKCS7_SIGNED in head[2:24]:
        return M.PKCS7
    if (head[:2] == b"MI" or head.startswith(b"-----BEGIN ")) and _base64_signed(head):
        return M.PKCS7
    if head[:4] == b"\x00\x01\x00\x00" and head[4:19] in _ACCESS_MAGIC:
        return M.ACCESS
    if (archive := _archive_kind(head)) is not None:
        return archive
    if head[:2] == b"\x00\x00" and (lotus := lotus_kind(head)) is not None:
        return lotus
    if head[:2] in (b"\x31\xbe", b"\x32\xbe") and head[4:6] == b"\x00\xab":
        return M.WRI  # Windows Write: wIdent, then wTool 0xAB00
    if head.startswith(b"BM") and len(head) > 14 and head[6:10] == b"\x00\x00\x00\x00":
        return M.BMP
    if head[:4] == b"RIFF" and head[8:12] in _RIFF:
        return _RIFF[head[8:12]]
    if head[4:8] == b"ftyp":
        return _FTYP.get(head[8:12], "video/mp4")
    if (binary := _binary_kind(head)) is not None:
        return binary
    if head[:2] == b"MZ" and b"\x00" in head[2:64]:  # DOS/PE header, not a line of text
        return "application/x-msdownload"
    if b"%PDF-" in head[:1024]:
        return M.PDF
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _zip_kind(path)
    if head.startswith(_OLE_MAGIC):
        return _ole_kind(path)
    return None


_ONENOTE = bytes.fromhex("e4525c7b8cd8a74daeb15378d02996d3")
"""A OneNote section's file format GUID, {7B5C52E4-D88C-4DA7-AEB1-5378D02996D3}, as stored."""
_LNK = bytes.fromhex("4c0000000114020000000000c000000000000046")
"""A Windows shortcut's header size (76) and its class id, {00021401-0000-0000-C000-...46}."""
_DWG = re.compile(rb"AC10[0-3][0-9]\x00\x00\x00\x00")
"""An AutoCAD drawing's version (AC1012, R13, to AC1032, 2018), then zero bytes."""
_SFNT = {b"\x00\x01\x00\x00": M.TTF, b"true": M.TTF, b"OTTO": M.OTF}
"""A font file's first four bytes (TrueType, Apple's TrueType, CFF OpenType)."""
_WEB_FONTS = {b"wOFF": M.WOFF, b"wOF2": M.WOFF2}


def _binary_kind(head: bytes) -> str | None:
    """Binary kinds no reader takes, named by their signatures so that they are not unknown
    bytes: each is then a group of its own on the unsupported screen (a share's fonts,
    drawings and shortcuts were one "application/octet-stream" group with its oddities)."""
    if head[:4] == b"8BPS" and head[4:6] in (b"\x00\x01", b"\x00\x02"):
        return M.PSD  # (2: a large document, .psb)
    if head.startswith(_ONENOTE):
        return M.ONENOTE
    if head.startswith(_LNK):
        return M.LNK
    if _DWG.match(head):
        return M.DWG
    if head[:4] in _SFNT and _font_table_directory(head):
        return _SFNT[head[:4]]
    if head[:4] == b"ttcf" and head[4:8] in (b"\x00\x01\x00\x00", b"\x00\x02\x00\x00"):
        return M.FONT_COLLECTION
    if head[:4] in _WEB_FONTS and head[4:8] in _SFNT:  # (then the font's own flavour)
        return _WEB_FONTS[head[:4]]
    if head[:4] == b"\x1a\x45\xdf\xa3":  # an EBML document: its type names the kind
        return (
            M.WEBM if b"webm" in head[4:64] else M.MATROSKA if b"matroska" in head[4:64] else None
        )
    return None


def _font_table_directory(head: bytes) -> bool:
    """Whether a font's offset table follows its first four bytes: a table count, and the
    three fields derived from it as the format has them (no other file says all four)."""
    if len(head) < 12:
        return False
    tables, search, selector, shift = struct.unpack_from(">4H", head, 4)
    if not 0 < tables < 256:
        return False
    power = 1 << (tables.bit_length() - 1)
    return (search, selector, shift) == (
        power * 16,
        power.bit_length() - 1,
        tables * 16 - power * 16,
    )


_OCTAL = frozenset(b"01234567")
_HEX = frozenset(b"0123456789abcdefABCDEF")


_WMF_HEADERS = frozenset(
    bytes([kind, 0, 9, 0, 0, version]) for kind in (1, 2) for version in (1, 3)
)
"""A WMF's first six bytes without the placeable header: in memory or on disk, a header of
nine words, version 1 or 3."""


def _metafile_kind(head: bytes) -> str | None:
    """EMF (its header record, then " EMF" at byte 40) and WMF (placeable, or bare)."""
    if head[:4] == b"\x01\x00\x00\x00" and head[40:44] == b" EMF":
        return M.EMF
    if head[:4] == b"\xd7\xcd\xc6\x9a" or head[:6] in _WMF_HEADERS:
        return M.WMF
    return None


_DBF_VERSIONS = frozenset(
    {0x02, 0x03, 0x04, 0x05, 0x30, 0x31, 0x32, 0x43, 0x63, 0x83, 0x8B, 0x8E, 0xCB, 0xF5, 0xFB}
)
"""First bytes of the dBase family's tables (dBase III-5, FoxPro, Visual FoxPro)."""


def _is_dbf(path: Path, head: bytes) -> bool:
    """Whether ``head`` begins a dBase table: a date, a field list of 32-byte entries ended
    by 0x0D where the header's length says (Visual FoxPro's 263-byte backlink after it), and
    a file of exactly the header and its records (and an end mark, or not). dBase has no
    signature; a table cut short is known by its ``.dbf`` name alone."""
    if len(head) < 65 or not (1 <= head[2] <= 12 and 1 <= head[3] <= 31):
        return False
    records, start, size = struct.unpack_from("<IHH", head, 4)
    end = start - 1 - (263 if head[0] in (0x30, 0x31, 0x32) else 0)
    if size < 2 or end < 64 or (end - 32) % 32 or end >= len(head) or head[end] != 0x0D:
        return False
    try:
        actual = os.stat(path).st_size
    except OSError:
        return False
    return actual - start - records * size in (0, 1)


def _archive_kind(head: bytes) -> str | None:
    """Cabinets, LHA, xar and cpio archives by their headers (bsdtar reads them)."""
    if head[:8] == b"MSCF\x00\x00\x00\x00":
        return M.CAB
    if head[:4] == b"xar!" and head[4:6] == b"\x00\x1c":
        return M.XAR
    if head[2:5] in (b"-lh", b"-lz") and head[6:7] == b"-" and head[5:6] in b"01234567sd":
        return M.LHA
    if head[:6] == b"070707" and set(head[6:76]) <= _OCTAL and len(head) >= 76:
        return M.CPIO  # the portable ASCII form: 76 octal digits of header
    if head[:6] in (b"070701", b"070702") and set(head[6:110]) <= _HEX and len(head) >= 110:
        return M.CPIO  # the "new" ASCII forms: 110 hex digits
    if head[:2] in (b"\xc7\x71", b"\x71\xc7") and len(head) >= 26:
        return M.CPIO  # the old binary form, either byte order
    return None


def _base64_signed(head: bytes) -> bool:
    """Whether ``head`` is a PKCS#7 signed file in base64 (bare, or PEM's ``-----BEGIN``
    line first): its first 24 bytes decoded name SignedData (``MII...`` or ``MIA...``)."""
    if head.startswith(b"-----BEGIN "):
        line, _, head = head.partition(b"\n")
        if b"PKCS7" not in line and b"CMS" not in line:
            return False
    text = b"".join(head[:200].split())[:32]
    try:
        decoded = base64.b64decode(text, validate=True)
    except ValueError:
        return False
    return decoded[:1] == b"\x30" and PKCS7_SIGNED in decoded[2:24]


def _zip_kind(path: Path) -> str:
    """Tell ODF, OOXML and EPUB apart by their members; a plain zip otherwise."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if "mimetype" in names:
                info = zf.getinfo("mimetype")
                if info.file_size < 200:
                    declared = zf.read("mimetype").decode("ascii", "replace").strip()
                    if declared.startswith((_ODF, _SUN, "application/epub")):
                        return declared
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, NotImplementedError):
        return _by_extension(path) or M.ZIP
    nameset = set(names)
    if "word/document.xml" in nameset:
        return M.DOCX
    if "xl/workbook.xml" in nameset:
        return M.XLSX
    if "ppt/presentation.xml" in nameset:
        return M.PPTX
    if "META-INF/container.xml" in nameset and any(n.endswith(".opf") for n in names):
        return M.EPUB
    if "xl/workbook.bin" in nameset:
        return M.XLSB
    if "visio/document.xml" in nameset:
        return M.VSDX
    if any(n.endswith(".fdseq") for n in names[:50]) or any(n.endswith(".fpage") for n in names):
        return "application/oxps" if path.suffix.lower() == ".oxps" else M.XPS
    if any(n.rsplit("/", 1)[-1] in _IWORK_FILES or n.endswith(".iwa") for n in names[:200]):
        # Apple iWork: protobuf streams, not zip members anyone can read as text.
        return _IWORK_KINDS.get(path.suffix.lower(), M.IWORK)
    if "content.xml" in nameset and "META-INF/manifest.xml" in nameset:
        return _by_extension(path) or M.ODT
    return M.ZIP


def _ole_kind(path: Path) -> str:
    """Tell Word, Excel, PowerPoint and Outlook OLE2 files apart by their streams."""
    try:
        import olefile

        # Opened here, not by name: olefile records the caller's stack (with its source
        # lines) for every file it opens itself, a millisecond or more a file in a worker.
        with open(path, "rb") as fh, olefile.OleFileIO(fh) as ole:
            listed = ole.listdir(streams=True, storages=True)
            clsid = ole.root.clsid if ole.root is not None else ""
    except Exception:  # olefile raises bare OSError/IndexError/etc. on junk: any is "unknown"
        return _by_extension(path) or M.OLE
    # The format compares names without case, and some writers name Word's main stream
    # WORDDOCUMENT: upper case here.
    streams = {"/".join(s).upper() for s in listed}
    if "WORDDOCUMENT" in streams:
        return M.DOC
    if "WORKBOOK" in streams or "BOOK" in streams:
        return M.XLS
    if "POWERPOINT DOCUMENT" in streams:
        return M.PPT
    if any(s.startswith(("__SUBSTG1.0_", "__PROPERTIES")) for s in streams):
        return M.MSG
    if "SLIDESHOW/MAIN" in streams:  # its PerfectOffice_MAIN is no Quattro Pro notebook's
        return M.COREL_SHOW
    if (kind := _OLE_STREAMS.keys() & streams) and len(kind) == 1:
        mime = _OLE_STREAMS[kind.pop()]
        return M.STAR_IMPRESS if mime == M.STAR_DRAW and clsid == _STAR_IMPRESS_CLSID else mime
    if "CONTENTS" in streams and "QUILL/QUILLSUB" in streams:
        return M.PUBLISHER
    if "CONTENTS" in streams and clsid == _WORKS_CLSID:
        return M.WORKS
    return _by_extension(path) or M.OLE


_OLE_STREAMS = {
    "MN0": M.WORKS,
    "NATIVECONTENT_MAIN": M.QUATTRO_OLE,
    "PERFECTOFFICE_MAIN": M.QUATTRO_OLE,
    "STARWRITERDOCUMENT": M.STAR_WRITER,
    "STARCALCDOCUMENT": M.STAR_CALC,
    "STARDRAWDOCUMENT3": M.STAR_DRAW,
    "PP40": M.PPT4,
    "VISIODOCUMENT": M.VISIO,
}
"""The stream that tells an OLE2 file of these kinds apart (the Document Liberation Project's
tools read them: :mod:`engine.readers.liberation`); a file with two of them is neither."""


_STAR_IMPRESS_CLSID = "565C7221-85BC-11D1-89D0-008029E4B0B1"
"""The root's class of a StarOffice 5 Impress presentation (or template): its slides are in a
``StarDrawDocument3`` stream, as a StarOffice Draw drawing's are."""
_WORKS_CLSID = "0EA45AB2-9E0A-11D1-A407-00C04FB932BA"
"""The root's class of a Works 5-9 word processor file: its text is in a ``CONTENTS`` stream,
as a Publisher file's is (which has ``Quill`` beside it)."""


NUL_SHARE = 20
"""A file named as text whose first bytes are more than one in this many NULs (and no UTF-16)
is no text: an ``AndroidManifest.xml`` inside an ``.apk`` is Android's binary XML, which read
as text was garbage. A few NULs in a log (a crash's padding) keep it text..."""
NUL_MIN = 16
"""...and so do a few in a short file (``before\x00after``), whatever their share."""


def _mostly_nul(head: bytes) -> bool:
    """Whether ``head`` holds NULs past :data:`NUL_SHARE` and :data:`NUL_MIN` both."""
    nul = head.count(0)
    return nul > NUL_MIN and nul * NUL_SHARE > len(head)


def _looks_binary(head: bytes) -> bool:
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\x00\x00\xfe\xff")):
        return False
    nul = head.count(0)
    if nul == 0:
        control = sum(1 for b in head[:4096] if b < 9 or 13 < b < 32)
        return control > len(head[:4096]) * 0.1
    # BOM-less UTF-16: NULs on one side of nearly every pair.
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    half = len(head) / 2
    return not (max(even, odd) > half * 0.3 and min(even, odd) < half * 0.05)


def _sniff_text(path: Path, head: bytes) -> str:
    text = _ascii_view(head)
    lower = text.lstrip()[:2048].lower()
    ext = _by_extension(path)
    if _looks_html(text, lower):
        return M.XHTML if ext == M.XHTML else M.HTML
    if lower.startswith("<?xml") or lower.startswith("<"):
        root = _xml_root(text)
        # A fragment such as "<p>..." parses as generic XML; a .html name says what it is.
        if root == M.XML and ext in (M.HTML, M.XHTML):
            return ext
        # "<p align=center>" atop a README is not an XML document; "<?xml" says it is.
        if root == M.XML and not lower.startswith("<?xml") and ext and _is_textual(ext):
            return ext
        if root is not None:
            return root
    mail = _mail_kind(text)
    if mail == M.MBOX and ext != M.EML:
        return M.MBOX
    if mail is not None and ext in (None, M.EML, M.PLAIN, M.MBOX):
        return M.MBOX if ext == M.MBOX else M.EML
    if ext is not None and _is_textual(ext):
        return ext
    if ext in (M.EML, M.MBOX, M.CSV, M.TSV, M.RTF):
        return ext
    return M.PLAIN


def _looks_html(text: str, lower: str) -> bool:
    """An HTML doctype, or a root element that only HTML has (``<note><body>`` is XML)."""
    if lower.startswith(("<!doctype html", "<html")):
        return True
    if not lower.startswith("<"):
        return False
    root = _root_name(text)
    if root in ("html", "head", "body"):
        return True
    return (
        root in _HTML_HEAD_TAGS and re.search(r"<(html|head|body)[\s>]", lower[:1024]) is not None
    )


def _is_textual(mime: str) -> bool:
    return mime.startswith("text/") or mime in M.TEXTUAL_APPLICATION


def _mail_kind(text: str) -> str | None:
    """MBOX when a ``From `` line precedes mail headers; EML when the file opens with headers.

    The header block must start at the first line and name at least two of the usual
    headers, so a note that begins "Date: ..." is not taken for a message.
    """
    lines = text.split("\n", 60)[:60]
    mbox = lines[0].startswith("From ") and len(lines) > 1
    block = lines[1:] if mbox else lines
    if not block or not _HEADER_LINE.match(block[0]):
        return None
    known: set[str] = set()
    for line in block:
        if not line.strip():
            break
        m = _HEADER_LINE.match(line)
        if m and m.group(1).lower() in _KNOWN_HEADERS:
            known.add(m.group(1).lower())
    if len(known) < 2:
        return None
    return M.MBOX if mbox else M.EML


def _ascii_view(head: bytes) -> str:
    """Decode enough of ``head`` to sniff markup, whatever the encoding."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    for bom, enc in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be")):
        if head.startswith(bom):
            return head[: len(head) // 4 * 4].decode(enc, "ignore").lstrip("\ufeff")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or head.count(0) > len(head) // 4:
        enc = "utf-16-be" if head.startswith(b"\xfe\xff") or head[:1] == b"\x00" else "utf-16-le"
        return head[: len(head) // 2 * 2].decode(enc, "ignore").lstrip("\ufeff")
    return head.decode("latin-1")


def _root_name(text: str) -> str | None:
    """The first element's name, lower case, past any prolog, comments and doctype."""
    body = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(\[.*?\])?\s*>", "", text, flags=re.S)
    match = _XML_ROOT.search(body.encode("utf-8", "ignore"))
    return match.group(1).decode().lower() if match else None


_OFFICE_ROOTS = {
    "worddocument": ("schemas.microsoft.com/office/word/2003/wordml", M.WORD_2003_XML),
    "workbook": ("urn:schemas-microsoft-com:office:spreadsheet", M.EXCEL_2003_XML),
    "package": ("schemas.microsoft.com/office/2006/xmlpackage", M.FLAT_OPC),
}
"""An Office document saved as one XML file: its root, and the namespace that says so."""


def _office_xml(local: str, lowered: str) -> str | None:
    """Word 2003 XML, Excel 2003 XML or a flat package, by its root and its namespace."""
    found = _OFFICE_ROOTS.get(local)
    if found is None:
        return None
    namespace, mime = found
    return mime if f'{namespace}"' in lowered or f"{namespace}'" in lowered else None


def _xml_root(text: str) -> str | None:
    root = _root_name(text)
    if root is None:
        return M.XML if text.lstrip().startswith("<?xml") else None
    local = root.split(":")[-1]
    if local == "svg":
        return M.SVG
    if local == "fictionbook":
        return M.FB2
    if local == "html":
        return M.XHTML
    office = _office_xml(local, text.lower())
    if office is not None:
        return office
    if root == "office:document":
        m = re.search(r'office:mimetype="([^"]+)"', text)
        return (m.group(1) + "-flat-xml") if m else M.FODT
    return M.XML
