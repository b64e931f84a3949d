"""The records screen's summary bar shows its totals whole or not at all: at 80 columns a
folder of thousands of files left a bare "files" at the edge, its count cut off."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.panels import SummaryBar

COUNTS = {"ok": 64_200, "empty": 9_700, "unsupported": 4_200, "error": 3_700, "skipped": 0}


class _Bar(App[None]):
    def compose(self) -> ComposeResult:
        yield SummaryBar()


def _text(app: _Bar) -> str:
    return str(app.query_one(SummaryBar).render()).rstrip()


async def test_totals_that_do_not_fit_are_left_out_whole_and_come_back_when_wider() -> None:
    app = _Bar()
    async with app.run_test(size=(80, 3)) as pilot:
        app.query_one(SummaryBar).show(COUNTS, 81_800, 12, 5_900_000)
        await pilot.pause()
        text = _text(app)
        assert text.endswith("● skipped 0"), text  # "files 81,800" does not fit: none of it
        await pilot.resize_terminal(110, 3)
        await pilot.pause()
        assert _text(app).endswith("files 81,800 · reused 12"), _text(app)
        await pilot.resize_terminal(160, 3)
        await pilot.pause()
        assert _text(app).endswith("files 81,800 · reused 12 · chars 5.9M"), _text(app)
        app.query_one(SummaryBar).show(COUNTS, 81_800, None, None, "cannot read the store")
        await pilot.pause()
        text = _text(app)
        assert text.startswith("⚠ cannot read the store") and text.endswith("chars …"), text
