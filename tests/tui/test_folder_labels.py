"""A store of several folders: each row's path shown under its folder's name (two ``1.txt``
rows of two folders looked the same), and the header names every folder the store holds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from engine.records import Record, Summary
from engine.store import Store
from tests.tui.conftest import settle, wait_for
from tests.tui.triage_helpers import screen_text
from tui.app import QuarryApp
from tui.model import folder_labels
from tui.widgets.record_table import RecordTable


def _store(out: Path, roots: dict[str, list[str]], swept: tuple[str, ...]) -> Store:
    records = [
        Record(root, path, 4, 1, "ok", f"{i:064x}", "text/plain", None, "text:utf-8", "text", 1)
        for i, (root, path) in enumerate((r, p) for r, paths in roots.items() for p in paths)
    ]
    others = {root: len(paths) for root, paths in roots.items() if root not in swept}
    store = Store(out)
    with store.writer():
        store.write_records(records)
        store.write_summary(
            Summary(roots=swept, files=len(records), counts={"ok": len(records)}, others=others)
        )
    return store


async def test_rows_of_two_folders_show_under_their_names(tmp_path: Path) -> None:
    roots = {"/srv/a/docs": ["1.txt", "2.txt"], "/home/b/docs": ["1.txt"]}
    store = _store(tmp_path / "s", roots, swept=("/srv/a/docs",))
    app = QuarryApp(store.out)
    async with app.run_test(size=(100, 20)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RecordTable)
        await wait_for(pilot, lambda: app.model.root_labels)
        await settle(pilot)
        lines = [s.text.split()[0] for s in table.render_lines(table.size.region)[1:4]]
        assert lines == ["b/docs/1.txt", "a/docs/1.txt", "a/docs/2.txt"]
        assert "/srv/a/docs, /home/b/docs" in screen_text(app).splitlines()[0]


async def test_rows_of_one_folder_show_their_path_alone(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", {"/srv/a/docs": ["1.txt"]}, swept=("/srv/a/docs",))
    app = QuarryApp(store.out)
    async with app.run_test(size=(100, 20)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(RecordTable)
        assert table.render_lines(table.size.region)[1].text.split()[0] == "1.txt"


folder = st.lists(st.sampled_from(["a", "b", "docs", "é", "x y"]), min_size=0, max_size=4)


@given(st.lists(folder, min_size=2, max_size=6, unique_by=tuple))
def test_every_folder_gets_a_label_of_its_own_that_ends_its_path(
    parts: list[list[str]],
) -> None:
    roots = ["/" + "/".join(p) for p in parts]
    labels = folder_labels(roots)
    assert len(set(labels.values())) == len(set(roots))
    for root, label in labels.items():
        assert label.endswith("/")
        assert root == "/" or root.endswith("/" + label[:-1]) or root == "/" + label[:-1]


def test_a_session_of_two_folders_labels_its_rows_before_any_summary(tmp_path: Path) -> None:
    """The first sweep of two folders (hours on a share) showed its rows without their folder
    until it ended and its summary came."""
    from tui.model import RecordModel

    model = RecordModel()
    model.take_roots(["/srv/mail", "/srv/docs"])
    assert model.root_labels == {"/srv/mail": "mail/", "/srv/docs": "docs/"}
    model.take_summary(Summary(roots=("/srv/docs",), files=0))  # (an older summary: kept)
    assert model.root_labels == {"/srv/mail": "mail/", "/srv/docs": "docs/"}
