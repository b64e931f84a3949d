"""The compare screen on a host app of its own (the dashboard pushes it the same way): the
groups largest first, drill into a group, then a file's texts, change to change, back to the
same rows; unified at 80 columns, side by side at 160; nothing in a text reaches the terminal."""

from __future__ import annotations

import hashlib
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from engine.difftext import LineKind, change_starts, side_by_side, unified
from engine.jsonl import line_of
from engine.records import Record
from engine.store import Store
from tests.tui.conftest import wait_for
from tui.screens.compare import CompareScreen
from tui.widgets.diff_view import DiffView

ROOT = "/data"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def hand_store(out: Path, files: dict[str, str | None]) -> Store:
    """A store of ``files``: an ok text record each (None: an error record), no index."""
    records = []
    for path, text in sorted(files.items()):
        if text is None:
            records.append(Record(ROOT, path, 1, 1, "error", sha256=sha(path), reason="corrupt"))
            continue
        h = sha(path + text)
        folder = out / "extract" / h[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{h}.txt").write_text(text)
        records.append(
            Record(ROOT, path, 1, 1, "ok", sha256=h, mime="text/plain", reader="text",
                   extractor="text:utf-8", chars=len(text))
        )  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / "extract.jsonl").write_bytes(b"".join(map(line_of, records)))
    return Store(out)


LINES = [f"line {i} of the text" for i in range(30)]


def stores(tmp: Path) -> tuple[Store, Store]:
    edited = list(LINES)
    edited[3] = "line three was changed here"
    edited[20] = "and line twenty \x1b]0;pwned\x07 too"
    before = hand_store(tmp / "A", {
        "a.txt": "\n".join(LINES), "b.txt": "one two\nthree", "broken.txt": "it was fine",
        "same.txt": "same",
    })  # fmt: skip
    after = hand_store(tmp / "B", {
        "a.txt": "\n".join(edited), "b.txt": "one two\nthree four", "broken.txt": None,
        "new.txt": "brand new", "same.txt": "same",
    })  # fmt: skip
    return before, after


class Host(App[None]):
    """A bare app that pushes the screen, as the dashboard would."""

    def __init__(self, before: Store, after: Store) -> None:
        super().__init__()
        self.before, self.after = before, after

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(CompareScreen(self.before, self.after))


def rows(table: DataTable[object]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_groups_files_texts_and_back_at_80_columns(tmp_path: Path) -> None:
    app = Host(*stores(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.styles.background.a == 1  # opaque: the host's screen is not drawn under it
        groups = screen.query_one("#compare-groups", DataTable)
        await wait_for(pilot, lambda: groups.row_count > 0)
        got = [(r[0], r[1]) for r in rows(groups)]
        # largest first: the two edited texts, then the groups of one in the groups' order
        assert got == [("text changed", "2"), ("got worse", "1"), ("new", "1")]
        # 120 words before (line, of, the, text: digits are no words), 122 after, 114 shared
        assert rows(groups)[0][2] == "a.txt: similarity 0.94, +20 characters"
        status = str(screen.query_one("#compare-status", Static).render())
        assert "4 files before, 5 after: 4 changed, 1 unchanged; something got worse" in status
        await pilot.press("enter")  # into "text changed"
        files = screen.query_one("#compare-files", DataTable)
        await wait_for(pilot, lambda: files.display and files.row_count == 2)
        assert [r[0] for r in rows(files)] == ["a.txt", "b.txt"]
        await pilot.press("enter")  # a.txt's texts
        view = screen.query_one(DiffView)
        await wait_for(pilot, lambda: view.display and view.row_count > 0)
        assert not view.side_by_side  # 80 columns: unified
        kinds = [r.kind for r in view.unified_rows]
        assert kinds.count(LineKind.REMOVED) == 2 and kinds.count(LineKind.ADDED) == 2
        assert view.current == 0  # at the first change
        first = view.starts[0]
        assert view.unified_rows[first].text == "line 3 of the text"
        await pilot.press("n")
        assert view.current == 1
        assert view.unified_rows[view.starts[1]].text == "line 20 of the text"
        added = next(i for i, r in enumerate(view.unified_rows) if "pwned" in r.text)
        drawn = view.render_line(added - int(view.scroll_offset.y)).text
        assert "\x1b" not in drawn and "\x07" not in drawn and "pwned" in drawn
        await pilot.press("N")
        assert view.current == 0
        await pilot.press("s")
        assert view.side_by_side
        assert all(len(view.render_line(y).text) == view.size.width for y in range(3))
        await pilot.press("escape")  # back to the files, on the same row
        await wait_for(pilot, lambda: files.display and not view.display)
        assert files.cursor_row == 0
        await pilot.press("down", "escape")  # back to the groups
        await wait_for(pilot, lambda: groups.display and not files.display)
        assert groups.cursor_row == 0
        await pilot.press("down", "enter")  # "got worse": the text that became an error
        await wait_for(pilot, lambda: files.display and files.row_count == 1)
        assert rows(files)[0] == ["broken.txt", "ok -> error/corrupt, -11 characters"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: view.display and view.row_count > 0)
        assert [r.kind for r in view.unified_rows] == [LineKind.HUNK, LineKind.REMOVED]
        status = str(screen.query_one("#compare-status", Static).render())
        assert "no text after" in status
        await pilot.press("escape", "escape", "escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen))


async def test_side_by_side_from_160_columns(tmp_path: Path) -> None:
    app = Host(*stores(tmp_path))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        groups = screen.query_one("#compare-groups", DataTable)
        await wait_for(pilot, lambda: groups.row_count > 0)
        await pilot.press("enter", "enter")
        view = screen.query_one(DiffView)
        await wait_for(pilot, lambda: view.display and view.row_count > 0)
        assert view.side_by_side
        row = view.pair_rows[view.starts[0]]
        assert (row.kind, row.before, row.after) == (
            LineKind.CHANGED,
            "line 3 of the text",
            "line three was changed here",
        )
        line = view.render_line(view.starts[0] - int(view.scroll_offset.y)).text
        assert "line 3 of the text" in line and "│" in line and "line three was" in line


async def test_a_store_that_cannot_be_read_is_said_on_the_screen(tmp_path: Path) -> None:
    before, after = stores(tmp_path)
    before.jsonl_path.unlink()
    before.jsonl_path.mkdir()  # a folder where the records belong
    app = Host(before, after)
    async with app.run_test(size=(80, 24)) as pilot:
        status = app.screen.query_one("#compare-status", Static)
        await wait_for(pilot, lambda: "cannot compare" in str(status.render()))


def test_change_starts_are_the_first_rows_of_each_run() -> None:
    kinds = [LineKind.SAME, LineKind.REMOVED, LineKind.ADDED, LineKind.SAME, LineKind.ADDED]
    assert change_starts(kinds) == [1, 4]


def test_unified_and_side_by_side_rows_of_two_texts() -> None:
    a, b = "x\ny\nz", "x\nY\nz\nw"
    assert [(r.kind, r.text) for r in unified(a, b)] == [
        (LineKind.HUNK, "@@ -1,3 +1,4 @@"),
        (LineKind.SAME, "x"),
        (LineKind.REMOVED, "y"),
        (LineKind.ADDED, "Y"),
        (LineKind.SAME, "z"),
        (LineKind.ADDED, "w"),
    ]
    assert [(r.kind, r.before, r.after) for r in side_by_side(a, b)] == [
        (LineKind.SAME, "x", "x"),
        (LineKind.CHANGED, "y", "Y"),
        (LineKind.SAME, "z", "z"),
        (LineKind.ADDED, None, "w"),
    ]
    assert side_by_side(None, "a") == side_by_side("", "a")
