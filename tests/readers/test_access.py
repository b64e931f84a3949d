"""Access databases through mdbtools: tables, cells, verdicts, a tool that is stopped.

Nothing free writes Jet databases, so the reading of mdb-tables' and mdb-export's output (and
their failures, a hang, an endless table) is checked with stand-in scripts that run on a
machine without mdbtools; the real tools read the shared corpus's databases when both are
there.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from engine import mimes as M
from engine.detect import detect
from engine.errors import CorruptFile, LimitExceeded, NeedsTool, ToolFailed
from engine.extract import ReadTask, read_one
from engine.limits import DEFAULT_LIMITS, Limits
from engine.readers.access import AccessReader
from engine.readers.base import ReadContext, ReadInfo, TextCapReached, TextSink
from engine.tools import Tool, ToolSet, discover

JET = b"\x00\x01\x00\x00Standard Jet DB\x00" + bytes(200)
ACE = b"\x00\x01\x00\x00Standard ACE DB\x00" + bytes(200)
CORPUS = Path("/work/shared/corpus")
REAL = shutil.which("mdb-tables") is not None and shutil.which("mdb-export") is not None

_EXPORT = """\
import os, sys, time
with open({pidfile!r}, "a") as f:
    f.write(f"{{os.getpid()}}\\n")
table = sys.argv[-1]
out = sys.stdout
behaviour = {tables!r}.get(table, ("", 1, "Error: no such table"))
csv_text, code, err = behaviour
if csv_text == "HANG":
    out.write("a,b\\n1,2\\n")
    out.flush()
    time.sleep(600)
if csv_text == "ENDLESS":
    out.write("a,b\\n")
    while True:
        out.write("many words in a row,another cell\\n")
out.write(csv_text)
out.flush()
sys.stderr.write(err)
sys.exit(code)
"""


def tools(
    tmp_path: Path, tables: dict[str, tuple[str, int, str]], listing: str | None = None
) -> tuple[ToolSet, Path]:
    """Stand-ins: ``mdb-tables`` prints the tables' names (or fails, ``listing`` set to its
    error), ``mdb-export`` prints each table's CSV, its error and exits as ``tables`` says
    (``HANG``: two rows, then sleeps; ``ENDLESS``: rows for ever)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    pidfile = tmp_path / "export.pids"
    script = tmp_path / "fake_export.py"
    script.write_text(_EXPORT.format(pidfile=str(pidfile), tables=tables))
    export = bin_dir / "mdb-export"
    export.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    names = "\n".join(tables) + "\n"
    body = f"printf '%s' '{names}'" if listing is None else f'echo "{listing}" >&2; exit 1'
    lister = bin_dir / "mdb-tables"
    lister.write_text(f"#!/bin/sh\n{body}\n")
    for exe in (export, lister):
        exe.chmod(0o755)
    found = (Tool("mdb-tables", str(lister), "1.0.0"), Tool("mdb-export", str(export), "1.0.0"))
    return ToolSet(found), pidfile


def all_gone(pidfile: Path) -> bool:
    for line in pidfile.read_text().split():
        try:
            os.kill(int(line), 0)
        except ProcessLookupError:
            continue
        return False
    return True


def read(
    tmp_path: Path, toolset: ToolSet, limits: Limits = DEFAULT_LIMITS, max_chars: int = 10**6
) -> tuple[str, ReadInfo]:
    path = tmp_path / "db.mdb"
    path.write_bytes(JET)
    sink = TextSink(max_chars)
    info = AccessReader().read(path, ReadContext(M.ACCESS, limits, toolset), sink)
    return sink.getvalue(), info


def test_access_files_are_told_apart_by_their_first_page(tmp_path: Path) -> None:
    for name, data in (("a.bin", JET), ("b.bin", ACE)):
        (tmp_path / name).write_bytes(data)
        assert detect(tmp_path / name) == M.ACCESS
    (tmp_path / "c.mdb").write_bytes(bytes(range(256)))
    assert detect(tmp_path / "c.mdb") == M.ACCESS  # by its name: the tools then say


def test_without_mdbtools_an_access_file_waits_for_them(tmp_path: Path) -> None:
    with pytest.raises(NeedsTool) as caught:
        read(tmp_path, ToolSet.empty())
    assert caught.value.tools == ("mdb-tables", "mdb-export")
    assert str(caught.value) == "needs mdb-tables and mdb-export on this machine"  # both
    half = ToolSet((Tool("mdb-tables", "/bin/true", "1"),))
    with pytest.raises(NeedsTool, match=r"^needs mdb-export on this machine$"):
        read(tmp_path, half)


def test_each_table_s_rows_tab_separated_under_its_name(tmp_path: Path) -> None:
    toolset, _pids = tools(
        tmp_path,
        {
            "Clients": (
                'Name,City,Since\n"Smith, J.",Paris,2001-02-03\n"two\nlines","a\ttab",\n', 0, ""
            ),
            "Empty": ("", 0, ""),
            "Notes": ("Note\nTRUE\n", 0, ""),
        },
    )  # fmt: skip
    text, info = read(tmp_path, toolset)
    assert text == (
        "# table Clients\nName\tCity\tSince\nSmith, J.\tParis\t2001-02-03\ntwo lines\ta tab\t\n"
        "# table Notes\nNote\nTRUE\n"
    )
    assert (info.extractor, info.pages, info.note) == ("mdb-export", 3, None)


def test_a_table_that_fails_is_named_and_the_others_read(tmp_path: Path) -> None:
    toolset, _pids = tools(
        tmp_path, {"Good": ("A\nx\n", 0, ""), "Bad": ("", 1, "Error: corrupt page 7\n")}
    )
    text, info = read(tmp_path, toolset)
    assert text == "# table Good\nA\nx\n"
    assert info.note == "1 of 2 tables not read; Bad: mdb-export: Error: corrupt page 7"


def test_no_table_read_is_the_first_table_s_failure(tmp_path: Path) -> None:
    toolset, _pids = tools(tmp_path, {"Bad": ("", 1, "Error: corrupt page 7\n")})
    with pytest.raises(CorruptFile, match="no table could be read; Bad: mdb-export: Error"):
        read(tmp_path, toolset)


def test_a_file_mdb_tables_cannot_open_is_corrupt(tmp_path: Path) -> None:
    toolset, _pids = tools(tmp_path, {}, listing="Couldn't open database.")
    with pytest.raises(CorruptFile, match="mdb-tables could not open it: Couldn't open database"):
        read(tmp_path, toolset)


def test_too_many_tables_is_a_named_limit(tmp_path: Path) -> None:
    toolset, _pids = tools(tmp_path, {f"T{i}": ("A\n", 0, "") for i in range(12)})
    with pytest.raises(LimitExceeded, match="more than 10 tables"):
        read(tmp_path, toolset, Limits(parts_per_block=10))


def test_a_table_that_hangs_is_stopped_at_its_time(tmp_path: Path) -> None:
    toolset, pids = tools(tmp_path, {"Slow": ("HANG", 0, ""), "Fast": ("A\nx\n", 0, "")})
    text, info = read(tmp_path, toolset, Limits(tool_timeout_s=1.0))
    assert text == "# table Slow\na\tb\n1\t2\n# table Fast\nA\nx\n"  # (its rows so far kept)
    assert info.note == "1 of 2 tables not read; Slow: mdb-export timed out after 1 s"
    assert all_gone(pids)


def test_a_hang_in_every_table_is_the_tool_s_failure(tmp_path: Path) -> None:
    toolset, pids = tools(tmp_path, {"Slow": ("HANG", 0, "")})
    with pytest.raises(ToolFailed, match="no table could be read; Slow: mdb-export timed out"):
        read(tmp_path, toolset, Limits(tool_timeout_s=1.0))
    assert all_gone(pids)


def test_an_endless_table_stops_at_the_text_cap_and_the_tool_with_it(tmp_path: Path) -> None:
    toolset, pids = tools(tmp_path, {"Big": ("ENDLESS", 0, "")})
    with pytest.raises(TextCapReached):
        read(tmp_path, toolset, max_chars=50_000)
    assert all_gone(pids)


def test_a_field_past_the_csv_field_cap_is_a_named_limit(tmp_path: Path) -> None:
    toolset, _pids = tools(tmp_path, {"Memo": ('Memo\n"' + "w" * 5000 + '"\n', 0, "")})
    with pytest.raises(LimitExceeded, match="longer than 1000 characters"):
        read(tmp_path, toolset, Limits(csv_field_chars=1000))


@pytest.mark.skipif(not REAL, reason="mdbtools (mdb-tables, mdb-export) not on PATH")
def test_junk_named_mdb_is_corrupt_with_the_real_tools(tmp_path: Path) -> None:
    path = tmp_path / "junk.mdb"
    path.write_bytes(JET[:40])
    out = tmp_path / "out"
    out.mkdir()
    outcome = read_one(ReadTask(str(path), "0" * 64, DEFAULT_LIMITS, discover(), str(out)))
    assert (outcome.status, outcome.reason) == ("error", "corrupt")


@pytest.mark.skipif(not REAL or not CORPUS.is_dir(), reason="mdbtools or the corpus missing")
def test_the_corpus_s_access_databases(tmp_path: Path) -> None:
    found = sorted(CORPUS.rglob("*.mdb"))
    if not found:
        pytest.skip("no .mdb in the corpus")
    out = tmp_path / "out"
    out.mkdir()
    for path in found:
        outcome = read_one(ReadTask(str(path), "0" * 64, DEFAULT_LIMITS, discover(), str(out)))
        assert (outcome.status, outcome.extractor) == ("ok", "mdb-export"), (path, outcome.error)
        assert outcome.text_file
        assert Path(outcome.text_file).read_text(encoding="utf-8").startswith("# table ")
