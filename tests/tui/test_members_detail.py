"""The detail pane names each member of a container, the failed ones first, with why."""

from __future__ import annotations

from textual.content import Content

from engine.records import Member, Record
from tui.widgets.panels import MEMBERS_SHOWN, PATH_SHOWN, describe


def _plain(markup: str) -> str:
    return Content.from_markup(markup).plain


def test_failed_members_come_first_with_their_reason_and_error() -> None:
    climbs = "member path climbs out of the archive (..)"
    locked = "zip member 'secret.txt' is encrypted"
    members = (
        Member("docs/notes.txt", "ok", chars=42),
        Member("../../evil.txt", "error", "refused", climbs),
        Member("inner.zip//secret.txt", "error", "encrypted", locked),
    )
    record = Record("/r", "bundle.zip", 10, 1, "ok", members=members, error="2 of 3 not read")
    text = _plain(describe(record, set()))
    assert "members 3, 2 not read" in text
    block = text[text.index("members 3") :]
    assert block.index("error/refused ../../evil.txt") < block.index("ok docs/notes.txt")
    assert (
        "error/encrypted inner.zip//secret.txt\n    zip member 'secret.txt' is encrypted" in block
    )


def test_a_long_member_list_is_bounded() -> None:
    many = tuple(Member(f"m{i}.txt", "ok", chars=1) for i in range(MEMBERS_SHOWN + 5))
    text = _plain(describe(Record("/r", "a.zip", 1, 1, "ok", members=many), set()))
    assert "and 5 more" in text
    assert text.count(" ok m") == MEMBERS_SHOWN


def test_member_paths_are_not_markup() -> None:
    record = Record("/r", "a.zip", 1, 1, "ok", members=(Member("[b]x[/b].txt", "ok", chars=1),))
    assert "ok [b]x[/b].txt" in _plain(describe(record, set()))


def test_the_dashboards_line_reader_keeps_members_and_drops_odd_ones() -> None:
    import orjson

    from engine.records import Record

    record = Record(
        "/r", "a.zip", 1, 1, "ok", members=(Member("m.txt", "error", "corrupt", "bad"),)
    )
    assert Record.from_json(record.to_json()).members == record.members
    odd = orjson.loads(record.to_json())
    odd["members"] = [{"path": 3}, "x", {"path": "ok.txt", "status": "ok", "chars": 2}]
    assert Record.from_json(orjson.dumps(odd)).members == (Member("ok.txt", "ok", chars=2),)
    odd["members"] = {"not": "a list"}
    assert Record.from_json(orjson.dumps(odd)).members == ()


def test_a_path_thousands_of_folders_deep_leaves_its_verdict_in_sight() -> None:
    """A received tree 2,000 folders deep: the pane shows the path's start and its file
    name, cut to PATH_SHOWN characters, and the verdict a few lines below; a path as long as
    a Windows share allows is shown whole."""
    deep = "/".join(["d"] * 2000) + "/bottom.txt"
    record = Record("/r", deep, 1, 1, "skipped", reason="unreadable", error="name too long")
    lines = _plain(describe(record, set())).split("\n")
    assert len(lines[0]) == PATH_SHOWN and lines[0].endswith("…/bottom.txt")
    assert lines[0].startswith("d/d/d/") and lines[3] == "skipped / unreadable"
    whole = "share/" + "x" * 250 + "/report.pdf"
    assert _plain(describe(Record("/r", whole, 1, 1, "ok"), set())).startswith(whole + "\n")
    root = "/" + "r/" * 1000 + "root"
    assert len(_plain(describe(Record(root, "a.txt", 1, 1, "ok"), set())).split("\n")[1]) < 330
