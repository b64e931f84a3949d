"""DjVu documents: their text layer through djvused, and OCR of the pages without one.

On a bare machine DjVuLibre's tools and tesseract are stand-ins (they check what they are
given and print what the reader must make of it); where djvulibre-bin is installed (CI
installs it) real DjVu files are made with its own encoders (``cjb2``, ``djvused``, ``djvm``)
and read back.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, LimitExceeded, NeedsTool
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.djvu import DjvuReader
from engine.tools import ToolSet, discover
from tests.quarrycli import shown, sweep, text_shown
from tests.readkit import stand_in

DJVULIBRE = ("cjb2", "djvused", "djvm", "ddjvu")
HAVE_DJVULIBRE = all(shutil.which(tool) for tool in DJVULIBRE)


def read(path: Path, tools: ToolSet, deadline: float = float("inf")) -> tuple[str, ReadInfo]:
    sink = TextSink(1 << 20)
    info = DjvuReader().read(path, ReadContext(M.DJVU, tools=tools, deadline=deadline), sink)
    return sink.getvalue(), info


def tools(tmp_path: Path, pages: str, *, ocr: bool = True) -> ToolSet:
    """Stand-ins: djvused counts the pages of ``pages`` (printf's escapes, a form feed after
    each) and prints them for the script it is given, ddjvu writes the page it is asked for,
    tesseract reads back which page that was."""
    count = pages.count("\\f")
    script = f'[ "$1" = -e ] && [ "$2" = n ] && echo {count} && exit 0\n'
    script += f'[ "$1" = -f ] && [ "$(grep -c print-pure-txt "$2")" = {count} ] || exit 7\n'
    script += f"printf '{pages}'"
    found = [stand_in(tmp_path, "djvused", script)]
    if ocr:
        render = 'for a; do case "$a" in -page=*) page="${a#-page=}";; esac; last="$a"; done\n'
        render += 'echo "$page" > "$last"'
        found.append(stand_in(tmp_path, "ddjvu", render))
        found.append(stand_in(tmp_path, "tesseract", 'echo "OCR of page $(cat "$1")"'))
    return ToolSet(tuple(found))


def document(tmp_path: Path) -> Path:
    path = tmp_path / "scan.djvu"
    path.write_bytes(b"AT&TFORM\x00\x00\x00\x10DJVMDIRM")
    return path


def test_the_text_layer_comes_a_form_feed_between_pages(tmp_path: Path) -> None:
    text, info = read(document(tmp_path), tools(tmp_path, "Chapter one \\n\\n\\fChapter two\\n\\f"))
    assert text == "Chapter one\fChapter two\n"
    assert info == ReadInfo("djvused", pages=2)


def test_a_page_without_a_text_layer_is_ocrd(tmp_path: Path) -> None:
    text, info = read(document(tmp_path), tools(tmp_path, "typed page\\n\\f\\n\\fthird\\n\\f"))
    assert text == "typed page\fOCR of page 2\fthird\n"
    assert info == ReadInfo("djvused+tesseract", pages=3)


def test_scans_with_no_way_to_ocr_them_wait_on_the_tools(tmp_path: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(document(tmp_path), tools(tmp_path, "\\n\\f\\n\\f", ocr=False))
    assert set(caught.value.tools) == {"ddjvu", "tesseract"}
    text, info = read(document(tmp_path), tools(tmp_path, "kept\\n\\f\\n\\f", ocr=False))
    assert (text, info.extractor) == ("kept\n", "djvused")  # (some text: the rest unread)


def test_an_indirect_document_is_an_index_of_other_files_with_no_text(tmp_path: Path) -> None:
    path = tmp_path / "index.djvu"  # (Tika's testDJVU.djvu: eight pages named, none inside)
    path.write_bytes(b"AT&TFORM\x00\x00\x00\x4dDJVMDIRM\x00\x00\x00\x41\x01\x00\x08" + bytes(60))
    never = ToolSet((stand_in(tmp_path, "djvused", "exit 9"),))
    assert read(path, never) == ("", ReadInfo("djvused"))
    assert read(path, ToolSet.empty()) == ("", ReadInfo("djvused"))


def test_without_djvused_it_waits_on_djvused(tmp_path: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(document(tmp_path), ToolSet.empty())
    assert caught.value.tools == ("djvused",)


def test_a_file_djvulibre_cannot_decode_is_corrupt_in_its_words(tmp_path: Path) -> None:
    broken = ToolSet(
        (stand_in(tmp_path, "djvused", 'echo "*** Failed to open document" >&2; exit 10'),)
    )
    with pytest.raises(CorruptFile, match="djvused could not read it: \\*\\*\\* Failed to open"):
        read(document(tmp_path), broken)


def test_ocr_stops_when_the_reads_time_cannot_cover_another_page(tmp_path: Path) -> None:
    soon = time.monotonic() + 1  # (less than a page's OCR needs)
    text, info = read(document(tmp_path), tools(tmp_path, "typed\\n\\f\\n\\f"), soon)
    assert text == "typed\n"
    assert info.note == "ocr_time: the read's time ran out after OCR of 0 of 1 pages"
    with pytest.raises(LimitExceeded, match="ocr_time"):
        read(document(tmp_path), tools(tmp_path, "\\n\\f"), soon)


@pytest.mark.parametrize("form", [b"DJVU", b"DJVM"])
def test_a_djvu_file_is_told_apart_by_its_header_whatever_its_name(
    tmp_path: Path, form: bytes
) -> None:
    path = tmp_path / "scan.bin"
    path.write_bytes(b"AT&TFORM\x00\x00\x01\x00" + form + b"INFO" + bytes(40))
    assert detect(path) == M.DJVU


def make_book(folder: Path, pages: list[str | None]) -> Path:
    """A real DjVu bundle of bilevel pages, each with the text layer given (None: none)."""
    singles = []
    for i, words in enumerate(pages, start=1):
        pbm = folder / f"p{i}.pbm"
        rows = [
            "".join("1" if (x // 8 + y // 8 + i) % 2 else "0" for x in range(64)) for y in range(32)
        ]
        pbm.write_text("P1\n64 32\n" + "\n".join(rows) + "\n")
        single = folder / f"p{i}.djvu"
        subprocess.run(["cjb2", str(pbm), str(single)], check=True)
        if words is not None:
            layer = folder / f"t{i}.txt"
            layer.write_text(f'(page 0 0 64 32 (line 0 0 64 16 (word 0 0 64 16 "{words}")))')
            subprocess.run(
                ["djvused", str(single), "-e", f"select 1; set-txt {layer}", "-s"], check=True
            )
        singles.append(str(single))
    book = folder / "book.djvu"
    subprocess.run(["djvm", "-c", str(book), *singles], check=True)
    return book


@pytest.mark.skipif(not HAVE_DJVULIBRE, reason="djvulibre-bin is not installed")
def test_a_real_djvu_files_text_layer_is_read(tmp_path: Path) -> None:
    book = make_book(tmp_path, ["Introduction", None, "Appendix"])
    found = discover()
    without_ocr = ToolSet(tuple(t for t in found.found if t.name != "tesseract"))
    text, info = read(book, without_ocr)
    assert text.split("\f") == ["Introduction", "", "Appendix\n"]
    assert info == ReadInfo("djvused", pages=3)


@pytest.mark.skipif(not HAVE_DJVULIBRE, reason="djvulibre-bin is not installed")
def test_the_real_quarry_reads_a_djvu_and_says_what_a_scan_waits_on(tmp_path: Path) -> None:
    root = tmp_path / "library"
    root.mkdir()
    make_book(tmp_path, ["Foreword", "Contents"]).rename(root / "book.djv")
    (tmp_path / "scan").mkdir()
    make_book(tmp_path / "scan", [None]).rename(root / "scan.djvu")
    store = tmp_path / "store"
    proc = sweep(root, store, "--without", "tesseract")
    assert proc.returncode == 0, proc.stderr
    assert "Foreword" in text_shown(root / "book.djv", store)
    scan = shown(root / "scan.djvu", store)
    assert (scan["status"], scan["reason"], scan["mime"]) == ("unsupported", "needs_tool", M.DJVU)
    assert "tesseract" in scan["needs"]
