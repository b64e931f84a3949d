"""One ``extract.jsonl`` line read alone (:meth:`Record.from_json`, what the served records,
the dashboard's index reader and the stat index decode a record by) gives what
:meth:`Record.from_dict` gives of the parsed line: the same record, or the same named bad line,
whether msgspec typed it or the lenient validator read it (:func:`engine.records._typed`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.records import INT64_MAX, BadRecord, Record, _from_json_slow, _typed
from engine.sweep import SweepOptions, sweep
from engine.tools import ToolSet

SHA = "0123456789abcdef" * 4
BASE = b'{"root":"/r","path":"a.txt","size":1,"mtime_ns":2,"status":"ok","sha256":"' + SHA.encode()

# Values a field may hold in a line of any writer: orjson keeps integers within 64 bits
# (unsigned too) and reads the others as floats; 400 digits is past a double.
numbers = st.sampled_from([
    0, 1, -1, 7, INT64_MAX, INT64_MAX + 1, -INT64_MAX - 1, -INT64_MAX - 2, 2**64 - 1, 2**64,
    10**30, 10**400, 1.0, 0.0, -0.0, 0.5, 1e300, True, False,
])  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | numbers | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)  # fmt: skip
paths = st.sampled_from([
    "a.txt", "d/e/f.pdf", "../x", "/abs", "a//b", "a/", ".", "..", "a/./b", "a/../b", "",
    "...", ".hidden/x", "a\0b", "caf\u00e9/\u00fc.txt", "a\x01b", "a\\b", "\u2028", "x\ud800",
])  # fmt: skip
roots = st.sampled_from(["/r", "/", "/srv/docs d", "r", "", "/r\0", "/r/\u00e9", "/r\udcff"])
shas = st.sampled_from([SHA, None, SHA.upper(), SHA[:63], SHA + "0", "g" * 64, 5, ""])
statuses = st.sampled_from(["ok", "error", "skipped", "", "\u00e9", 3, None])
b64s = st.sampled_from(
    [
        base64.b64encode(b"caf\xe9.txt").decode(),
        base64.b64encode(b"/r\xff").decode(),
        base64.b64encode(b"../x").decode(),
        base64.b64encode(b"fine").decode(),
        "@@",
        "",
        None,
        7,
    ]
)
QUALITY_FIELDS = [
    "verdict", "v", "lang", "script", "common", "noise", "scrambled", "repl", "odd", "mojibake",
    "per_page", "run", "signals",
]  # fmt: skip
COUNTS = ["size", "mtime_ns", "v", "chars", "pages", "ms", "crashes"]
CHANGES = [
    "root", "path", "sha256", "status", "retype", "number", "drop", "foreign", "b64", "quality",
    "quality-drop", "member", "member-drop",
]  # fmt: skip
LENIENT = [
    "size", "mtime_ns", "mime", "reason", "extractor", "reader", "v", "chars", "pages", "error",
    "needs", "tools", "read_with", "reused", "why", "ms", "crashes", "quality", "members",
]  # fmt: skip


def _quality() -> dict[str, Any]:
    return {
        "verdict": "good", "v": 4, "lang": "en", "script": "Latin", "common": 0.41,
        "noise": 0.0, "scrambled": 0.0, "repl": 0.0, "odd": 0.001, "mojibake": 0.0,
        "per_page": None, "run": 9, "signals": [],
    }  # fmt: skip


def _record() -> dict[str, Any]:
    rec = Record("/r", "d/a.txt", 5, 7, "ok", sha256=SHA, mime="text/plain", chars=5).to_dict()
    rec["quality"] = _quality()
    rec["members"] = [{"path": "m.txt", "status": "ok", "reason": None, "error": None, "chars": 3}]
    return rec


@st.composite
def record_dicts(draw: st.DrawFn) -> dict[str, Any]:
    """A record as this quarry writes it, then changed as another writer, a hand edit or a
    hostile line may change it: any field retyped, dropped or out of range, bad names and
    hashes, names kept as bytes, foreign fields, a quality or members gone odd."""
    rec = _record()
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(CHANGES))
        if kind in ("root", "path", "sha256", "status"):
            rec[kind] = draw(
                {"root": roots, "path": paths, "sha256": shas, "status": statuses}[kind]
            )
        elif kind == "retype":
            rec[draw(st.sampled_from(LENIENT))] = draw(json_values)
        elif kind == "number":
            rec[draw(st.sampled_from(COUNTS))] = draw(numbers)
        elif kind == "drop":
            rec.pop(draw(st.sampled_from([*LENIENT, "root", "path", "sha256", "status"])), None)
        elif kind == "foreign":
            rec[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
        elif kind == "b64":
            rec[draw(st.sampled_from(["root_b64", "path_b64"]))] = draw(b64s)
        elif kind.startswith("quality"):
            quality = rec["quality"] if isinstance(rec.get("quality"), dict) else _quality()
            name = draw(st.sampled_from(QUALITY_FIELDS))
            if kind == "quality-drop":
                quality.pop(name, None)
            else:
                quality[name] = draw(numbers | json_values)
            rec["quality"] = quality
        else:
            members = rec["members"] if isinstance(rec.get("members"), list) else []
            member = dict(members[0]) if members and isinstance(members[0], dict) else {}
            name = draw(st.sampled_from(["path", "status", "reason", "error", "chars", "zz"]))
            if kind == "member-drop":
                member.pop(name, None)
            else:
                member[name] = draw(numbers | json_values)
            rec["members"] = [member, *members]
    return rec


@st.composite
def lines(draw: st.DrawFn) -> bytes | str:
    """A record written out as any writer may: compact or spaced, non-ASCII kept or escaped
    (an escaped lone surrogate too), a key spelled with escapes, a key twice, bytes that are
    not UTF-8 in a foreign field, a line cut short; as bytes or as text."""
    rec = draw(record_dicts())
    how = draw(st.sampled_from(["orjson", "ascii", "spaced", "dup", "raw", "escaped-key", "cut"]))
    if how == "orjson":
        try:
            line = orjson.dumps(rec)
        except (TypeError, orjson.JSONEncodeError):  # past 64 bits, a lone surrogate
            line = json.dumps(rec).encode()
    elif how == "ascii":
        line = json.dumps(rec).encode("ascii")
    elif how == "spaced":
        line = b"  " + json.dumps(rec, indent=1, ensure_ascii=False).encode("utf-8", "replace")
    else:
        line = json.dumps(rec).encode("ascii")
        if how == "dup":
            name = draw(st.sampled_from(["root", "path", "sha256", "status", "size", "quality"]))
            line = line[:-1] + b", " + json.dumps({name: draw(paths | json_values)}).encode()[1:]
        elif how == "raw":
            line = line[:-1] + b', "zz": "\xff\xfe", "\xc0": ' + b"9" * 400 + b"}"
        elif how == "escaped-key":
            line = line[:-1] + b', "path_\\u0062\\u0036\\u0034": "' + b"Yi50eHQ=" + b'"}'
        else:
            line = line[: draw(st.integers(0, len(line) - 1))]
    if draw(st.booleans()):
        return line.decode("utf-8", "surrogateescape")
    return line


def _read(read: Any, line: bytes | str) -> tuple[str, str]:
    """What ``read`` makes of ``line``: the record (its repr tells 1 from 1.0) or why not."""
    try:
        return "record", repr(read(line))
    except BadRecord as exc:
        return "bad", str(exc)


@settings(max_examples=1500, deadline=None)
@given(line=lines())
@example(line=BASE + b'"}')
@example(line=BASE + b'","path":"../x"}')  # a bad path, typed as a str all the same
@example(line=BASE.replace(b'"a.txt"', b'"a/./b"') + b'"}')
@example(line=BASE.replace(b'"a.txt"', b'"/abs"') + b'"}')
@example(line=BASE.replace(b'"/r"', b'"r"') + b'"}')
@example(line=BASE.replace(b'"a.txt"', b'"a\\u0000b"') + b'"}')
@example(line=BASE.replace(b'"ok"', b'""') + b'"}')
@example(line=BASE.replace(SHA.encode(), SHA.upper().encode()) + b'"}')
@example(line=BASE + b'","path_b64":"Yi50eHQ="}')  # the name is "b.txt", not "a.txt"
@example(line=BASE + b'","path_\\u0062\\u0036\\u0034":"Yi50eHQ="}')  # the same, escaped
@example(line=BASE + b'","root_b64":"L3Jc/w=="}')
@example(line=BASE + b'","quality":{"verdict":"good","noise":1}}')  # 1, never made 1.0
@example(line=BASE + b'","quality":{"verdict":"good","common":0}}')
@example(line=BASE + b'","quality":{"verdict":"good","v":18446744073709551616}}')
@example(line=BASE + b'","members":[{"path":"m","status":"ok","chars":99999999999999999999}]}')
@example(line=BASE + b'","zz":"\xff"}')  # not UTF-8, in a field no record has
@example(line=BASE + b'","zz":1' + b"0" * 400 + b"}")  # a number past a double, likewise
@example(line=BASE + b'","zz":"\\ud800"}')
@example(line=BASE + b'","zz":' + b"[" * 1100 + b"]" * 1100 + b"}")  # past orjson's depth
@example(line=(BASE + b'"}').decode().replace("a.txt", "a\udcff"))  # text, not UTF-8
@example(line=BASE + b'","size":-1,"mtime_ns":9223372036854775808}')
@example(line=BASE + b'","pages":1.0,"reused":1,"needs":"tesseract","tools":["a"]}')
@example(line=BASE + b'","size":1}')  # a key twice: the last one counts
@example(line=BASE[:40])  # cut short
def test_a_line_reads_as_the_validator_reads_it(line: bytes | str) -> None:
    assert _read(Record.from_json, line) == _read(_from_json_slow, line)


def test_a_line_of_a_sweep_of_the_fixtures_is_typed_by_msgspec(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line a sweep writes reads as the validator reads it, and one that names its file
    in UTF-8 (every line but those with a ``*_b64`` name) by msgspec: never by
    :meth:`Record.from_dict`."""
    sweep([sample], SweepOptions(tools=ToolSet.empty()))
    own = (sample / ".quarry" / "extract.jsonl").read_bytes().splitlines()
    assert len(own) > 50
    slow = [_read(_from_json_slow, line) for line in own]
    assert {kind for kind, _ in slow} == {"record"}
    assert [_read(Record.from_json, line) for line in own] == slow

    def refused(*_args: object) -> Record:
        raise AssertionError("read by from_dict")

    plain = [(line, read) for line, read in zip(own, slow, strict=True) if b'_b64"' not in line]
    assert len(plain) > 50
    monkeypatch.setattr(Record, "from_dict", classmethod(refused))
    assert [_read(Record.from_json, line) for line, _ in plain] == [read for _, read in plain]
    assert all(_typed(orjson.loads(line)) is not None for line, _ in plain)
