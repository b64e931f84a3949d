"""Legacy .doc through antiword and catdoc, and .xls through xls2csv when xlrd gives up.

Word files cannot be generated without Office, so the output shaping and the verdicts are
checked with small stand-in tool scripts, and the real tools are run on hostile input (and on
the shared corpus when it is there). The built-in .xls and .ppt readers are tested with
generated files in test_xls_ppt.py.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from engine.detect import detect
from engine.errors import CorruptFile, EncryptedFile, NeedsTool, ToolFailed
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.legacy import OLE_MAGIC, DocReader, canonical_copy
from engine.readers.ppt import PptReader
from engine.readers.xls import XlsReader
from engine.tools import Tool, ToolSet, discover
from fixtures.gen._cfb import compound_file
from tests.readkit import stand_in

OLE_JUNK = OLE_MAGIC + bytes(range(256)) * 8
CORPUS = Path("/work/shared/corpus")


def fake_tool(tmp_path: Path, name: str, script: str) -> Tool:
    """An executable called ``name`` that runs ``script`` (sh)."""
    return stand_in(tmp_path, name, script, version="0")


def read(
    reader: DocReader | XlsReader | PptReader,
    path: Path,
    tools: ToolSet,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[str, ReadInfo]:
    mime = next(iter(reader.mimes))
    sink = TextSink(1_000_000)
    info = reader.read(path, ReadContext(mime, limits=limits, tools=tools), sink)
    return sink.getvalue(), info


@pytest.fixture
def ole(tmp_path: Path) -> Path:
    path = tmp_path / "file.bin"
    path.write_bytes(OLE_JUNK)
    return path


def test_missing_tools_are_named(ole: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(DocReader(), ole, ToolSet.empty())
    assert caught.value.tools == ("antiword", "catdoc")
    assert caught.value.status == "unsupported"


def test_xls_and_ppt_need_no_tool(ole: Path) -> None:
    """Junk inside an OLE2 signature: a corrupt verdict, never needs_tool."""
    for reader in (XlsReader(), PptReader()):
        with pytest.raises(CorruptFile):
            read(reader, ole, ToolSet.empty())


def test_doc_by_antiword(tmp_path: Path, ole: Path) -> None:
    tool = fake_tool(tmp_path, "antiword", r"printf 'Title  \n\n\n\n\nBody text\n\n'")
    text, info = read(DocReader(), ole, ToolSet((tool,)))
    assert (text, info) == ("Title\n\nBody text\n", ReadInfo("antiword"))


def test_doc_falls_back_to_catdoc_when_antiword_gives_up(tmp_path: Path, ole: Path) -> None:
    anti = fake_tool(tmp_path, "antiword", "echo 'too small to handle.' >&2; exit 1")
    cat = fake_tool(tmp_path, "catdoc", "printf 'From catdoc\\n'")
    text, info = read(DocReader(), ole, ToolSet((anti, cat)))
    assert (text, info.extractor) == ("From catdoc\n", "catdoc")


def test_catdoc_alone_is_used(tmp_path: Path, ole: Path) -> None:
    cat = fake_tool(tmp_path, "catdoc", "printf 'Only catdoc\\n'")
    assert read(DocReader(), ole, ToolSet((cat,)))[0] == "Only catdoc\n"


def test_catdoc_is_not_trusted_with_non_ole_files(tmp_path: Path) -> None:
    path = tmp_path / "wp.doc"
    path.write_bytes(b"\xffWPC not word at all")
    anti = fake_tool(tmp_path, "antiword", f"echo '{path} is not a Word Document.' >&2; exit 1")
    cat = fake_tool(tmp_path, "catdoc", "printf 'byte salad\\n'")
    with pytest.raises(CorruptFile) as caught:
        read(DocReader(), path, ToolSet((anti, cat)))
    assert str(caught.value) == "antiword could not read it: FILE is not a Word Document."


def _like_antiword(tmp_path: Path, name: str) -> Tool:
    """A ``name`` that reads a file as antiword and catdoc do: only with a stream named
    ``WordDocument`` as Word names it (olefile lists names as they are written)."""
    script = (
        "import olefile, sys\n"
        "said = sys.argv[-1] + ' is not a Word Document.'\n"
        "try:\n"
        "    streams = olefile.OleFileIO(sys.argv[-1]).listdir()\n"
        "except OSError:\n"
        "    sys.exit(said)\n"
        "if ['WordDocument'] not in streams:\n"
        "    sys.exit(said)\n"
        "print('Read from', '/'.join(sorted(s[0] for s in streams)))\n"
    )
    (tmp_path / f"{name}.py").write_text(script)
    return fake_tool(tmp_path, name, f'exec "{sys.executable}" "{tmp_path}/{name}.py" "$@"')


@pytest.mark.parametrize("tool", ["antiword", "catdoc"])
def test_a_doc_whose_streams_are_named_in_upper_case_is_read_as_word_names_them(
    tmp_path: Path, tool: str
) -> None:
    """The format compares stream names without case and some writers write WORDDOCUMENT;
    antiword and catdoc look for WordDocument (Tika's casing/simple_upper_case.doc was
    error/corrupt). A copy with Word's names is read; the file itself is left as it was."""
    streams = {"WORDDOCUMENT": b"\0" * 4096, "1TABLE": b"\1" * 600, "DATA": b"", "Other": b"x"}
    path = tmp_path / "upper.doc"
    path.write_bytes(compound_file(streams))
    before = path.read_bytes()
    text, info = read(DocReader(), path, ToolSet((_like_antiword(tmp_path, tool),)))
    assert (text, info.extractor) == ("Read from 1Table/Data/Other/WordDocument\n", tool)
    assert path.read_bytes() == before
    proper = tmp_path / "proper.doc"
    proper.write_bytes(compound_file({"WordDocument": b"\0" * 4096}))
    assert not canonical_copy(proper, tmp_path / "copy.doc")  # nothing to rename: no copy
    assert not (tmp_path / "copy.doc").exists()


def test_a_word_file_that_names_its_streams_in_upper_case_is_detected_as_word(
    tmp_path: Path,
) -> None:
    path = tmp_path / "upper.bin"
    path.write_bytes(compound_file({"WORDDOCUMENT": b"\0" * 4096}))
    assert detect(path) == "application/msword"


@pytest.mark.parametrize("tools", [("antiword",), ("catdoc",), ("antiword", "catdoc")])
def test_a_wordperfect_file_named_doc_is_read_by_wpd2text_when_word_s_tools_cannot(
    tmp_path: Path, tools: tuple[str, ...]
) -> None:
    """WordPerfect 4.2 has no signature (5.x and later are told apart by theirs): named
    ``.doc`` it went to antiword, and came out error/corrupt ("not a Word Document"), or
    empty with catdoc alone. wpd2text, when found, reads it; without it the verdict says
    why, whichever of Word's tools there is."""
    path = tmp_path / "wp42.doc"
    path.write_bytes(b"\xcb\n\x01\xf6\x01\xcb" + b"\0" * 64 + b"Sluwe Sjaantje")
    word = [_like_antiword(tmp_path, name) for name in tools]
    wpd = fake_tool(tmp_path, "wpd2text", "printf 'Sluwe Sjaantje\\n'")
    text, info = read(DocReader(), path, ToolSet((*word, wpd)))
    assert (text, info.extractor) == ("Sluwe Sjaantje\n", "wpd2text")
    with pytest.raises(CorruptFile) as caught:
        read(DocReader(), path, ToolSet(tuple(word)))
    assert "not a Word" in str(caught.value)
    refusing = fake_tool(tmp_path, "wpd2text", "echo 'ERROR: Unsupported file format!' >&2; exit 1")
    with pytest.raises(CorruptFile) as caught:
        read(DocReader(), path, ToolSet((*word, refusing)))
    assert "wpd2text" not in str(caught.value)  # Word's tools' verdict, not libwpd's


def test_encrypted_doc(tmp_path: Path, ole: Path) -> None:
    anti = fake_tool(
        tmp_path, "antiword", "echo 'Encrypted documents are not supported' >&2; exit 1"
    )
    with pytest.raises(EncryptedFile):
        read(DocReader(), ole, ToolSet((anti,)))


def test_xls2csv_is_tried_when_xlrd_gives_up(tmp_path: Path, ole: Path) -> None:
    tool = fake_tool(tmp_path, "xls2csv", r"printf 'a\tb\n\t\n1\t2\t\n\fonly\n\f'")
    text, info = read(XlsReader(), ole, ToolSet((tool,)))
    assert text == "# sheet1\na\tb\n1\t2\n# sheet2\nonly\n"
    assert info == ReadInfo("xls2csv", pages=2)


def test_empty_xls2csv_output_keeps_xlrds_verdict(tmp_path: Path, ole: Path) -> None:
    tool = fake_tool(tmp_path, "xls2csv", "true")
    with pytest.raises(CorruptFile, match="xlrd"):
        read(XlsReader(), ole, ToolSet((tool,)))


def test_unprintable_tool_output_is_refused(tmp_path: Path, ole: Path) -> None:
    tool = fake_tool(tmp_path, "xls2csv", r"printf '\001\002\003\004\005\006 ok'")
    with pytest.raises(CorruptFile, match="printable"):
        read(XlsReader(), ole, ToolSet((tool,)))


def test_a_symbol_font_s_glyphs_are_no_unprintable_output(tmp_path: Path, ole: Path) -> None:
    """catdoc writes the Symbol font's alpha as its code, U+F061: a one-line document with
    three such glyphs was refused as 90% printable. Other private-use characters still count
    against it."""
    glyphs = r"printf 'p \357\202\243 0.01, \357\201\241 = 0.05, 5 \357\201\255m\n'"
    anti = fake_tool(tmp_path, "antiword", "echo 'too small to handle' >&2; exit 1")
    text, info = read(DocReader(), ole, ToolSet((anti, fake_tool(tmp_path, "catdoc", glyphs))))
    assert (text, info.extractor) == ("p \uf0a3 0.01, \uf061 = 0.05, 5 \uf06dm\n", "catdoc")
    other = r"printf 'p \356\200\201 0.01, \356\200\202 = 0.05\n'"
    with pytest.raises(CorruptFile, match="printable"):
        read(DocReader(), ole, ToolSet((anti, fake_tool(tmp_path, "catdoc", other))))


def test_tool_timeout(tmp_path: Path, ole: Path) -> None:
    tool = fake_tool(tmp_path, "xls2csv", "sleep 5")
    with pytest.raises(ToolFailed, match="timed out"):
        read(XlsReader(), ole, ToolSet((tool,)), Limits(tool_timeout_s=0.5))


@pytest.mark.skipif(shutil.which("antiword") is None, reason="antiword not on PATH")
def test_real_antiword_on_junk_is_corrupt(ole: Path) -> None:
    with pytest.raises(CorruptFile):
        read(DocReader(), ole, discover().without(["catdoc"]))


@pytest.mark.skipif(shutil.which("xls2csv") is None, reason="xls2csv not on PATH")
def test_real_xls2csv_on_a_non_ole_file_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "x.xls"
    path.write_bytes(b"not a workbook")
    with pytest.raises(CorruptFile):
        read(XlsReader(), path, discover())


REAL: dict[str, tuple[DocReader | XlsReader | PptReader, str]] = {
    "format-corpus/variations/variations/application/msword/lorem-ipsum.doc": (
        DocReader(),
        "Lorem ipsum dolor sit amet",
    ),
    "markitdown/packages/markitdown/tests/test_files/test.xls": (XlsReader(), "Alpha\tBeta"),
    "format-corpus/office-examples/powerpoint4-mac/ecdl+paris2001.ppt": (
        PptReader(),
        "# slide2\nJISC digital library initiatives: contents",
    ),
}


@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_tools_on_corpus_files(rel: str) -> None:
    path = CORPUS / rel
    reader, expected = REAL[rel]
    if not path.exists():
        pytest.skip("shared corpus not present")
    if isinstance(reader, DocReader) and not shutil.which("antiword"):
        pytest.skip("antiword not on PATH")
    text, info = read(reader, path, discover())
    assert expected in text
    assert info.extractor == {"doc": "antiword", "xls": "xlrd", "ppt": "ppt"}[reader.name]


_TIKA = "tika/tika-parsers/tika-parsers-standard/tika-parsers-standard-modules"
REAL_ODD_DOCS = {
    "format-corpus/office/wordprocessing/WordPerfect42/testWordPerfect_42.doc": (
        "wpd2text",
        "Sluwe Sjaantje sloeg de slome slager",
    ),
    f"{_TIKA}/tika-parser-microsoft-module/src/test/resources/test-documents/casing/"
    "simple_upper_case.doc": ("antiword", "This is a sample Word document"),
}


@pytest.mark.parametrize("rel", sorted(REAL_ODD_DOCS))
def test_real_tools_on_the_corpus_s_odd_docs(rel: str) -> None:
    """A WordPerfect 4.2 file named ``.doc`` and a Word file with upper-case stream names:
    error/corrupt before, read now by the real tools."""
    tool, expected = REAL_ODD_DOCS[rel]
    path = CORPUS / rel
    if not path.exists():
        pytest.skip("shared corpus not present")
    if not (shutil.which(tool) and shutil.which("antiword")):
        pytest.skip(f"{tool} or antiword not on PATH")
    text, info = read(DocReader(), path, discover())
    assert expected in text and info.extractor == tool
