"""``quarry export`` as a user meets it (issue 26): JSONL, CSV and Parquet of a store.

The JSONL of a store whose index is in step is its ``extract.jsonl`` byte for byte; an index
ahead of the file is what is exported, one that agrees with another file is not; without an
index the file is read by the store's loader. A CSV cell is never run by a spreadsheet and
gives back what it meant; every wrong input is one line and exit 1; a file named by ``-o``
is whole or not there; a reader that goes early ends the export quietly.
"""

from __future__ import annotations

import csv
import errno
import importlib
import io
import os
import random
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import export
from engine.cli import main
from engine.db import DB, RecordDB, identity_of
from engine.export import COLUMNS, INSTALL_PARQUET, Chunk, csv_cells, fields_of, store_chunks
from engine.jsonl import line_of
from engine.quality import Quality
from engine.records import Record
from engine.store import Store, read_jsonl
from engine.visible import FORMULA_STARTS, csv_text_back
from tests.e2e.terminal import Terminal, quarry_command

QUARRY = [sys.executable, "-m", "engine"]
SHA = "ab" * 32
NOT_UTF8 = os.fsdecode(b"caf\xe9.txt")


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*QUARRY, *args],
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )


def one_line(proc: subprocess.CompletedProcess[bytes], *words: str) -> None:
    """Exit 1, one line on stderr naming the problem, no traceback, nothing on stdout."""
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.stdout[:200], err)
    assert err.count("\n") == 1 and err.startswith("quarry: "), err
    assert not proc.stdout
    for word in words:
        assert word in err, err


def swept(root: Path, files: dict[str, str]) -> Path:
    """``root`` with ``files`` in it, swept; its store folder."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    proc = run("sweep", "-q", "--no-external", "--workers", "1", str(root))
    assert proc.returncode == 0, proc.stderr
    return root / ".quarry"


def record(path: str, **fields: object) -> Record:
    values: dict[str, object] = {"size": 3, "mtime_ns": 1, "status": "skipped"}
    values.update(fields)
    return Record("/data", path, **values)  # type: ignore[arg-type]


def hand_store(out: Path, lines: list[bytes]) -> Path:
    """A store of only ``extract.jsonl`` (as another writer leaves one): no index."""
    out.mkdir(parents=True)
    (out / "extract.jsonl").write_bytes(b"".join(lines))
    return out


ODD = {
    "a.txt": "alpha",
    "sub/=SUM(A1).txt": "formula name",
    '+1, "quoted".txt': "plus, comma, quotes",
    "-minus.txt": '=HYPERLINK("http://x")\n',
    "@at.txt": "at",
    "new\nline.txt": "a newline in the name",
    "tab\tname.txt": "tab",
    "café.txt": "utf-8",
    NOT_UTF8: "latin-1 name",
    "empty.txt": "",
}


# -- JSONL -----------------------------------------------------------------------------------


def test_jsonl_of_an_in_step_store_is_its_extract_jsonl_byte_for_byte(tmp_path: Path) -> None:
    store = swept(tmp_path / "docs", ODD)
    db = RecordDB.open_reader(store / DB)
    try:  # the premise: the index is there and agrees with the file
        assert db.source() == identity_of(store / "extract.jsonl") and len(db) == len(ODD)
    finally:
        db.close()
    jsonl = (store / "extract.jsonl").read_bytes()
    for args in ([str(tmp_path / "docs")], ["--store", str(store)], ["-o", "-", str(store)]):
        proc = run("export", *args)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        assert proc.stdout == jsonl
    assert run("export", str(store), "-o", str(tmp_path / "out.jsonl")).returncode == 0
    assert (tmp_path / "out.jsonl").read_bytes() == jsonl
    # no argument: the store above the current folder
    proc = run("export", cwd=tmp_path / "docs" / "sub")
    assert proc.returncode == 0 and proc.stdout == jsonl


def test_jsonl_of_an_in_step_store_keeps_its_order_for_any_name(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for name in (b"\x80x.txt", "é.txt".encode(), b"z.txt"):
        (root / os.fsdecode(name)).write_text("x")
    store = swept(root, {})
    proc = run("export", str(store))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (store / "extract.jsonl").read_bytes()


def test_an_index_ahead_of_the_file_is_exported_and_one_of_another_file_is_not(
    tmp_path: Path,
) -> None:
    store = swept(tmp_path / "docs", {"a.txt": "alpha", "b.txt": "bravo"})
    jsonl = store / "extract.jsonl"
    before = jsonl.read_bytes()
    root = str(tmp_path / "docs")
    later = Record(root, "later.txt", 5, 7, "skipped", reason="too_large")
    # a watch batch committed to the index, the file not rewritten yet
    with RecordDB.open_writer(store / DB) as db:
        db.put([later])
        db.drop([(root, "a.txt")])
        db.commit()
    proc = run("export", str(store))
    assert proc.returncode == 0, proc.stderr
    lines = before.splitlines(keepends=True)
    assert proc.stdout == lines[1] + line_of(later)  # b.txt, then later.txt; a.txt gone
    assert jsonl.read_bytes() == before  # an export writes nothing of the store
    # extract.jsonl replaced by another writer: the index agrees with a file that is gone
    (store / "other.jsonl").write_bytes(lines[0])
    os.replace(store / "other.jsonl", jsonl)
    proc = run("export", str(store))
    assert proc.returncode == 0 and proc.stdout == lines[0], proc.stderr


def test_a_store_whose_first_sweep_was_killed_exports_what_it_committed(tmp_path: Path) -> None:
    out = tmp_path / "store"
    out.mkdir()
    recs = [record("b.txt"), record("a.txt"), record(NOT_UTF8)]
    with RecordDB.open_writer(out / DB) as db:  # committed, then killed: no extract.jsonl yet
        db.put(recs)
        db.commit()
    proc = run("export", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"".join(line_of(r) for r in sorted(recs, key=lambda r: r.key))
    assert not (out / "extract.jsonl").exists()
    (out / DB).write_bytes(b"not a database, and no extract.jsonl beside it")
    one_line(run("export", str(out), "-o", str(tmp_path / "x.csv")), "nothing to export")
    assert not (tmp_path / "x.csv").exists()


def no_cache(tmp_path: Path) -> dict[str, str]:
    """An environment whose cache folder cannot be made (under a file): no index is built
    for a store that has none, and its ``extract.jsonl`` is read whole."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    return {**os.environ, "QUARRY_CACHE_DIR": str(blocker / "cache")}


def cached_indexes() -> list[Path]:
    """The indexes built in the user's cache (the suite's own, per test)."""
    base = Path(os.environ["XDG_CACHE_HOME"]) / "textquarry" / "indexes"
    return sorted(base.glob("*/extract.db"))


@pytest.mark.parametrize("cache", [True, False], ids=["cached-index", "the-file-read"])
def test_without_an_index_the_file_is_read_sorted_its_bad_lines_said_once(
    tmp_path: Path, cache: bool
) -> None:
    recs = [record(f"f{i:02}.txt") for i in range(12)]
    newer = record("f03.txt", size=99)
    lines = [line_of(r) for r in reversed(recs)]
    lines[4:4] = [b"{not json\n", b"\n", b'{"root": "/data"}\n']
    lines.append(line_of(newer))  # the same key again, further down
    store = hand_store(tmp_path / "store", lines)
    env = None if cache else no_cache(tmp_path)
    for attempt in range(2):
        proc = run("export", str(store), env=env)
        assert proc.returncode == 0, proc.stderr
        err = proc.stderr.decode()
        assert err.count("\n") == 1 and "2 unreadable lines" in err and "line 5" in err, err
        # the key given twice: its last line, as the index keeps it
        want = [line_of(newer if r.path == "f03.txt" else r) for r in recs]
        assert proc.stdout == b"".join(want)
        assert not (store / DB).exists()  # a reader writes nothing into the store
        built = cached_indexes()
        # (a store of millions is exported from an index built once in the user's cache,
        # never held whole; without a cache, the file is read as before)
        assert len(built) == (1 if cache else 0)
        if attempt == 0 and cache:
            first = built[0].stat().st_mtime_ns
    if cache:
        assert built[0].stat().st_mtime_ns == first  # the second export built nothing


# -- CSV -------------------------------------------------------------------------------------


def test_csv_through_the_command_is_one_safe_row_per_record(tmp_path: Path) -> None:
    store = swept(tmp_path / "docs", ODD)
    records = read_jsonl((store / "extract.jsonl").read_bytes()).records
    for args in (["--format", "CSV"], ["-o", str(tmp_path / "out.CSV")]):
        proc = run("export", str(store), *args)
        assert proc.returncode == 0, proc.stderr
        data = proc.stdout or (tmp_path / "out.CSV").read_bytes()
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        assert rows[0] == list(COLUMNS)
        assert rows[1:] == [csv_cells(r) for r in records]
        by_path = {csv_text_back(row[1]): row for row in rows[1:]}
        assert by_path["sub/=SUM(A1).txt"][1] == "sub/=SUM(A1).txt"  # not at the start: as is
        assert by_path['+1, "quoted".txt'][1] == '\'+1, "quoted".txt'
        assert by_path["new\nline.txt"][1] == "new\\nline.txt"  # one line, escaped
        # a name that is not UTF-8: as the store writes it, its exact bytes beside it
        row = by_path["caf\\xe9.txt"]
        assert row[COLUMNS.index("path_b64")] == "Y2Fm6S50eHQ="
        assert row[COLUMNS.index("quality")] == "good"
        assert int(row[COLUMNS.index("size")]) == len("latin-1 name")
        for row in rows[1:]:
            for cell in row:
                assert cell[:1] not in "=+-@\t\r" or cell == "", row
                assert "\n" not in cell and "\r" not in cell


_RAW = st.binary(min_size=1, max_size=2)  # bytes that may not be UTF-8, as a file system holds
_STARTS = st.sampled_from(sorted(FORMULA_STARTS | {",", '"', "\n", "\\", "\x1b", "\u202e"}))
_NAME_CHARS = st.one_of(st.characters(codec="utf-8", exclude_characters="/\0"), _STARTS)
_TEXT_CHARS = st.one_of(st.characters(codec="utf-8"), _STARTS)
names = (
    st.lists(st.one_of(_NAME_CHARS.map(str.encode), _RAW), min_size=1, max_size=12)
    .map(lambda parts: os.fsdecode(b"".join(parts).replace(b"/", b"_").replace(b"\0", b"_")))
    .filter(lambda n: n not in (".", ".."))
)
"""Names as ``os.fsdecode`` gives them: any bytes but ``/`` and NUL."""
texts = st.lists(_TEXT_CHARS, max_size=16).map("".join)
verdicts = st.sampled_from(["good", "garbled", "=cmd|' /C calc'!A0", "-1+1"])
records = st.builds(
    Record,
    root=names.map(lambda n: "/" + n),
    path=names,
    size=st.integers(0, 2**63 - 1),
    mtime_ns=st.integers(-(2**63), 2**63 - 1),
    status=st.sampled_from(["ok", "error", "+status", "@x"]),
    sha256=st.none() | st.just(SHA),
    mime=texts,
    reason=st.none() | texts,
    extractor=st.none() | texts,
    reader=st.none() | texts,
    v=st.integers(0, 9),
    chars=st.integers(0, 2**40),
    pages=st.none() | st.integers(0, 10**6),
    error=st.none() | texts,
    needs=st.lists(texts, max_size=3).map(tuple),
    why=st.none() | texts,
    ms=st.integers(0, 10**9),
    quality=st.none() | verdicts.map(lambda v: Quality(v)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(records, max_size=8))
def test_csv_cells_give_back_what_they_meant_and_never_run(recs: list[Record]) -> None:
    out = io.BytesIO()
    n, bad = export.write_csv(iter([Chunk(records=recs)]), out)
    assert (n, bad) == (len(recs), 0)
    rows = list(csv.reader(io.StringIO(out.getvalue().decode("utf-8"), newline="")))
    assert rows[0] == list(COLUMNS) and len(rows) == len(recs) + 1
    for rec, row in zip(recs, rows[1:], strict=True):
        want = fields_of(rec)
        want["needs"] = " ".join(want["needs"]) or None
        for name, cell in zip(COLUMNS, row, strict=True):
            value = want[name]
            if value is None:
                assert cell == "", name
            elif isinstance(value, int):
                assert int(cell) == value, name
            else:
                assert csv_text_back(cell) == value, (name, cell)
                assert cell[:1] not in FORMULA_STARTS or cell[0] == "'", (name, cell)
                if value[:1] and value[0] in "=+-@'":
                    assert cell[0] == "'", (name, cell)  # stays text in a spreadsheet
            assert not any(c in cell for c in "\n\r\x1b\u202e"), (name, cell)
        # names as the store writes them: what its own line says
        stored = read_jsonl(line_of(rec)).records
        assert [r.key for r in stored] == [rec.key]
        assert want["root"] == rec.to_dict()["root"] and want["path"] == rec.to_dict()["path"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(records, max_size=12, unique_by=lambda r: r.key), st.randoms())
def test_a_store_file_in_any_order_is_exported_sorted_as_its_lines(
    recs: list[Record], rnd: random.Random
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lines = [line_of(r) for r in recs]
        rnd.shuffle(lines)
        store = Store(hand_store(Path(tmp) / "s", lines))
        said: list[str] = []
        with store_chunks(store, said.append) as chunks:
            out = io.BytesIO()
            export.write_jsonl(chunks, out)
        wanted = sorted(read_jsonl(b"".join(lines)).records, key=lambda r: r.key)
        assert out.getvalue() == b"".join(map(line_of, wanted)) and not said
        with store_chunks(store, said.append) as chunks:
            got = [r for chunk in chunks for r in chunk.records()]
        assert got == wanted


# -- Parquet ---------------------------------------------------------------------------------


def _pyarrow() -> Any:
    try:
        return importlib.import_module("pyarrow.parquet")
    except ImportError:
        pytest.skip("pyarrow is not installed (the optional extra textquarry[parquet])")


def test_parquet_holds_the_same_columns_typed(tmp_path: Path) -> None:
    pq = _pyarrow()
    store = swept(tmp_path / "docs", ODD)
    records = read_jsonl((store / "extract.jsonl").read_bytes()).records
    out = tmp_path / "records.parquet"
    proc = run("export", str(store), "-o", str(out))
    assert proc.returncode == 0 and not proc.stdout, proc.stderr
    table = pq.read_table(out)
    assert table.column_names == list(COLUMNS)
    assert str(table.schema.field("size").type) == "int64"
    assert table.to_pylist() == [fields_of(r) for r in records]
    # piped: the same table
    proc = run("export", str(store), "--format", "parquet")
    assert proc.returncode == 0, proc.stderr
    assert pq.read_table(io.BytesIO(proc.stdout)).to_pylist() == table.to_pylist()


def test_parquet_of_an_empty_store_is_a_table_of_no_rows(tmp_path: Path) -> None:
    pq = _pyarrow()
    store = hand_store(tmp_path / "store", [])
    assert run("export", str(store), "-o", str(tmp_path / "e.parquet")).returncode == 0
    table = pq.read_table(tmp_path / "e.parquet")
    assert table.num_rows == 0 and table.column_names == list(COLUMNS)


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path: Path) -> None:
    store = hand_store(tmp_path / "store", [line_of(record("a.txt"))])
    shadow = tmp_path / "shadow" / "pyarrow"  # an install without pyarrow, whatever this one has
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named pyarrow')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), os.getcwd()])}
    out = tmp_path / "r.parquet"
    one_line(run("export", str(store), "-o", str(out), env=env), INSTALL_PARQUET)
    assert not out.exists()
    one_line(run("export", str(store), "--format", "parquet", env=env), INSTALL_PARQUET)


def test_parquet_is_not_written_to_a_terminal(tmp_path: Path) -> None:
    _pyarrow()
    store = hand_store(tmp_path / "store", [line_of(record("a.txt"))])
    term = Terminal(
        [*quarry_command(), "export", str(store), "--format", "parquet"], 100, 20, tmp_path
    )
    try:
        assert term.exit_code() == 1, term.tail()
        assert "Parquet is binary" in term.text() and "PAR1" not in term.text()
    finally:
        term.close()


# -- wrong input, and where the output goes --------------------------------------------------


def test_wrong_input_is_one_line_and_exit_1(tmp_path: Path) -> None:
    store = swept(tmp_path / "docs", {"a.txt": "alpha"})
    jsonl = store / "extract.jsonl"
    before, listing = jsonl.read_bytes(), _tree(store)
    nowhere = tmp_path / "nowhere"
    (tmp_path / "file").write_text("not a store")
    (tmp_path / "empty").mkdir()
    one_line(run("export", str(nowhere)), "no store at", "no such folder")
    one_line(run("export", "--store", str(tmp_path / "empty")), "no store at", "quarry sweep")
    one_line(run("export", "--store", str(tmp_path / "file")), "is a file")
    one_line(run("export", cwd=tmp_path / "empty"), "no store found")
    one_line(run("export", str(store), "--store", str(store)), "not both")
    one_line(run("export", str(store), "--format", "xlsx"), "unknown format 'xlsx'", "csv")
    one_line(run("export", str(store), "-o", str(nowhere / "x.csv")), "no such folder")
    one_line(run("export", str(store), "-o", str(tmp_path / "file" / "x.csv")), "not a folder")
    one_line(run("export", str(store), "-o", str(tmp_path / "empty")), "is a folder")
    for target in (jsonl, store / "x.csv", store / "extract" / "x.jsonl"):
        one_line(run("export", str(store), "-o", str(target)), "inside the store")
    (tmp_path / "link").symlink_to(store)
    one_line(run("export", str(store), "-o", str(tmp_path / "link" / "extract.jsonl")), "inside")
    with jsonl.open("ab") as appended:  # `quarry export >> .quarry/extract.jsonl`
        proc = subprocess.run(
            [*QUARRY, "export", str(store)], stdout=appended, stderr=subprocess.PIPE, timeout=120
        )
    assert proc.returncode == 1 and b"the store's own extract.jsonl" in proc.stderr
    assert jsonl.read_bytes() == before
    assert _tree(store) == listing  # nothing written in the store, not even a temporary file


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_suffix_of_o_chooses_the_format_and_format_overrides_it(tmp_path: Path) -> None:
    store = hand_store(tmp_path / "store", [line_of(record("a.txt"))])
    for name, args, first in (
        ("x.csv", [], b"root,path,"),
        ("x.txt", [], b'{"root":'),
        ("x.jsonl", ["--format", "csv"], b"root,path,"),
        ("x", [], b'{"root":'),
    ):
        assert run("export", str(store), "-o", str(tmp_path / name), *args).returncode == 0
        assert (tmp_path / name).read_bytes().startswith(first), name


def test_a_suffix_of_a_format_an_export_is_not_is_refused_without_format(
    tmp_path: Path,
) -> None:
    """``-o records.xlsx`` wrote JSON lines under that name (the spreadsheet then refused it)."""
    store = hand_store(tmp_path / "store", [line_of(record("a.txt"))])
    for name in ("x.xlsx", "x.XLS", "x.json", "x.tsv"):
        proc = run("export", str(store), "-o", str(tmp_path / name))
        assert proc.returncode == 1 and not (tmp_path / name).exists(), (name, proc.stderr)
        assert proc.stderr.count(b"\n") == 1 and b"name a file ending .jsonl, .csv" in proc.stderr
    asked = run("export", str(store), "-o", str(tmp_path / "x.json"), "--format", "jsonl")
    assert asked.returncode == 0, asked.stderr
    assert (tmp_path / "x.json").read_bytes().startswith(b'{"root":')  # (asked for: as asked)


def test_a_pipe_named_by_o_is_written_into_never_replaced(tmp_path: Path) -> None:
    # as a shell's > writes it: renamed over, /dev/full became a regular file (as root, any
    # device node would have; a FIFO stands in for one here, harmlessly)
    import threading

    store = hand_store(tmp_path / "store", [line_of(record("a.txt")), line_of(record("b.txt"))])
    fifo = tmp_path / "into.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    proc = run("export", str(store), "-o", str(fifo))
    reader.join(timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and got[0].startswith(b"root,path,") and got[0].count(b"\n") == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["into.csv", "store"]  # no temp file


def test_a_failed_export_leaves_the_earlier_file_and_no_half_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = hand_store(tmp_path / "store", [line_of(record(f"f{i}.txt")) for i in range(50)])
    out = tmp_path / "out.csv"
    out.write_text("the earlier export\n")

    def full_disk(chunks: object, sink: io.BufferedWriter) -> tuple[int, int]:
        sink.write(b"root,path\n" * 1000)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(export, "write_csv", full_disk)
    assert main(["export", str(store), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert out.read_text() == "the earlier export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "store"]
    monkeypatch.undo()
    assert main(["export", str(store), "-o", str(out)]) == 0
    assert out.read_text().count("\n") == 51
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # the user's file, not a private one


def _writing_to_a_pipe(pid: int) -> bool:
    try:
        return "pipe_write" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_reader_that_goes_early_ends_the_export_quietly(
    tmp_path: Path, fmt: str, unbuffered: str
) -> None:
    # `quarry export | head`: the pipe closes with most of the records unwritten
    store = hand_store(tmp_path / "store", [line_of(record(f"f{i:05}.txt")) for i in range(20_000)])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    with subprocess.Popen(
        [*quarry_command(), "export", str(store), "--format", fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + 10  # (where /proc does not say, the close comes anyway)
        while not _writing_to_a_pipe(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.stdout.read(1)
        proc.stdout.close()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=60)
    assert "Broken pipe" not in err and "Exception ignored" not in err and "Traceback" not in err
    assert err == "" and code == 1  # as `quarry show | head`: Python's own status
