"""Whatever a store holds, the dashboard opens it: the lines the engine reads as records are
shown, every other line is left out, counted and named, and nothing crashes.

Hypothesis writes ``extract.jsonl`` files of valid records with hostile values (statuses,
reasons and ``why`` no engine wrote, numbers past 64 bits, negative sizes, strings where
numbers belong, names with control characters, long strings), random JSON, lines nested
50,000 deep, torn lines and bytes that are not UTF-8. The app is opened on each
(``App.run_test``) and must show exactly the records ``quarry show``'s loader
(:func:`engine.store.read_jsonl`) finds, and name the same lines as not records.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from tempfile import TemporaryDirectory

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.store import STORE_MARKER, Loaded, read_jsonl
from tests.tui.conftest import SIZE, screen_lines, settle, static_text
from tests.tui.test_foreign_stores import activity
from tui.app import QuarryApp
from tui.widgets.panels import SummaryBar
from tui.widgets.record_table import RecordTable

HUGE = st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, -1, -(10**30), 10**30])
TEXT = st.text(max_size=12) | st.sampled_from(["quantum", "\x1b]0;PWNED\x07", "a\nb", "\x00"])
LONG = st.integers(1_000, 20_000).map(lambda n: "x" * n)
ODD = st.none() | st.booleans() | HUGE | st.floats(allow_nan=False) | TEXT | LONG
ODD = ODD | st.lists(ODD, max_size=3) | st.dictionaries(st.text(max_size=4), ODD, max_size=2)
"""Any value a field of another writer's record may hold."""
STATUS = st.sampled_from(["ok", "empty", "unsupported", "error", "skipped"]) | TEXT
NAME = st.text(
    st.characters(codec="utf-8", exclude_characters="/"), min_size=1, max_size=20
).filter(lambda s: s not in (".", ".."))
PATH = st.lists(NAME, min_size=1, max_size=3).map("/".join)
FIELDS = ("size", "mtime_ns", "sha256", "mime", "reason", "extractor", "reader", "v", "chars",
          "pages", "error", "needs", "tools", "reused", "why", "ms", "crashes", "quality",
          "members", "path_b64", "root_b64")  # fmt: skip


def dumps(value: object) -> bytes:
    """JSON as another writer may write it: numbers past 64 bits, Infinity and all."""
    return json.dumps(value).encode()


RECORD = st.builds(
    lambda root, path, status, extra: dumps(
        {"root": root, "path": path, "status": status, **extra}
    ),
    st.sampled_from(["/r", "/", "/r\x1b[2J", "relative", ""]),
    PATH,
    STATUS,
    st.dictionaries(st.sampled_from(FIELDS), ODD | st.just("a" * 64), max_size=6),
)
"""A record as another writer wrote it: the names and status mostly right, the rest anything."""
DEEP = st.builds(
    lambda depth, closed: b'{"a":' * depth + (b"1" + b"}" * depth if closed else b""),
    st.sampled_from([2, 1_100, 50_000]),
    st.booleans(),
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
NOT_UTF8 = st.builds(
    lambda line, at: line[:at] + b"\xff\xfe" + line[at:], RECORD, st.integers(2, 20)
) | st.binary(min_size=1, max_size=30)
LINE = st.one_of(
    RECORD,
    RECORD,
    RECORD.map(lambda line: line[: len(line) // 2]),  # torn
    DEEP,
    JSONISH.map(dumps),
    NOT_UTF8,
).map(lambda line: line.replace(b"\n", b" ").replace(b"\r", b" "))


def write_store(folder: Path, data: bytes) -> Path:
    out = folder / ".quarry"
    out.mkdir()
    (out / STORE_MARKER).write_bytes(orjson.dumps({"format": 1, "written_by": "quarry"}))
    (out / "extract.jsonl").write_bytes(data)
    return out


async def open_and_check(out: Path, engine: Loaded) -> None:
    app = QuarryApp(out)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.records_screen.query_one(RecordTable)
        screen_lines(table)  # every visible row drawn: status colours, cells of odd values
        await pilot.press("d")  # the detail pane: every field of each record in turn
        for _ in range(min(len(app.model), 8)):
            await pilot.pause()
            screen_lines(table)
            await pilot.press("down")
        await pilot.press("enter")  # the inspector, or why not (no text stored)
        await pilot.pause()
        assert not app.crash and not app.load_error and app.state == "following", (
            app.crash or app.load_error
        )
        assert set(app.model.ids) == {r.key for r in engine.records}
        assert app.model.bad_lines == len(engine.bad)
        assert [b.line for b in app.model.bad_first] == [b.line for b in engine.bad[:5]]
        if engine.bad:
            n = len(engine.bad)
            said = f"{n:,} unreadable line{'s' if n != 1 else ''}"
            assert said in static_text(app.records_screen.query_one(SummaryBar))
            assert engine.left_out() in activity(app)  # in quarry show's words
    assert not app.crash, app.crash


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(LINE, min_size=1, max_size=8), st.booleans())
def test_the_dashboard_opens_any_store_and_shows_the_records_the_engine_reads(
    lines: list[bytes], ended: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if ended else b"")
    engine = read_jsonl(data)  # what quarry show and a sweep take from this store
    with TemporaryDirectory() as tmp:
        out = write_store(Path(tmp), data)
        asyncio.run(open_and_check(out, engine))


async def test_a_status_no_engine_wrote_is_shown_plainly(tmp_path: Path) -> None:
    good = {"root": "/r", "path": "a.txt", "status": "ok", "size": 1}
    lines = [good, {**good, "path": "b.txt", "status": "quantum", "reason": "entangled"}]
    data = b"\n".join(map(orjson.dumps, lines)) + b"\n"
    out = write_store(tmp_path, data)
    await open_and_check(out, read_jsonl(data))


async def test_a_line_nested_50000_deep_is_one_bad_line(tmp_path: Path) -> None:
    good = orjson.dumps({"root": "/r", "path": "a.txt", "status": "ok", "size": 1})
    deep = b'{"a":' * 50_000
    data = b"\n".join([good, deep, deep + b"1" + b"}" * 50_000, good.replace(b"a.txt", b"b")])
    engine = read_jsonl(data)
    assert [(b.line, b.why) for b in engine.bad] == [
        (2, "cut short"), (3, "not JSON (depth limit exceeded)")
    ]  # fmt: skip
    out = write_store(tmp_path, data)
    await open_and_check(out, engine)
