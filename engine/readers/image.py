"""Images (PNG, JPEG, TIFF, BMP, GIF, WebP; HEIC/HEIF, AVIF, JPEG 2000): text by OCR with
tesseract.

Without tesseract an image is ``unsupported/needs_tool``. A multi-page TIFF comes back with
its pages separated by form feeds, as tesseract prints them. :func:`ocr_image` is shared with
the PDF reader, which OCRs scanned pages through it.

Tesseract (its Leptonica) reads neither HEIF, the format a phone's camera saves a photographed
page in, nor JPEG 2000, the one of many archives' scans: those are decoded into PNG first by
the decoder their library ships (``heif-convert``, libheif's; ``opj_decompress``, OpenJPEG's),
in a folder of the read's own that goes with it, and each picture read as one page. A HEIF
file holding several pictures (a burst, a multi-page scan) gives a page each, in the order
the file lists them.

Languages: every language installed for tesseract (``--list-langs``, less ``osd`` and
``equ``) that the page's script needs. With one language that one is used; with several,
tesseract's own script detection (``--psm 0``, when ``osd`` is installed) names the page's
script and the installed languages of that script are used together (``rus+ukr`` for
Cyrillic); when it cannot tell, all installed languages are. ``QUARRY_OCR_LANG`` (``deu+eng``)
sets them outright.
"""

from __future__ import annotations

import os
import re
import tempfile
from abc import ABC, abstractmethod
from functools import cache
from pathlib import Path

from engine import mimes as M
from engine.errors import CorruptFile, ToolFailed
from engine.readers.base import ReadContext, ReadInfo, TextSink

_EXITED = re.compile(r"^\S+ exited (\d+)")
LANG_ENV = "QUARRY_OCR_LANG"
"""Environment variable that sets the OCR languages outright (tesseract's ``-l`` value)."""
_NOT_LANGUAGES = frozenset({"osd", "equ"})
_SCRIPT_LANGS = {
    "Cyrillic": ("rus", "ukr", "bel", "bul", "mkd", "srp", "kaz", "kir", "mon", "tgk", "uzb_cyrl"),
    "Greek": ("ell", "grc"),
    "Arabic": ("ara", "fas", "urd", "pus", "snd", "uig"),
    "Hebrew": ("heb", "yid"),
    "Devanagari": ("hin", "mar", "nep", "san"),
    "Han": ("chi_sim", "chi_tra", "chi_sim_vert", "chi_tra_vert"),
    "Japanese": ("jpn", "jpn_vert"),
    "Hangul": ("kor", "kor_vert"),
    "Thai": ("tha",),
    "Armenian": ("hye",),
    "Georgian": ("kat", "kat_old"),
    "Bengali": ("ben", "asm"),
    "Tamil": ("tam",),
}
"""Tesseract's script names (as ``--psm 0`` reports them) -> the language packs of that
script; every other installed language is taken for Latin script."""
_SCRIPT = re.compile(rb"^Script: (\w+)", re.M)


@cache
def _installed(exe: str) -> tuple[str, ...]:
    """Languages tesseract at ``exe`` has (cached per worker: the packs do not change)."""
    import subprocess

    try:
        out = subprocess.run(
            [exe, "--list-langs"], capture_output=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = out.decode("utf-8", "replace").splitlines()[1:]
    return tuple(line.strip() for line in lines if line.strip())


def _script_of(lang: str) -> str:
    for script, langs in _SCRIPT_LANGS.items():
        if lang in langs:
            return script
    return "Latin"


def ocr_languages(ctx: ReadContext, path: Path) -> str | None:
    """The ``-l`` value for the page at ``path`` (None: tesseract's default)."""
    chosen = os.environ.get(LANG_ENV, "").strip()
    if chosen:
        return chosen
    exe = ctx.tools.path("tesseract")
    if exe is None:
        return None
    installed = _installed(exe)
    langs = [lang for lang in installed if lang not in _NOT_LANGUAGES]
    if len(langs) <= 1:
        return langs[0] if langs else None
    script = _detect_script(ctx, path) if "osd" in installed else None
    fitting = [lang for lang in langs if script is not None and _script_of(lang) == script]
    return "+".join(fitting or langs)


def _detect_script(ctx: ReadContext, path: Path) -> str | None:
    """The script tesseract's orientation and script detection sees on the page."""
    try:
        out = ctx.run_tool("tesseract", [os.fspath(path.absolute()), "-", "--psm", "0"])
    except ToolFailed:  # too little text to tell, or no osd pack: not a verdict on the file
        return None
    match = _SCRIPT.search(out)
    return match.group(1).decode("ascii") if match else None


def tool_exit_code(exc: ToolFailed) -> int | None:
    """The exit status named in a ToolFailed from ``run_tool`` (None for timeouts, no start)."""
    match = _EXITED.match(str(exc))
    return int(match.group(1)) if match else None


def ocr_image(ctx: ReadContext, path: Path) -> str:
    """Text of the image at ``path`` by tesseract; trailing page separator removed.

    Raises NeedsTool without tesseract, CorruptFile when tesseract cannot read the picture
    and ToolFailed when it times out or will not start.
    """
    try:
        # --psm 1: page segmentation with orientation detection, so a page scanned sideways
        # or upside down is turned before it is read (plain --psm 3 reads it as gibberish).
        langs = ocr_languages(ctx, path)
        extra = ["-l", langs] if langs else []
        out = ctx.run_tool("tesseract", [os.fspath(path.absolute()), "-", "--psm", "1", *extra])
    except ToolFailed as exc:
        if tool_exit_code(exc) is not None:
            raise CorruptFile("tesseract could not read the image") from exc
        raise
    return out.decode("utf-8", "replace").rstrip("\f\n ") + "\n"


class ImageReader:
    """OCR of raster images through tesseract."""

    name = "image"
    version = 1
    mimes = M.IMAGES
    tools = ("tesseract",)

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Write the OCR text of ``path``; pages are counted for TIFF only."""
        text = ocr_image(ctx, path)
        pages = text.count("\f") + 1 if ctx.mime == M.TIFF else None
        if text.strip():
            sink.write(text)
        return ReadInfo("tesseract", pages=pages)


class DecodedImageReader(ABC):
    """OCR of pictures tesseract cannot open: a decoder writes each one out as a PNG first
    (a subclass a format, its :meth:`decode` the decoder's way)."""

    name = "decoded"
    version = 1
    mimes: frozenset[str] = frozenset()
    decoder = ""
    """The tool that writes the file's pictures as PNG files."""

    @property
    def tools(self) -> tuple[str, ...]:
        """The decoder, then tesseract: both are needed."""
        return (self.decoder, "tesseract")

    def read(self, path: Path, ctx: ReadContext, sink: TextSink) -> ReadInfo:
        """Decode ``path``'s pictures and write their OCR text, a form feed between two."""
        ctx.require(*self.tools)
        with tempfile.TemporaryDirectory(prefix="quarry-img-") as tmp:
            pictures = self.decode(path, ctx, Path(tmp))
            if not pictures:
                raise CorruptFile(f"{self.decoder} found no picture in it")
            texts = [ocr_image(ctx, picture).rstrip("\n") for picture in pictures]
        text = "\f".join(texts).strip("\f\n ")
        if text:
            sink.write(text + "\n")
        return ReadInfo(f"{self.decoder}+tesseract", pages=len(pictures))

    @abstractmethod
    def decode(self, path: Path, ctx: ReadContext, tmp: Path) -> list[Path]:
        """Write ``path``'s pictures into ``tmp`` as PNG files; their paths, in order."""

    def run_decoder(self, ctx: ReadContext, args: list[str]) -> None:
        """Run the decoder; its failure to read the file is the file's (``error/corrupt``
        in the decoder's words), its timeout or failure to start stays the tool's."""
        try:
            ctx.run_tool(self.decoder, args)
        except ToolFailed as exc:
            if tool_exit_code(exc) is None:
                raise
            said = str(exc).partition(": ")[2].strip()
            said = said.removeprefix(f"ERROR -> {self.decoder}: ")  # (OpenJPEG's manner)
            reason = f": {said}" if said else ""
            raise CorruptFile(f"{self.decoder} could not read the image{reason}") from exc


_NUMBERED = re.compile(r"-(\d+)\.png$")


class HeifReader(DecodedImageReader):
    """HEIF pictures (HEIC, a phone camera's photos; AVIF) through libheif's heif-convert."""

    name = "heif"
    mimes = frozenset({M.HEIC, M.HEIF, M.AVIF})  # (of M.DECODED_IMAGES)
    decoder = "heif-convert"

    def decode(self, path: Path, ctx: ReadContext, tmp: Path) -> list[Path]:
        """heif-convert writes ``page.png`` for a file of one picture, ``page-1.png``,
        ``page-2.png``... for a file of several."""
        self.run_decoder(ctx, ["--quiet", os.fspath(path.absolute()), os.fspath(tmp / "page.png")])
        one = tmp / "page.png"
        if one.is_file():
            return [one]
        numbered = [(_NUMBERED.search(p.name), p) for p in tmp.glob("page-*.png")]
        return [p for _m, p in sorted((int(m.group(1)), p) for m, p in numbered if m)]


class Jpeg2000Reader(DecodedImageReader):
    """JPEG 2000 pictures (``.jp2`` files and bare ``.j2k`` codestreams) through OpenJPEG's
    opj_decompress."""

    name = "jpeg2000"
    mimes = frozenset({M.JP2, M.J2K})
    decoder = "opj_decompress"

    def decode(self, path: Path, ctx: ReadContext, tmp: Path) -> list[Path]:
        """opj_decompress tells its input's format by the name's extension: the file is
        given to it under a link named as its kind is."""
        link = tmp / ("in.jp2" if ctx.mime == M.JP2 else "in.j2k")
        link.symlink_to(path.absolute())
        out = tmp / "page.png"
        self.run_decoder(ctx, ["-quiet", "-i", os.fspath(link), "-o", os.fspath(out)])
        return [out] if out.is_file() else []


READERS = (ImageReader(), HeifReader(), Jpeg2000Reader())
