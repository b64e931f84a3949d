"""Compiled HTML Help (``.chm``) through chmlib's tools: pages in the order of the contents.

On a bare machine the tools are stand-ins over a folder of pages (``enum_chmLib`` prints a
listing as chmlib does, ``test_chmLib`` copies the page it is asked for); a real help file
(``data/chm/``, see its SOURCES.md) is told apart everywhere and read where libchm-bin is
installed (CI installs it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, NeedsTool
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, TextSink
from engine.readers.chm import ChmReader, _contents_order, _listing
from engine.tools import ToolSet, discover
from tests.quarrycli import shown, sweep, text_shown
from tests.readkit import stand_in

DATA = Path(__file__).parent / "data" / "chm"
REAL = DATA / "cmak_ops.CHM"
HAVE_CHMLIB = all(discover().has(t) for t in ("enum_chmLib", "test_chmLib"))
SITEMAP = """<HTML><BODY><UL>
<LI><OBJECT type="text/sitemap"><param name="Name" value="Intro">
<param name="Local" value="html/intro.htm"></OBJECT>
<LI><OBJECT type="text/sitemap"><param name="Local" value='html/Setup.htm#step2'></OBJECT>
<LI><OBJECT type="text/sitemap">
<param name="Local" value="mk:@MSITStore:help.chm::/html/intro.htm"></OBJECT>
<LI><OBJECT type="text/sitemap"><param name="Local" value="html/gone.htm"></OBJECT>
</UL></BODY></HTML>"""


def chm_tools(tmp_path: Path, pages: dict[str, str], *, missing: tuple[str, ...] = ()) -> ToolSet:
    """Stand-ins for chmlib's tools over ``pages`` (name -> content): the listing names
    ``missing`` too, which test_chmLib then fails to resolve as chmlib does (exit 0)."""
    objects = tmp_path / "objects"
    for name, content in pages.items():
        target = objects / name.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    lines = [" spc    start   length   type\t\t\tname", " ===    =====   ======   ====\t\t\t===="]
    lines.append("   0        0        0   normal dir\t\t/")
    lines.append("   1   100     4096   special file\t\t/#SYSTEM")
    for name, content in pages.items():
        lines.append(f"   1   0   {len(content.encode())}   normal file\t\t{name}")
    lines += [f"   1   0   10   normal file\t\t{name}" for name in missing]
    (tmp_path / "listing.txt").write_text("\n".join(lines) + "\n")
    enum = stand_in(tmp_path, "enum_chmLib", f'cat "{tmp_path}/listing.txt"')
    fetch = stand_in(
        tmp_path,
        "test_chmLib",
        f'echo "resolving $2"; [ -f "{objects}$2" ] && cp "{objects}$2" "$3" || echo "    failed"',
    )
    return ToolSet((enum, fetch))


def read(
    tools: ToolSet, limits: Limits = DEFAULT_LIMITS, path: Path = REAL
) -> tuple[str, str | None]:
    sink = TextSink(1 << 20)
    info = ChmReader().read(path, ReadContext(M.CHM, limits, tools), sink)
    return sink.getvalue(), info.note


PAGES = {
    "/help.hhc": SITEMAP,
    "/html/appendix.htm": "<html><body><p>Appendix text</p></body></html>",
    "/html/Setup.htm": "<html><body><h1>Setup</h1><p>Run setup.exe</p></body></html>",
    "/html/intro.htm": "<html><body><p>Welcome to the help</p></body></html>",
    "/images/logo.gif": "GIF89a",
}


def test_pages_come_in_the_order_of_the_contents_then_the_rest(tmp_path: Path) -> None:
    text, note = read(chm_tools(tmp_path, PAGES))
    assert text == "Welcome to the help\nSetup\nRun setup.exe\nAppendix text\n"
    assert note is None


def test_a_page_chmlib_cannot_resolve_is_counted_not_fatal(tmp_path: Path) -> None:
    text, note = read(chm_tools(tmp_path, PAGES, missing=("/html/broken.htm",)))
    assert "Appendix text" in text
    assert note == "1 of 4 pages not read"


@pytest.mark.parametrize(
    "limits",
    [
        Limits(archive_members=2),
        Limits(archive_bytes=len(SITEMAP) + 60),  # the sitemap and the first page
    ],
)
def test_the_archive_bounds_stop_before_a_page_is_fetched(tmp_path: Path, limits: Limits) -> None:
    text, note = read(chm_tools(tmp_path, PAGES), limits)
    assert text.startswith("Welcome to the help\n")
    assert "Appendix" not in text
    assert note is not None and "of 3 pages not read (archive_" in note


def test_without_the_tools_it_waits_for_them_naming_both() -> None:
    with pytest.raises(NeedsTool) as caught:
        read(ToolSet.empty())
    assert set(caught.value.tools) == {"enum_chmLib", "test_chmLib"}


def test_a_file_chmlib_cannot_open_is_corrupt(tmp_path: Path) -> None:
    tools = ToolSet(
        (
            stand_in(tmp_path, "enum_chmLib", 'echo "failed to open $1" >&2'),
            stand_in(tmp_path, "test_chmLib", "exit 0"),
        )
    )
    with pytest.raises(CorruptFile):
        read(tools)


def test_a_help_file_is_told_apart_by_its_header(tmp_path: Path) -> None:
    renamed = tmp_path / "manual.bin"
    shutil.copy(REAL, renamed)
    assert detect(REAL) == detect(renamed) == M.CHM


@given(st.text(max_size=300))
@settings(max_examples=100, deadline=None)
def test_any_listing_gives_names_and_sizes_or_nothing(out: str) -> None:
    files = _listing(out.encode("utf-8", "surrogatepass"))
    assert all(name.startswith("/") and size >= 0 for name, size in files.items())


@given(st.binary(max_size=400), st.lists(st.sampled_from(list(PAGES)), unique=True))
@settings(max_examples=100, deadline=None)
def test_the_contents_name_only_listed_pages_once(sitemap: bytes, listed: list[str]) -> None:
    files = dict.fromkeys(listed, 10)
    order = _contents_order(SITEMAP.encode() + sitemap, files)
    assert len(order) == len(set(order))
    assert set(order) <= set(files)
    assert not any(name.endswith((".gif", ".hhc")) for name in order)


@pytest.mark.skipif(not HAVE_CHMLIB, reason="chmlib's tools (libchm-bin) are not installed")
def test_a_real_help_file_is_read_in_the_order_of_its_contents() -> None:
    text, note = read(discover())
    assert note is None
    lines = text.splitlines()
    assert lines[0] == "Kit d’administration de Connection Manager"
    assert "Connection Manager est un outil de connexion de réseau client" in text
    assert text.index("Installer le Kit") < text.index("Sélectionner le système")


@pytest.mark.skipif(not HAVE_CHMLIB, reason="chmlib's tools (libchm-bin) are not installed")
def test_the_real_quarry_reads_a_help_file_and_without_the_tools_says_what_it_needs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    shutil.copy(REAL, root / "cmak.chm")
    bare = sweep(root, tmp_path / "bare", "--without", "enum_chmLib")
    assert bare.returncode in (0, 2), bare.stderr
    record = shown(root / "cmak.chm", tmp_path / "bare")
    assert (record["status"], record["reason"]) == ("unsupported", "needs_tool")
    assert "enum_chmLib" in str(record)
    store = tmp_path / "store"
    assert sweep(root, store).returncode == 0
    assert "Connection Manager est un outil" in text_shown(root / "cmak.chm", store)
    assert shown(root / "cmak.chm", store)["reader"] == "chm"
