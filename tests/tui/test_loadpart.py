"""A store parsed by helper processes gives what one process gives: the same rows in the same
order, the same lines named as not records (numbered from the file's start), and a child that
cannot start, dies or writes garbage costs time, never rows."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui import loadpart
from tui.columns import Batch
from tui.loader import Chunk, JsonlSource, load_rows


def _record(i: int, status: str = "ok") -> bytes:
    return orjson.dumps(
        {"root": "/r", "path": f"d{i // 100:03d}/f{i:06d}.txt", "status": status,
         "mime": "text/plain", "chars": i, "size": 10 * i, "error": None, "why": "new",
         "quality": {"verdict": "suspect" if i % 7 == 0 else "good", "signals": ["common"]}}
    )  # fmt: skip


ODD_LINES = [b"", b"{", b"garbage", b'{"root":"/r","path":"","status":"ok"}', b"[1,2]", b"   "]


def _store(tmp_path: Path, lines: list[bytes], end_newline: bool = True) -> JsonlSource:
    path = tmp_path / "extract.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if end_newline else b""))
    return JsonlSource(path)


def _collect(chunks: object) -> tuple[list[str], bytes, list[str], list[int]]:
    paths: list[str] = []
    status = bytearray()
    bad: list[str] = []
    done: list[int] = []
    for chunk in chunks:  # type: ignore[attr-defined]
        assert isinstance(chunk, Chunk)
        if isinstance(chunk.rows, Batch):
            paths += chunk.rows.paths
            status += chunk.rows.status
        bad += [str(b) for b in chunk.bad]
        done.append(chunk.done)
    return paths, bytes(status), bad, done


def _same_as_one_process(
    src: JsonlSource, processes: int, chunk_rows: int = 500, first: int = 1 << 16
) -> list[str]:
    one = _collect(load_rows(src, chunk_rows))
    parts = _collect(loadpart.load_in_parts(src, chunk_rows, processes, first))
    assert parts[:3] == one[:3]
    assert parts[3] == sorted(parts[3])  # progress only grows
    assert parts[3][-1:] == ([src.size] if src.size else [])
    return one[2]


@pytest.mark.parametrize("processes", [2, 3])
def test_parts_give_the_rows_and_bad_lines_of_one_process(tmp_path: Path, processes: int) -> None:
    lines = [_record(i) for i in range(12_000)]
    for k, odd in enumerate(ODD_LINES):  # odd lines spread over every part
        lines.insert(1_000 + k * 2_000, odd)
    bad = _same_as_one_process(_store(tmp_path, lines), processes)
    assert len(bad) == 4  # blank lines are skipped, not named
    assert bad[0].startswith("line 3,001:")  # numbered from the file's start


def test_a_file_without_a_last_newline_and_a_long_line(tmp_path: Path) -> None:
    lines = [_record(i) for i in range(9_000)]
    lines[8_000] = b'{"root":"/r","path":"long","status":"ok","error":"' + b"x" * 300_000 + b'"}'
    _same_as_one_process(_store(tmp_path, lines, end_newline=False), 2)


def _fake_python(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-python"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.parametrize(
    "body",
    [
        "exit 1",  # dies at once
        "printf 'garbage that is no frame'",  # writes garbage
        "head -c 100 /dev/urandom",  # a frame header promising more than follows
    ],
)
def test_a_failing_child_costs_time_not_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    src = _store(tmp_path, [_record(i) for i in range(6_000)])
    monkeypatch.setattr(sys, "executable", _fake_python(tmp_path, body))
    _same_as_one_process(src, 2)


def test_a_child_that_cannot_start_costs_time_not_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _store(tmp_path, [_record(i) for i in range(6_000)])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    _same_as_one_process(src, 2)


def test_small_or_in_memory_stores_stay_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    started: list[int] = []

    class Counted(loadpart._Part):
        def __init__(self, *args: Any) -> None:
            started.append(1)
            super().__init__(*args)

    monkeypatch.setattr(loadpart, "_Part", Counted)
    src = _store(tmp_path, [_record(i) for i in range(2_000)])  # more than the first block
    assert len(_collect(loadpart.load_all(src))[0]) == 2_000
    assert len(_collect(loadpart.load_all(JsonlSource(data=src.read(0, src.size))))[0]) == 2_000
    monkeypatch.setattr(loadpart, "PARALLEL_BYTES", 1)
    monkeypatch.setenv("QUARRY_LOAD_PROCS", "1")
    assert len(_collect(loadpart.load_all(src))[0]) == 2_000
    assert not started
    monkeypatch.setenv("QUARRY_LOAD_PROCS", "2")
    assert len(_collect(loadpart.load_all(src))[0]) == 2_000  # no python: parsed here
    assert started == [1, 1]


LINE = st.one_of(
    st.integers(0, 10**6).map(_record),
    st.sampled_from(ODD_LINES),
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(LINE, min_size=1, max_size=400), st.integers(2, 4), st.booleans())
def test_any_lines_parse_the_same_in_parts(
    tmp_path: Path, lines: list[bytes], processes: int, end_newline: bool
) -> None:
    src = _store(tmp_path, lines, end_newline)
    try:
        _same_as_one_process(src, processes, chunk_rows=50, first=256)
    finally:
        src.close()


def test_the_child_reads_the_version_opened_not_a_newer_file(tmp_path: Path) -> None:
    src = _store(tmp_path, [_record(i) for i in range(6_000)])
    newer = tmp_path / "new.jsonl"
    newer.write_bytes(_record(1) + b"\n")
    os.replace(newer, tmp_path / "extract.jsonl")  # the engine replaces the file atomically
    paths = _collect(loadpart.load_in_parts(src, 500, 2))[0]
    assert len(paths) == 6_000
