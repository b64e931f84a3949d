"""Tools are part of the read (issue 27): every record says which of its reader's tools the
read had (``read_with``); a record read without a tool found now is read again, and only
those; the summary counts them, across sweeps, until they are read again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.console import read_without_line
from engine.index import Tally
from engine.plan import ReadWith
from engine.records import Record, Status, Summary, lacked, read_with_words
from engine.summary import build_summary
from engine.tools import Tool, ToolSet, read_with

QUARRY = [sys.executable, "-m", "engine"]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NAMES = ("antiword", "catdoc", "pdftoppm", "pdftotext", "tesseract")


FAKE_PDFTOTEXT = """#!/bin/sh
case "$1" in
  -v) echo "pdftotext version 99.1.0"; exit 0 ;;
esac
printf 'a page of text from a fake pdftotext\\n\\f'
"""
"""A pdftotext for a machine without poppler: what matters here is that one is found."""


def quarry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*QUARRY, *args], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def with_pdftotext(where: Path) -> dict[str, str]:
    """An environment where pdftotext is found: this machine's, else a fake one."""
    if shutil.which("pdftotext") is not None:
        return dict(os.environ)
    where.mkdir()
    fake = where / "pdftotext"
    fake.write_text(FAKE_PDFTOTEXT)
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{where}{os.pathsep}{os.environ.get('PATH', '')}"}


def lines(store: Path) -> dict[str, dict[str, object]]:
    text = (store / "extract.jsonl").read_bytes().splitlines()
    return {str(d["path"]): d for d in map(orjson.loads, text)}


versions = st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}|unknown", fullmatch=True)
machines = st.dictionaries(st.sampled_from(NAMES), versions)


@given(uses=st.frozensets(st.sampled_from(NAMES), min_size=1), had=machines)
def test_a_read_says_each_tool_of_its_reader_with_its_version_or_that_it_lacked_it(
    uses: frozenset[str], had: dict[str, str]
) -> None:
    named = ";".join(f"{name}={v}" for name, v in sorted(had.items()))
    said = read_with(uses, named)
    assert set(lacked(said)) == uses - set(had)
    parts = dict(p.split("=") for p in said.split(";"))
    assert parts == {name: had.get(name, "") for name in uses}
    record = Record("/r", "a.pdf", 1, 1, Status.OK, read_with=said)
    assert Record.from_json(record.to_json()) == record  # kept by the store as it is
    words = read_with_words(said)
    assert all(name in words for name in uses)


def test_a_record_without_read_with_opens_as_not_said() -> None:
    """Stores of older quarries and of the extract stage carry no ``read_with``: None, never
    a read again; a mistyped one is the same."""
    old = {"root": "/r", "path": "a.pdf", "status": "ok", "sha256": "a" * 64, "reader": "pdf"}
    assert Record.from_dict(old).read_with is None
    assert Record.from_dict({**old, "read_with": ["pdftotext"]}).read_with is None
    assert lacked(None) == () and lacked("") == ()


def test_the_run_says_the_tools_of_the_machine_that_read() -> None:
    """A local read: the run's tools; a Dask worker's: the worker's (``Outcome.tools``)."""
    here = ToolSet((Tool("pdftotext", "/usr/bin/pdftotext", "24.02"),))
    made = ReadWith(here)
    assert made("pdf", None) == "pdftoppm=;pdftotext=24.02;tesseract="
    assert made("pdf", "tesseract=5.3.4") == "pdftoppm=;pdftotext=;tesseract=5.3.4"
    assert made("text", None) is None  # a reader that uses no tool
    assert made(None, None) is None


def test_the_tally_counts_reads_without_a_tool_and_says_those_found_now() -> None:
    recs = [
        Record("/r", f"{i}.pdf", 1, 1, Status.OK, read_with="pdftotext=;tesseract=5")
        for i in range(3)
    ] + [Record("/r", "x.doc", 1, 1, Status.OK, read_with="antiword=;catdoc=0.95")]
    tally = Tally.of(recs)
    one_by_one = Tally()
    for r in recs:
        one_by_one.add(r)
    assert tally.without == one_by_one.without == {"pdftotext": 3, "antiword": 1}
    one_by_one.add(recs[0], -1)
    assert one_by_one.without["pdftotext"] == 2
    found = ToolSet((Tool("pdftotext", "/p", "24.02"), Tool("catdoc", "/c", "0.95")))
    summary = build_summary(tally, [Path("/r")], found, 0.0, 1.0, readers={})
    # every tool a read lacked is counted; what is said depends on the tools found then
    assert summary.read_without == {"antiword": 1, "pdftotext": 3}
    assert Summary.from_json(summary.to_json()).read_without == summary.read_without
    said = read_without_line(summary.read_without, summary.tools_found)
    assert said.startswith("3 files read without pdftotext, found now") and "antiword" not in said
    assert read_without_line(summary.read_without, ()) == ""


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "pdf", docs)
    shutil.copytree(FIXTURES / "text", docs / "text")
    return docs


def test_pdfs_read_without_pdftotext_are_read_again_once_it_is_used_and_only_they(
    tmp_path: Path,
) -> None:
    docs, store = _docs(tmp_path), tmp_path / "store"
    env = with_pdftotext(tmp_path / "bin")
    quarry("sweep", str(docs), "--out", str(store), "--without", "pdftotext", "--quiet", env=env)
    first = lines(store)
    pdfs = {p for p, d in first.items() if d["reader"] == "pdf"}
    assert pdfs and len(pdfs) < len(first)
    assert all("pdftotext" in lacked(str(first[p]["read_with"])) for p in pdfs)
    assert {first[p]["read_with"] for p in first.keys() - pdfs} == {None}
    # pdftotext found when asked, though not by that sweep: quarry tools says what it unlocks
    told = quarry("tools", "--store", str(store), env=env).stdout
    assert f"{len(pdfs)} files read without pdftotext, found now" in told

    swept = orjson.loads(quarry("sweep", str(docs), "--out", str(store), "--json", env=env).stdout)
    second = lines(store)
    again = {p for p, d in second.items() if not d["reused"]}
    assert again == pdfs  # the PDFs, and nothing else, were read again
    assert {second[p]["why"] for p in pdfs} == {"tools-changed"}
    assert not [p for p in pdfs if "pdftotext" in lacked(str(second[p]["read_with"]))]
    assert "pdftotext" not in swept["read_without"]  # (tools not on this machine may be)

    third = orjson.loads(quarry("sweep", str(docs), "--out", str(store), "--json", env=env).stdout)
    assert not [p for p, d in lines(store).items() if not d["reused"]]  # no read for ever
    assert "pdftotext" not in third["read_without"]


def test_a_store_mixed_by_an_earlier_sweep_says_so_until_those_files_are_read_again(
    tmp_path: Path,
) -> None:
    docs, store, other = _docs(tmp_path), tmp_path / "store", tmp_path / "other"
    env = with_pdftotext(tmp_path / "bin")
    other.mkdir()
    (other / "note.txt").write_text("a note\n")
    quarry("sweep", str(docs), "--out", str(store), "--without", "pdftotext", "--quiet", env=env)
    pdfs = sum(d["reader"] == "pdf" for d in lines(store).values())
    # A sweep of another folder into the same store, pdftotext found: the PDFs are not read.
    mixed = orjson.loads(quarry("sweep", str(other), "--out", str(store), "--json", env=env).stdout)
    assert mixed["read_without"]["pdftotext"] == pdfs
    told = quarry("sweep", str(other), "--out", str(store), env=env).stdout
    assert f"{pdfs} files read without pdftotext" in told
    assert (
        f"{pdfs} files read without pdftotext"
        in quarry("tools", "--store", str(store), env=env).stdout
    )
    pdf = next(p for p, d in lines(store).items() if d["reader"] == "pdf")
    shown = quarry("show", str(docs / pdf), "--store", str(store), "--no-text").stdout
    said = next(line for line in shown.splitlines() if "read with:" in line)
    assert "pdftotext" in said.partition("without")[2]
    read = orjson.loads(quarry("sweep", str(docs), "--out", str(store), "--json", env=env).stdout)
    assert "pdftotext" not in read["read_without"]


def test_a_tool_that_appears_in_a_session_reads_again_the_records_read_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's "check again" (and a watch's minute re-check): a tool that appeared
    reads again the records read without it, and no other, at once."""
    from engine.events import Event, RunKind, SweepStarted
    from engine.session import Session
    from engine.sweep import SweepOptions

    docs, tools = _docs(tmp_path), tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))  # no tool at all
    events: list[Event] = []
    session = Session([docs], SweepOptions(out=tmp_path / "store"), events.append)
    try:
        session.sweep()
        before = {r.path: r for r in session.sweeper.records.values()}
        pdfs = {p for p, r in before.items() if r.reader == "pdf"}
        assert pdfs and all("pdftotext" in lacked(before[p].read_with) for p in pdfs)
        (tools / "pdftotext").write_text(FAKE_PDFTOTEXT)
        (tools / "pdftotext").chmod(0o755)
        assert "pdftotext" in session.recheck_tools().names
        after = {r.path: r for r in session.sweeper.records.values()}
    finally:
        session.close()
    assert {p for p, r in after.items() if r is not before[p]} == pdfs
    assert {after[p].why for p in pdfs} == {"tools-changed"}
    assert not [p for p in pdfs if "pdftotext" in lacked(after[p].read_with)]
    said = [e.kind for e in events if isinstance(e, SweepStarted)]
    assert said == [RunKind.SWEEP, RunKind.TOOLS]  # (the activity log: "reading again for
    # new tools", where every run that was not full was said "rescan")


def test_the_stat_index_keeps_the_count_for_the_quick_sweep_s_summary() -> None:
    """A quick sweep writes its summary from the stat index's tally: the records read without
    a tool are still counted there; an index written before the count was kept has none."""
    import msgspec

    from engine.statindex import Counts, StatIndex

    def index(counts: Counts) -> StatIndex:
        return StatIndex(0, (0, 0, 0, 0), [], "", "", "", 0, [], counts)

    counts = Counts(3, {"ok": 3}, {}, 0, 9, {}, {}, {"pdftotext": 2})
    again = msgspec.msgpack.decode(msgspec.msgpack.encode(counts), type=Counts)
    assert index(again).tally().without == {"pdftotext": 2}
    older = msgspec.msgpack.encode([3, {"ok": 3}, {}, 0, 9, {}, {}])  # seven fields
    assert index(msgspec.msgpack.decode(older, type=Counts)).tally().without == {}
