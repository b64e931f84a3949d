"""A container whose members wait on a tool says so, and is read again once the tool is here.

A zip holding a Word .doc while antiword is missing: its other members are text, so the zip
is ``ok``, but the .doc's words are not in it. The record names the tools the members wait on
(``needs``) and the tools it was read with, so a sweep after antiword appears, or the
dashboard's "check again", reads the zip again; a zip of nothing but such members is
``unsupported/needs_tool`` itself.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from engine.readers.legacy import OLE_MAGIC
from engine.records import Reason, Record, Status, Why
from engine.session import unlocked_by
from engine.store import Store
from engine.sweep import Sweeper, SweepOptions
from engine.tools import Tool, ToolSet

DOC = OLE_MAGIC + bytes(range(256)) * 8  # an OLE2 file named .doc: antiword's to read


def _zip(path: Path, members: dict[str, bytes]) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    path.write_bytes(buf.getvalue())


def _antiword(tmp_path: Path) -> Tool:
    exe = tmp_path / "bin" / "antiword"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nprintf 'The memo body, read by antiword\\n'\n")
    exe.chmod(0o755)
    return Tool("antiword", str(exe), "0.37")


def _sweep(root: Path, tools: ToolSet) -> dict[str, Record]:
    with Sweeper([root], SweepOptions(tools=tools, workers=1)) as s:
        s.run()
        return {r.path: r for r in s.records.values()}


def test_a_zip_with_a_doc_waits_on_antiword_and_is_read_again_with_it(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _zip(root / "bundle.zip", {"notes.txt": b"plain words here\n", "memo.doc": DOC})
    _zip(root / "only-doc.zip", {"memo.doc": DOC})

    first = _sweep(root, ToolSet.empty())
    bundle, only = first["bundle.zip"], first["only-doc.zip"]
    assert bundle.status == Status.OK and bundle.needs == ("antiword", "catdoc")
    assert bundle.tools is not None  # the tools it was read with: a change reads it again
    assert [(m.path, m.reason) for m in bundle.members if m.status != Status.OK] == [
        ("memo.doc", Reason.NEEDS_TOOL)
    ]
    assert (only.status, only.reason, only.needs) == (
        Status.UNSUPPORTED,
        Reason.NEEDS_TOOL,
        ("antiword", "catdoc"),
    )
    assert only.error == "its documents need antiword or catdoc to be read"
    summary = Store(root / ".quarry").load_summary()
    assert summary is not None and summary.tools_missing["antiword"] == 2  # both wait on it

    again = _sweep(root, ToolSet.empty())  # nothing changed: kept, not read
    assert again["bundle.zip"].reused and again["only-doc.zip"].reused

    # what the dashboard's "check again" would retry once antiword appears
    assert sorted(unlocked_by(again.values(), ["antiword"])[str(root)]) == [
        "bundle.zip",
        "only-doc.zip",
    ]

    tools = ToolSet((_antiword(tmp_path),))
    after = _sweep(root, tools)
    for name in ("bundle.zip", "only-doc.zip"):
        r = after[name]
        assert (r.status, r.why, r.needs, r.reused) == (Status.OK, Why.TOOLS_CHANGED, (), False)
        text = Store(root / ".quarry").read_text(r.sha256 or "")
        assert "The memo body, read by antiword" in text
    assert "plain words here" in Store(root / ".quarry").read_text(after["bundle.zip"].sha256 or "")
    assert _sweep(root, tools)["bundle.zip"].reused  # and kept from then on
