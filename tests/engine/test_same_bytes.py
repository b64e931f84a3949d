"""The same bytes under names that are read differently: each file keeps its own verdict,
sweep after sweep, whatever else shares its content (issue 25)."""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.detect import COMPRESSED_SUFFIXES, detect, name_key
from engine.records import Record
from engine.store import Store
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet, discover
from fixtures.gen.misc import OLE_JUNK

Verdict = tuple[object, ...]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _verdicts(root: Path) -> dict[str, Verdict]:
    """Every record's verdict: what was read, by what, and what came of it."""
    return {r.path: _verdict(r) for r in Store(root / ".quarry").load_records()}


def _verdict(r: Record) -> Verdict:
    return (r.status, r.reason, r.mime, r.reader, r.extractor, r.error, r.chars, r.needs)


def _swept_three_times(root: Path, tools: ToolSet) -> list[dict[str, Verdict]]:
    runs = []
    for _ in range(3):
        sweep([root], SweepOptions(tools=tools))
        runs.append(_verdicts(root))
    return runs


def _read_as_named(root: Path, verdicts: dict[str, Verdict]) -> list[str]:
    """Files whose record names another MIME type than detection gives the file itself."""
    return [p for p, v in verdicts.items() if v[2] != detect(root / p)]


def test_name_key_is_the_suffix_and_a_compressed_payloads() -> None:
    assert name_key("a/Report.DOC") == ".doc"
    assert name_key("notes") == ""
    assert name_key("Data.CSV.gz") == ".csv.gz"
    assert name_key("x.tar.ZST") == ".tar.zst"
    assert name_key("dir.v2/readme") == ""


def _name_key_by_paths(name: str) -> str:
    """name_key as it was written first, with path objects (the rules it must keep)."""
    base = PurePosixPath(name.lower().rsplit("/", 1)[-1])
    if base.suffix in COMPRESSED_SUFFIXES:
        return PurePosixPath(base.stem).suffix + base.suffix
    return base.suffix


@given(
    st.lists(
        st.sampled_from(["a", ".", "/", "gz", "Z", "tar", "\udcff", " ", "é", ".."]), max_size=8
    ).map("".join)
    | st.text(max_size=12)
)
def test_name_key_keeps_the_rules_of_path_objects(name: str) -> None:
    assert name_key(name) == _name_key_by_paths(name)


def test_the_fixtures_keep_every_verdict_over_three_sweeps(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("__pycache__", ".quarry"))
    # a third name for the broken OLE2 bytes that fixtures/hostile holds twice
    (root / "hostile" / "xls_broken_ole.xls").write_bytes(OLE_JUNK)
    first, second, third = _swept_three_times(root, discover())
    changed = {
        p: (first[p], second.get(p), third.get(p))
        for p in first
        if first[p] != second.get(p) or first[p] != third.get(p)
    }
    assert not changed
    assert _read_as_named(root, third) == []
    assert first["hostile/msg_broken_ole.msg"][:4] == (
        "error",
        "corrupt",
        "application/vnd.ms-outlook",
        "msg",
    )


_CONTENTS = {
    "ole-junk": OLE_JUNK,
    "junk": bytes(range(256)) * 3,
    "pdf-cut": b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
    "zip-junk": b"PK\x03\x04" + bytes(range(200)),
}
_SUFFIXES = (".doc", ".msg", ".xls", ".ppt", ".wpd", ".rtf", ".pdf", ".docx", ".bin", "")


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.tuples(st.sampled_from(sorted(_CONTENTS)), st.sampled_from(_SUFFIXES)),
        min_size=2,
        max_size=6,
        unique=True,
    )
)
def test_files_sharing_bytes_under_other_suffixes_keep_their_own_verdicts(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, str]]
) -> None:
    root = tmp_path_factory.mktemp("same")
    for n, (content, suffix) in enumerate(files):
        (root / f"f{n}{suffix}").write_bytes(_CONTENTS[content])
    first, second, third = _swept_three_times(root, ToolSet.empty())
    assert first == second == third
    assert _read_as_named(root, third) == []
