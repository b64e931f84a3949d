"""Office 97 documents embedded as storages: an Excel table pasted into a Word 97 document
(``ObjectPool/_NNN/Workbook``), a Word document in an Excel 97 workbook (``MBD.../
WordDocument``).

The embedded document was whole but no file, and went unread (LibreOffice's own ``.doc`` of
a text with a spreadsheet object in it read without the table). Each such storage is written
out as an OLE2 file of its own (:mod:`engine.readers.cfb`) and read as a member; a Microsoft
Graph chart, whose ``Workbook`` is Graph's own, is not.
"""

from __future__ import annotations

import io
from pathlib import Path

import olefile
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.limits import Limits
from engine.readers.cfb import Node, compound_file, storage_file
from fixtures.gen import legacy as L
from tests.readkit import read_bytes

EXCEL_SHEET = bytes.fromhex("2008020000000000c000000000000046")  # Excel.Sheet.8, as stored
GRAPH_CHART = bytes.fromhex("0308020000000000c000000000000046")  # MSGraph.Chart.8


def workbook_stream() -> bytes:
    with olefile.OleFileIO(L.xls_bytes()) as ole:
        return bytes(ole.openstream("Workbook").read())


def stream(name: str, data: bytes) -> Node:
    return Node(name, False, data=data)


def storage(name: str, *kids: Node, clsid: bytes = bytes(16)) -> Node:
    return Node(name, True, clsid=clsid, children=list(kids))


def workbook_with(obj: Node) -> bytes:
    """An Excel 97 workbook (the fixtures' three sheets) holding the storage ``obj``."""
    data = compound_file(storage("Root Entry", stream("Workbook", workbook_stream()), obj))
    assert data is not None
    return data


def test_a_workbook_s_embedded_excel_table_is_its_member(tmp_path: Path) -> None:
    inner = storage(
        "MBD00A1B2C3",
        stream("\x01CompObj", b"\x01\x00\xfe\xff" + bytes(60)),
        stream("Workbook", workbook_stream()),
        clsid=EXCEL_SHEET,
    )
    outcome, text = read_bytes(tmp_path, "book.xls", workbook_with(inner))
    assert outcome.status == "ok", outcome.error
    assert [(m.path, m.status) for m in outcome.members] == [
        ("embedded/MBD00A1B2C3/document", "ok")
    ]
    assert text == f"{L.XLS_TEXT}# member embedded/MBD00A1B2C3/document\n{L.XLS_TEXT}"


def test_a_graph_chart_s_workbook_is_not_read_as_one(tmp_path: Path) -> None:
    chart = storage("MBD00000001", stream("Workbook", b"\x09\x08" + bytes(200)), clsid=GRAPH_CHART)
    outcome, text = read_bytes(tmp_path, "book.xls", workbook_with(chart))
    assert outcome.status == "ok" and outcome.members == ()
    assert text == L.XLS_TEXT


def test_a_storage_past_the_member_bound_is_named_with_its_verdict(tmp_path: Path) -> None:
    inner = storage("MBD00000002", stream("Workbook", workbook_stream()), clsid=EXCEL_SHEET)
    limits = Limits(zip_member_bytes=1000)
    outcome, text = read_bytes(tmp_path, "book.xls", workbook_with(inner), limits=limits)
    assert [(m.path, m.status, m.reason) for m in outcome.members] == [
        ("embedded/MBD00000002/document", "error", "limit")
    ]
    assert text.startswith(L.XLS_TEXT)


_NAMES = st.text("abcXYZ_01\x01", min_size=1, max_size=31)


def _trees(depth: int = 3) -> st.SearchStrategy[list[Node]]:
    """A storage's children: streams of any size around the mini stream's cutoff (4,096)
    and storages, their names unique without case, as the format asks."""
    sizes = st.sampled_from([0, 1, 63, 64, 65, 4095, 4096, 4097, 9000])
    leaf = st.builds(
        lambda n, s: stream(n, bytes((i * 7 + len(n)) % 251 for i in range(s))), _NAMES, sizes
    )
    kid: st.SearchStrategy[Node] = leaf
    if depth:
        kid = st.one_of(
            leaf,
            st.builds(
                lambda n, k: storage(n, *k, clsid=bytes(range(16))), _NAMES, _trees(depth - 1)
            ),
        )
    return st.lists(kid, max_size=5, unique_by=lambda node: node.name.upper())


def _flat(node: Node, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], bytes | None]:
    found: dict[tuple[str, ...], bytes | None] = {}
    for kid in node.children:
        here = (*path, kid.name)
        found[here] = None if kid.storage else kid.data
        if kid.storage:
            found |= _flat(kid, here)
    return found


def _read_back(data: bytes) -> dict[tuple[str, ...], bytes | None]:
    with olefile.OleFileIO(io.BytesIO(data)) as ole:
        return {
            tuple(entry): (
                None
                if ole.get_type(entry) == olefile.STGTY_STORAGE
                else ole.openstream(entry).read()
            )
            for entry in ole.listdir(streams=True, storages=True)
        }


@settings(max_examples=40, deadline=None)
@given(_trees())
def test_any_tree_of_storages_and_streams_reads_back_whole(kids: list[Node]) -> None:
    root = storage("Root Entry", *kids)
    expected = _flat(root)
    data = compound_file(root)
    assert data is not None
    assert _read_back(data) == expected
    with olefile.OleFileIO(io.BytesIO(data)) as ole:
        for path in (p for p, d in expected.items() if d is None):
            assert ole.getclsid(list(path)) == "03020100-0504-0706-0809-0A0B0C0D0E0F"
            alone = storage_file(ole, list(path), 1 << 30)
            assert alone is not None
            below = {
                p[len(path) :]: d
                for p, d in expected.items()
                if p[: len(path)] == path and p != path
            }
            assert _read_back(alone) == below
