"""Binary property lists: Safari's web archives read as their page; any other as its values."""

from __future__ import annotations

import contextlib
import datetime
import plistlib
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.plist import PlistReader


def _read(path: Path) -> tuple[str, ReadInfo]:
    sink = TextSink(10**7)
    info = PlistReader().read(path, ReadContext(mime=detect(path)), sink)
    return sink.getvalue(), info


def _resource(body: bytes, mime: str, encoding: str | None) -> dict[str, object]:
    res: dict[str, object] = {
        "WebResourceData": body,
        "WebResourceMIMEType": mime,
        "WebResourceURL": "http://example.org/",
    }
    if encoding is not None:
        res["WebResourceTextEncodingName"] = encoding
    return res


def _archive(main: dict[str, object], **more: object) -> dict[str, object]:
    return {"WebMainResource": main, **more}


def test_a_web_archive_is_read_as_its_page_then_its_frames(tmp_path: Path) -> None:
    page = "<html><head><title>Menu</title><script>var x = 1;</script></head>"
    page += "<body><h1>Café du jour</h1><p>Soup &amp; bread</p></body></html>"
    frame = b"<html><body><p>Prix: 12 \xa4</p></body></html>"  # (the euro, in Latin-9)
    archive = _archive(
        _resource(page.encode(), "text/html", "UTF-8"),
        WebSubresources=[_resource(b"\x89PNG\r\n\x1a\n...", "image/png", None)],
        WebSubframeArchives=[_archive(_resource(frame, "text/html", "ISO-8859-15"))],
    )
    path = tmp_path / "menu.webarchive"
    path.write_bytes(plistlib.dumps(archive, fmt=plistlib.FMT_BINARY))
    assert detect(path) == M.WEBARCHIVE
    text, info = _read(path)
    assert info.extractor == "webarchive"
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines == ["Menu", "Café du jour", "Soup & bread", "Prix: 12 €"]  # (no script, no PNG)


def test_a_web_archive_of_a_text_page_and_one_naming_no_encoding(tmp_path: Path) -> None:
    plain = tmp_path / "notes.webarchive"
    plain.write_bytes(
        plistlib.dumps(
            _archive(_resource("naïve notes\n".encode(), "text/plain", "utf-8")),
            fmt=plistlib.FMT_BINARY,
        )
    )
    assert _read(plain)[0] == "naïve notes\n"
    bare = tmp_path / "bare.webarchive"
    markup = b'<html><head><meta charset="windows-1252"></head><body>caf\xe9</body></html>'
    bare.write_bytes(
        plistlib.dumps(_archive(_resource(markup, "text/html", None)), fmt=plistlib.FMT_BINARY)
    )
    assert _read(bare)[0].strip() == "café"


def test_another_property_list_is_read_as_one_line_a_value(tmp_path: Path) -> None:
    prefs = {
        "Name": "Quarterly  report\nfinal",
        "Recent": [{"Path": "/Users/ann/q3.pages", "Pinned": True}, {"Path": "/tmp/x"}],
        "Count": 3,
        "Scale": 1.5,
        "Opened": datetime.datetime(2024, 1, 2, 3, 4, 5),
        "Thumbnail": b"\x00\x01binary",
    }
    path = tmp_path / "com.example.app.plist"
    path.write_bytes(plistlib.dumps(prefs, fmt=plistlib.FMT_BINARY, sort_keys=False))
    assert detect(path) == M.BPLIST
    text, info = _read(path)
    assert info.extractor == "plist"
    assert text.splitlines() == [
        "Name\tQuarterly report final",
        "Recent/0/Path\t/Users/ann/q3.pages",
        "Recent/0/Pinned\ttrue",
        "Recent/1/Path\t/tmp/x",
        "Count\t3",
        "Scale\t1.5",
        "Opened\t2024-01-02T03:04:05",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("café!".encode(), "café!"), (b"caf\x8e!!", "café!!")],
    ids=["utf-8", "mac-roman"],
)
def test_a_string_marked_ascii_that_is_not_is_read_not_refused(
    tmp_path: Path, raw: bytes, expected: str
) -> None:
    """iTunes writes UTF-8 in strings marked ASCII (Tika's testBPList.bplist); plistlib alone
    refuses the whole file."""
    data = plistlib.dumps({"Artist": "X" * len(raw)}, fmt=plistlib.FMT_BINARY)
    path = tmp_path / "Library.plist"
    path.write_bytes(data.replace(b"X" * len(raw), raw))
    assert _read(path)[0] == f"Artist\t{expected}\n"


def _self_holding() -> bytes:
    """A binary property list whose one object, an array, holds itself twice."""
    objects = b"\xa2\x00\x00"  # an array of two references to object 0
    offsets = bytes([8])
    trailer = struct.pack(">6xBBQQQ", 1, 1, 1, 0, 8 + len(objects))
    return b"bplist00" + objects + offsets + trailer


def test_a_list_that_holds_itself_ends(tmp_path: Path) -> None:
    path = tmp_path / "loop.plist"
    path.write_bytes(_self_holding())
    try:
        text, _ = _read(path)
    except CorruptFile:
        return
    assert text == ""


def test_a_truncated_list_is_corrupt(tmp_path: Path) -> None:
    data = plistlib.dumps({"a": ["b", 1, 2.5]}, fmt=plistlib.FMT_BINARY)
    path = tmp_path / "cut.plist"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFile, match="not a property list it can read"):
        _read(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=200), cut=st.integers(0, 60))
def test_any_bytes_after_the_magic_give_a_text_or_corrupt(
    tmp_path_factory: pytest.TempPathFactory, body: bytes, cut: int
) -> None:
    good = plistlib.dumps({"k": [1, "v", {"n": b"x"}]}, fmt=plistlib.FMT_BINARY)
    path = tmp_path_factory.mktemp("fuzz") / "f.plist"
    path.write_bytes(b"bplist00" + body + good[8:][cut:])
    with contextlib.suppress(CorruptFile):  # (any other exception fails the test)
        _read(path)
