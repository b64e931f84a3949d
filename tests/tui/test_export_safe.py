"""CSV export that a spreadsheet never runs and a terminal never obeys (issue 24).

Whatever a record holds (a name that starts with ``=``, an error message with escape
sequences and line breaks), every text cell of the export goes through
:func:`engine.visible.csv_text`: read back and taken back, it is the record's value; no cell
starts like a formula; no control character is in the file but its line ends. Checked as a
property over any record, and through the real ``quarry`` dashboard in a terminal (``E``).
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tui.actions as actions
from engine.records import Member, Record
from engine.store import Store
from engine.visible import BIDI, FORMULA_STARTS, csv_text_back
from tests.e2e.terminal import Terminal, quarry_command

FORMULA = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")
TEXT_COLUMNS = ("root", "path", "status", "sha256", "mime", "reason", "extractor", "reader",
                "error", "tools", "why", "needs", "quality")  # fmt: skip
NUMBERS = frozenset({"size", "mtime_ns", "v", "chars", "pages", "crashes", "ms"})
HOSTILE_NAMES = (
    '=HYPERLINK("evil.example","click")',  # a name holds no // (no empty folder)
    "-2+3.txt",
    "+cmd.txt",
    "@SUM(A1).txt",
    "\uff1dformula.txt",
    "\x1b]0;PWNED\x07.txt",
    "line\nbreak.txt",
    "back\\slash.txt",
)


def obeyed(ch: str) -> bool:
    return ch in BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")


def read_back(data: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data, newline="")))


def check_rows(data: str, records: list[Record]) -> None:
    """Every cell safe, and every value what the record holds."""
    assert not any(map(obeyed, data.replace("\r\n", "")))  # only the rows' own line ends
    rows = read_back(data)
    assert len(rows) == len(records)
    for row, record in zip(rows, records, strict=True):
        d = record.to_dict()
        for name, cell in row.items():
            if name in NUMBERS:  # a number is a number, a negative one too: it runs nothing
                assert re.fullmatch(r"-?[0-9]*", cell), (name, cell)
                continue
            assert cell[:1] not in FORMULA, (name, cell)
            assert not cell.startswith("'") or cell[1:2] in FORMULA_STARTS, (name, cell)
        for name in TEXT_COLUMNS:
            value = d[name]
            if name == "needs":
                value = " ".join(value)
            elif name == "quality":
                value = value["verdict"] if value else None
            assert csv_text_back(row[name]) == ("" if value is None else value), name
        for name in NUMBERS - {"pages"}:
            assert row[name] == str(d[name])  # numbers as numbers, a negative time included
        members = orjson.loads(row["members"]) if row["members"] else []
        assert members == orjson.loads(orjson.dumps(d["members"]))


text = st.text(max_size=20) | st.sampled_from(HOSTILE_NAMES)
records = st.builds(
    Record,
    root=st.just("/r") | text.map(lambda t: "/" + t),
    path=text.filter(bool),
    size=st.integers(0, 2**40),
    mtime_ns=st.integers(-(2**62), 2**62),  # a file from before 1970 has a negative time
    status=st.sampled_from(["ok", "error", "unsupported"]),
    mime=text,
    reason=st.none() | text,
    extractor=st.none() | text,
    error=st.none() | text,
    needs=st.lists(text, max_size=2).map(tuple),
    why=st.none() | text,
    members=st.lists(
        st.builds(Member, path=text, status=st.sampled_from(["ok", "error"]), error=text),
        max_size=2,
    ).map(tuple),
)


@given(st.lists(records, min_size=1, max_size=4))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_every_cell_of_any_record_is_safe_and_gives_its_value_back(
    tmp_path: Path, recs: list[Record]
) -> None:
    out = tmp_path / "view.csv"
    assert actions.write_export(out, recs) == len(recs)
    check_rows(out.read_bytes().decode("utf-8"), recs)


def hostile_store(out: Path) -> tuple[Store, list[Record]]:
    """Error records (no text needed) whose names and messages a spreadsheet or a terminal
    would act on."""
    store = Store(out)
    recs = [
        Record("/docs", name, 10, -5_000_000_000, "error", f"{i:064x}", "application/pdf",
               "corrupt", error=f"=cmd|' /C calc'!A0 \x1b]0;PWNED\x07\r\nline {i}", why="new")
        for i, name in enumerate(sorted(HOSTILE_NAMES))
    ]  # fmt: skip
    with store.writer():
        store.write_records(recs)
    return store, recs


@pytest.mark.slow
def test_the_dashboards_export_is_safe_in_a_spreadsheet_and_a_terminal(tmp_path: Path) -> None:
    store, recs = hostile_store(tmp_path / "store")
    here = tmp_path / "here"
    here.mkdir()
    term = Terminal([*quarry_command(), "ui", "--store", str(store.out)], 160, 50, here)
    try:
        term.wait_for("evil.example")  # the name, cut short at its start in a narrow column
        term.press_and_wait("E", "Export")
        term.press("enter")  # the name it offers, in the current folder
        written = term.wait_for(lambda _t: any(here.glob("quarry-*.csv")))
        assert written
        term.press("q")
        assert term.exit_code() == 0, term.tail()
    finally:
        term.close()
    (csv_file,) = here.glob("quarry-*.csv")
    data = csv_file.read_bytes().decode("utf-8")
    assert "'=HYPERLINK(" in data and ",'-2+3.txt," in data and ",'@SUM(A1).txt," in data
    assert "\\x1b]0;PWNED\\x07.txt" in data and "\\x1b]0;PWNED\\x07\\r\\nline" in data
    by_path = {csv_text_back(r["path"]): r for r in read_back(data)}
    check_rows(data, [next(r for r in recs if r.path == p) for p in by_path])
