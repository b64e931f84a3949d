"""HTML reader and html_to_text: exact text per case, decoding, pathological markup."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import mimes as M
from engine.readers.base import ReadContext, TextSink
from engine.readers.html import HtmlReader, decode_html, html_to_text, meta_charset


def convert(markup: str) -> str:
    sink = TextSink(10**9)
    html_to_text(markup, sink)
    return sink.getvalue()


def read(tmp_path: Path, data: bytes) -> tuple[str, str]:
    path = tmp_path / "page.html"
    path.write_bytes(data)
    sink = TextSink(10**9)
    info = HtmlReader().read(path, ReadContext(mime=M.HTML), sink)
    return sink.getvalue(), info.extractor


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("<p>Hello   <b>world</b>\n foo</p>", "Hello world foo\n"),
        ("<p>a</p><p>b</p>", "a\nb\n"),
        ("a<br>b<br/><br>c", "a\nb\n\nc\n"),
        ("<h1>Title</h1><div>x <span>y</span></div>", "Title\nx y\n"),
        ("Fish &amp; chips &eacute;&#x41;&#66; &lt;tag&gt;", "Fish & chips éAB <tag>\n"),
        ("caf&eacute;&nbsp;au lait", "café\xa0au lait\n"),
        ("<script>var a = '<p>no</p>';</script>yes", "yes\n"),
        ("<style>p { color: red }</style><noscript>no</noscript>yes", "yes\n"),
        ("<template><p>hidden</p></template><p>shown</p>", "shown\n"),
        ("<ul><li>one<li>two</ul>", "one\ntwo\n"),
        ("<pre>\n  code\n    indented</pre>after", "  code\n    indented\nafter\n"),
        ("<hr>x<hr>", "x\n"),
        ("", ""),
        ("   ", ""),
        ("x", "x\n"),
    ],
)
def test_html_to_text(markup: str, expected: str) -> None:
    assert convert(markup) == expected


def test_head_keeps_only_the_title() -> None:
    markup = (
        "<html><head><title>The title</title><meta charset='utf-8'>"
        "<link rel=stylesheet href=x.css><script>x()</script></head>"
        "<body><p>Body</p></body></html>"
    )
    assert convert(markup) == "The title\nBody\n"


def test_tables_are_tab_separated_rows() -> None:
    markup = (
        "<table><tr><th>Name</th><th> Qty </th><th>Note</th></tr>"
        "<tr><td>apple</td><td>3</td><td></td></tr>"
        "<tr><td>pear <b>green</b></td><td>12</td><td>ripe</td></tr></table>after"
    )
    assert convert(markup) == "Name\tQty\tNote\napple\t3\t\npear green\t12\tripe\nafter\n"


def test_unclosed_cells_and_rows() -> None:
    assert convert("<table><tr><td>a<td>b<tr><td>c<td>d</table>") == "a\tb\nc\td\n"


def test_meta_charset_is_found() -> None:
    assert meta_charset(b'<meta charset="windows-1252">') == "windows-1252"
    assert meta_charset(b'<meta http-equiv=Content-Type content="text/html; charset=koi8-r">') == (
        "koi8-r"
    )
    assert meta_charset(b"<p>charset=utf-8</p>") is None


def test_meta_charset_lie_falls_back_to_cp1252(tmp_path: Path) -> None:
    data = '<meta charset="utf-8"><p>café – naïve</p>'.encode("cp1252")
    assert read(tmp_path, data) == ("café – naïve\n", "html")


def test_meta_charset_is_used(tmp_path: Path) -> None:
    data = '<meta charset="koi8-r"><p>привет</p>'.encode("koi8_r")
    assert read(tmp_path, data)[0] == "привет\n"


def test_latin1_label_means_cp1252() -> None:
    data = '<meta charset="iso-8859-1"><p>“quoted”</p>'.encode("cp1252")
    assert decode_html(data) == ('<meta charset="iso-8859-1"><p>“quoted”</p>', "cp1252")


def test_bom_wins_over_meta(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + '<meta charset="cp1252"><p>é</p>'.encode()
    assert read(tmp_path, data)[0] == "é\n"


def test_utf16_page(tmp_path: Path) -> None:
    data = "\ufeff<p>héllo</p>".encode("utf-16-le")
    assert read(tmp_path, data)[0] == "héllo\n"
    assert read(tmp_path, "<p>héllo</p>".encode("utf-16-be"))[0] == "héllo\n"


def test_utf8_without_meta(tmp_path: Path) -> None:
    assert read(tmp_path, "<p>日本語</p>".encode())[0] == "日本語\n"


def test_text_cap_stops_the_read() -> None:
    from engine.readers.base import TextCapReached

    sink = TextSink(10)
    with pytest.raises(TextCapReached):
        html_to_text("<p>" + "word " * 100 + "</p>", sink)
    assert sink.getvalue() == "word word "


def test_a_long_line_is_flushed_in_pieces() -> None:
    text = convert("<p>" + "w " * 100_000 + "</p>")
    assert text == ("w " * 100_000).strip() + "\n"


@pytest.mark.timeout(300)  # a bound on a blow-up (a quadratic pass: hours), never a speed
@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("<b>" * 100_000 + "x" + "</b>" * 100_000, "x\n"),
        ('<a href="' + "x" * 5_000_000 + '">y</a>', "y\n"),
        ("<div>" * 100_000 + "x", "x\n"),
        ("before<p>" + "<a" * 200_000, "before\n"),
        ("<!--" * 100_000, ""),
        ("</" * 200_000, ""),
        ("ok <a b='" * 100_000, "ok\n"),
        ("<" * 200_000, "<" * 200_000 + "\n"),
        ("&" * 1_000_000, "&" * 1_000_000 + "\n"),
    ],
)
def test_pathological_markup_is_linear(markup: str, expected: str) -> None:
    # No wall-clock limit: 5 s failed at 6.0 s on a slower machine under a CI suite's load.
    assert convert(markup) == expected


def test_text_ending_in_an_ampersand_is_kept() -> None:
    assert convert("<p>x</p>" + "word " * 2000 + "AT&T") == "x\n" + "word " * 2000 + "AT&T\n"


def test_reader_identity() -> None:
    reader = HtmlReader()
    assert (reader.name, reader.version, reader.tools) == ("html", 2, ())
    assert reader.mimes == {M.HTML, M.XHTML}


@pytest.mark.parametrize(
    "markup",
    ["a<![if-->b>c", "x<!DOCTYPE<![endif]>y", "<![&#&><pre>z", "<!ELEMENT <!-- >q"],
)
def test_malformed_declarations_do_not_raise(markup: str) -> None:
    convert(markup)


def test_script_end_tag_with_attributes_ends_the_script() -> None:
    markup = '<script lang="js">cool script</script language>\n<p>This is a test.</p>'
    assert convert(markup) == "This is a test.\n"
    assert convert("<style>a{}</style >after") == "after\n"
    assert convert("<script>x = '</scripts>'; y</script>z") == "z\n"


def test_layout_only_lines_are_dropped() -> None:
    markup = "<p>a</p><p>&nbsp;</p><table><tr><td></td><td> </td></tr></table><p>b</p>"
    assert convert(markup) == "a\nb\n"
