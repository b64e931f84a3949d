"""The summary and ``quarry tools`` say how the tools of a sweep's Dask workers differed
(issue 27): per tool, on how many of the workers it was, and which kinds of file went only to
some of them. No cluster here: the executor's side is in test_dask_trust.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from engine.records import Summary
from engine.summary import cluster_lines, with_cluster
from engine.sweep import SweepOptions, sweep
from engine.tools import KNOWN_TOOLS, Tool, ToolSet

QUARRY = [sys.executable, "-m", "engine"]


def _tools(*names: str) -> ToolSet:
    return ToolSet(tuple(Tool(n, f"/usr/bin/{n}", "1.0") for n in sorted(names)))


BLANK = Summary(roots=("/r",), files=1)


def test_workers_with_different_tools_are_counted_per_tool() -> None:
    workers = {"tcp://a": _tools("pdftotext", "tesseract"), "tcp://b": _tools("tesseract")}
    got = with_cluster(BLANK, workers, {"pdf": 12, "text": 0})
    assert got.cluster_workers == 2
    assert got.cluster_tools["pdftotext"] == 1
    assert got.cluster_tools["tesseract"] == 2
    assert got.cluster_routed == {"pdf": 12}
    uneven = sorted(set(KNOWN_TOOLS) - {"tesseract"})  # pdftotext on one, the rest on none
    counts = ", ".join(f"{t} on {1 if t == 'pdftotext' else 0} of 2" for t in uneven)
    assert cluster_lines(got, ()) == [
        f"the last sweep's 2 Dask workers have different tools: {counts}",
        "read only on the workers with their tools: pdf (12 files)",
    ]
    assert "pdftotext on 1 of 2" in cluster_lines(got, ())[0]
    assert "tesseract" not in cluster_lines(got, ())[0]  # on every worker


def test_workers_alike_or_a_local_sweep_say_nothing() -> None:
    same = with_cluster(BLANK, {"tcp://a": _tools("pdftotext"), "tcp://b": _tools("pdftotext")}, {})
    assert (same.cluster_workers, same.cluster_tools, same.cluster_routed) == (2, {}, {})
    assert cluster_lines(same, ()) == []
    assert with_cluster(BLANK, {}, {"pdf": 3}) == BLANK
    assert cluster_lines(BLANK, ()) == []


@given(
    st.dictionaries(
        st.text("abcdef", min_size=1, max_size=3).map(lambda s: f"tcp://{s}"),
        st.sets(st.sampled_from(sorted(KNOWN_TOOLS))),
        min_size=1,
        max_size=6,
    )
)
def test_every_tool_count_is_the_workers_that_have_it(have: dict[str, set[str]]) -> None:
    got = with_cluster(BLANK, {a: _tools(*names) for a, names in have.items()}, {})
    assert got.cluster_workers == len(have)
    differ = len({frozenset(n) for n in have.values()}) > 1
    assert bool(got.cluster_tools) == differ
    for tool, n in got.cluster_tools.items():
        assert n == sum(tool in names for names in have.values())
    assert bool(cluster_lines(got, ())) == differ
    back = Summary.from_json(got.to_json())
    assert back == got  # the fields survive the summary file


def test_a_summary_of_an_older_version_has_no_cluster_and_bad_fields_are_refused() -> None:
    old = orjson.loads(BLANK.to_json())
    for key in ("cluster_workers", "cluster_tools", "cluster_routed"):
        del old[key]
    assert Summary.from_json(orjson.dumps(old)).cluster_workers == 0
    old["cluster_tools"] = {"pdftotext": "one"}
    try:
        Summary.from_json(orjson.dumps(old))
    except Exception as exc:  # BadRecord: the summary's reader goes without it
        assert "cluster_tools" in str(exc)
    else:
        raise AssertionError("a wrong cluster_tools was taken")


def _swept(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("a text\n")
    sweep([root], SweepOptions(tools=ToolSet.empty()))
    return root


def _edit_summary(root: Path, **fields: object) -> None:
    path = root / ".quarry" / "extract.summary.json"
    d = orjson.loads(path.read_bytes())
    d.update(fields)
    path.write_bytes(orjson.dumps(d))


def test_quarry_tools_says_the_workers_tools_differed(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    plain = subprocess.run([*QUARRY, "tools", str(root)], capture_output=True, text=True)
    assert plain.returncode == 0 and "Dask workers" not in plain.stdout
    # A store swept on a cluster whose two workers had different tools (written as a Dask
    # sweep of another machine would write it).
    _edit_summary(
        root,
        cluster_workers=2,
        cluster_tools={"pdftotext": 1, "tesseract": 2},
        cluster_routed={"pdf": 7},
    )
    proc = subprocess.run(
        [*QUARRY, "tools", str(root)],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "the last sweep's 2 Dask workers have different tools: pdftotext on 1 of 2" in proc.stdout
    )
    assert "read only on the workers with their tools: pdf (7 files)" in proc.stdout
    store = subprocess.run(
        [*QUARRY, "tools", "--store", str(root / ".quarry")], capture_output=True, text=True,
        env={"COLUMNS": "200", "PATH": ""},
    )  # fmt: skip
    assert "pdftotext on 1 of 2" in store.stdout
    as_json = subprocess.run(
        [*QUARRY, "tools", "--json", str(root)], capture_output=True, text=True
    )
    assert isinstance(orjson.loads(as_json.stdout), list)  # the rows, as before


def test_quarry_tools_goes_without_a_summary_it_cannot_read(tmp_path: Path) -> None:
    root = _swept(tmp_path)
    _edit_summary(root, cluster_tools={"pdftotext": "one of two"})
    proc = subprocess.run([*QUARRY, "tools", str(root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Dask workers" not in proc.stdout and "pdftotext" in proc.stdout
