"""HEIF (HEIC, AVIF) and JPEG 2000 pictures: decoded into PNG by their library's tool, then OCR.

On a bare machine the decoders and tesseract are stand-ins (shell scripts) that check what
they are given and write what the reader must then make of it; where libheif's and
OpenJPEG's tools are installed (CI installs them), real files are written by their encoders
and read back, and swept by the real ``quarry``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import orjson
import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, NeedsTool, ToolFailed
from engine.limits import Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.image import HeifReader, Jpeg2000Reader
from engine.readers.registry import reader_for
from engine.tools import Tool, ToolSet, discover
from fixtures.gen import _raster as R
from tests.quarrycli import quarry, shown, sweep, text_shown
from tests.readkit import stand_in

HEIF_TOOLS = ("heif-enc", "heif-convert", "tesseract")
JP2_TOOLS = ("opj_compress", "opj_decompress", "tesseract")
needs_heif = pytest.mark.skipif(
    any(shutil.which(t) is None for t in HEIF_TOOLS), reason="libheif's tools or tesseract missing"
)
needs_jp2 = pytest.mark.skipif(
    any(shutil.which(t) is None for t in JP2_TOOLS), reason="OpenJPEG's tools or tesseract missing"
)
HEIC_HEAD = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"
JP2_HEAD = b"\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00\x00\x14ftypjp2 "
J2K_HEAD = b"\xff\x4f\xff\x51\x00\x29\x00\x00"

# A stand-in tesseract: the text of a "picture" is the picture file's own content.
FAKE_TESSERACT = 'case "$1" in --list-langs) echo eng; exit 0;; esac\ncat "$1"\n'


def with_tesseract(tmp_path: Path, *tools: Tool) -> ToolSet:
    found = (*tools, stand_in(tmp_path, "tesseract", FAKE_TESSERACT))
    return ToolSet(tuple(sorted(found, key=lambda t: t.name)))


def read(
    reader: HeifReader | Jpeg2000Reader,
    path: Path,
    mime: str,
    tools: ToolSet,
    limits: Limits | None = None,
) -> tuple[str, ReadInfo]:
    sink = TextSink(100_000)
    ctx = ReadContext(mime, tools=tools, limits=limits or Limits())
    info = reader.read(path, ctx, sink)
    return sink.getvalue(), info


@pytest.fixture
def heic(tmp_path: Path) -> Path:
    path = tmp_path / "photo.heic"
    path.write_bytes(HEIC_HEAD + bytes(100))
    return path


@pytest.fixture(autouse=True)
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The reader's temporary folders go to a folder of the test's, to be counted after."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_without_the_decoder_or_tesseract_the_picture_waits_on_both(heic: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(HeifReader(), heic, M.HEIC, ToolSet.empty())
    assert caught.value.tools == ("heif-convert", "tesseract")
    assert str(caught.value) == "needs heif-convert and tesseract on this machine"


def test_with_tesseract_alone_it_waits_on_the_decoder(tmp_path: Path, heic: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path))
    assert caught.value.tools == ("heif-convert",)


def test_each_picture_of_a_heif_file_is_a_page_in_the_file_s_order(
    tmp_path: Path, heic: Path, own_tmp: Path
) -> None:
    """heif-convert names a file's pictures page-1.png ... page-N.png: page 10 comes after 9,
    not after 1; the pages go in the text a form feed apart."""
    decoder = stand_in(
        tmp_path,
        "heif-convert",
        '[ "$1" = --quiet ] || exit 9\n[ -f "$2" ] || exit 8\n'
        'out="${3%.png}"\nfor i in 1 2 3 4 5 6 7 8 9 10 11; do\n'
        '  echo "PAGE $i" > "$out-$i.png"\ndone\n',
    )
    text, info = read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path, decoder))
    assert text.split("\f") == [f"PAGE {i}" for i in range(1, 11)] + ["PAGE 11\n"]
    assert info == ReadInfo("heif-convert+tesseract", pages=11)
    assert list(own_tmp.iterdir()) == []  # the decoded pictures went with the read


def test_a_heif_file_of_one_picture(tmp_path: Path, heic: Path) -> None:
    decoder = stand_in(tmp_path, "heif-convert", 'echo "ONE PICTURE" > "$3"\n')
    text, info = read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path, decoder))
    assert (text, info.pages) == ("ONE PICTURE\n", 1)


def test_pictures_without_text_give_no_text(tmp_path: Path, heic: Path) -> None:
    decoder = stand_in(tmp_path, "heif-convert", ': > "${3%.png}-1.png"\n: > "${3%.png}-2.png"\n')
    text, info = read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path, decoder))
    assert (text, info.pages) == ("", 2)


def test_a_file_the_decoder_cannot_read_is_corrupt_in_its_words(
    tmp_path: Path, heic: Path, own_tmp: Path
) -> None:
    decoder = stand_in(
        tmp_path,
        "heif-convert",
        "echo 'Could not read HEIF/AVIF file: Invalid input: No ftyp box' >&2\nexit 1\n",
    )
    with pytest.raises(CorruptFile) as caught:
        read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path, decoder))
    assert str(caught.value) == (
        "heif-convert could not read the image: Could not read HEIF/AVIF file: Invalid input:"
        " No ftyp box"
    )
    assert list(own_tmp.iterdir()) == []


def test_a_decoder_that_writes_nothing_found_no_picture(tmp_path: Path, heic: Path) -> None:
    decoder = stand_in(tmp_path, "heif-convert", "exit 0\n")
    with pytest.raises(CorruptFile, match="heif-convert found no picture in it"):
        read(HeifReader(), heic, M.HEIC, with_tesseract(tmp_path, decoder))


def test_a_decoder_that_hangs_is_stopped_at_its_time(tmp_path: Path, heic: Path) -> None:
    decoder = stand_in(tmp_path, "heif-convert", "exec sleep 30\n")
    with pytest.raises(ToolFailed, match="heif-convert timed out"):
        read(
            HeifReader(),
            heic,
            M.HEIC,
            with_tesseract(tmp_path, decoder),
            Limits(tool_timeout_s=0.5),
        )


@pytest.mark.parametrize(("mime", "name"), [(M.JP2, "in.jp2"), (M.J2K, "in.j2k")])
def test_jpeg_2000_is_given_to_the_decoder_under_its_kind_s_name(
    tmp_path: Path, mime: str, name: str
) -> None:
    """opj_decompress tells a JPEG 2000 file's layout by its name: a file named anyhow (here
    ``-scan.bin``, which a tool would also take for an option) reaches it as in.jp2 or
    in.j2k, the very file behind that name."""
    path = tmp_path / "-scan.bin"
    path.write_bytes((JP2_HEAD if mime == M.JP2 else J2K_HEAD) + b"payload")
    decoder = stand_in(
        tmp_path,
        "opj_decompress",
        '[ "$1 $2 $4" = "-quiet -i -o" ] || exit 9\n'
        f'[ "$(basename "$3")" = {name} ] || exit 8\n'
        f'cmp -s "$3" {os.fspath(path)!r} || exit 7\n'
        'echo "SCANNED LETTER" > "$5"\n',
    )
    text, info = read(Jpeg2000Reader(), path, mime, with_tesseract(tmp_path, decoder))
    assert (text, info) == ("SCANNED LETTER\n", ReadInfo("opj_decompress+tesseract", pages=1))


def test_a_jpeg_2000_file_opj_cannot_decode_is_corrupt_in_its_words(tmp_path: Path) -> None:
    path = tmp_path / "a.jp2"
    path.write_bytes(JP2_HEAD)
    decoder = stand_in(
        tmp_path,
        "opj_decompress",
        "echo 'ERROR -> opj_decompress: failed to read the header' >&2\nexit 1\n",
    )
    with pytest.raises(CorruptFile) as caught:
        read(Jpeg2000Reader(), path, M.JP2, with_tesseract(tmp_path, decoder))
    assert str(caught.value) == "opj_decompress could not read the image: failed to read the header"


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (HEIC_HEAD, M.HEIC),
        (b"\x00\x00\x00\x18ftypheix\x00\x00\x00\x00", M.HEIC),
        (b"\x00\x00\x00\x18ftyphevc\x00\x00\x00\x00", M.HEIC),
        (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00", M.HEIF),
        (b"\x00\x00\x00\x18ftypmsf1\x00\x00\x00\x00", M.HEIF),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", M.AVIF),
        (b"\x00\x00\x00\x1cftypavis\x00\x00\x00\x00", M.AVIF),
        (JP2_HEAD, M.JP2),
        (J2K_HEAD, M.J2K),
    ],
)
def test_the_pictures_are_told_apart_by_their_heads_and_have_a_reader(
    tmp_path: Path, head: bytes, mime: str
) -> None:
    path = tmp_path / "picture.bin"  # (a name that says nothing)
    path.write_bytes(head + bytes(64))
    assert detect(path) == mime
    reader = reader_for(mime)
    assert reader is not None and mime in reader.mimes


# -- with the real tools ---------------------------------------------------------------------

LINES = ["HELLO WORLD", "OCR TEST 42"]


def png(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_bytes(R.png(R.render(lines)))
    return path


def encode(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


@needs_heif
@pytest.mark.parametrize("avif", [False, True], ids=["heic", "avif"])
def test_what_heif_enc_writes_is_read(tmp_path: Path, avif: bool) -> None:
    first = png(tmp_path, "1.png", LINES)
    second = png(tmp_path, "2.png", ["SECOND PAGE"])
    out = tmp_path / ("two.avif" if avif else "two.heic")
    encode(
        "heif-enc", *(["-A"] if avif else []), "-q", "90", str(first), str(second), "-o", str(out)
    )
    mime = detect(out)
    assert mime == (M.AVIF if avif else M.HEIC)
    text, info = read(HeifReader(), out, mime, discover())
    pages = text.split("\f")
    assert "HELLO WORLD" in pages[0] and "TEST 42" in pages[0] and "SECOND PAGE" in pages[1]
    assert info == ReadInfo("heif-convert+tesseract", pages=2)


@needs_heif
def test_a_cut_heic_is_corrupt(tmp_path: Path) -> None:
    out = tmp_path / "a.heic"
    encode("heif-enc", "-q", "90", str(png(tmp_path, "1.png", LINES)), "-o", str(out))
    out.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    with pytest.raises(CorruptFile, match=r"^heif-convert could not read the image: ."):
        read(HeifReader(), out, M.HEIC, discover())


@needs_jp2
@pytest.mark.parametrize("suffix", [".jp2", ".j2k"])
def test_what_opj_compress_writes_is_read(tmp_path: Path, suffix: str) -> None:
    made = tmp_path / f"scan{suffix}"
    encode("opj_compress", "-i", str(png(tmp_path, "1.png", LINES)), "-o", str(made))
    path = tmp_path / "scan.bin"  # named anyhow: told apart by its head
    made.rename(path)
    mime = detect(path)
    assert mime == (M.JP2 if suffix == ".jp2" else M.J2K)
    text, info = read(Jpeg2000Reader(), path, mime, discover())
    assert "HELLO WORLD" in text and "TEST 42" in text
    assert info == ReadInfo("opj_decompress+tesseract", pages=1)
    cut = tmp_path / "cut.jp2"
    cut.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CorruptFile, match=r"^opj_decompress could not read the image"):
        read(Jpeg2000Reader(), cut, mime, discover())


def test_a_phone_s_photo_waits_on_heif_convert_and_is_read_once_it_is_there(
    tmp_path: Path,
) -> None:
    """Swept without the decoder, a HEIC photo is ``unsupported/needs_tool`` and ``quarry
    tools`` counts it waiting on heif-convert, with the package to install; swept again with
    the tools (where they are installed), its text is read."""
    root = tmp_path / "docs"
    root.mkdir()
    photo = root / "IMG_0001.HEIC"
    heif_there = all(shutil.which(t) is not None for t in HEIF_TOOLS)
    if heif_there:
        encode("heif-enc", "-q", "90", str(png(tmp_path, "1.png", LINES)), "-o", str(photo))
    else:
        photo.write_bytes(HEIC_HEAD + bytes(100))
    store = tmp_path / "s"
    proc = sweep(root, store, "--without", "heif-convert")
    assert proc.returncode == 0, proc.stderr
    record = shown(photo, store)
    assert (record["status"], record["reason"], record["mime"]) == (
        "unsupported",
        "needs_tool",
        M.HEIC,
    ), record
    assert "heif-convert" in record["needs"]  # type: ignore[operator]
    proc = quarry("tools", store, "--json")
    rows = {r["tool"]: r for r in orjson.loads(proc.stdout)}
    assert rows["heif-convert"]["files_waiting"] == 1
    assert "libheif-examples" in rows["heif-convert"]["install"]["debian"]
    if not heif_there:
        return
    proc = sweep(root, store)
    assert proc.returncode == 0, proc.stderr
    record = shown(photo, store)
    assert (record["status"], record["extractor"], record["why"]) == (
        "ok",
        "heif-convert+tesseract",
        "tools-changed",
    ), record
    assert "HELLO WORLD" in text_shown(photo, store)
