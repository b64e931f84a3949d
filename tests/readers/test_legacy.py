"""Legacy .doc through antiword and catdoc, and .xls through xls2csv when xlrd gives up.

Word files cannot be generated without Office, so the output shaping and the verdicts are
checked with small stand-in tool scripts, and the real tools are run on hostile input (and on
the shared corpus when it is there). The built-in .xls and .ppt readers are tested with
generated files in test_xls_ppt.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.errors import CorruptFile, EncryptedFile, NeedsTool, ToolFailed
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.base import ReadContext, ReadInfo, TextSink
from engine.readers.legacy import OLE_MAGIC, DocReader
from engine.readers.ppt import PptReader
from engine.readers.xls import XlsReader
from engine.tools import Tool, ToolSet, discover

OLE_JUNK = OLE_MAGIC + bytes(range(256)) * 8
CORPUS = Path("/work/shared/corpus")


def fake_tool(tmp_path: Path, name: str, script: str) -> Tool:
    """An executable called ``name`` that runs ``script`` (sh)."""
    exe = tmp_path / "bin" / name
    exe.parent.mkdir(exist_ok=True)
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)
    return Tool(name, str(exe), "0")


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
